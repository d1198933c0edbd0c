//! The report's request log, made from what the fetcher did: each hop of a robots.txt fetch
//! and of a polite request, the robots.txt fetched on the way, and the request that failed or
//! was not made.

use fetch::{FetchError, RedirectHop, RobotsFetch, Scope, Trail};
use jiff::Timestamp;
use url::Url;

use crate::report::{Purpose, RequestRecord, SkipReason};

/// How a polite request ended, for its last record.
pub(super) enum End<'e> {
    /// A response arrived: the last exchange is the answer.
    Answered,
    /// `url` was not requested, for `reason`.
    Skipped {
        url: &'e Url,
        reason: &'e SkipReason,
    },
    /// The request for `url` failed with `error`.
    Failed { url: &'e Url, error: &'e FetchError },
}

/// Milliseconds from `origin` to `at` (zero if earlier).
pub(super) fn ms_since(origin: Timestamp, at: Timestamp) -> u64 {
    u64::try_from(at.as_millisecond().saturating_sub(origin.as_millisecond())).unwrap_or(0)
}

fn record(url: &Url, purpose: Purpose, at_ms: u64) -> RequestRecord {
    RequestRecord {
        url: url.clone(),
        purpose,
        at_ms,
        waited_ms: 0,
        status: None,
        error: None,
        error_kind: None,
        skipped: None,
    }
}

fn failed(url: &Url, purpose: Purpose, at_ms: u64, error: &FetchError) -> RequestRecord {
    RequestRecord {
        error: Some(error.full_message()),
        error_kind: Some(error.kind()),
        ..record(url, purpose, at_ms)
    }
}

/// A record of a request not made.
pub(super) fn skipped(
    url: &Url,
    purpose: Purpose,
    at_ms: u64,
    reason: &SkipReason,
) -> RequestRecord {
    RequestRecord {
        skipped: Some(reason.clone()),
        ..record(url, purpose, at_ms)
    }
}

/// Where the last redirect of a chain pointed: the URL requested after it.
pub(crate) fn after_hops(start: &Url, hops: &[RedirectHop]) -> Url {
    hops.last()
        .and_then(|hop| hop.url.join(hop.location.trim()).ok())
        .unwrap_or_else(|| start.clone())
}

/// One record per request of a robots.txt fetch: each redirect, then the answer or the
/// failure. (A redirect that could not be followed is the last hop: nothing more was sent.)
pub(super) fn robots(
    fetched: &RobotsFetch,
    purpose: Purpose,
    origin: Timestamp,
) -> Vec<RequestRecord> {
    let at = |index: usize| {
        let sent = fetched
            .exchanges
            .get(index)
            .map(|exchange| exchange.sent_at);
        ms_since(origin, sent.unwrap_or(fetched.fetched_at))
    };
    let mut records: Vec<RequestRecord> = fetched
        .redirects
        .iter()
        .enumerate()
        .map(|(index, hop)| RequestRecord {
            status: Some(hop.status),
            ..record(&hop.url, purpose, at(index))
        })
        .collect();
    let next = records.len();
    match (&fetched.final_url, fetched.status, &fetched.error) {
        (Some(url), Some(status), _) => records.push(RequestRecord {
            status: Some(status),
            ..record(url, purpose, at(next))
        }),
        (_, _, Some(FetchError::Redirect { .. })) => {}
        (_, _, Some(error)) => {
            let url = after_hops(&fetched.robots_url, &fetched.redirects);
            records.push(failed(&url, purpose, at(next), error));
        }
        _ => {}
    }
    records
}

/// The records of one polite request: each hop, preceded by the robots.txt fetched for its
/// host, then the request that was not made or failed. The time waited for turns is put on
/// the first request sent (or the one not made).
pub(super) fn polite(
    trail: &Trail,
    purpose: Purpose,
    end: End<'_>,
    origin: Timestamp,
) -> Vec<RequestRecord> {
    let mut records = Vec::new();
    let mut robots_left: Vec<&RobotsFetch> = trail.robots_fetches.iter().collect();
    for exchange in &trail.exchanges {
        let url = &exchange.request.url;
        let scope = Scope::of(url).ok();
        let (own, others): (Vec<&RobotsFetch>, Vec<&RobotsFetch>) =
            robots_left.into_iter().partition(|fetched| {
                scope
                    .as_ref()
                    .is_some_and(|scope| scope.robots_txt_url() == &fetched.robots_url)
            });
        robots_left = others;
        for fetched in own {
            records.extend(robots(fetched, Purpose::HostRobots, origin));
        }
        records.push(RequestRecord {
            status: Some(exchange.head.status),
            ..record(url, purpose, ms_since(origin, exchange.sent_at))
        });
    }
    for fetched in robots_left {
        records.extend(robots(fetched, Purpose::HostRobots, origin));
    }
    let now = ms_since(origin, Timestamp::now());
    match end {
        End::Answered => {}
        End::Skipped { url, reason } => records.push(skipped(url, purpose, now, reason)),
        // A redirect that could not be followed was the last exchange.
        End::Failed {
            error: FetchError::Redirect { .. },
            ..
        } => {}
        End::Failed { url, error } => records.push(failed(url, purpose, now, error)),
    }
    let waited_ms = u64::try_from(trail.waited.as_millis()).unwrap_or(u64::MAX);
    if let Some(first) = records.iter_mut().find(|r| r.purpose == purpose) {
        first.waited_ms = waited_ms;
    }
    records
}
