//! The values every visitor reads, made once and shared: the list of every URL's current
//! report (read from the store at most once per [`ServiceConfig::data_refresh`]), the ranking
//! made from it once per list and 30-minute window, and the statistics (at most once per
//! [`ServiceConfig::stats_refresh`]). The home page, `/api/ranking` and the sitemap all read
//! this one list, so they agree.
//!
//! A stale value is served while one caller reads the fresh one (stale-while-revalidate): a
//! slow store read (seconds over a million reports) delays one request per refresh, not every
//! request that arrives during it.
//!
//! [`ServiceConfig::data_refresh`]: crate::service::ServiceConfig::data_refresh
//! [`ServiceConfig::stats_refresh`]: crate::service::ServiceConfig::stats_refresh

use std::future::Future;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::Duration;

use jiff::Timestamp;

use crate::clock::{add, Clock};
use crate::model::CurrentReport;
use crate::ranking::{self, Ranking, RankingWindow};
use crate::stats::Stats;

/// A poisoned lock only means a panic elsewhere while it was held: the value is whole.
fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

/// One value read from the store and reused for a while, timed on the service's clock.
pub(crate) struct Cached<T> {
    /// The value and when (by the service's clock) it was read.
    slot: Mutex<Option<(Timestamp, Arc<T>)>>,
    /// Held by the one caller reading the store.
    loading: tokio::sync::Mutex<()>,
}

impl<T> Cached<T> {
    pub(crate) fn new() -> Cached<T> {
        Cached {
            slot: Mutex::new(None),
            loading: tokio::sync::Mutex::new(()),
        }
    }

    /// The value held and whether it is still fresh at `now`.
    fn held(&self, now: Timestamp, ttl: Duration) -> Option<(Arc<T>, bool)> {
        lock(&self.slot).as_ref().map(|(at, value)| {
            let fresh = !ttl.is_zero() && *at <= now && add(*at, ttl) > now;
            (Arc::clone(value), fresh)
        })
    }

    /// The value, read with `load` when older than `ttl` (a zero `ttl` reads every time).
    /// While another caller reads it, a stale value is answered at once; with none yet,
    /// callers wait for that read.
    pub(crate) async fn get<E, F>(
        &self,
        clock: &dyn Clock,
        ttl: Duration,
        load: F,
    ) -> Result<Arc<T>, E>
    where
        F: Future<Output = Result<T, E>>,
    {
        let stale = match self.held(clock.now(), ttl) {
            Some((value, true)) => return Ok(value),
            Some((value, false)) => Some(value),
            None => None,
        };
        let _loading = match (self.loading.try_lock(), stale) {
            (Ok(guard), _) => guard,
            (Err(_), Some(stale)) if !ttl.is_zero() => return Ok(stale),
            (Err(_), _) => {
                let guard = self.loading.lock().await;
                // Read while this caller waited.
                if let Some((value, true)) = self.held(clock.now(), ttl) {
                    return Ok(value);
                }
                guard
            }
        };
        let value = Arc::new(load.await?);
        *lock(&self.slot) = Some((clock.now(), Arc::clone(&value)));
        Ok(value)
    }
}

/// A ranking with what it was made from: the list of current reports and the window.
type MadeRanking = (Arc<Vec<CurrentReport>>, RankingWindow, Arc<Ranking>);

/// The ranking, made once per list of current reports and window.
#[derive(Default)]
pub(crate) struct RankingSlot {
    /// The ranking made last, with its list and window.
    slot: Arc<Mutex<Option<MadeRanking>>>,
    /// Whether a background refresh is running (at most one).
    refreshing: Arc<AtomicBool>,
    /// Held while the first ranking of a window is made.
    first: tokio::sync::Mutex<()>,
}

impl RankingSlot {
    /// The ranking of `current` at `now`. When only the list changed (a refresh within the
    /// window), the ranking made from the previous list is answered while a blocking task
    /// makes the new one (with `background` false, as in tests, it is made at once): no
    /// request waits for a ranking of every current report, except the first of a window.
    pub(crate) async fn get(
        &self,
        current: Arc<Vec<CurrentReport>>,
        now: Timestamp,
        background: bool,
    ) -> Arc<Ranking> {
        let window = ranking::window_of(now);
        let held = lock(&self.slot).clone();
        match held {
            Some((list, at, made)) if at == window && Arc::ptr_eq(&list, &current) => made,
            Some((_, at, made)) if at == window && background => {
                self.refresh(current, now, window);
                made
            }
            _ => {
                // A new window (or none yet): made here, once; concurrent requests wait for it.
                let _making = self.first.lock().await;
                if let Some((list, at, made)) = lock(&self.slot).as_ref() {
                    if *at == window && Arc::ptr_eq(list, &current) {
                        return Arc::clone(made);
                    }
                }
                let made = Arc::new(ranking::rank(&current, now));
                *lock(&self.slot) = Some((current, window, Arc::clone(&made)));
                made
            }
        }
    }

    /// Make the ranking of `current` on a blocking thread, unless a refresh already runs.
    fn refresh(&self, current: Arc<Vec<CurrentReport>>, now: Timestamp, window: RankingWindow) {
        if self.refreshing.swap(true, Ordering::AcqRel) {
            return;
        }
        let (slot, refreshing) = (Arc::clone(&self.slot), Arc::clone(&self.refreshing));
        tokio::task::spawn_blocking(move || {
            let made = Arc::new(ranking::rank(&current, now));
            let mut held = lock(&slot);
            // Never replace a ranking of a later window made meanwhile.
            if held.as_ref().is_none_or(|(_, at, _)| *at <= window) {
                *held = Some((current, window, made));
            }
            drop(held);
            refreshing.store(false, Ordering::Release);
        });
    }
}

/// Every shared value of one service.
pub(crate) struct Views {
    pub(crate) current: Cached<Vec<CurrentReport>>,
    pub(crate) ranking: RankingSlot,
    pub(crate) stats: Cached<Stats>,
}

impl Views {
    pub(crate) fn new() -> Views {
        Views {
            current: Cached::new(),
            ranking: RankingSlot::default(),
            stats: Cached::new(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::clock::ManualClock;

    fn start() -> Timestamp {
        "2026-03-01T10:00:00Z".parse().unwrap()
    }

    #[tokio::test]
    async fn reused_until_the_ttl_then_read_again() {
        let clock = ManualClock::new(start());
        let cache = Cached::new();
        let ttl = Duration::from_secs(60);
        let first: Result<_, ()> = cache.get(&*clock, ttl, async { Ok(1) }).await;
        assert_eq!(*first.unwrap(), 1);
        clock.advance(Duration::from_secs(59));
        let again: Result<_, ()> = cache.get(&*clock, ttl, async { Ok(2) }).await;
        assert_eq!(*again.unwrap(), 1);
        clock.advance(Duration::from_secs(1));
        let fresh: Result<_, ()> = cache.get(&*clock, ttl, async { Ok(3) }).await;
        assert_eq!(*fresh.unwrap(), 3);
    }

    #[tokio::test]
    async fn a_stale_value_is_served_while_one_caller_reads_the_store() {
        let clock = ManualClock::new(start());
        let cache = Arc::new(Cached::new());
        let ttl = Duration::from_secs(60);
        let first: Result<_, ()> = cache.get(&*clock, ttl, async { Ok(1) }).await;
        assert_eq!(*first.unwrap(), 1);
        clock.advance(ttl);
        let (started, release) = (
            Arc::new(tokio::sync::Notify::new()),
            Arc::new(tokio::sync::Notify::new()),
        );
        let slow = {
            let (cache, clock) = (cache.clone(), clock.clone());
            let (started, release) = (started.clone(), release.clone());
            tokio::spawn(async move {
                let read: Result<_, ()> = cache
                    .get(&*clock, ttl, async {
                        started.notify_one();
                        release.notified().await;
                        Ok(2)
                    })
                    .await;
                *read.unwrap()
            })
        };
        started.notified().await;
        // The refresh is in flight: others get the stale value without waiting.
        let during: Result<_, ()> = cache
            .get(&*clock, ttl, async { panic!("a second read") })
            .await;
        assert_eq!(*during.unwrap(), 1);
        release.notify_one();
        assert_eq!(slow.await.unwrap(), 2);
        let after: Result<_, ()> = cache.get(&*clock, ttl, async { Ok(3) }).await;
        assert_eq!(*after.unwrap(), 2, "fresh again");
    }
}
