//! HTTPS wherever available. A host is tried over HTTPS first unless this process saw its
//! HTTPS fail within [`HTTPS_RETRY_AFTER`]: a host stored as HTTP-only (a failure seen by an
//! earlier run, or by another process) gets one HTTPS attempt again in every run, and in a
//! long run once a day, so that one transient failure (a reset, a refused connection, a
//! malformed answer, a certificate being renewed) does not keep a host on plain HTTP for
//! good. Each failure that sends a host back to HTTP is logged at warn level with the host
//! and the reason.

use std::collections::HashMap;
use std::sync::{Mutex, PoisonError};
use std::time::Duration;

use tokio::time::Instant;

use super::CrawlError;
use crate::normal::NormalUrl;
use crate::store::Store;

/// How long a host whose HTTPS failed is fetched over HTTP before HTTPS is tried again within
/// one run: 1 day. A new run tries again at once.
pub const HTTPS_RETRY_AFTER: Duration = Duration::from_secs(24 * 60 * 60);

/// The most hosts whose HTTPS failure one process remembers; past it the memory starts
/// afresh (each of those hosts gets one HTTPS attempt more, as in a new run).
pub const MAX_HTTPS_FAILURES_REMEMBERED: usize = 100_000;

/// What this process saw of hosts' HTTPS: when it last failed, per host.
#[derive(Debug, Default)]
pub(crate) struct HttpsMemory {
    failed: Mutex<HashMap<String, Instant>>,
}

impl HttpsMemory {
    /// Whether to try `host` over HTTPS, with `known` what the store says of it (`Some(false)`:
    /// HTTPS failed there once).
    pub(crate) fn try_https(&self, host: &str, known: Option<bool>) -> bool {
        if known != Some(false) {
            return true;
        }
        let failed = self.failed.lock().unwrap_or_else(PoisonError::into_inner);
        failed
            .get(host)
            .is_none_or(|at| at.elapsed() >= HTTPS_RETRY_AFTER)
    }

    /// HTTPS failed on `host` for `reason`: HTTP for it from now on, until the next retry.
    pub(crate) fn failed(&self, host: &str, reason: &str) {
        tracing::warn!(
            host,
            reason,
            "HTTPS failed: fetching the host over HTTP (HTTPS is tried again in the next run or after a day)"
        );
        let mut failed = self.failed.lock().unwrap_or_else(PoisonError::into_inner);
        if failed.len() >= MAX_HTTPS_FAILURES_REMEMBERED && !failed.contains_key(host) {
            failed.clear();
        }
        failed.insert(host.to_string(), Instant::now());
    }
}

/// HTTPS is tried again on the host of `url`, stored as HTTP-only: the failure its robots.txt
/// over HTTPS left in the robots cache (store and memory) is forgotten, so that robots.txt
/// is fetched over HTTPS again as part of the retry rather than taken as unreachable.
pub(crate) async fn retrying(
    store: &Store,
    robots: &fetch::RobotsCache,
    url: &NormalUrl,
) -> Result<(), CrawlError> {
    let https = url.with_scheme(true);
    let Ok(scope) = fetch::Scope::of(https.url()) else {
        return Ok(());
    };
    store.delete_robots_entry(&scope.to_string()).await?;
    robots.forget(|s| *s == scope);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test(start_paused = true)]
    async fn a_host_without_https_is_tried_again_after_a_day_and_in_a_new_run() {
        let memory = HttpsMemory::default();
        assert!(memory.try_https("a.test", None));
        assert!(memory.try_https("a.test", Some(true)));
        // Stored as HTTP-only by an earlier run: this run tries HTTPS once more.
        assert!(memory.try_https("a.test", Some(false)));
        memory.failed("a.test", "connection reset");
        assert!(!memory.try_https("a.test", Some(false)));
        tokio::time::advance(HTTPS_RETRY_AFTER - Duration::from_secs(1)).await;
        assert!(!memory.try_https("a.test", Some(false)));
        tokio::time::advance(Duration::from_secs(1)).await;
        assert!(memory.try_https("a.test", Some(false)));
        // A new run (a new memory) tries at once.
        memory.failed("b.test", "certificate expired");
        assert!(HttpsMemory::default().try_https("b.test", Some(false)));
    }
}
