//! A value read from the store and reused for a while (the ranking's and the sitemap's list of
//! current reports, the stats), so a busy home page costs one store read per refresh, not one
//! per request. Timed on tokio's clock, so tests can run it paused.

use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use tokio::sync::Mutex;
use tokio::time::Instant;

/// One cached value; concurrent misses wait for the one read in flight.
pub(crate) struct Cached<T> {
    slot: Mutex<Option<(Instant, Arc<T>)>>,
}

impl<T> Cached<T> {
    pub(crate) fn new() -> Cached<T> {
        Cached {
            slot: Mutex::new(None),
        }
    }

    /// The value, read with `load` when older than `ttl` (a zero `ttl` reads every time).
    pub(crate) async fn get<E, F>(&self, ttl: Duration, load: F) -> Result<Arc<T>, E>
    where
        F: Future<Output = Result<T, E>>,
    {
        let mut slot = self.slot.lock().await;
        if let Some((at, value)) = slot.as_ref() {
            if !ttl.is_zero() && at.elapsed() < ttl {
                return Ok(Arc::clone(value));
            }
        }
        let value = Arc::new(load.await?);
        *slot = Some((Instant::now(), Arc::clone(&value)));
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
}
