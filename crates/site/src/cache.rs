//! A value read from the store and reused for a while (the ranking's and the sitemap's list of
//! current reports, the stats), so a busy home page costs one store read per refresh, not one
//! per request. Timed on tokio's clock, so tests can run it paused.

use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use tokio::sync::Mutex;
use tokio::time::Instant;

/// One cached value. Only the first read waits for the store; after that, a stale value is
/// served while one caller reads the fresh one (stale-while-revalidate), so a slow store read
/// (seconds over a million reports) delays one request per refresh, not every request that
/// arrives during it.
pub(crate) struct Cached<T> {
    /// The value and when it was read.
    slot: std::sync::Mutex<Option<(Instant, Arc<T>)>>,
    /// Held by the one caller reading the store.
    loading: Mutex<()>,
}

impl<T> Cached<T> {
    pub(crate) fn new() -> Cached<T> {
        Cached {
            slot: std::sync::Mutex::new(None),
            loading: Mutex::new(()),
        }
    }

    /// The value held and whether it is still fresh.
    fn held(&self, ttl: Duration) -> Option<(Arc<T>, bool)> {
        // A poisoned lock only means a panic elsewhere while it was held: the value is whole.
        let slot = self.slot.lock().unwrap_or_else(|e| e.into_inner());
        slot.as_ref().map(|(at, value)| {
            let fresh = !ttl.is_zero() && at.elapsed() < ttl;
            (Arc::clone(value), fresh)
        })
    }

    /// The value, read with `load` when older than `ttl` (a zero `ttl` reads every time). While
    /// another caller reads it, a stale value is answered at once; with none yet, callers wait
    /// for that read.
    pub(crate) async fn get<E, F>(&self, ttl: Duration, load: F) -> Result<Arc<T>, E>
    where
        F: Future<Output = Result<T, E>>,
    {
        let stale = match self.held(ttl) {
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
                if let Some((value, true)) = self.held(ttl) {
                    return Ok(value);
                }
                guard
            }
        };
        let value = Arc::new(load.await?);
        *self.slot.lock().unwrap_or_else(|e| e.into_inner()) =
            Some((Instant::now(), Arc::clone(&value)));
        Ok(value)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test(start_paused = true)]
    async fn reused_until_the_ttl_then_read_again() {
        let cache = Cached::new();
        let ttl = Duration::from_secs(60);
        let first: Result<_, ()> = cache.get(ttl, async { Ok(1) }).await;
        assert_eq!(*first.unwrap(), 1);
        tokio::time::advance(Duration::from_secs(59)).await;
        let again: Result<_, ()> = cache.get(ttl, async { Ok(2) }).await;
        assert_eq!(*again.unwrap(), 1);
        tokio::time::advance(Duration::from_secs(1)).await;
        let fresh: Result<_, ()> = cache.get(ttl, async { Ok(3) }).await;
        assert_eq!(*fresh.unwrap(), 3);
    }

    #[tokio::test(start_paused = true)]
    async fn a_stale_value_is_served_while_one_caller_reads_the_store() {
        let cache = Arc::new(Cached::new());
        let ttl = Duration::from_secs(60);
        let first: Result<_, ()> = cache.get(ttl, async { Ok(1) }).await;
        assert_eq!(*first.unwrap(), 1);
        tokio::time::advance(ttl).await;
        let (started, release) = (
            Arc::new(tokio::sync::Notify::new()),
            Arc::new(tokio::sync::Notify::new()),
        );
        let slow = {
            let (cache, started, release) = (cache.clone(), started.clone(), release.clone());
            tokio::spawn(async move {
                let read: Result<_, ()> = cache
                    .get(ttl, async {
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
        let during: Result<_, ()> = cache.get(ttl, async { panic!("a second read") }).await;
        assert_eq!(*during.unwrap(), 1);
        release.notify_one();
        assert_eq!(slow.await.unwrap(), 2);
        let after: Result<_, ()> = cache.get(ttl, async { Ok(3) }).await;
        assert_eq!(*after.unwrap(), 2, "fresh again");
    }
}
