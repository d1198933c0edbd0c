//! What one URL's attempt leaves for the store: its outcome (fetched, put back, skipped,
//! failed and retried, given up), the facts of its final response, the requests it took, and
//! the origin's pacing after it. Every step below the worker (settle, extract, the sitemap
//! reader, unreachable robots.txt) builds these, so none of them depends on another for them.

use std::sync::atomic::Ordering;

use fetch::{OriginKey, Trail};
use jiff::Timestamp;

use super::committer::OriginPace;
use super::parts::{Progress, Requester, Rules};
use crate::event::Event;
use crate::store::{ClaimedUrl, FetchFacts, OriginId, OriginUpdate, Outcome, UrlState};

/// Whether the worker goes on with its origin.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Flow {
    Continue,
    /// Claim again: what was claimed goes back first (sitemap URLs were queued ahead of it).
    Reclaim,
    /// The origin must wait (its turn is later, it is paused, its robots.txt failed): give it
    /// back; it is claimed again when due.
    Yield,
}

/// The origin's pacing for the store, with the requests and bytes of the last piece of work.
pub(crate) fn origin_update(
    req: &Requester,
    key: &OriginKey,
    id: OriginId,
    requests: u64,
    bytes: u64,
) -> OriginPace {
    let snapshot = req.polite.pacer().export(key).unwrap_or_default();
    OriginPace {
        update: OriginUpdate {
            id,
            gap: req.pacing.pace,
            next_start: snapshot.next_start.unwrap_or_else(Timestamp::now),
            failures: snapshot.failures,
            paused: snapshot.paused,
            // Written out by the committer, for the last update of the origin in a commit.
            pacer_state: None,
            requests,
            bytes,
        },
        snapshot,
    }
}

/// A claimed URL back in the queue, untouched (not an attempt).
pub(crate) fn requeued(url: &ClaimedUrl) -> Outcome {
    Outcome {
        state: Some(UrlState::Queued),
        attempts: url.attempts,
        ..Outcome::of(url.id)
    }
}

pub(crate) fn skipped(url: &ClaimedUrl, state: UrlState, reason: String) -> Outcome {
    Outcome {
        state: Some(state),
        reason: Some(reason),
        attempts: url.attempts,
        next_due: crate::store::Due::Never,
        ..Outcome::of(url.id)
    }
}

/// A failed attempt: queued again, or given up after `--max-attempts`.
pub(crate) fn failure(
    progress: &Progress,
    rules: &Rules,
    url: &ClaimedUrl,
    error: &str,
) -> Outcome {
    let attempts = url.attempts + 1;
    let given_up = attempts >= rules.max_attempts;
    progress.counters.errors.fetch_add(1, Ordering::Relaxed);
    progress.emit(Event::Error {
        url: url.key.clone(),
        error: error.to_string(),
        attempts,
        given_up,
    });
    Outcome {
        id: url.id,
        state: Some(if given_up {
            UrlState::Failed
        } else {
            UrlState::Queued
        }),
        reason: given_up.then(|| format!("gave up after {attempts} attempts")),
        attempts,
        last_error: Some(error.to_string()),
        next_due: crate::store::Due::Now,
        fetch: None,
    }
}

pub(crate) fn requests_of(trail: &Trail) -> u64 {
    (trail.exchanges.len()
        + trail
            .robots_fetches
            .iter()
            .map(|r| r.exchanges.len())
            .sum::<usize>()) as u64
}

/// The facts of a final response, for the store.
pub(crate) fn facts(
    head: &fetch::ResponseHead,
    sent_at: Timestamp,
    content_hash: Option<String>,
    bytes: u64,
    record_id: Option<String>,
    directives: String,
) -> FetchFacts {
    let header = |name: http::header::HeaderName| {
        head.headers
            .get(name)
            .and_then(|v| v.to_str().ok())
            .map(str::to_string)
    };
    FetchFacts {
        fetched_at: sent_at,
        status: head.status,
        etag: header(http::header::ETAG),
        last_modified: header(http::header::LAST_MODIFIED),
        content_hash,
        bytes,
        warc_file: None,
        warc_offset: None,
        warc_record_id: record_id,
        directives: (!directives.is_empty()).then_some(directives),
        // Set by the caller, who knows the chain's end (`redirects::chain_json`).
        redirects: None,
    }
}
