//! Retention (the bot page, "How long it is kept"): reports older than
//! [`RETENTION_MONTHS`](crate::limits::RETENTION_MONTHS) are folded into one summary per
//! domain and calendar month (UTC): how many reports, how many distinct URLs, the best,
//! average and lowest score. The newest report of each URL is kept until a newer one replaces
//! it. Old pastes and old failed analyses are deleted with no summary.
//!
//! Whole domains are folded in write transactions of about
//! [`FOLD_BATCH_REPORTS`](crate::limits::FOLD_BATCH_REPORTS) reports (summaries updated, reports deleted, in a few multi-row
//! statements), so a crash midway leaves each domain with either its reports or their summary,
//! never neither or both. Distinct
//! URLs stay exact across passes through a per-month set of 64-bit URL hashes (not the URLs).

use std::collections::BTreeMap;

use db::sqlx;
use jiff::{tz::TimeZone, Timestamp, ToSpan};
use serde::Serialize;

use super::{ms, ts, Store};
use crate::error::{q, ServiceError};
use crate::limits::{FOLD_BATCH_REPORTS, RETENTION_MONTHS, RETENTION_SQLITE_CACHE_KIB};
use crate::model::Month;

/// Bound parameters per statement: under SQLite's limit (32,766) and PostgreSQL's (65,535).
const BATCH_PARAMS: usize = 3_000;

/// Bind `values` in order to a query of either backend.
macro_rules! bind_values {
    ($query:expr, $values:expr) => {{
        let mut query = $query;
        for value in $values {
            query = match value {
                Value::Text(text) => query.bind(text.clone()),
                Value::Int(n) => query.bind(*n),
            };
        }
        query
    }};
}

/// Fold one batch of whole domains inside the open transaction `$tx`: their summaries updated
/// and their reports deleted in a few multi-row statements (not a round trip per report). A
/// macro so one body serves both backends' transactions.
macro_rules! fold_statements {
    ($tx:ident, $plan:expr) => {{
        let plan = &$plan;
        for (sql, values) in &plan.hashes {
            bind_values!(sqlx::query(sql), values)
                .execute(&mut *$tx)
                .await
                .map_err(q("summary urls"))?;
        }
        let mut old: Vec<(String, String, i64, i64, i64, i64)> = Vec::new();
        let mut urls: Vec<(String, String, i64)> = Vec::new();
        for chunk in plan.domains.chunks(BATCH_PARAMS) {
            let list = placeholders(chunk.len(), 1, plan.param);
            let sql = format!(
                "SELECT domain, month, reports, best, score_sum, lowest \
                               FROM service_monthly WHERE domain IN {list}"
            );
            old.extend(
                bind_values!(sqlx::query_as(&sql), chunk)
                    .fetch_all(&mut *$tx)
                    .await
                    .map_err(q("read summaries"))?,
            );
            let sql = format!(
                "SELECT domain, month, COUNT(*) FROM service_monthly_urls \
                               WHERE domain IN {list} GROUP BY domain, month"
            );
            urls.extend(
                bind_values!(sqlx::query_as(&sql), chunk)
                    .fetch_all(&mut *$tx)
                    .await
                    .map_err(q("count summary urls"))?,
            );
        }
        for (sql, values) in summary_upserts(plan.batch, &old, &urls, plan.param) {
            bind_values!(sqlx::query(&sql), &values)
                .execute(&mut *$tx)
                .await
                .map_err(q("write summaries"))?;
        }
        for (sql, values) in &plan.deletes {
            bind_values!(sqlx::query(sql), values)
                .execute(&mut *$tx)
                .await
                .map_err(q("delete folded reports"))?;
        }
    }};
}

/// The statements of one batch, built before its transaction opens.
struct FoldPlan<'a> {
    batch: &'a [(&'a String, &'a Vec<Fold>)],
    param: Param,
    hashes: Vec<Statement>,
    domains: Vec<Value>,
    deletes: Vec<Statement>,
}

impl<'a> FoldPlan<'a> {
    fn new(batch: &'a [(&'a String, &'a Vec<Fold>)], param: Param) -> Self {
        FoldPlan {
            batch,
            param,
            hashes: url_hash_inserts(batch, param),
            domains: batch
                .iter()
                .map(|(d, _)| Value::Text((*d).clone()))
                .collect(),
            deletes: report_deletes(batch, param),
        }
    }
}

/// Fold one batch on SQLite in a `BEGIN IMMEDIATE` transaction of `conn` (the retention
/// pass's own connection, see `Store::fold_all`).
async fn fold_sqlite(
    conn: &mut sqlx::pool::PoolConnection<sqlx::Sqlite>,
    batch: &[(&String, &Vec<Fold>)],
) -> Result<(), ServiceError> {
    use sqlx::Connection as _;
    let plan = FoldPlan::new(batch, Param::Anonymous);
    let mut tx = (**conn)
        .begin_with("BEGIN IMMEDIATE")
        .await
        .map_err(q("begin fold"))?;
    fold_statements!(tx, plan);
    tx.commit().await.map_err(q("commit fold"))
}

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

/// The time before which reports are past retention, as of `as_of`.
pub fn cutoff(as_of: Timestamp) -> Result<Timestamp, ServiceError> {
    let zoned = as_of.to_zoned(TimeZone::UTC);
    let back = zoned
        .checked_sub(i64::from(RETENTION_MONTHS).months())
        .map_err(ServiceError::Time)?;
    Ok(back.timestamp())
}

/// The `YYYY-MM` (UTC) of a time, as stored.
fn month_of(t: Timestamp) -> String {
    Month::of(t).to_string()
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
        let mut batches: Vec<Vec<(&String, &Vec<Fold>)>> = vec![Vec::new()];
        let mut batch_reports = 0;
        for (domain, reports) in &by_domain {
            out.folded += reports.len() as u64;
            let months: std::collections::BTreeSet<&str> =
                reports.iter().map(|r| r.2.as_str()).collect();
            out.summaries += months.len() as u64;
            if batch_reports >= FOLD_BATCH_REPORTS {
                batches.push(Vec::new());
                batch_reports = 0;
            }
            if let Some(batch) = batches.last_mut() {
                batch.push((domain, reports));
            }
            batch_reports += reports.len();
        }
        batches.retain(|b| !b.is_empty());
        if !dry_run {
            self.fold_all(&batches).await?;
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

    /// Fold the batches, each in a write transaction of its own. On SQLite all of them run on
    /// one pool connection whose page cache is raised to [`RETENTION_SQLITE_CACHE_KIB`] for
    /// the pass and put back afterwards (the connection is closed instead if that fails), so
    /// the serving connections keep their default cache.
    async fn fold_all(&self, batches: &[Vec<(&String, &Vec<Fold>)>]) -> Result<(), ServiceError> {
        let pool = match &self.db {
            db::Db::Sqlite(pool) => pool,
            db::Db::Postgres(_) => {
                for batch in batches {
                    self.fold_batch(batch).await?;
                }
                return Ok(());
            }
        };
        let mut conn = pool.acquire().await.map_err(q("retention connection"))?;
        let default_cache: i64 = sqlx::query_scalar("PRAGMA cache_size")
            .fetch_one(&mut *conn)
            .await
            .map_err(q("read cache size"))?;
        let raise = format!("PRAGMA cache_size = -{RETENTION_SQLITE_CACHE_KIB}");
        let mut result = sqlx::query(&raise)
            .execute(&mut *conn)
            .await
            .map(drop)
            .map_err(q("raise cache size"));
        for batch in batches {
            if result.is_err() {
                break;
            }
            result = fold_sqlite(&mut conn, batch).await;
        }
        let reset = format!("PRAGMA cache_size = {default_cache}");
        if sqlx::query(&reset).execute(&mut *conn).await.is_err() || result.is_err() {
            // Never hand a connection with the large cache (or a broken state) back to the pool.
            conn.close_on_drop();
        }
        result
    }

    /// Fold a batch of whole domains (PostgreSQL, or any pool connection): see
    /// `fold_statements!`.
    async fn fold_batch(&self, batch: &[(&String, &Vec<Fold>)]) -> Result<(), ServiceError> {
        let param = match self.db {
            db::Db::Sqlite(_) => Param::Anonymous,
            db::Db::Postgres(_) => Param::Numbered,
        };
        let plan = FoldPlan::new(batch, param);
        let db = &self.db;
        db::write_tx!(db, tx => { fold_statements!(tx, plan) });
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
}

/// A value bound to a statement.
#[derive(Clone, Debug)]
enum Value {
    Text(String),
    Int(i64),
}

/// A statement and its values.
type Statement = (String, Vec<Value>);

/// How a statement's parameters are written.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Param {
    /// `$1, $2, …` (PostgreSQL's only form).
    Numbered,
    /// `?, ?, …` (SQLite). sqlx looks up the name of each numbered parameter of a SQLite
    /// statement, and SQLite finds a name by a linear scan: a statement of 3,000 `$N`s cost
    /// 4.5 million steps to bind, a quarter of the retention pass's CPU time. Anonymous ones
    /// have no name to look up and bind in order.
    Anonymous,
}

/// `($1, $2, $3), ($4, $5, $6)`: `rows` tuples of `per_row` parameters; with one parameter
/// per row, one list for `IN`: `($1, $2, $3)`. With [`Param::Anonymous`], `?` for each.
fn placeholders(rows: usize, per_row: usize, style: Param) -> String {
    let param = |k: usize| match style {
        Param::Numbered => format!("${k}"),
        Param::Anonymous => "?".to_string(),
    };
    if per_row == 1 {
        let params: Vec<String> = (1..=rows).map(param).collect();
        return format!("({})", params.join(", "));
    }
    let tuples: Vec<String> = (0..rows)
        .map(|r| {
            let params: Vec<String> = (1..=per_row).map(|k| param(r * per_row + k)).collect();
            format!("({})", params.join(", "))
        })
        .collect();
    tuples.join(", ")
}

/// Multi-row statements of `per_row` values each: `head` then the tuples, then `tail`.
fn multi_row(
    head: &str,
    tail: &str,
    per_row: usize,
    rows: Vec<Vec<Value>>,
    style: Param,
) -> Vec<Statement> {
    let per_statement = (BATCH_PARAMS / per_row).max(1);
    rows.chunks(per_statement)
        .map(|chunk| {
            let sql = format!(
                "{head} {} {tail}",
                placeholders(chunk.len(), per_row, style)
            );
            (sql, chunk.iter().flatten().cloned().collect())
        })
        .collect()
}

/// The URL hashes of each (domain, month) of the batch.
fn url_hash_inserts(batch: &[(&String, &Vec<Fold>)], style: Param) -> Vec<Statement> {
    let mut seen = std::collections::BTreeSet::new();
    for (domain, reports) in batch {
        for r in reports.iter() {
            seen.insert(((*domain).clone(), r.2.clone(), url_hash(&r.1)));
        }
    }
    let rows = seen
        .into_iter()
        .map(|(d, m, h)| vec![Value::Text(d), Value::Text(m), Value::Int(h)])
        .collect();
    let head = "INSERT INTO service_monthly_urls (domain, month, url_hash) VALUES";
    multi_row(head, "ON CONFLICT DO NOTHING", 3, rows, style)
}

/// The batch's summaries: the stored ones (`old`) merged with the folded reports, with the
/// distinct-URL counts after this batch's hashes (`urls`).
fn summary_upserts(
    batch: &[(&String, &Vec<Fold>)],
    old: &[(String, String, i64, i64, i64, i64)],
    urls: &[(String, String, i64)],
    style: Param,
) -> Vec<Statement> {
    // (reports, best, sum, lowest) per (domain, month).
    let mut sums: BTreeMap<(String, String), (i64, i64, i64, i64)> = old
        .iter()
        .map(|(d, m, n, best, sum, low)| ((d.clone(), m.clone()), (*n, *best, *sum, *low)))
        .collect();
    let mut touched = std::collections::BTreeSet::new();
    for (domain, reports) in batch {
        for r in reports.iter() {
            let key = ((*domain).clone(), r.2.clone());
            let s = sums
                .entry(key.clone())
                .or_insert((0, i64::MIN, 0, i64::MAX));
            *s = (s.0 + 1, s.1.max(r.3), s.2 + r.3, s.3.min(r.3));
            touched.insert(key);
        }
    }
    let counts: BTreeMap<(&str, &str), i64> = urls
        .iter()
        .map(|(d, m, n)| ((d.as_str(), m.as_str()), *n))
        .collect();
    let rows = touched
        .into_iter()
        .filter_map(|key| {
            let (n, best, sum, low) = *sums.get(&key)?;
            let distinct = counts
                .get(&(key.0.as_str(), key.1.as_str()))
                .copied()
                .unwrap_or(0);
            Some(vec![
                Value::Text(key.0),
                Value::Text(key.1),
                Value::Int(n),
                Value::Int(distinct),
                Value::Int(best),
                Value::Int(sum),
                Value::Int(low),
            ])
        })
        .collect();
    let head = "INSERT INTO service_monthly (domain, month, reports, urls, best, score_sum, lowest) VALUES";
    let tail = "ON CONFLICT (domain, month) DO UPDATE SET reports = excluded.reports, \
                urls = excluded.urls, best = excluded.best, score_sum = excluded.score_sum, \
                lowest = excluded.lowest";
    multi_row(head, tail, 7, rows, style)
}

/// Deleting the batch's folded reports, by id.
fn report_deletes(batch: &[(&String, &Vec<Fold>)], style: Param) -> Vec<Statement> {
    // In id order, so each statement deletes one contiguous range of the id-keyed B-trees
    // (the reports' key and the documents') instead of two interleaved ones.
    let mut sorted: Vec<&String> = batch
        .iter()
        .flat_map(|(_, reports)| reports.iter().map(|r| &r.0))
        .collect();
    sorted.sort_unstable();
    let ids: Vec<Value> = sorted
        .into_iter()
        .map(|id| Value::Text(id.clone()))
        .collect();
    ids.chunks(BATCH_PARAMS)
        .map(|chunk| {
            let sql = format!(
                "DELETE FROM service_reports WHERE id IN {}",
                placeholders(chunk.len(), 1, style)
            );
            (sql, chunk.to_vec())
        })
        .collect()
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

    #[test]
    fn placeholders_per_backend() {
        assert_eq!(placeholders(3, 1, Param::Numbered), "($1, $2, $3)");
        assert_eq!(placeholders(3, 1, Param::Anonymous), "(?, ?, ?)");
        assert_eq!(placeholders(2, 2, Param::Numbered), "($1, $2), ($3, $4)");
        assert_eq!(placeholders(2, 2, Param::Anonymous), "(?, ?), (?, ?)");
    }
}
