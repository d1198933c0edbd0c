//! Origins' pacing written as one `UPDATE ... FROM (VALUES ...)` per commit instead of one
//! `UPDATE` per origin.
//!
//! Why: a group commit carries the pacing of every origin that served a URL since the last
//! one (up to the ~50 origins a process works at once), and each statement is a round trip
//! (to sqlx's SQLite worker thread: two thread wake-ups; to PostgreSQL: the network). One
//! statement per chunk writes them all.
//!
//! Lock order: every transaction takes origin rows in id order, so two never wait for each
//! other's rows in opposite orders (PostgreSQL would abort one as a deadlock). A joined
//! `UPDATE` locks rows in whatever order its plan meets them, so on PostgreSQL the rows are
//! locked first by [`lock_sql`] (`ORDER BY id FOR UPDATE`); SQLite locks the whole database
//! for a write transaction and needs no row order.

use sqlx::QueryBuilder;

use super::places::ms;
use super::OriginUpdate;

/// Origins per statement (8 bound values each, plus the holder: well inside both backends'
/// limits).
pub(crate) const PACING_CHUNK: usize = 256;

/// The statement that locks `ids` (sorted) in id order on PostgreSQL.
pub(crate) fn lock_sql(ids: &[super::OriginId]) -> String {
    let list = super::id_list(ids);
    format!("SELECT id FROM crawl_origins WHERE id IN ({list}) ORDER BY id FOR UPDATE")
}

/// One statement writing `rows` (distinct origins), each only while `holder` still holds
/// the origin's lease (a process that lost it must not overwrite the new holder's pace).
pub(crate) fn update_sql<'a, DB: sqlx::Database>(
    rows: &[&'a OriginUpdate],
    holder: &'a str,
) -> QueryBuilder<'a, DB>
where
    for<'q> i64: sqlx::Encode<'q, DB> + sqlx::Type<DB>,
    for<'q> i32: sqlx::Encode<'q, DB> + sqlx::Type<DB>,
    for<'q> i16: sqlx::Encode<'q, DB> + sqlx::Type<DB>,
    for<'q> Option<&'q str>: sqlx::Encode<'q, DB> + sqlx::Type<DB>,
    for<'q> &'q str: sqlx::Encode<'q, DB> + sqlx::Type<DB>,
{
    let mut q = QueryBuilder::new(
        "WITH v (id, gap_ms, next_start, failures, paused, pacer_state, requests, bytes) AS (",
    );
    q.push_values(rows.iter().copied(), |mut b, o| {
        b.push_bind(o.id)
            .push_bind(ms(o.gap))
            .push_bind(db::millis(o.next_start))
            .push_bind(i32::try_from(o.failures).unwrap_or(i32::MAX))
            .push_bind(i16::from(o.paused))
            .push_bind(o.pacer_state.as_deref())
            .push_bind(i64::try_from(o.requests).unwrap_or(i64::MAX))
            .push_bind(i64::try_from(o.bytes).unwrap_or(i64::MAX));
    });
    q.push(
        ") UPDATE crawl_origins SET gap_ms = v.gap_ms, next_start = v.next_start, \
         failures = v.failures, paused = v.paused, \
         pacer_state = COALESCE(v.pacer_state, crawl_origins.pacer_state), \
         requests = crawl_origins.requests + v.requests, bytes = crawl_origins.bytes + v.bytes \
         FROM v WHERE crawl_origins.id = v.id AND crawl_origins.lease_holder = ",
    );
    q.push_bind(holder);
    q
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_lock_takes_rows_in_id_order() {
        assert_eq!(
            lock_sql(&[2, 5, 9].map(super::super::OriginId::of_row)),
            "SELECT id FROM crawl_origins WHERE id IN (2,5,9) ORDER BY id FOR UPDATE"
        );
    }
}
