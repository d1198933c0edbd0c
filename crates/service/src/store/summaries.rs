//! Reading the monthly summaries retention leaves (see [`super::retention`]): a domain's, with
//! its flags for the domain page, and every month's totals for the statistics.

use db::sqlx;

use super::Store;
use crate::error::{q, ServiceError};
use crate::model::{Month, MonthlySummary};

/// A stored summary row: month, reports, distinct URLs, best, score sum, lowest.
type SummaryRow = (String, i64, i64, i64, i64, i64);

/// A summary as stored, typed, with its average; `None` (logged) for a row that does not read
/// (a month that is not `YYYY-MM`, a score out of range): one bad row never hides the others.
fn summary(domain: &str, row: SummaryRow) -> Option<MonthlySummary> {
    let (month, reports, urls, best, sum, lowest) = row;
    let read = (|| {
        Some(MonthlySummary {
            month: month.parse().ok()?,
            reports: u64::try_from(reports).ok()?,
            urls: u64::try_from(urls).ok()?,
            best: u8::try_from(best).ok()?,
            average: if reports > 0 {
                sum as f64 / reports as f64
            } else {
                0.0
            },
            lowest: u8::try_from(lowest).ok()?,
        })
    })();
    if read.is_none() {
        tracing::warn!(
            domain,
            month,
            "a monthly summary that does not read is skipped"
        );
    }
    read
}

impl Store {
    /// The monthly summaries of `domain` (newest month first), whether it is kept off the
    /// ranking and whether it has an icon, in one round trip (the domain's page and API).
    pub async fn summaries_and_flags(
        &self,
        domain: &str,
    ) -> Result<(Vec<MonthlySummary>, bool, bool), ServiceError> {
        // The one-row `f` makes a row even for a domain with no summary.
        let sql = "SELECT f.off_ranking, f.has_icon, m.month, m.reports, m.urls, m.best, \
             m.score_sum, m.lowest FROM (SELECT \
               COALESCE((SELECT off_ranking FROM service_domains WHERE domain = $1), FALSE) \
                 AS off_ranking, \
               COALESCE((SELECT icon IS NOT NULL FROM service_domains WHERE domain = $1), FALSE) \
                 AS has_icon) f \
             LEFT JOIN service_monthly m ON m.domain = $1 ORDER BY m.month DESC";
        type T = (
            bool,
            bool,
            Option<String>,
            Option<i64>,
            Option<i64>,
            Option<i64>,
            Option<i64>,
            Option<i64>,
        );
        let rows: Vec<T> = db::with_pool!(&self.db, pool =>
            sqlx::query_as(sql).bind(domain).fetch_all(pool).await)
        .map_err(q("summaries and flags"))?;
        let (off_ranking, has_icon) = rows.first().map_or((false, false), |r| (r.0, r.1));
        let summaries = rows
            .into_iter()
            .filter_map(|(_, _, month, reports, urls, best, sum, lowest)| {
                summary(domain, (month?, reports?, urls?, best?, sum?, lowest?))
            })
            .collect();
        Ok((summaries, off_ranking, has_icon))
    }

    /// The monthly summaries of `domain`, newest month first.
    pub async fn summaries(&self, domain: &str) -> Result<Vec<MonthlySummary>, ServiceError> {
        let sql = "SELECT month, reports, urls, best, score_sum, lowest FROM service_monthly \
                   WHERE domain = $1 ORDER BY month DESC";
        let rows: Vec<SummaryRow> = db::with_pool!(&self.db, pool =>
            sqlx::query_as(sql).bind(domain).fetch_all(pool).await)
        .map_err(q("summaries"))?;
        Ok(rows
            .into_iter()
            .filter_map(|row| summary(domain, row))
            .collect())
    }

    /// Whether `domain` has monthly summaries (a report no longer stored was folded).
    pub async fn has_summaries(&self, domain: &str) -> Result<bool, ServiceError> {
        let sql = "SELECT COUNT(*) FROM service_monthly WHERE domain = $1";
        let n: i64 = db::with_pool!(&self.db, pool =>
            sqlx::query_scalar(sql).bind(domain).fetch_one(pool).await)
        .map_err(q("has summaries"))?;
        Ok(n > 0)
    }

    /// Every month's folded reports over all domains: the month, how many, and the sum of
    /// their scores (the statistics' month by month).
    pub async fn monthly_totals(&self) -> Result<Vec<(Month, u64, u64)>, ServiceError> {
        // PostgreSQL sums BIGINTs as NUMERIC: cast back.
        let sql = "SELECT month, CAST(SUM(reports) AS BIGINT), CAST(SUM(score_sum) AS BIGINT) \
                   FROM service_monthly GROUP BY month ORDER BY month";
        let rows: Vec<(String, i64, i64)> = db::with_pool!(&self.db, pool =>
            sqlx::query_as(sql).fetch_all(pool).await)
        .map_err(q("monthly totals"))?;
        Ok(rows
            .into_iter()
            .filter_map(|(month, reports, sum)| {
                let read = (|| {
                    Some((
                        month.parse().ok()?,
                        u64::try_from(reports).ok()?,
                        u64::try_from(sum).ok()?,
                    ))
                })();
                if read.is_none() {
                    tracing::warn!(month, "a month of summaries that does not read is skipped");
                }
                read
            })
            .collect())
    }
}
