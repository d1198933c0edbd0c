//! The wall clock the service reads and sleeps on, replaceable in tests.
//!
//! The schedule's timing (15 s between sites, back-offs of hours to weeks) is tested on a
//! [`ManualClock`], whose sleeps move its time forward at once, against real loopback servers
//! and real stores. tokio's paused clock does not fit those tests: it jumps to the next timer
//! whenever the runtime waits on another thread (the SQLite worker, a PostgreSQL round trip),
//! which fires the store's and the fetcher's timeouts at random.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use jiff::{SignedDuration, Timestamp};

/// A boxed future of a sleep.
pub type Sleep = std::pin::Pin<Box<dyn std::future::Future<Output = ()> + Send>>;

/// Reads the time and waits.
pub trait Clock: Send + Sync + std::fmt::Debug {
    /// The current wall-clock time.
    fn now(&self) -> Timestamp;
    /// A wait of `duration`.
    fn sleep(&self, duration: Duration) -> Sleep;
}

/// The system's clock and tokio's timers.
#[derive(Debug, Default, Clone, Copy)]
pub struct SystemClock;

impl Clock for SystemClock {
    fn now(&self) -> Timestamp {
        Timestamp::now()
    }

    fn sleep(&self, duration: Duration) -> Sleep {
        Box::pin(tokio::time::sleep(duration))
    }
}

/// A clock that stands still until told, or until something sleeps on it: a sleep moves it
/// forward by its length at once and is recorded.
#[derive(Debug)]
pub struct ManualClock {
    now: Mutex<Timestamp>,
    slept: Mutex<Vec<Duration>>,
}

impl ManualClock {
    /// A clock showing `start`.
    pub fn new(start: Timestamp) -> Arc<ManualClock> {
        Arc::new(ManualClock {
            now: Mutex::new(start),
            slept: Mutex::new(Vec::new()),
        })
    }

    /// Move the time forward by `by`.
    pub fn advance(&self, by: Duration) {
        let mut now = self.now.lock().unwrap_or_else(|p| p.into_inner());
        *now = add(*now, by);
    }

    /// Set the time.
    pub fn set(&self, to: Timestamp) {
        *self.now.lock().unwrap_or_else(|p| p.into_inner()) = to;
    }

    /// Every sleep so far, in order; clears the record.
    pub fn take_sleeps(&self) -> Vec<Duration> {
        std::mem::take(&mut *self.slept.lock().unwrap_or_else(|p| p.into_inner()))
    }
}

impl Clock for ManualClock {
    fn now(&self) -> Timestamp {
        *self.now.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn sleep(&self, duration: Duration) -> Sleep {
        self.slept
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .push(duration);
        self.advance(duration);
        Box::pin(tokio::task::yield_now())
    }
}

/// `t + d`, saturating at the end of time.
pub fn add(t: Timestamp, d: Duration) -> Timestamp {
    SignedDuration::try_from(d)
        .ok()
        .and_then(|d| t.checked_add(d).ok())
        .unwrap_or(Timestamp::MAX)
}

/// `t - d`, saturating at the start of time.
pub fn sub(t: Timestamp, d: Duration) -> Timestamp {
    SignedDuration::try_from(d)
        .ok()
        .and_then(|d| t.checked_sub(d).ok())
        .unwrap_or(Timestamp::MIN)
}
