//! What a worker knows of its origin's lease: lost (another process holds it now), and until
//! when it is surely still held. The scheduler renews leases every third of their length; a
//! worker whose renewal is late (a slow or overloaded store) stops before the lease can have
//! expired in the store, so another process that takes the origin over never works it at the
//! same time.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::Duration;

use tokio::time::Instant;

/// The part of a lease a worker uses: a claim or renewal that started at `t` is relied on
/// until `t + lease × LEASE_USE_NUM / LEASE_USE_DEN` (3/4: renewals come every third, so a
/// renewal may be late by more than a third before a worker stops).
pub const LEASE_USE_NUM: u32 = 3;
/// See [`LEASE_USE_NUM`].
pub const LEASE_USE_DEN: u32 = 4;

/// One worker's view of its origin's lease.
#[derive(Debug)]
pub(crate) struct LeaseWatch {
    base: Instant,
    ttl: Duration,
    lost: AtomicBool,
    /// Nanoseconds after `base` until which the lease is relied on.
    until: AtomicU64,
}

impl LeaseWatch {
    /// A lease of length `ttl` claimed by a request that started at `claimed_at`.
    pub(crate) fn new(claimed_at: Instant, ttl: Duration) -> LeaseWatch {
        let watch = LeaseWatch {
            base: claimed_at,
            ttl,
            lost: AtomicBool::new(false),
            until: AtomicU64::new(0),
        };
        watch.renewed(claimed_at);
        watch
    }

    /// The lease was renewed by a request that started at `at`.
    pub(crate) fn renewed(&self, at: Instant) {
        let usable = self.ttl * LEASE_USE_NUM / LEASE_USE_DEN;
        let until = at.saturating_duration_since(self.base) + usable;
        let nanos = u64::try_from(until.as_nanos()).unwrap_or(u64::MAX);
        self.until.fetch_max(nanos, Ordering::SeqCst);
    }

    /// Another process took the origin over.
    pub(crate) fn lose(&self) {
        self.lost.store(true, Ordering::SeqCst);
    }

    /// Whether the worker may go on: the lease is not lost and surely still held.
    pub(crate) fn usable(&self) -> bool {
        let elapsed = Instant::now().saturating_duration_since(self.base);
        !self.lost.load(Ordering::SeqCst)
            && u64::try_from(elapsed.as_nanos()).unwrap_or(u64::MAX)
                < self.until.load(Ordering::SeqCst)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test(start_paused = true)]
    async fn a_lease_is_relied_on_for_three_quarters_of_its_length_after_each_renewal() {
        let ttl = Duration::from_secs(4);
        let watch = LeaseWatch::new(Instant::now(), ttl);
        tokio::time::advance(Duration::from_millis(2_900)).await;
        assert!(watch.usable());
        tokio::time::advance(Duration::from_millis(100)).await;
        assert!(!watch.usable(), "3 s of a 4 s lease without renewal");
        watch.renewed(Instant::now());
        assert!(watch.usable());
        tokio::time::advance(Duration::from_millis(2_999)).await;
        assert!(watch.usable());
        watch.lose();
        assert!(!watch.usable());
    }
}
