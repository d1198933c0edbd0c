//! One deadline for a whole operation: every hop, every body, every robots.txt fetch made on
//! the way count against it, and each step's own time limit is capped by what is left.

use std::future::Future;
use std::time::Duration;

use tokio::time::Instant;

use crate::error::{FetchError, TimeoutPhase};

/// When an operation (one fetch with its redirects, or one whole analysis) must be over.
///
/// Read on tokio's clock, so tests drive it with `tokio::time::pause`. A step with its own
/// limit (connect, first byte) gets `min(limit, remaining)`: a hostile site answering each
/// hop just under the per-hop limit cannot stretch an operation past its deadline.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Deadline {
    at: Instant,
}

impl Deadline {
    /// The deadline `budget` from now.
    pub fn after(budget: Duration) -> Deadline {
        let now = Instant::now();
        Deadline {
            // `Instant + Duration` panics on overflow; a budget too far away to represent is
            // as good as a year.
            at: now
                .checked_add(budget)
                .unwrap_or_else(|| now + Duration::from_secs(365 * 24 * 60 * 60)),
        }
    }

    /// A deadline at `at`.
    pub fn at(at: Instant) -> Deadline {
        Deadline { at }
    }

    /// When it is.
    pub fn instant(&self) -> Instant {
        self.at
    }

    /// The earlier of two deadlines.
    pub fn min(self, other: Deadline) -> Deadline {
        if other.at < self.at {
            other
        } else {
            self
        }
    }

    /// This deadline, or `budget` from now if that is earlier.
    pub fn within(self, budget: Duration) -> Deadline {
        self.min(Deadline::after(budget))
    }

    /// Time left (zero once passed).
    pub fn remaining(&self) -> Duration {
        self.at.saturating_duration_since(Instant::now())
    }

    /// True once the deadline has passed.
    pub fn is_expired(&self) -> bool {
        Instant::now() >= self.at
    }

    /// `step` capped by the time left.
    pub fn cap(&self, step: Duration) -> Duration {
        step.min(self.remaining())
    }

    /// Runs `future` until it finishes, `step` elapses (failing as `phase`) or the deadline
    /// passes (failing as [`TimeoutPhase::Deadline`]).
    pub async fn run<T>(
        &self,
        step: Option<(Duration, TimeoutPhase)>,
        future: impl Future<Output = Result<T, FetchError>>,
    ) -> Result<T, FetchError> {
        let (limit, phase) = match step {
            Some((limit, phase)) if limit < self.remaining() => (Instant::now() + limit, phase),
            _ => (self.at, TimeoutPhase::Deadline),
        };
        match tokio::time::timeout_at(limit, future).await {
            Ok(result) => result,
            Err(_) => Err(FetchError::timeout(phase)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test(start_paused = true)]
    async fn steps_are_capped_by_what_is_left() {
        let deadline = Deadline::after(Duration::from_secs(10));
        assert_eq!(deadline.cap(Duration::from_secs(3)), Duration::from_secs(3));
        tokio::time::advance(Duration::from_secs(8)).await;
        assert_eq!(deadline.cap(Duration::from_secs(3)), Duration::from_secs(2));
        let slow = deadline
            .run(
                Some((Duration::from_secs(3), TimeoutPhase::FirstByte)),
                async {
                    tokio::time::sleep(Duration::from_secs(5)).await;
                    Ok(())
                },
            )
            .await;
        // The step would have allowed 3 s, but only 2 were left: the deadline decides.
        assert!(matches!(
            slow,
            Err(FetchError::Timeout {
                phase: TimeoutPhase::Deadline
            })
        ));
        assert!(deadline.is_expired());
        assert_eq!(deadline.remaining(), Duration::ZERO);
    }

    #[tokio::test(start_paused = true)]
    async fn a_step_limit_shorter_than_the_deadline_names_its_phase() {
        let deadline = Deadline::after(Duration::from_secs(60));
        let slow = deadline
            .run(
                Some((Duration::from_secs(1), TimeoutPhase::FirstByte)),
                async {
                    tokio::time::sleep(Duration::from_secs(2)).await;
                    Ok(())
                },
            )
            .await;
        assert!(matches!(
            slow,
            Err(FetchError::Timeout {
                phase: TimeoutPhase::FirstByte
            })
        ));
        let far = Deadline::after(Duration::MAX);
        assert!(far.remaining() > Duration::from_secs(300 * 24 * 3600));
        assert_eq!(far.min(deadline), deadline);
    }
}
