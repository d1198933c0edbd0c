//! Persisting robots.txt cache entries one at a time (the crawler keeps them in SQLite or
//! PostgreSQL): the stored form with wall-clock times, and the store trait.

use std::collections::HashMap;
use std::sync::{Mutex, PoisonError};
use std::time::Duration;

use tokio::time::Instant;

use crate::error::Cause;
use crate::fetcher::Validators;
use crate::http::BoxFuture;
use crate::scope::Scope;

use super::state::{Copy, Failure, RobotsState};

/// A stored 2xx copy.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct StoredCopy {
    /// The file as read (at most 500 KiB), raw bytes.
    pub body: Vec<u8>,
    /// Its validators.
    pub validators: Validators,
    /// When it was fetched or last revalidated.
    pub fetched_at: jiff::Timestamp,
    /// When its lifetime ends.
    pub expires_at: jiff::Timestamp,
}

/// Stored failures in a row.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct StoredFailure {
    /// The last 2xx copy from before the failures, used while it is not too stale.
    pub copy: Option<StoredCopy>,
    /// How many in a row.
    pub failures: u32,
    /// When to retry.
    pub retry_at: jiff::Timestamp,
}

/// A scope's state as stored.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(tag = "state", rename_all = "snake_case")]
pub enum StoredState {
    /// Nothing known.
    Unknown,
    /// A 2xx copy.
    Fresh(StoredCopy),
    /// 4xx: no restrictions until then.
    NoFile {
        /// Until when.
        until: jiff::Timestamp,
    },
    /// Unreachable.
    Failing(StoredFailure),
    /// 429.
    BackingOff(StoredFailure),
}

/// One scope's entry, as given to and read from a [`RobotsStore`].
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct StoredEntry {
    /// The scope (its origin, e.g. `https://example.com:8443`).
    pub scope: Scope,
    /// What is known.
    pub state: StoredState,
}

/// Why a store could not load or save.
#[derive(Debug, Clone, thiserror::Error)]
#[error("robots.txt store failed")]
pub struct StoreError(#[source] pub Cause);

/// Where cache entries live beyond the process: loaded on a miss, saved on every change.
/// The cache goes on without the store when it fails (logged at `warn`): a store outage must
/// not stop decisions, and the worst case is one robots.txt fetched again.
pub trait RobotsStore: Send + Sync {
    /// The stored entry of `scope`, if any.
    fn load<'a>(
        &'a self,
        scope: &'a Scope,
    ) -> BoxFuture<'a, Result<Option<StoredEntry>, StoreError>>;
    /// Saves `entry`, replacing the scope's previous one.
    fn save<'a>(&'a self, entry: &'a StoredEntry) -> BoxFuture<'a, Result<(), StoreError>>;
}

/// No persistence.
#[derive(Debug, Default, Clone, Copy)]
pub struct NoStore;

impl RobotsStore for NoStore {
    fn load<'a>(&'a self, _: &'a Scope) -> BoxFuture<'a, Result<Option<StoredEntry>, StoreError>> {
        Box::pin(async { Ok(None) })
    }

    fn save<'a>(&'a self, _: &'a StoredEntry) -> BoxFuture<'a, Result<(), StoreError>> {
        Box::pin(async { Ok(()) })
    }
}

/// Entries in memory: for tests, and to carry a cache across restarts within a process.
#[derive(Debug, Default)]
pub struct MemoryStore {
    entries: Mutex<HashMap<Scope, StoredEntry>>,
}

impl MemoryStore {
    /// Every entry saved, in no particular order.
    pub fn entries(&self) -> Vec<StoredEntry> {
        self.lock().values().cloned().collect()
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<Scope, StoredEntry>> {
        self.entries.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

impl RobotsStore for MemoryStore {
    fn load<'a>(
        &'a self,
        scope: &'a Scope,
    ) -> BoxFuture<'a, Result<Option<StoredEntry>, StoreError>> {
        let entry = self.lock().get(scope).cloned();
        Box::pin(async move { Ok(entry) })
    }

    fn save<'a>(&'a self, entry: &'a StoredEntry) -> BoxFuture<'a, Result<(), StoreError>> {
        self.lock().insert(entry.scope.clone(), entry.clone());
        Box::pin(async { Ok(()) })
    }
}

/// Converts between tokio's clock and wall-clock time around one instant pair.
#[derive(Clone, Copy)]
pub(crate) struct Clocks {
    pub(crate) now: Instant,
    pub(crate) wall: jiff::Timestamp,
}

impl Clocks {
    pub(crate) fn now() -> Clocks {
        Clocks {
            now: Instant::now(),
            wall: jiff::Timestamp::now(),
        }
    }

    pub(crate) fn to_wall(self, instant: Instant) -> jiff::Timestamp {
        let signed = if instant >= self.now {
            jiff::SignedDuration::try_from(instant - self.now)
        } else {
            jiff::SignedDuration::try_from(self.now - instant).map(|d| -d)
        };
        signed
            .ok()
            .and_then(|offset| self.wall.checked_add(offset).ok())
            .unwrap_or(self.wall)
    }

    pub(crate) fn to_instant(self, time: jiff::Timestamp) -> Instant {
        let offset = time.duration_since(self.wall);
        match Duration::try_from(offset) {
            Ok(ahead) => self.now.checked_add(ahead).unwrap_or(self.now),
            Err(_) => {
                let behind = Duration::try_from(-offset).unwrap_or(Duration::ZERO);
                self.now.checked_sub(behind).unwrap_or(self.now)
            }
        }
    }

    fn copy_out(self, copy: &Copy) -> StoredCopy {
        StoredCopy {
            body: copy.body.as_ref().clone(),
            validators: copy.validators.clone(),
            fetched_at: self.to_wall(copy.fetched_at),
            expires_at: self.to_wall(copy.expires_at),
        }
    }

    fn copy_in(self, copy: StoredCopy) -> Copy {
        Copy::new(
            copy.body,
            copy.validators,
            self.to_instant(copy.fetched_at),
            self.to_instant(copy.expires_at),
        )
    }

    fn failure_out(self, failure: &Failure) -> StoredFailure {
        StoredFailure {
            copy: failure.copy.as_ref().map(|copy| self.copy_out(copy)),
            failures: failure.failures,
            retry_at: self.to_wall(failure.retry_at),
        }
    }

    fn failure_in(self, failure: StoredFailure) -> Failure {
        Failure {
            copy: failure.copy.map(|copy| self.copy_in(copy)),
            failures: failure.failures,
            retry_at: self.to_instant(failure.retry_at),
        }
    }

    pub(crate) fn state_out(self, state: &RobotsState) -> StoredState {
        match state {
            RobotsState::Unknown => StoredState::Unknown,
            RobotsState::Fresh(copy) => StoredState::Fresh(self.copy_out(copy)),
            RobotsState::NoFile { until } => StoredState::NoFile {
                until: self.to_wall(*until),
            },
            RobotsState::Failing(failure) => StoredState::Failing(self.failure_out(failure)),
            RobotsState::BackingOff(failure) => StoredState::BackingOff(self.failure_out(failure)),
        }
    }

    pub(crate) fn state_in(self, state: StoredState) -> RobotsState {
        match state {
            StoredState::Unknown => RobotsState::Unknown,
            StoredState::Fresh(copy) => RobotsState::Fresh(self.copy_in(copy)),
            StoredState::NoFile { until } => RobotsState::NoFile {
                until: self.to_instant(until),
            },
            StoredState::Failing(failure) => RobotsState::Failing(self.failure_in(failure)),
            StoredState::BackingOff(failure) => RobotsState::BackingOff(self.failure_in(failure)),
        }
    }
}
