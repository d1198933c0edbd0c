//! What a running crawl counts as it goes: the live counters the progress display and the
//! metrics read, the time spent per stage, and the commit latency histogram. Below both the
//! crawler (which feeds them) and `metrics` (which shows them).

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use prometheus_client::metrics::histogram::{exponential_buckets, Histogram};

/// The commit latency buckets: 1 ms doubling to about 16 s.
pub const COMMIT_BUCKETS: (f64, f64, u16) = (0.001, 2.0, 15);

/// How long store group commits take (fed by the crawl's writer).
#[derive(Clone, Debug)]
pub struct CommitLatency(pub(crate) Histogram);

impl Default for CommitLatency {
    fn default() -> Self {
        let (start, factor, count) = COMMIT_BUCKETS;
        CommitLatency(Histogram::new(exponential_buckets(start, factor, count)))
    }
}

impl CommitLatency {
    /// One commit took `took`.
    pub fn observe(&self, took: Duration) {
        self.0.observe(took.as_secs_f64());
    }
}

/// Live counters (the progress display reads them while the crawl runs).
#[derive(Debug, Default)]
pub struct LiveCounters {
    /// Responses received.
    pub fetched: AtomicU64,
    /// URLs skipped.
    pub skipped: AtomicU64,
    /// Failed attempts.
    pub errors: AtomicU64,
    /// Body bytes.
    pub bytes: AtomicU64,
    /// Origins being worked on.
    pub active_origins: AtomicU64,
    /// URLs queued in the whole crawl (every process), refreshed every [`crate::crawler::PROGRESS_REFRESH`].
    pub queued: AtomicU64,
    /// Origins backing off (failures in a row, next start later), refreshed likewise.
    pub backing_off: AtomicU64,
    /// Origins paused until a probe succeeds, refreshed likewise.
    pub paused: AtomicU64,
    /// Compressed WARC bytes written.
    pub warc_bytes: AtomicU64,
    /// How long store group commits take.
    pub commit_latency: CommitLatency,
    /// Time spent in each stage, summed over tasks (benchmark breakdown).
    pub time: StageTimes,
}

/// Nanoseconds spent per stage of the crawl, summed over all tasks.
#[derive(Debug, Default)]
pub struct StageTimes {
    /// Polite requests: robots.txt checks, turns, hops, reading bodies.
    pub fetch: AtomicU64,
    /// HTML tokenizing (links, media, meta).
    pub parse: AtomicU64,
    /// Turning found links into frontier entries (scope, hosts, dedup).
    pub links: AtomicU64,
    /// Building and compressing WARC records.
    pub warc_encode: AtomicU64,
    /// Appending and flushing WARC files.
    pub warc_write: AtomicU64,
    /// Committing batches to the store.
    pub store: AtomicU64,
}

impl StageTimes {
    pub(crate) fn add(counter: &AtomicU64, since: std::time::Instant) {
        counter.fetch_add(since.elapsed().as_nanos() as u64, Ordering::Relaxed);
    }
}
