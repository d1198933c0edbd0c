//! Spacing the requests of one analysis by the bot's crawl-delay.

use std::collections::HashMap;
use std::time::Duration;

use tokio::time::Instant;

use crate::report::SkipReason;

/// Spaces requests to each origin by the bot's crawl-delay, within one shared wait budget.
#[derive(Debug)]
pub(crate) struct Pacer {
    budget: Duration,
    waited: Duration,
    last_start: HashMap<String, Instant>,
}

impl Pacer {
    pub(crate) fn new(budget: Duration) -> Pacer {
        Pacer {
            budget,
            waited: Duration::ZERO,
            last_start: HashMap::new(),
        }
    }

    /// How long to wait before a request to `origin` at `now`, or why it must be skipped.
    pub(crate) fn plan(
        &self,
        origin: &str,
        delay: Option<Duration>,
        now: Instant,
    ) -> Result<Duration, SkipReason> {
        let wait = match (delay, self.last_start.get(origin)) {
            (Some(delay), Some(last)) => match last.checked_add(delay) {
                Some(ready) => ready.saturating_duration_since(now),
                None => Duration::MAX,
            },
            _ => Duration::ZERO,
        };
        let total = self.waited.saturating_add(wait);
        if total > self.budget {
            let over = wait.min(Duration::from_secs(u64::from(u32::MAX)));
            return Err(SkipReason::CrawlDelayBudget {
                wait_ms: millis(over),
                budget_ms: millis(self.budget),
            });
        }
        Ok(wait)
    }

    /// Records a request to `origin` starting at `start` after waiting `wait`.
    pub(crate) fn record(&mut self, origin: &str, wait: Duration, start: Instant) {
        self.waited = self.waited.saturating_add(wait);
        self.last_start.insert(origin.to_owned(), start);
    }
}

pub(crate) fn millis(duration: Duration) -> u64 {
    u64::try_from(duration.as_millis()).unwrap_or(u64::MAX)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::limits::CRAWL_DELAY_BUDGET;

    #[tokio::test(start_paused = true)]
    async fn pacer_spaces_requests_within_the_budget() {
        let mut pacer = Pacer::new(CRAWL_DELAY_BUDGET);
        let delay = Some(Duration::from_secs(4));
        let now = Instant::now();
        assert_eq!(pacer.plan("a", delay, now), Ok(Duration::ZERO));
        pacer.record("a", Duration::ZERO, now);
        let wait = pacer.plan("a", delay, now).unwrap();
        assert_eq!(wait, Duration::from_secs(4));
        // Another origin has its own spacing.
        assert_eq!(pacer.plan("b", delay, now), Ok(Duration::ZERO));
        tokio::time::advance(wait).await;
        pacer.record("a", wait, Instant::now());
        let wait = pacer.plan("a", delay, Instant::now()).unwrap();
        tokio::time::advance(wait).await;
        pacer.record("a", wait, Instant::now());
        // 8 s waited: 4 more would exceed 10.
        assert_eq!(
            pacer.plan("a", delay, Instant::now()),
            Err(SkipReason::CrawlDelayBudget {
                wait_ms: 4_000,
                budget_ms: 10_000
            })
        );
        // Time passing on its own frees the spacing.
        tokio::time::advance(Duration::from_secs(4)).await;
        assert_eq!(pacer.plan("a", delay, Instant::now()), Ok(Duration::ZERO));
        // A huge delay is skipped, not awaited.
        assert!(pacer
            .plan("a", Some(Duration::MAX), Instant::now())
            .is_err());
    }
}
