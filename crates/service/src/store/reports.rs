//! Reports: queued, running, finished, failed, pasted; read by id, URL and domain.

use audit::{Analysis, Grade};
use db::sqlx;
use jiff::Timestamp;
use url::Url;

use super::{ms, ts, ReportRow, ReportState, Store, StoredReport};
use crate::codec;
use crate::error::{q, DamagedRow, ServiceError};
use crate::ids::{registrable_domain, site_of, ReportId};
use crate::limits::{MAX_QUEUED_JOBS, MAX_QUEUED_PER_CLIENT};

/// The columns of a [`ReportRow`], in its order.
pub(crate) const ROW_COLUMNS: &str = "id, domain, url, is_paste, scheduled, state, created_at, \
     analysed_at, score, indexable, error";

/// One row of [`ROW_COLUMNS`] as read, by column name (`sqlx::FromRow` below).
struct DbRow {
    id: String,
    domain: Option<String>,
    url: Option<String>,
    is_paste: bool,
    scheduled: bool,
    state: String,
    created_at: i64,
    analysed_at: Option<i64>,
    score: Option<i64>,
    indexable: bool,
    error: Option<String>,
}

/// A [`DbRow`] with the report's stored bytes and document (`service_documents`, joined:
/// all `NULL` when the report has no document).
struct FullRow {
    row: DbRow,
    encoding: Option<i64>,
    body_encoding: Option<i64>,
    robots_body: Option<Vec<u8>>,
    document: Option<Vec<u8>>,
}

/// A [`DbRow`] with the number of rows the query matched before its `LIMIT`.
struct CountedRow {
    row: DbRow,
    total: i64,
}

/// `sqlx::FromRow` for [`DbRow`] and [`FullRow`] on one backend's row type (written out, not
/// derived: sqlx's `derive` feature would build its proc-macro crates for this alone).
macro_rules! from_row {
    ($row:ty) => {
        impl<'r> sqlx::FromRow<'r, $row> for DbRow {
            fn from_row(r: &'r $row) -> Result<Self, sqlx::Error> {
                use sqlx::Row;
                Ok(DbRow {
                    id: r.try_get("id")?,
                    domain: r.try_get("domain")?,
                    url: r.try_get("url")?,
                    is_paste: r.try_get("is_paste")?,
                    scheduled: r.try_get("scheduled")?,
                    state: r.try_get("state")?,
                    created_at: r.try_get("created_at")?,
                    analysed_at: r.try_get("analysed_at")?,
                    score: r.try_get("score")?,
                    indexable: r.try_get("indexable")?,
                    error: r.try_get("error")?,
                })
            }
        }

        impl<'r> sqlx::FromRow<'r, $row> for FullRow {
            fn from_row(r: &'r $row) -> Result<Self, sqlx::Error> {
                use sqlx::Row;
                Ok(FullRow {
                    row: <DbRow as sqlx::FromRow<'r, $row>>::from_row(r)?,
                    encoding: r.try_get("encoding")?,
                    body_encoding: r.try_get("body_encoding")?,
                    robots_body: r.try_get("robots_body")?,
                    document: r.try_get("document")?,
                })
            }
        }
        impl<'r> sqlx::FromRow<'r, $row> for CountedRow {
            fn from_row(r: &'r $row) -> Result<Self, sqlx::Error> {
                use sqlx::Row;
                Ok(CountedRow {
                    row: <DbRow as sqlx::FromRow<'r, $row>>::from_row(r)?,
                    total: r.try_get("total")?,
                })
            }
        }
    };
}
from_row!(sqlx::sqlite::SqliteRow);
from_row!(sqlx::postgres::PgRow);

impl DbRow {
    /// The typed row; `None` (logged) for a row this service did not write (an id that is
    /// not one).
    fn into_row(self) -> Option<ReportRow> {
        let Ok(id) = self.id.parse() else {
            tracing::warn!(id = %self.id, "a stored report with a foreign id is skipped");
            return None;
        };
        let url = self.url.and_then(|text| match Url::parse(&text) {
            Ok(url) => Some(url),
            Err(error) => {
                tracing::warn!(id = %self.id, %error, "a stored report's URL does not parse");
                None
            }
        });
        let score = self.score.and_then(|s| u8::try_from(s).ok());
        Some(ReportRow {
            id,
            domain: self.domain,
            url,
            is_paste: self.is_paste,
            scheduled: self.scheduled,
            // Unknown states (a newer build wrote them) read as failed: nothing to show.
            state: ReportState::parse(&self.state).unwrap_or(ReportState::Failed),
            created_at: ts(self.created_at),
            analysed_at: self.analysed_at.map(ts),
            score,
            // The grade is the score's (`audit::Grade::from_score`); the stored letter is
            // for queries by hand.
            grade: score.map(Grade::from_score),
            indexable: self.indexable,
            error: self.error,
        })
    }
}

/// Each of `rows` decoded; a row with a column that does not decode (a value of another
/// type, written by hand or by damage: SQLite keeps any type in any column) is skipped and
/// logged, so one damaged row never takes a whole list down.
pub(crate) fn decode_each<'r, R, T>(rows: &'r [R], what: &str) -> Vec<T>
where
    R: sqlx::Row,
    T: sqlx::FromRow<'r, R>,
{
    rows.iter()
        .filter_map(|row| match T::from_row(row) {
            Ok(decoded) => Some(decoded),
            Err(error) => {
                tracing::warn!(%error, what, "a stored row that does not decode is skipped");
                None
            }
        })
        .collect()
}

/// A read of one report that failed: a column that does not decode is that row's damage
/// ([`ServiceError::BadRow`]); anything else is the store's failure.
fn bad_column(id: DamagedRow, source: sqlx::Error, context: &'static str) -> ServiceError {
    match source {
        sqlx::Error::ColumnDecode { .. } | sqlx::Error::Decode(_) => {
            ServiceError::BadRow { id, source }
        }
        source => q(context)(source),
    }
}

/// The select of a [`FullRow`]: a report row joined to its document (the reports table is
/// `r`, for the conditions that follow). A macro so `concat!` can make each query a constant.
macro_rules! full_row_select {
    () => {
        "SELECT r.id, r.domain, r.url, r.is_paste, r.scheduled, r.state, \
         r.created_at, r.analysed_at, r.score, r.indexable, r.error, \
         d.encoding, d.body_encoding, d.robots_body, d.document FROM service_reports r \
         LEFT JOIN service_documents d ON d.id = r.id"
    };
}

/// One report and its document, in one round trip.
const REPORT_SQL: &str = concat!(full_row_select!(), " WHERE r.id = $1");

/// A read row with its document decoded; `None` for a row this service did not write.
fn full_report(found: FullRow, id: &ReportId) -> Result<Option<StoredReport>, ServiceError> {
    let FullRow {
        row,
        encoding,
        body_encoding,
        robots_body: body,
        document: doc,
    } = found;
    let Some(row) = row.into_row() else {
        return Ok(None);
    };
    let body = body
        .map(|bytes| codec::decode_body(body_encoding.unwrap_or(0), bytes))
        .transpose()
        .map_err(ServiceError::codec(id))?;
    let report = match (encoding, doc) {
        (Some(encoding), Some(doc)) => {
            let json = codec::decode(encoding, doc).map_err(ServiceError::codec(id))?;
            let mut analysis: Analysis =
                serde_json::from_str(&json).map_err(ServiceError::document(id))?;
            if let Some(bytes) = &body {
                analysis.robots.set_body_bytes(bytes);
            }
            Some(analysis)
        }
        _ => None,
    };
    Ok(Some(StoredReport {
        row,
        report,
        robots_body: body,
    }))
}

/// A document as stored: the analysis without robots.txt's text (stored once, as bytes, in
/// its own column), encoded by [`codec::encode`], and those bytes by [`codec::encode_body`].
struct Document {
    encoding: i64,
    bytes: Vec<u8>,
    body_encoding: i64,
    robots_body: Vec<u8>,
}

/// `analysis` as stored; `body`: the bytes to keep instead of the analysis's own (a paste's
/// file as received). A body is cut at [`codec::BODY_MAX_BYTES`], the most the fetcher reads
/// of a robots.txt, so that every stored body reads back.
fn document(
    analysis: &Analysis,
    body: Option<&[u8]>,
    id: &ReportId,
) -> Result<Document, ServiceError> {
    let mut copy = analysis.clone();
    // The bytes as received (not the lossy text when they are not UTF-8).
    let text = std::mem::take(&mut copy.robots.body).into_bytes();
    let received = copy.robots.raw_body.take().unwrap_or(text);
    let body = body.unwrap_or(&received);
    let kept = &body[..body.len().min(codec::BODY_MAX_BYTES)];
    let (body_encoding, robots_body) = codec::encode_body(kept).map_err(ServiceError::codec(id))?;
    let json = serde_json::to_string(&copy).map_err(ServiceError::document(id))?;
    let (encoding, bytes) = codec::encode(&json).map_err(ServiceError::codec(id))?;
    Ok(Document {
        encoding: encoding.code(),
        bytes,
        body_encoding: body_encoding.code(),
        robots_body,
    })
}

/// What [`Store::queue_for_client`] did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Queued {
    /// Queued: the report's id.
    Queued(ReportId),
    /// The client has its share of the queue already.
    ClientShareFull,
    /// The queue is full.
    QueueFull,
}

/// Insert a queued report and its job in the open transaction `$tx` (`$client`: the tag of
/// who asked, none for the schedule's). A macro: the transaction's type differs per backend.
macro_rules! insert_queued {
    ($tx:ident, $id:expr, $url:expr, $now:expr, $scheduled:expr, $client:expr) => {{
        let (domain, site) = (registrable_domain($url), site_of($url));
        let insert = "INSERT INTO service_reports (id, domain, url, site, is_paste, scheduled, \
                      state, created_at) VALUES ($1, $2, $3, $4, FALSE, $5, 'queued', $6)";
        let job = "INSERT INTO service_jobs (report_id, url, site, queued_at, client) \
                   VALUES ($1, $2, $3, $4, $5)";
        sqlx::query(insert)
            .bind($id.as_str())
            .bind(&domain)
            .bind($url.as_str())
            .bind(&site)
            .bind($scheduled)
            .bind(ms($now))
            .execute(&mut *$tx)
            .await
            .map_err(q("queue report"))?;
        sqlx::query(job)
            .bind($id.as_str())
            .bind($url.as_str())
            .bind(&site)
            .bind(ms($now))
            .bind($client)
            .execute(&mut *$tx)
            .await
            .map_err(q("queue job"))?;
    }};
}

/// Write (or replace) a report's document.
const INSERT_DOCUMENT: &str =
    "INSERT INTO service_documents (id, encoding, robots_body, document, body_encoding) \
     VALUES ($1, $2, $3, $4, $5) ON CONFLICT (id) DO UPDATE SET encoding = excluded.encoding, \
     robots_body = excluded.robots_body, document = excluded.document, \
     body_encoding = excluded.body_encoding";

impl Store {
    /// Queue an analysis of `url`: a queued report and its job, in one transaction.
    pub async fn queue_analysis(
        &self,
        url: &Url,
        now: Timestamp,
        scheduled: bool,
    ) -> Result<ReportId, ServiceError> {
        let id = ReportId::random().map_err(ServiceError::Random)?;
        let db = &self.db;
        db::write_tx!(db, tx => {
            insert_queued!(tx, id, url, now, scheduled, None::<&str>);
        });
        Ok(id)
    }

    /// Queue an analysis of `url` for the client tagged `client`, unless the client already
    /// has [`MAX_QUEUED_PER_CLIENT`] jobs waiting or running, or the queue holds
    /// [`MAX_QUEUED_JOBS`]. On SQLite the counts and the insert are one write transaction; on
    /// PostgreSQL two clients racing may pass a cap by one each.
    pub async fn queue_for_client(
        &self,
        url: &Url,
        now: Timestamp,
        client: &str,
    ) -> Result<Queued, ServiceError> {
        let id = ReportId::random().map_err(ServiceError::Random)?;
        let db = &self.db;
        let total = "SELECT COUNT(*) FROM service_jobs";
        let mine = "SELECT COUNT(*) FROM service_jobs WHERE client = $1";
        db::write_tx!(db, tx => {
            let total: i64 = sqlx::query_scalar(total).fetch_one(&mut *tx).await
                .map_err(q("count jobs"))?;
            if total >= i64::try_from(MAX_QUEUED_JOBS).unwrap_or(i64::MAX) {
                return Ok(Queued::QueueFull);
            }
            let mine: i64 = sqlx::query_scalar(mine).bind(client).fetch_one(&mut *tx).await
                .map_err(q("count a client's jobs"))?;
            if mine >= i64::try_from(MAX_QUEUED_PER_CLIENT).unwrap_or(i64::MAX) {
                return Ok(Queued::ClientShareFull);
            }
            insert_queued!(tx, id, url, now, false, Some(client));
        });
        Ok(Queued::Queued(id))
    }

    /// A report being analysed now, outside the queue (the schedule runs its own).
    pub async fn start_report(&self, url: &Url, now: Timestamp) -> Result<ReportId, ServiceError> {
        let id = ReportId::random().map_err(ServiceError::Random)?;
        let sql = "INSERT INTO service_reports (id, domain, url, site, is_paste, scheduled, \
                   state, created_at) VALUES ($1, $2, $3, $4, FALSE, TRUE, 'running', $5)";
        let (domain, site) = (registrable_domain(url), site_of(url));
        db::with_pool!(&self.db, pool => sqlx::query(sql).bind(id.as_str()).bind(&domain)
            .bind(url.as_str()).bind(&site).bind(ms(now)).execute(pool).await.map(drop))
        .map_err(q("start report"))?;
        Ok(id)
    }

    /// Store a pasted or uploaded file's offline audit: never listed, ranked or published.
    /// `body` is the file as received (the report's text is its lossy reading).
    pub async fn insert_paste(
        &self,
        analysis: &Analysis,
        body: &[u8],
        now: Timestamp,
    ) -> Result<ReportId, ServiceError> {
        let id = ReportId::random().map_err(ServiceError::Random)?;
        let doc = document(analysis, Some(body), &id)?;
        let sql = "INSERT INTO service_reports (id, is_paste, state, created_at, analysed_at, \
                   score, grade, indexable, report_version, scoring_version) \
                   VALUES ($1, TRUE, 'done', $2, $2, $3, $4, FALSE, $5, $6)";
        let db = &self.db;
        db::write_tx!(db, tx => {
            sqlx::query(sql).bind(id.as_str()).bind(ms(now))
                .bind(i64::from(analysis.score)).bind(analysis.grade.to_string())
                .bind(i64::from(analysis.report_version)).bind(&analysis.scoring_version)
                .execute(&mut *tx).await.map_err(q("insert paste"))?;
            sqlx::query(INSERT_DOCUMENT).bind(id.as_str()).bind(doc.encoding)
                .bind(&doc.robots_body).bind(&doc.bytes).bind(doc.body_encoding)
                .execute(&mut *tx).await.map_err(q("insert paste document"))?;
        });
        Ok(id)
    }

    /// Mark a report running (a worker took its job).
    pub async fn set_running(&self, id: &ReportId) -> Result<(), ServiceError> {
        let sql = "UPDATE service_reports SET state = 'running' WHERE id = $1 AND state <> 'done'";
        db::with_pool!(&self.db, pool => sqlx::query(sql).bind(id.as_str()).execute(pool).await.map(drop))
            .map_err(q("mark running"))?;
        Ok(())
    }

    /// Store a finished analysis.
    pub async fn finish_report(
        &self,
        id: &ReportId,
        analysis: &Analysis,
    ) -> Result<(), ServiceError> {
        // What the public sees never names the addresses a name resolved to.
        let mut redacted = analysis.clone();
        crate::redact::analysis(&mut redacted);
        let analysis = &redacted;
        let doc = document(analysis, None, id)?;
        let sql = "UPDATE service_reports SET state = 'done', analysed_at = $2, score = $3, \
                   grade = $4, indexable = $5, report_version = $6, scoring_version = $7, \
                   error = NULL WHERE id = $1";
        let indexable = crate::indexing::indexable(analysis);
        let db = &self.db;
        db::write_tx!(db, tx => {
            let updated = sqlx::query(sql).bind(id.as_str())
                .bind(ms(analysis.analysed_at)).bind(i64::from(analysis.score))
                .bind(analysis.grade.to_string()).bind(indexable)
                .bind(i64::from(analysis.report_version)).bind(&analysis.scoring_version)
                .execute(&mut *tx).await.map_err(q("finish report"))?.rows_affected();
            // A report deleted meanwhile (data removal) gets no orphan document.
            if updated > 0 {
                sqlx::query(INSERT_DOCUMENT).bind(id.as_str()).bind(doc.encoding)
                    .bind(&doc.robots_body).bind(&doc.bytes).bind(doc.body_encoding)
                    .execute(&mut *tx).await
                    .map_err(q("finish report document"))?;
            }
        });
        Ok(())
    }

    /// Mark a report failed, with why.
    pub async fn fail_report(&self, id: &ReportId, error: &str) -> Result<(), ServiceError> {
        let error = crate::redact::text(error, None);
        let sql = "UPDATE service_reports SET state = 'failed', error = $2 WHERE id = $1";
        db::with_pool!(&self.db, pool => sqlx::query(sql).bind(id.as_str()).bind(&error).execute(pool).await.map(drop))
            .map_err(q("fail report"))?;
        Ok(())
    }

    /// One report with its document.
    pub async fn report(&self, id: &ReportId) -> Result<Option<StoredReport>, ServiceError> {
        let found: Option<FullRow> = db::with_pool!(&self.db, pool => sqlx::query_as(REPORT_SQL)
            .bind(id.as_str()).fetch_optional(pool).await)
        .map_err(|source| bad_column(DamagedRow::Id(id.clone()), source, "load report"))?;
        found
            .map(|row| full_report(row, id))
            .transpose()
            .map(Option::flatten)
    }

    /// The newest finished report of `url` asked for before `before`, with its document, in
    /// one round trip (the report page's comparison).
    pub async fn previous_report(
        &self,
        url: &Url,
        before: Timestamp,
    ) -> Result<Option<StoredReport>, ServiceError> {
        let sql = concat!(
            full_row_select!(),
            " WHERE r.url = $1 AND r.is_paste = FALSE AND r.state = 'done' AND r.created_at < $2 \
             ORDER BY r.created_at DESC LIMIT 1"
        );
        let found: Option<FullRow> = db::with_pool!(&self.db, pool => sqlx::query_as(sql)
            .bind(url.as_str()).bind(ms(before)).fetch_optional(pool).await)
        .map_err(|source| {
            bad_column(
                DamagedRow::PreviousOf(Box::new(url.clone())),
                source,
                "previous report",
            )
        })?;
        let Some(found) = found else {
            return Ok(None);
        };
        let id: ReportId = match found.row.id.parse() {
            Ok(id) => id,
            Err(_) => return Ok(None),
        };
        full_report(found, &id)
    }

    /// The newest report of `url` asked for since `since` that did not fail (queued, running
    /// or done): asking again within the reuse window answers with it.
    pub async fn recent_for_url(
        &self,
        url: &Url,
        since: Timestamp,
    ) -> Result<Option<ReportRow>, ServiceError> {
        let sql = format!(
            "SELECT {ROW_COLUMNS} FROM service_reports WHERE url = $1 AND is_paste = FALSE \
             AND state <> 'failed' AND created_at >= $2 ORDER BY created_at DESC LIMIT 1"
        );
        let rows = self
            .rows(&sql, url.as_str(), ms(since), "recent report")
            .await?;
        Ok(rows.into_iter().next())
    }

    /// The reports of `domain`, newest first, at most `limit`, and how many there are.
    pub async fn domain_reports(
        &self,
        domain: &str,
        limit: usize,
    ) -> Result<(Vec<ReportRow>, u64), ServiceError> {
        self.domain_reports_from(domain, limit, 0).await
    }

    /// [`Store::domain_reports`] after skipping the `offset` newest (the domain page's pages).
    /// A page past the last has no rows and a count of 0.
    pub async fn domain_reports_from(
        &self,
        domain: &str,
        limit: usize,
        offset: u64,
    ) -> Result<(Vec<ReportRow>, u64), ServiceError> {
        // The count beside the rows (computed before the LIMIT): one round trip, not two.
        let sql = format!(
            "SELECT {ROW_COLUMNS}, COUNT(*) OVER () AS total FROM service_reports \
             WHERE domain = $1 AND is_paste = FALSE ORDER BY created_at DESC, id LIMIT $2 OFFSET $3"
        );
        let limit = i64::try_from(limit).unwrap_or(i64::MAX);
        let offset = i64::try_from(offset).unwrap_or(i64::MAX);
        let rows: Vec<CountedRow> = db::with_pool!(&self.db, pool => sqlx::query(&sql)
            .bind(domain).bind(limit).bind(offset).fetch_all(pool).await
            .map(|rows| decode_each(&rows, "domain reports")))
        .map_err(q("domain reports"))?;
        let total = rows
            .first()
            .map_or(0, |r| u64::try_from(r.total).unwrap_or(0));
        let rows = rows.into_iter().filter_map(|r| r.row.into_row()).collect();
        Ok((rows, total))
    }

    async fn rows(
        &self,
        sql: &str,
        a: &str,
        b: i64,
        context: &'static str,
    ) -> Result<Vec<ReportRow>, ServiceError> {
        let rows: Vec<DbRow> = db::with_pool!(&self.db, pool => sqlx::query(sql)
            .bind(a).bind(b).fetch_all(pool).await.map(|rows| decode_each(&rows, context)))
        .map_err(q(context))?;
        Ok(rows.into_iter().filter_map(DbRow::into_row).collect())
    }

    /// Reports by state (`/api/health`).
    pub async fn count_state(&self, state: ReportState) -> Result<i64, ServiceError> {
        let sql = "SELECT COUNT(*) FROM service_reports WHERE state = $1";
        db::with_pool!(&self.db, pool => sqlx::query_scalar(sql).bind(state.as_str()).fetch_one(pool).await)
            .map_err(q("count reports"))
    }
}
