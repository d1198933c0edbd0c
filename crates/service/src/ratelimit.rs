//! The per-client limit on queued analyses: [`CLIENT_ANALYSES_PER_WINDOW`] per
//! [`CLIENT_WINDOW`] per client address, in memory (client addresses are not stored).

use std::collections::HashMap;
use std::net::IpAddr;
use std::sync::Mutex;
use std::time::Duration;

use tokio::time::Instant;

use crate::limits::{CLIENT_ANALYSES_PER_WINDOW, CLIENT_WINDOW, MAX_TRACKED_CLIENTS};

/// Fixed windows per client address, bounded to [`MAX_TRACKED_CLIENTS`] addresses.
#[derive(Debug, Default)]
pub struct RateLimiter {
    windows: Mutex<HashMap<IpAddr, (Instant, u32)>>,
}

impl RateLimiter {
    /// Count one request of `client`: `Err(wait)` when it is over the limit, with how long
    /// until its window ends (the `Retry-After`).
    pub fn check(&self, client: IpAddr) -> Result<(), Duration> {
        let now = Instant::now();
        let mut windows = self.windows.lock().unwrap_or_else(|p| p.into_inner());
        if windows.len() >= MAX_TRACKED_CLIENTS && !windows.contains_key(&client) {
            windows.retain(|_, (start, _)| now.duration_since(*start) < CLIENT_WINDOW);
            if windows.len() >= MAX_TRACKED_CLIENTS {
                // Still full of live windows: forget the oldest one.
                let oldest = windows.iter().min_by_key(|(_, (s, _))| *s).map(|(k, _)| *k);
                if let Some(oldest) = oldest {
                    windows.remove(&oldest);
                }
            }
        }
        let entry = windows.entry(client).or_insert((now, 0));
        if now.duration_since(entry.0) >= CLIENT_WINDOW {
            *entry = (now, 0);
        }
        if entry.1 >= CLIENT_ANALYSES_PER_WINDOW {
            return Err(CLIENT_WINDOW.saturating_sub(now.duration_since(entry.0)));
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
    async fn memory_is_bounded_by_the_tracked_clients() {
        let limiter = RateLimiter::default();
        for n in 0..(MAX_TRACKED_CLIENTS as u32 + 10) {
            let ip = IpAddr::from(n.to_be_bytes());
            assert!(limiter.check(ip).is_ok());
        }
        assert_eq!(limiter.tracked(), MAX_TRACKED_CLIENTS);
    }
}
