//! CPU-bound work kept off the async runtime's threads.
//!
//! Those few threads answer every page: one audit of a hostile paste running on one of them
//! (up to `audit::AUDIT_CPU_BUDGET` of CPU) stalls every request scheduled behind it. Pastes
//! are audited on tokio's blocking pool instead, at most [`PASTE_AUDITS_AT_ONCE`] at a time
//! (the machine keeps cores for the pages), with at most [`PASTES_WAITING`] more waiting;
//! beyond that the paste is refused as busy rather than queued without bound. Analyses of
//! sites audit on the analysis threads (`crate::analyzer`), never here.

use std::sync::Arc;

use tokio::sync::Semaphore;

use crate::limits::{PASTES_WAITING, PASTE_AUDITS_AT_ONCE};

/// The pool is full: too many pastes running and waiting.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("too many pastes are being audited")]
pub struct Busy;

/// Runs audits on the blocking pool, bounded (see the module's documentation).
#[derive(Debug)]
pub struct AuditPool {
    /// Permits to be running or waiting.
    admitted: Arc<Semaphore>,
    /// Permits to run.
    running: Arc<Semaphore>,
}

impl Default for AuditPool {
    fn default() -> AuditPool {
        AuditPool::new(PASTE_AUDITS_AT_ONCE, PASTES_WAITING)
    }
}

impl AuditPool {
    /// A pool running `at_once` jobs with `waiting` more allowed to wait.
    pub fn new(at_once: usize, waiting: usize) -> AuditPool {
        AuditPool {
            admitted: Arc::new(Semaphore::new(at_once + waiting)),
            running: Arc::new(Semaphore::new(at_once)),
        }
    }

    /// Run `work` on a blocking thread once one of the pool's places is free; [`Busy`] at
    /// once when the pool and its waiting line are full. The work finishes (and keeps its
    /// place) even if the caller stops waiting for it.
    pub async fn run<T: Send + 'static>(
        &self,
        work: impl FnOnce() -> T + Send + 'static,
    ) -> Result<T, Busy> {
        let admitted = self
            .admitted
            .clone()
            .try_acquire_owned()
            .map_err(|_| Busy)?;
        let running = self
            .running
            .clone()
            .acquire_owned()
            .await
            .map_err(|_| Busy)?;
        let task = tokio::task::spawn_blocking(move || {
            let result = work();
            drop((running, admitted));
            result
        });
        task.await.map_err(|_| Busy)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[tokio::test(flavor = "current_thread")]
    async fn audits_run_off_the_runtime_and_a_full_pool_says_busy() {
        let pool = Arc::new(AuditPool::new(1, 1));
        let runtime_thread = std::thread::current().id();
        let (release, wait) = std::sync::mpsc::channel::<()>();
        let first = tokio::spawn({
            let pool = pool.clone();
            async move {
                pool.run(move || {
                    let _ = wait.recv_timeout(Duration::from_secs(10));
                    std::thread::current().id()
                })
                .await
            }
        });
        let second = tokio::spawn({
            let pool = pool.clone();
            async move { pool.run(|| 2).await }
        });
        // The first runs, the second waits: the third finds no place.
        while pool.admitted.available_permits() > 0 {
            tokio::task::yield_now().await;
        }
        assert_eq!(pool.run(|| 3).await, Err(Busy));
        release.send(()).unwrap();
        let ran_on = first.await.unwrap().unwrap();
        assert_ne!(ran_on, runtime_thread, "not on the runtime's thread");
        assert_eq!(second.await.unwrap(), Ok(2));
        assert_eq!(pool.run(|| 4).await, Ok(4), "places are given back");
    }
}
