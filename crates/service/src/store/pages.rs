//! Reads for the HTML pages: the previous report of a URL, the current report of every URL,
//! every finished report's score for the statistics.

use db::sqlx;
use jiff::Timestamp;
use url::Url;

use super::{ms, ts, Store};
use crate::error::{q, ServiceError};
use crate::ids::ReportId;

/// One URL's newest finished report, with what the pages need about its domain.
#[derive(Clone, Debug, PartialEq)]
pub struct CurrentRow {
    /// The domain.
    pub domain: String,
    /// The report.
    pub id: ReportId,
    /// The URL.
    pub url: Url,
    /// When it was asked for.
    pub created_at: Timestamp,
    /// Its score.
    pub score: u8,
    /// Whether it may be indexed and ranked.
    pub indexable: bool,
    /// Whether its domain is kept off the ranking.
    pub off_ranking: bool,
    /// Whether its domain has an icon.
    pub has_icon: bool,
}

/// Every URL's newest done report (pastes never).
const CURRENT: &str = "SELECT r.domain, r.id, r.url, r.created_at, r.score, r.indexable, \
     COALESCE(d.off_ranking, FALSE), d.icon IS NOT NULL FROM service_reports r \
     JOIN (SELECT url, MAX(created_at) AS at FROM service_reports \
           WHERE is_paste = FALSE AND state = 'done' GROUP BY url) n \
       ON n.url = r.url AND n.at = r.created_at \
     LEFT JOIN service_domains d ON d.domain = r.domain \
     WHERE r.is_paste = FALSE AND r.state = 'done'";

impl Store {
    /// The newest finished report of `url` asked for before `before`.
    pub async fn previous_done(
        &self,
        url: &Url,
        before: Timestamp,
    ) -> Result<Option<ReportId>, ServiceError> {
        let sql = "SELECT id FROM service_reports WHERE url = $1 AND is_paste = FALSE \
                   AND state = 'done' AND created_at < $2 ORDER BY created_at DESC LIMIT 1";
        let id: Option<String> = db::with_pool!(&self.db, pool => sqlx::query_scalar(sql)
            .bind(url.as_str()).bind(ms(before)).fetch_optional(pool).await)
        .map_err(q("previous report"))?;
        Ok(id.and_then(|id| id.parse().ok()))
    }

    /// Whether the newest finished report of `url` is indexable; `None` when there is none.
    pub async fn url_indexable(&self, url: &Url) -> Result<Option<bool>, ServiceError> {
        let sql = "SELECT indexable FROM service_reports WHERE url = $1 AND is_paste = FALSE \
                   AND state = 'done' ORDER BY created_at DESC LIMIT 1";
        db::with_pool!(&self.db, pool => sqlx::query_scalar(sql).bind(url.as_str()).fetch_optional(pool).await)
            .map_err(q("url indexable"))
    }

    /// Every URL's newest finished report.
    pub async fn current_rows(&self) -> Result<Vec<CurrentRow>, ServiceError> {
        type T = (
            Option<String>,
            String,
            Option<String>,
            i64,
            Option<i64>,
            bool,
            bool,
            bool,
        );
        let rows: Vec<T> =
            db::with_pool!(&self.db, pool => sqlx::query_as(CURRENT).fetch_all(pool).await)
                .map_err(q("current reports"))?;
        Ok(rows
            .into_iter()
            .filter_map(
                |(domain, id, url, at, score, indexable, off_ranking, has_icon)| {
                    Some(CurrentRow {
                        domain: domain?,
                        id: id.parse().ok()?,
                        url: Url::parse(&url?).ok()?,
                        created_at: ts(at),
                        score: u8::try_from(score?).ok()?,
                        indexable,
                        off_ranking,
                        has_icon,
                    })
                },
            )
            .collect())
    }

    /// Every finished report (no pastes): id, time and score.
    pub async fn done_scores(&self) -> Result<Vec<(ReportId, Timestamp, u8)>, ServiceError> {
        let sql = "SELECT id, created_at, score FROM service_reports \
                   WHERE is_paste = FALSE AND state = 'done'";
        let rows: Vec<(String, i64, Option<i64>)> = db::with_pool!(&self.db, pool =>
            sqlx::query_as(sql).fetch_all(pool).await)
        .map_err(q("report scores"))?;
        Ok(rows
            .into_iter()
            .filter_map(|(id, at, score)| {
                Some((id.parse().ok()?, ts(at), u8::try_from(score?).ok()?))
            })
            .collect())
    }

    /// The domains with monthly summaries.
    pub async fn summary_domains(&self) -> Result<Vec<String>, ServiceError> {
        let sql = "SELECT DISTINCT domain FROM service_monthly ORDER BY domain";
        db::with_pool!(&self.db, pool => sqlx::query_scalar(sql).fetch_all(pool).await)
            .map_err(q("summary domains"))
    }
}
