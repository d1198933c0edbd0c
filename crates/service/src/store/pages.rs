//! Reads for the published pages: the current report of every URL, whether a URL's or a
//! domain's newest reports may be indexed, every finished report's score for the statistics.

use db::sqlx;
use jiff::Timestamp;
use url::Url;

use super::{ts, Store};
use crate::error::{q, ServiceError};
use crate::model::CurrentReport;

/// Every URL's newest done report (pastes never).
const CURRENT: &str = "SELECT r.domain, r.id, r.url, r.created_at, r.score, r.indexable, \
     COALESCE(d.off_ranking, FALSE), d.icon IS NOT NULL FROM service_reports r \
     JOIN (SELECT url, MAX(created_at) AS at FROM service_reports \
           WHERE is_paste = FALSE AND state = 'done' GROUP BY url) n \
       ON n.url = r.url AND n.at = r.created_at \
     LEFT JOIN service_domains d ON d.domain = r.domain \
     WHERE r.is_paste = FALSE AND r.state = 'done'";

/// Whether any URL of a domain has an indexable newest done report.
const DOMAIN_INDEXABLE: &str = "SELECT COUNT(*) FROM service_reports r \
     JOIN (SELECT url, MAX(created_at) AS at FROM service_reports \
           WHERE domain = $1 AND is_paste = FALSE AND state = 'done' GROUP BY url) n \
       ON n.url = r.url AND n.at = r.created_at \
     WHERE r.is_paste = FALSE AND r.state = 'done' AND r.indexable = TRUE";

impl Store {
    /// Whether the newest finished report of `url` is indexable; `None` when there is none.
    pub async fn url_indexable(&self, url: &Url) -> Result<Option<bool>, ServiceError> {
        let sql = "SELECT indexable FROM service_reports WHERE url = $1 AND is_paste = FALSE \
                   AND state = 'done' ORDER BY created_at DESC LIMIT 1";
        db::with_pool!(&self.db, pool => sqlx::query_scalar(sql).bind(url.as_str()).fetch_optional(pool).await)
            .map_err(q("url indexable"))
    }

    /// Whether at least one URL of `domain` may be indexed by its newest finished report.
    pub async fn domain_indexable(&self, domain: &str) -> Result<bool, ServiceError> {
        let n: i64 = db::with_pool!(&self.db, pool => sqlx::query_scalar(DOMAIN_INDEXABLE)
            .bind(domain).fetch_one(pool).await)
        .map_err(q("domain indexable"))?;
        Ok(n > 0)
    }

    /// Every URL's newest finished report; rows this service did not write are skipped and
    /// logged.
    pub async fn current_reports(&self) -> Result<Vec<CurrentReport>, ServiceError> {
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
        let rows: Vec<T> = db::with_pool!(&self.db, pool => sqlx::query(CURRENT).fetch_all(pool)
            .await.map(|rows| super::reports::decode_each(&rows, "current reports")))
        .map_err(q("current reports"))?;
        Ok(rows
            .into_iter()
            .filter_map(
                |(domain, id, url, at, score, indexable, off_ranking, has_icon)| {
                    let report = (|| {
                        Some(CurrentReport {
                            domain: domain?,
                            id: id.parse().ok()?,
                            url: Url::parse(url.as_deref()?).ok()?,
                            created_at: ts(at),
                            score: u8::try_from(score?).ok()?,
                            indexable,
                            off_ranking,
                            has_icon,
                        })
                    })();
                    if report.is_none() {
                        tracing::warn!(%id, "a current report that does not read is skipped");
                    }
                    report
                },
            )
            .collect())
    }

    /// Every finished report (no pastes): when it was asked for, and its score.
    pub async fn done_scores(&self) -> Result<Vec<(Timestamp, u8)>, ServiceError> {
        let sql = "SELECT created_at, score FROM service_reports \
                   WHERE is_paste = FALSE AND state = 'done'";
        let rows: Vec<(i64, Option<i64>)> = db::with_pool!(&self.db, pool =>
            sqlx::query(sql).fetch_all(pool).await
                .map(|rows| super::reports::decode_each(&rows, "report scores")))
        .map_err(q("report scores"))?;
        Ok(rows
            .into_iter()
            .filter_map(|(at, score)| Some((ts(at), u8::try_from(score?).ok()?)))
            .collect())
    }
}
