//! The per-client limit on queued analyses: [`CLIENT_ANALYSES_PER_WINDOW`] per
//! [`CLIENT_WINDOW`] per client (`client::ClientKey`: an address, an IPv6 /64), in memory (client addresses are not stored).

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::Duration;

use tokio::time::Instant;

use crate::client::ClientKey;

use crate::limits::{
    CLIENT_ANALYSES_PER_WINDOW, CLIENT_SUBMISSIONS_PER_DAY, CLIENT_WINDOW, MAX_TRACKED_CLIENTS,
    QUOTA_DAY,
};

/// Fixed windows per client, bounded to [`MAX_TRACKED_CLIENTS`] clients.
#[derive(Debug)]
pub struct RateLimiter {
    windows: Mutex<HashMap<ClientKey, (Instant, u32)>>,
    limit: u32,
    window: Duration,
}

impl Default for RateLimiter {
    /// [`CLIENT_ANALYSES_PER_WINDOW`] per [`CLIENT_WINDOW`].
    fn default() -> RateLimiter {
        RateLimiter::new(CLIENT_ANALYSES_PER_WINDOW, CLIENT_WINDOW)
    }
}

impl RateLimiter {
    /// `limit` per `window` per client.
    pub fn new(limit: u32, window: Duration) -> RateLimiter {
        RateLimiter {
            windows: Mutex::new(HashMap::new()),
            limit,
            window,
        }
    }

    /// The daily quota: [`CLIENT_SUBMISSIONS_PER_DAY`] per [`QUOTA_DAY`].
    pub fn daily() -> RateLimiter {
        RateLimiter::new(CLIENT_SUBMISSIONS_PER_DAY, QUOTA_DAY)
    }

    /// Count one request of `client`: `Err(wait)` when it is over the limit, with how long
    /// until its window ends (the `Retry-After`).
    pub fn check(&self, client: impl Into<ClientKey>) -> Result<(), Duration> {
        let client = client.into();
        let now = Instant::now();
        let mut windows = self.windows.lock().unwrap_or_else(|p| p.into_inner());
        if windows.len() >= MAX_TRACKED_CLIENTS && !windows.contains_key(&client) {
            windows.retain(|_, (start, _)| now.duration_since(*start) < self.window);
            if windows.len() >= MAX_TRACKED_CLIENTS {
                // Still full of live windows: forget the oldest one.
                let oldest = windows.iter().min_by_key(|(_, (s, _))| *s).map(|(k, _)| *k);
                if let Some(oldest) = oldest {
                    windows.remove(&oldest);
                }
            }
        }
        let entry = windows.entry(client).or_insert((now, 0));
        if now.duration_since(entry.0) >= self.window {
            *entry = (now, 0);
        }
        if entry.1 >= self.limit {
            return Err(self.window.saturating_sub(now.duration_since(entry.0)));
        }
        entry.1 += 1;
        Ok(())
    }

    /// Addresses tracked now.
    pub fn tracked(&self) -> usize {
        self.windows.lock().map(|w| w.len()).unwrap_or(0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::net::IpAddr;

    #[tokio::test(start_paused = true)]
    async fn ten_per_minute_per_client_then_retry_after() {
        let limiter = RateLimiter::default();
        let (a, b): (IpAddr, IpAddr) = ("192.0.2.1".parse().unwrap(), "192.0.2.2".parse().unwrap());
        for _ in 0..CLIENT_ANALYSES_PER_WINDOW {
            assert!(limiter.check(a).is_ok());
        }
        tokio::time::advance(Duration::from_secs(20)).await;
        assert_eq!(limiter.check(a), Err(Duration::from_secs(40)));
        assert!(limiter.check(b).is_ok(), "per client");
        tokio::time::advance(Duration::from_secs(40)).await;
        assert!(limiter.check(a).is_ok(), "a new window");
    }

    #[tokio::test(start_paused = true)]
    async fn the_daily_quota_ends_a_day_after_the_first_submission() {
        let limiter = RateLimiter::daily();
        let a: IpAddr = "192.0.2.1".parse().unwrap();
        for _ in 0..CLIENT_SUBMISSIONS_PER_DAY {
            assert!(limiter.check(a).is_ok());
            tokio::time::advance(Duration::from_secs(60)).await;
        }
        let wait = limiter.check(a).unwrap_err();
        assert!(
            wait < QUOTA_DAY && wait > Duration::from_secs(20 * 3600),
            "{wait:?}"
        );
        tokio::time::advance(wait).await;
        assert!(limiter.check(a).is_ok(), "a new day");
    }

    #[tokio::test(start_paused = true)]
    async fn memory_is_bounded_by_the_tracked_clients() {
        let limiter = RateLimiter::default();
        for n in 0..(MAX_TRACKED_CLIENTS as u32 + 10) {
            let ip = IpAddr::from(n.to_be_bytes());
            assert!(limiter.check(ip).is_ok());
        }
        assert_eq!(limiter.tracked(), MAX_TRACKED_CLIENTS);
    }
}
