//! Retention (seed 004, "How long it is kept"): reports older than
//! [`RETENTION_MONTHS`](crate::limits::RETENTION_MONTHS) are folded into one summary per
//! domain and calendar month (UTC): how many reports, how many distinct URLs, the best,
//! average and lowest score. The newest report of each URL is kept until a newer one replaces
//! it. Old pastes and old failed analyses are deleted with no summary.
//!
//! Each domain is folded in one write transaction (summaries updated, reports deleted), so a
//! crash midway leaves either the reports or their summary, never neither or both. Distinct
//! URLs stay exact across passes through a per-month set of 64-bit URL hashes (not the URLs).

use std::collections::BTreeMap;

use db::sqlx;
use jiff::{tz::TimeZone, Timestamp, ToSpan};
use serde::Serialize;

use super::{ms, ts, Store};
use crate::error::{q, ServiceError};
use crate::limits::RETENTION_MONTHS;

/// Reports deleted per statement (their ids are listed in it).
const DELETE_BATCH: usize = 500;

/// What a retention pass did (or, dry, would do).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct RetentionOutcome {
    /// The time the pass ran as of.
    pub as_of: String,
    /// Reports asked for before this are past retention.
    pub cutoff: String,
    /// Whether nothing was changed.
    pub dry_run: bool,
    /// Reports folded into summaries and deleted.
    pub folded: u64,
    /// Domains with reports folded.
    pub domains: u64,
    /// Monthly summaries created or updated.
    pub summaries: u64,
    /// Old reports kept as the newest of their URL.
    pub kept_newest: u64,
    /// Old failed analyses deleted.
    pub failed_deleted: u64,
    /// Old pastes deleted.
    pub pastes_deleted: u64,
}

/// One monthly summary of a domain.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct MonthlySummary {
    /// `YYYY-MM` (UTC).
    pub month: String,
    /// Reports folded.
    pub reports: i64,
    /// Distinct URLs they covered.
    pub urls: i64,
    /// Best score.
    pub best: i64,
    /// Average score.
    pub average: f64,
    /// Lowest score.
    pub lowest: i64,
}

/// The time before which reports are past retention, as of `as_of`.
pub fn cutoff(as_of: Timestamp) -> Result<Timestamp, ServiceError> {
    let zoned = as_of.to_zoned(TimeZone::UTC);
    let back = zoned
        .checked_sub(i64::from(RETENTION_MONTHS).months())
        .map_err(ServiceError::Time)?;
    Ok(back.timestamp())
}

/// The `YYYY-MM` (UTC) of a time.
fn month_of(t: Timestamp) -> String {
    t.to_zoned(TimeZone::UTC).strftime("%Y-%m").to_string()
}

/// A stable 64-bit hash of a URL (FNV-1a): counts distinct URLs without keeping them.
fn url_hash(url: &str) -> i64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in url.bytes() {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    i64::from_ne_bytes(h.to_ne_bytes())
}

/// A report to fold: id, URL, month, score.
type Fold = (String, String, String, i64);

impl Store {
    /// Run the retention pass as of `as_of`; `dry_run` counts without changing anything.
    pub async fn retention(
        &self,
        as_of: Timestamp,
        dry_run: bool,
    ) -> Result<RetentionOutcome, ServiceError> {
        let cut = cutoff(as_of)?;
        let mut out = RetentionOutcome {
            as_of: as_of.to_string(),
            cutoff: cut.to_string(),
            dry_run,
            ..RetentionOutcome::default()
        };
        let by_domain = self.to_fold(cut).await?;
        out.domains = by_domain.len() as u64;
        for (domain, reports) in &by_domain {
            out.folded += reports.len() as u64;
            let months: std::collections::BTreeSet<&str> =
                reports.iter().map(|r| r.2.as_str()).collect();
            out.summaries += months.len() as u64;
            if !dry_run {
                self.fold_domain(domain, reports).await?;
            }
        }
        out.kept_newest = self.count_kept_newest(cut).await?;
        out.failed_deleted = self
            .delete_old(cut, "is_paste = FALSE AND state = 'failed'", dry_run)
            .await?;
        out.pastes_deleted = self.delete_old(cut, "is_paste = TRUE", dry_run).await?;
        Ok(out)
    }

    /// Old done reports with a newer done report of the same URL, by domain.
    async fn to_fold(&self, cut: Timestamp) -> Result<BTreeMap<String, Vec<Fold>>, ServiceError> {
        let sql = "SELECT r.id, r.domain, r.url, r.created_at, r.score FROM service_reports r \
             WHERE r.is_paste = FALSE AND r.state = 'done' AND r.created_at < $1 \
             AND EXISTS (SELECT 1 FROM service_reports n WHERE n.url = r.url AND n.is_paste = FALSE \
                         AND n.state = 'done' AND n.created_at > r.created_at)";
        type T = (String, Option<String>, Option<String>, i64, Option<i64>);
        let rows: Vec<T> = db::with_pool!(&self.db, pool => sqlx::query_as(sql).bind(ms(cut)).fetch_all(pool).await)
            .map_err(q("reports to fold"))?;
        let mut by_domain: BTreeMap<String, Vec<Fold>> = BTreeMap::new();
        for (id, domain, url, at, score) in rows {
            let (Some(domain), Some(url), Some(score)) = (domain, url, score) else {
                continue;
            };
            by_domain
                .entry(domain)
                .or_default()
                .push((id, url, month_of(ts(at)), score));
        }
        Ok(by_domain)
    }

    /// Fold one domain's reports: summaries updated and reports deleted in one transaction.
    async fn fold_domain(&self, domain: &str, reports: &[Fold]) -> Result<(), ServiceError> {
        let mut months: BTreeMap<&str, Vec<&Fold>> = BTreeMap::new();
        for r in reports {
            months.entry(r.2.as_str()).or_default().push(r);
        }
        let read = "SELECT reports, best, score_sum, lowest FROM service_monthly WHERE domain = $1 AND month = $2";
        let hash = "INSERT INTO service_monthly_urls (domain, month, url_hash) VALUES ($1, $2, $3) ON CONFLICT DO NOTHING";
        let count = "SELECT COUNT(*) FROM service_monthly_urls WHERE domain = $1 AND month = $2";
        let write =
            "INSERT INTO service_monthly (domain, month, reports, urls, best, score_sum, lowest) \
                     VALUES ($1, $2, $3, $4, $5, $6, $7) ON CONFLICT (domain, month) DO UPDATE SET \
                     reports = excluded.reports, urls = excluded.urls, best = excluded.best, \
                     score_sum = excluded.score_sum, lowest = excluded.lowest";
        let db = &self.db;
        db::write_tx!(db, tx => {
            for (month, rows) in &months {
                let old: Option<(i64, i64, i64, i64)> = sqlx::query_as(read).bind(domain).bind(*month)
                    .fetch_optional(&mut *tx).await.map_err(q("read summary"))?;
                let (mut n, mut best, mut sum, mut low) = old.unwrap_or((0, i64::MIN, 0, i64::MAX));
                for r in rows {
                    n += 1;
                    best = best.max(r.3);
                    low = low.min(r.3);
                    sum += r.3;
                    sqlx::query(hash).bind(domain).bind(*month).bind(url_hash(&r.1))
                        .execute(&mut *tx).await.map_err(q("summary url"))?;
                }
                let urls: i64 = sqlx::query_scalar(count).bind(domain).bind(*month)
                    .fetch_one(&mut *tx).await.map_err(q("count summary urls"))?;
                sqlx::query(write).bind(domain).bind(*month).bind(n).bind(urls).bind(best).bind(sum).bind(low)
                    .execute(&mut *tx).await.map_err(q("write summary"))?;
            }
            for chunk in reports.chunks(DELETE_BATCH) {
                // Ids are checked base32 (`ReportId`) as read: listing them cannot inject.
                let ids: Vec<String> = chunk.iter().filter(|r| r.0.parse::<crate::ids::ReportId>().is_ok())
                    .map(|r| format!("'{}'", r.0)).collect();
                if ids.is_empty() { continue; }
                let sql = format!("DELETE FROM service_reports WHERE id IN ({})", ids.join(","));
                sqlx::query(&sql).execute(&mut *tx).await.map_err(q("delete folded reports"))?;
            }
        });
        Ok(())
    }

    async fn count_kept_newest(&self, cut: Timestamp) -> Result<u64, ServiceError> {
        let sql = "SELECT COUNT(*) FROM service_reports r WHERE r.is_paste = FALSE AND r.state = 'done' \
             AND r.created_at < $1 AND NOT EXISTS (SELECT 1 FROM service_reports n WHERE n.url = r.url \
             AND n.is_paste = FALSE AND n.state = 'done' AND n.created_at > r.created_at)";
        let n: i64 = db::with_pool!(&self.db, pool => sqlx::query_scalar(sql).bind(ms(cut)).fetch_one(pool).await)
            .map_err(q("count kept"))?;
        Ok(u64::try_from(n).unwrap_or(0))
    }

    async fn delete_old(
        &self,
        cut: Timestamp,
        which: &'static str,
        dry_run: bool,
    ) -> Result<u64, ServiceError> {
        let verb = if dry_run { "SELECT COUNT(*)" } else { "DELETE" };
        let sql = format!("{verb} FROM service_reports WHERE {which} AND created_at < $1");
        if dry_run {
            let n: i64 = db::with_pool!(&self.db, pool => sqlx::query_scalar(&sql).bind(ms(cut)).fetch_one(pool).await)
                .map_err(q("count old"))?;
            return Ok(u64::try_from(n).unwrap_or(0));
        }
        db::with_pool!(&self.db, pool => sqlx::query(&sql).bind(ms(cut)).execute(pool).await.map(|r| r.rows_affected()))
            .map_err(q("delete old"))
    }

    /// The monthly summaries of `domain`, newest month first.
    pub async fn summaries(&self, domain: &str) -> Result<Vec<MonthlySummary>, ServiceError> {
        let sql = "SELECT month, reports, urls, best, score_sum, lowest FROM service_monthly \
                   WHERE domain = $1 ORDER BY month DESC";
        let rows: Vec<(String, i64, i64, i64, i64, i64)> = db::with_pool!(&self.db, pool =>
            sqlx::query_as(sql).bind(domain).fetch_all(pool).await)
        .map_err(q("summaries"))?;
        Ok(rows
            .into_iter()
            .map(|(month, reports, urls, best, sum, lowest)| MonthlySummary {
                month,
                reports,
                urls,
                best,
                average: if reports > 0 {
                    sum as f64 / reports as f64
                } else {
                    0.0
                },
                lowest,
            })
            .collect())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn six_calendar_months_back() {
        let as_of: Timestamp = "2026-08-31T12:00:00Z".parse().unwrap();
        assert_eq!(cutoff(as_of).unwrap().to_string(), "2026-02-28T12:00:00Z");
        assert_eq!(month_of("2026-01-31T23:59:59Z".parse().unwrap()), "2026-01");
        assert_eq!(url_hash("https://a.test/"), url_hash("https://a.test/"));
        assert_ne!(url_hash("https://a.test/"), url_hash("https://b.test/"));
    }
}
