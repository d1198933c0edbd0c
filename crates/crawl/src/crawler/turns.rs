//! Waiting for an origin's turn without outlasting a stop: a worker whose origin is due
//! later (the pace, a crawl-delay, a back-off within [`super::MAX_TURN_WAIT`]) waits here,
//! where a stop ends the wait at once, instead of inside the request, where it would run
//! to its end before the stop is seen.

use std::time::Duration;

use fetch::OriginKey;
use jiff::Timestamp;

use super::parts::{Progress, Requester};

/// How often a wait looks at the stop flag (the flag is set from a signal handler's task;
/// a stop is seen within this).
pub const STOP_POLL: Duration = Duration::from_millis(20);

/// Whether the crawl may go on with a request of origin `key`: waits until its next start
/// when that is at most `max_wait` away (a later one is left to the request, which gives
/// the origin back), and returns false as soon as the crawl stops.
pub(crate) async fn wait_for_turn(
    req: &Requester,
    progress: &Progress,
    key: &OriginKey,
    max_wait: Duration,
) -> bool {
    let next = req
        .polite
        .pacer()
        .export(key)
        .and_then(|s| s.next_start)
        .map(|at| at.duration_since(Timestamp::now()));
    let wait = match next {
        Some(d) if d.is_positive() => d.unsigned_abs(),
        _ => return !progress.stopping(),
    };
    if wait > max_wait {
        return !progress.stopping();
    }
    tokio::select! {
        () = tokio::time::sleep(wait) => !progress.stopping(),
        () = stopped(progress) => false,
    }
}

/// Resolves once the crawl is stopping.
pub(crate) async fn stopped(progress: &Progress) {
    while !progress.stopping() {
        tokio::time::sleep(STOP_POLL).await;
    }
}
