//! Shared by the service's tests: reports made offline, times.

#![allow(dead_code)]

use audit::report::RobotsStatus;
use audit::{Analysis, ProvidedFile};
use jiff::Timestamp;
use service::{ReportId, Store};
use url::Url;

/// A report of `url` with the given robots.txt, as if fetched (robots.txt "no file" so the
/// page is indexable unless `body` says otherwise) at `at`.
pub fn analysis(url: &str, body: &str, at: Timestamp) -> Analysis {
    let mut a = audit::analyze_file(ProvidedFile::whole(body.as_bytes()), Some(url));
    a.robots.outcome = RobotsStatus::Rules;
    a.robots.requested = true;
    a.analysed_at = at;
    a
}

/// A time `days` days after 2026-01-01.
pub fn day(days: i64) -> Timestamp {
    let base: Timestamp = "2026-01-01T00:00:00Z".parse().unwrap();
    base.checked_add(jiff::SignedDuration::from_hours(24 * days))
        .unwrap()
}

/// Queue, run and finish an analysis of `url` at `at` with a given score.
pub async fn done_report(store: &Store, url: &str, at: Timestamp, score: u8) -> ReportId {
    let parsed = Url::parse(url).unwrap();
    let id = store.queue_analysis(&parsed, at, false).await.unwrap();
    let mut a = analysis(url, "User-agent: *\nAllow: /\n", at);
    a.score = score;
    store.finish_report(&id, &a).await.unwrap();
    // The job is not needed in these tests: remove it by taking and finishing it.
    let holder = db::Holder::new();
    while let Some(job) = store.claim_job(&holder, at).await.unwrap() {
        store.finish_job(&job, &holder).await.unwrap();
    }
    id
}
