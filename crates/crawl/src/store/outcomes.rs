//! URL outcomes written as one `UPDATE ... FROM (VALUES ...)` per chunk instead of one
//! `UPDATE` per URL.
//!
//! Why: each statement is a round trip (to PostgreSQL over the network, to sqlx's SQLite
//! worker thread through two channels and two thread wake-ups); a batch commits up to
//! `COMMIT_BATCH` outcomes, so one statement per chunk saves most of the store's time per
//! page. Both backends run the same SQL (a common table expression named `v`, and SQLite's
//! `UPDATE ... FROM`, 3.33 and later).

use sqlx::QueryBuilder;

use super::{Outcome, UrlState};

/// Outcomes per statement (17 bound values each: 4,352 per statement, well inside both
/// backends' limits). A full chunk is one cached prepared statement.
pub(crate) const OUTCOME_CHUNK: usize = 256;

const COLUMNS: &str = "id, state, reason, attempts, last_error, next_due, fetched_at, status, \
    etag, last_modified, content_hash, bytes, warc_file, warc_offset, warc_record_id, \
    directives, redirects";

/// The columns an outcome without a response sets.
const SET_DECISION: &str = "state = v.state, reason = v.reason, attempts = v.attempts, \
    last_error = v.last_error, next_due = v.next_due";

/// And those a response sets too (the stored content hash is kept when none is given: a 304).
const SET_RESPONSE: &str = ", fetched_at = v.fetched_at, status = v.status, etag = v.etag, \
    last_modified = v.last_modified, content_hash = COALESCE(v.content_hash, crawl_urls.content_hash), \
    bytes = v.bytes, warc_file = v.warc_file, warc_offset = v.warc_offset, \
    warc_record_id = v.warc_record_id, directives = v.directives, redirects = v.redirects";

/// The statements that write `outcomes`, in order: each is its rows and whether they carry
/// a response. Chunks when every URL comes once; else one statement per outcome, in order
/// (a statement updating a row twice would keep either value; in order, the last wins).
pub(crate) fn statements(outcomes: &[Outcome]) -> Vec<(Vec<&Outcome>, bool)> {
    let mut ids: Vec<super::UrlId> = outcomes.iter().map(|o| o.id).collect();
    ids.sort_unstable();
    if ids.windows(2).any(|w| w[0] == w[1]) {
        return outcomes
            .iter()
            .map(|o| (vec![o], o.fetch.is_some()))
            .collect();
    }
    let mut out = Vec::new();
    for with_response in [true, false] {
        let rows: Vec<&Outcome> = outcomes
            .iter()
            .filter(|o| o.fetch.is_some() == with_response)
            .collect();
        out.extend(
            rows.chunks(OUTCOME_CHUNK)
                .map(|c| (c.to_vec(), with_response)),
        );
    }
    out
}

/// One statement for `rows`, all with a response (`fetch` set) or all without, as
/// `with_response` says.
pub(crate) fn update_sql<'a, DB: sqlx::Database>(
    rows: &[&'a Outcome],
    with_response: bool,
) -> QueryBuilder<'a, DB>
where
    for<'q> i64: sqlx::Encode<'q, DB> + sqlx::Type<DB>,
    for<'q> i32: sqlx::Encode<'q, DB> + sqlx::Type<DB>,
    for<'q> i16: sqlx::Encode<'q, DB> + sqlx::Type<DB>,
    for<'q> Option<i64>: sqlx::Encode<'q, DB> + sqlx::Type<DB>,
    for<'q> Option<i32>: sqlx::Encode<'q, DB> + sqlx::Type<DB>,
    for<'q> Option<&'q str>: sqlx::Encode<'q, DB> + sqlx::Type<DB>,
{
    let mut q = QueryBuilder::new(format!("WITH v ({COLUMNS}) AS ("));
    q.push_values(rows.iter().copied(), |mut b, o| {
        let f = o.fetch.as_ref();
        b.push_bind(o.id)
            .push_bind(o.state.unwrap_or(UrlState::Queued).code())
            .push_bind(o.reason.as_deref())
            .push_bind(i32::try_from(o.attempts).unwrap_or(i32::MAX))
            .push_bind(o.last_error.as_deref())
            .push_bind(o.next_due.stored())
            .push_bind(f.map(|f| db::millis(f.fetched_at)))
            .push_bind(f.map(|f| i32::from(f.status.as_u16())))
            .push_bind(f.and_then(|f| f.etag.as_deref()))
            .push_bind(f.and_then(|f| f.last_modified.as_deref()))
            .push_bind(f.and_then(|f| f.content_hash.as_deref()))
            .push_bind(f.map(|f| i64::try_from(f.bytes).unwrap_or(i64::MAX)))
            .push_bind(f.and_then(|f| f.warc_file.as_deref()))
            .push_bind(f.and_then(|f| f.warc_offset.map(|o| i64::try_from(o).unwrap_or(i64::MAX))))
            .push_bind(f.and_then(|f| f.warc_record_id.as_deref()))
            .push_bind(f.and_then(|f| f.directives.as_deref()))
            .push_bind(f.and_then(|f| f.redirects.as_deref()));
    });
    q.push(") UPDATE crawl_urls SET ");
    q.push(SET_DECISION);
    if with_response {
        q.push(SET_RESPONSE);
    }
    q.push(" FROM v WHERE crawl_urls.id = v.id");
    q
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::{FetchFacts, UrlId};

    fn outcome(id: i64, fetched: bool) -> Outcome {
        Outcome {
            fetch: fetched.then(FetchFacts::default),
            ..Outcome::of(UrlId::of_row(id))
        }
    }

    #[test]
    fn distinct_outcomes_are_chunked_by_kind_and_repeated_ones_kept_in_order() {
        let many: Vec<Outcome> = (0..600).map(|i| outcome(i, i % 3 != 0)).collect();
        let statements = statements(&many);
        let sizes: Vec<(usize, bool)> = statements.iter().map(|(r, w)| (r.len(), *w)).collect();
        assert_eq!(sizes, [(256, true), (144, true), (200, false)]);
        assert!(statements
            .iter()
            .all(|(rows, w)| rows.iter().all(|o| o.fetch.is_some() == *w)));
        // A URL twice: one statement per outcome, in order, so the last one wins.
        let repeated = [outcome(1, true), outcome(2, false), outcome(1, false)];
        let statements = statements_of(&repeated);
        assert_eq!(
            statements,
            [(vec![1], true), (vec![2], false), (vec![1], false)]
        );
    }

    fn statements_of(outcomes: &[Outcome]) -> Vec<(Vec<i64>, bool)> {
        statements(outcomes)
            .into_iter()
            .map(|(rows, w)| (rows.iter().map(|o| o.id.row()).collect(), w))
            .collect()
    }
}
