//! Queueing, claiming and committing URLs.

use db::{millis, with_pool, write_tx, DbError};
use jiff::Timestamp;
use sqlx::QueryBuilder;

use super::places::opt_millis;
use super::{HostId, OriginId, Store, UrlId, UrlKind, UrlState};
use crate::store::places::HostInfo;

/// Rows per multi-row `INSERT` (10 values each: well inside both backends' parameter limits).
const INSERT_CHUNK: usize = 500;

/// A URL to queue.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NewUrl {
    /// Its frontier key ([`crate::normal::NormalUrl::key`]).
    pub key: String,
    /// Its host's placement.
    pub host: HostInfo,
    /// Page or media.
    pub kind: UrlKind,
    /// Lower is claimed first ([`super::PRIORITY_SITEMAPS`], [`super::PRIORITY_LISTED`],
    /// [`super::PRIORITY_LINKED`]).
    pub priority: i16,
    /// Whether a sitemap lists it.
    pub in_sitemap: bool,
    /// Its sitemap `lastmod`.
    pub lastmod: Option<Timestamp>,
}

/// A URL claimed for fetching.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ClaimedUrl {
    /// Its row.
    pub id: UrlId,
    /// Its frontier key.
    pub key: String,
    /// Its host's row.
    pub host_id: HostId,
    /// Page or media.
    pub kind: UrlKind,
    /// Failed attempts so far.
    pub attempts: u32,
    /// Stored validators, for a conditional revisit.
    pub etag: Option<String>,
    /// Stored `Last-Modified`.
    pub last_modified: Option<String>,
    /// Its sitemap `lastmod`.
    pub lastmod: Option<Timestamp>,
    /// When it was last fetched.
    pub fetched_at: Option<Timestamp>,
    /// Whether a sitemap lists it.
    pub in_sitemap: bool,
    /// The WARC record id of its last stored response (a revisit refers to it).
    pub warc_record_id: Option<String>,
    /// The redirect chain of its last fetch (JSON, see `FetchFacts::redirects`).
    pub redirects: Option<String>,
}

/// When a URL is due again.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Due {
    /// Already: its state alone decides (a URL back in the queue, or given up).
    #[default]
    Now,
    /// For a revisit, at this time (kept for the status: the run's `--revisit-after`
    /// decides, see [`Store::requeue_due`]).
    At(Timestamp),
    /// Not until something queues it again: a media file (fetched once) or a sitemap URL
    /// with a `lastmod` (only a newer `lastmod` brings it back).
    Never,
}

/// How [`Due::Never`] is stored: the largest time rather than `NULL`, because the column is
/// `NOT NULL` in every store already written, and the largest value sorts after every real
/// time, so a "due by then" comparison needs no `NULL` case. It never leaves the store.
const NEVER_DUE: i64 = i64::MAX;

impl Due {
    /// The stored `next_due` (ms): the Unix epoch for [`Due::Now`], [`NEVER_DUE`] for
    /// [`Due::Never`].
    pub(super) fn stored(self) -> i64 {
        match self {
            Due::Now => 0,
            Due::At(t) => millis(t),
            Due::Never => NEVER_DUE,
        }
    }
}

/// What a fetch (or a decision not to fetch) established about a URL.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Outcome {
    /// The URL's row.
    pub id: UrlId,
    /// Its new state (`Queued` again after a retryable failure).
    pub state: Option<UrlState>,
    /// Why it was skipped, disallowed or failed.
    pub reason: Option<String>,
    /// Failed attempts so far.
    pub attempts: u32,
    /// The last error, if the attempt failed.
    pub last_error: Option<String>,
    /// When it is due again.
    pub next_due: Due,
    /// Set when a response was received and archived: replaces the stored fetch facts.
    pub fetch: Option<FetchFacts>,
}

impl Outcome {
    /// The outcome of URL `id` that leaves it queued, no attempt counted, nothing else
    /// said: the one the others are built on.
    pub fn of(id: UrlId) -> Outcome {
        Outcome {
            id,
            state: None,
            reason: None,
            attempts: 0,
            last_error: None,
            next_due: Due::Now,
            fetch: None,
        }
    }
}

/// The facts of one archived response.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct FetchFacts {
    /// When it was fetched.
    pub fetched_at: Timestamp,
    /// The HTTP status.
    pub status: http::StatusCode,
    /// Its `ETag`.
    pub etag: Option<String>,
    /// Its `Last-Modified`.
    pub last_modified: Option<String>,
    /// The SHA-1 (base32) of its payload (`None` keeps the stored one: a 304).
    pub content_hash: Option<String>,
    /// Payload bytes.
    pub bytes: u64,
    /// The WARC file holding its response.
    pub warc_file: Option<String>,
    /// The record's offset in it.
    pub warc_offset: Option<u64>,
    /// The response (or revisit) record's id.
    pub warc_record_id: Option<String>,
    /// Robots directives that applied (`noindex,nofollow`, ...).
    pub directives: Option<String>,
    /// The redirect chain that led to the response, JSON: `{"hops": [{"url", "status",
    /// "location"}...], "final_url"}` (revisits go to `final_url` directly).
    pub redirects: Option<String>,
}

/// An origin's pacing state after a batch, with what it served.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct OriginUpdate {
    /// The origin's row.
    pub id: OriginId,
    /// The minimum gap.
    pub gap: std::time::Duration,
    /// When its next request may start.
    pub next_start: Timestamp,
    /// Failures in a row.
    pub failures: u32,
    /// Paused.
    pub paused: bool,
    /// The fetch pacer's exported state (JSON).
    pub pacer_state: Option<String>,
    /// Requests made since the last update.
    pub requests: u64,
    /// Bytes received since the last update.
    pub bytes: u64,
}

/// Everything committed together, after the WARC records it refers to are written.
#[derive(Clone, Debug, Default)]
pub struct Batch {
    /// URL outcomes.
    pub outcomes: Vec<Outcome>,
    /// Origin pacing states.
    pub origins: Vec<OriginUpdate>,
    /// Newly found URLs.
    pub new_urls: Vec<NewUrl>,
    /// Media stored: `(content_hash, url_id, content_type, bytes)`.
    pub media: Vec<(String, UrlId, Option<String>, u64)>,
}

impl Batch {
    /// Whether there is nothing to commit.
    pub fn is_empty(&self) -> bool {
        self.outcomes.is_empty()
            && self.origins.is_empty()
            && self.new_urls.is_empty()
            && self.media.is_empty()
    }
}

/// The multi-row upsert of new URLs. A plain link to a known URL changes nothing; a sitemap
/// listing marks it, keeps the better priority, records the `lastmod`, and queues a fetched
/// URL again when the `lastmod` is newer than its last fetch.
fn upsert_sql<DB: sqlx::Database>(rows: &[NewUrl], now: i64) -> QueryBuilder<'_, DB>
where
    for<'q> i64: sqlx::Encode<'q, DB> + sqlx::Type<DB>,
    for<'q> i16: sqlx::Encode<'q, DB> + sqlx::Type<DB>,
    for<'q> Option<i64>: sqlx::Encode<'q, DB> + sqlx::Type<DB>,
    for<'q> &'q str: sqlx::Encode<'q, DB> + sqlx::Type<DB>,
{
    let mut q = QueryBuilder::new(
        "INSERT INTO crawl_urls (key, host_id, origin_id, site_id, kind, state, priority, in_sitemap, lastmod, discovered_at) ",
    );
    q.push_values(rows, |mut b, u| {
        b.push_bind(u.key.as_str())
            .push_bind(u.host.host_id)
            .push_bind(u.host.origin_id)
            .push_bind(u.host.site_id)
            .push_bind(u.kind.code())
            .push_bind(UrlState::Queued.code())
            .push_bind(u.priority)
            .push_bind(i16::from(u.in_sitemap))
            .push_bind(opt_millis(u.lastmod))
            .push_bind(now);
    });
    q.push(
        " ON CONFLICT (key) DO UPDATE SET \
         in_sitemap = 1, \
         priority = CASE WHEN excluded.priority < crawl_urls.priority THEN excluded.priority ELSE crawl_urls.priority END, \
         lastmod = COALESCE(excluded.lastmod, crawl_urls.lastmod), \
         state = CASE WHEN crawl_urls.state = 2 AND excluded.lastmod IS NOT NULL \
                 AND (crawl_urls.fetched_at IS NULL OR excluded.lastmod > crawl_urls.fetched_at) \
                 THEN 0 ELSE crawl_urls.state END \
         WHERE excluded.in_sitemap = 1",
    );
    q
}

/// One row per key (PostgreSQL refuses an upsert touching a row twice): a later duplicate
/// merges into the first (sitemap listing, better priority, a `lastmod`).
fn dedup(urls: &[NewUrl]) -> std::borrow::Cow<'_, [NewUrl]> {
    let mut seen = std::collections::HashMap::with_capacity(urls.len());
    let mut out: Vec<NewUrl> = Vec::with_capacity(urls.len());
    for u in urls {
        match seen.get(u.key.as_str()) {
            None => {
                seen.insert(u.key.as_str(), out.len());
                out.push(u.clone());
            }
            Some(&i) => {
                let kept = &mut out[i];
                kept.in_sitemap |= u.in_sitemap;
                kept.priority = kept.priority.min(u.priority);
                kept.lastmod = kept.lastmod.max(u.lastmod);
            }
        }
    }
    if out.len() == urls.len() {
        std::borrow::Cow::Borrowed(urls)
    } else {
        std::borrow::Cow::Owned(out)
    }
}

// The parts of `Store::commit`, each run inside its transaction `$tx` (macros: the body
// compiles once per backend, as in `write_tx!`).

/// Write URL outcomes (`$outcomes`, a `&[Outcome]`).
macro_rules! write_outcomes {
    ($tx:ident, $outcomes:expr) => {
        for (rows, with_response) in super::outcomes::statements($outcomes) {
            super::outcomes::update_sql(&rows, with_response)
                .build()
                .persistent(rows.len() == super::outcomes::OUTCOME_CHUNK)
                .execute(&mut *$tx)
                .await
                .map_err(DbError::query("update URLs"))?;
        }
    };
}

/// Write origin pacing states (`$origins`, a `&[OriginUpdate]`) where `$holder` still holds
/// the lease, the rows locked first on PostgreSQL (`$postgres`).
macro_rules! write_origins {
    ($tx:ident, $origins:expr, $holder:expr, $postgres:expr) => {
        // Origin rows in id order, as every transaction here takes them (see `pacing`).
        let mut origins: Vec<&OriginUpdate> = $origins.iter().collect();
        origins.sort_by_key(|o| o.id);
        if !origins.is_empty() && $postgres {
            let ids: Vec<OriginId> = origins.iter().map(|o| o.id).collect();
            sqlx::query(&super::pacing::lock_sql(&ids))
                .persistent(false)
                .execute(&mut *$tx)
                .await
                .map_err(DbError::query("lock origins"))?;
        }
        for chunk in origins.chunks(super::pacing::PACING_CHUNK) {
            super::pacing::update_sql(chunk, $holder.as_str())
                .build()
                .persistent(chunk.len() == super::pacing::PACING_CHUNK)
                .execute(&mut *$tx)
                .await
                .map_err(DbError::query("update origins"))?;
        }
    };
}

/// Move the URLs just queued (`$new_urls`, a `&[NewUrl]`) whose host's origin was merged
/// into another, after they were found, to the origin it became.
macro_rules! follow_merged_origins {
    ($tx:ident, $new_urls:expr) => {
        if !$new_urls.is_empty() {
            let mut ids: Vec<OriginId> = $new_urls.iter().map(|u| u.host.origin_id).collect();
            ids.sort_unstable();
            ids.dedup();
            let list = super::id_list(&ids);
            let merged: Vec<(OriginId, OriginId)> = sqlx::query_as(&format!(
                "SELECT id, merged_into FROM crawl_origins WHERE id IN ({list}) AND merged_into IS NOT NULL"
            ))
            .persistent(false)
            .fetch_all(&mut *$tx)
            .await
            .map_err(DbError::query("read merged origins"))?;
            for (from, into) in merged {
                sqlx::query("UPDATE crawl_urls SET origin_id = $1 WHERE origin_id = $2")
                    .bind(into)
                    .bind(from)
                    .execute(&mut *$tx)
                    .await
                    .map_err(DbError::query("move URLs of merged origins"))?;
            }
        }
    };
}

/// Record media stored (`$media`, `Batch::media`) at `$now` (ms), each content once.
macro_rules! store_media {
    ($tx:ident, $media:expr, $now:expr) => {
        for (hash, url_id, content_type, bytes) in $media {
            sqlx::query(
                "INSERT INTO crawl_media (content_hash, url_id, content_type, bytes, stored_at) \
                 VALUES ($1, $2, $3, $4, $5) ON CONFLICT (content_hash) DO NOTHING",
            )
            .bind(hash)
            .bind(url_id)
            .bind(content_type.as_deref())
            .bind(i64::try_from(*bytes).unwrap_or(i64::MAX))
            .bind($now)
            .execute(&mut *$tx)
            .await
            .map_err(DbError::query("store media"))?;
        }
    };
}

impl Store {
    /// Queue URLs (known ones are left as they are, except as [`NewUrl`] says for sitemaps).
    pub async fn enqueue(&self, urls: &[NewUrl]) -> Result<(), DbError> {
        if urls.is_empty() {
            return Ok(());
        }
        let urls = dedup(urls);
        write_tx!(&self.db, tx => {
            for chunk in urls.chunks(INSERT_CHUNK) {
                upsert_sql(chunk, millis(Timestamp::now()))
                    .build()
                    .persistent(chunk.len() == INSERT_CHUNK)
                    .execute(&mut *tx)
                    .await
                    .map_err(DbError::query("queue URLs"))?;
            }
        });
        Ok(())
    }

    /// Claim up to `limit` queued URLs of an origin this process has leased (sitemap URLs
    /// first, then in the order found); they become in flight.
    pub async fn claim_urls(
        &self,
        origin_id: OriginId,
        limit: u32,
    ) -> Result<Vec<ClaimedUrl>, DbError> {
        self.claim_urls_skipping(origin_id, limit, &[]).await
    }

    /// [`Store::claim_urls`], leaving the URLs of the hosts `skip` queued (an operator's
    /// exclusion, `crate::control`).
    pub async fn claim_urls_skipping(
        &self,
        origin_id: OriginId,
        limit: u32,
        skip: &[HostId],
    ) -> Result<Vec<ClaimedUrl>, DbError> {
        const SQL: &str = "UPDATE crawl_urls SET state = 1 WHERE id IN (SELECT id FROM crawl_urls \
                   WHERE origin_id = $1 AND state = 0 ORDER BY priority, id LIMIT $2) \
                   RETURNING id, key, host_id, kind, attempts, etag, last_modified, lastmod, \
                   fetched_at, in_sitemap, warc_record_id, priority, redirects";
        let skipping = (!skip.is_empty()).then(|| {
            SQL.replace(
                "AND state = 0 ORDER BY",
                &format!(
                    "AND state = 0 AND host_id NOT IN ({}) ORDER BY",
                    super::id_list(skip)
                ),
            )
        });
        let sql = skipping.as_deref().unwrap_or(SQL);
        type Row = (
            UrlId,
            String,
            HostId,
            i16,
            i32,
            Option<String>,
            Option<String>,
            Option<i64>,
            Option<i64>,
            i16,
            Option<String>,
            i16,
            Option<String>,
        );
        let rows: Vec<Row> = with_pool!(&self.db, pool => sqlx::query_as(sql)
            .persistent(skipping.is_none())
            .bind(origin_id)
            .bind(i64::from(limit))
            .fetch_all(pool)
            .await)
        .map_err(DbError::query("claim URLs"))?;
        let mut rows = rows;
        // RETURNING gives no order guarantee: restore the claim order.
        rows.sort_by_key(|r| (r.11, r.0));
        let claimed: Vec<ClaimedUrl> = rows
            .into_iter()
            .map(|r| ClaimedUrl {
                id: r.0,
                key: r.1,
                host_id: r.2,
                kind: UrlKind::from_code(r.3),
                attempts: u32::try_from(r.4).unwrap_or(0),
                etag: r.5,
                last_modified: r.6,
                lastmod: r.7.map(db::from_millis),
                fetched_at: r.8.map(db::from_millis),
                in_sitemap: r.9 != 0,
                warc_record_id: r.10,
                redirects: r.12,
            })
            .collect();
        Ok(claimed)
    }

    /// Put URLs back in the queue (a clean stop with requests not made).
    pub async fn return_to_queue(&self, ids: &[UrlId]) -> Result<(), DbError> {
        if ids.is_empty() {
            return Ok(());
        }
        let list = super::id_list(ids);
        let sql = format!("UPDATE crawl_urls SET state = 0 WHERE state = 1 AND id IN ({list})");
        with_pool!(&self.db, pool => sqlx::query(&sql).persistent(false).execute(pool).await.map(drop))
            .map_err(DbError::query("return URLs to the queue"))
    }

    /// Queue again every fetched URL due for a revisit by `now`; returns how many.
    ///
    /// A URL revisited by time (its `next_due` is not [`Due::Never`]: not media, not a
    /// sitemap URL with a `lastmod`) is due once `revisit_after` has passed since its last
    /// fetch, by *this* run's `--revisit-after`: the interval the operator gives now
    /// decides, not the one of the run that fetched it (its `next_due`, kept for status).
    pub async fn requeue_due(
        &self,
        now: Timestamp,
        revisit_after: std::time::Duration,
    ) -> Result<u64, DbError> {
        let interval = i64::try_from(revisit_after.as_millis()).unwrap_or(i64::MAX);
        let fetched_by = millis(now).saturating_sub(interval);
        let sql = "UPDATE crawl_urls SET state = 0 WHERE state = 2 AND next_due <> $1 \
                   AND fetched_at <= $2";
        with_pool!(&self.db, pool => sqlx::query(sql)
            .bind(NEVER_DUE)
            .bind(fetched_by)
            .execute(pool)
            .await
            .map(|r| r.rows_affected()))
        .map_err(DbError::query("requeue due URLs"))
    }

    /// Queue every seed site's sitemaps entry again: each run reads sitemaps first
    /// (conditionally). Returns how many.
    pub async fn requeue_sitemaps(&self) -> Result<u64, DbError> {
        let sql = "UPDATE crawl_urls SET state = 0 WHERE kind = 2 AND state <> 1";
        with_pool!(&self.db, pool => sqlx::query(sql).execute(pool).await.map(|r| r.rows_affected()))
            .map_err(DbError::query("requeue sitemaps"))
    }

    /// Queue again the URLs a previous run gave up on (attempts reset): a later run tries them
    /// again. Returns how many.
    pub async fn retry_failed(&self) -> Result<u64, DbError> {
        let sql = "UPDATE crawl_urls SET state = 0, attempts = 0 WHERE state = 3";
        let n = with_pool!(&self.db, pool => sqlx::query(sql).execute(pool).await.map(|r| r.rows_affected()))
            .map_err(DbError::query("retry failed URLs"))?;
        // Sites given up on an unreachable robots.txt start a new run of attempts.
        let sql = "UPDATE crawl_sites SET robots_failures = 0 WHERE robots_failures <> 0";
        with_pool!(&self.db, pool => sqlx::query(sql).execute(pool).await.map(drop))
            .map_err(DbError::query("reset robots.txt failures"))?;
        Ok(n)
    }

    /// Give up every queued URL of a site with `reason` (its robots.txt stayed unreachable);
    /// returns how many.
    pub async fn fail_site(&self, site_id: super::SiteId, reason: &str) -> Result<u64, DbError> {
        let sql = "UPDATE crawl_urls SET state = 3, reason = $1, last_error = $1 WHERE site_id = $2 AND state IN (0, 1)";
        with_pool!(&self.db, pool => sqlx::query(sql).bind(reason).bind(site_id).execute(pool).await.map(|r| r.rows_affected()))
            .map_err(DbError::query("give up a site"))
    }

    /// Commit a batch in one transaction. Origin updates apply only while `holder` still
    /// holds the origin's lease (a process that lost it must not overwrite the new holder's
    /// pace).
    pub async fn commit(&self, batch: &Batch, holder: &db::Holder) -> Result<(), DbError> {
        if batch.is_empty() {
            return Ok(());
        }
        let now = millis(Timestamp::now());
        let new_urls = dedup(&batch.new_urls);
        let postgres = self.db.backend() == db::Backend::Postgres;
        write_tx!(&self.db, tx => {
            write_outcomes!(tx, &batch.outcomes);
            write_origins!(tx, &batch.origins, holder, postgres);
            for chunk in new_urls.chunks(INSERT_CHUNK) {
                upsert_sql(chunk, now)
                    .build()
                    .persistent(chunk.len() == INSERT_CHUNK)
                    .execute(&mut *tx)
                    .await
                    .map_err(DbError::query("queue URLs"))?;
            }
            follow_merged_origins!(tx, &new_urls);
            store_media!(tx, &batch.media, now);
        });
        Ok(())
    }
}
