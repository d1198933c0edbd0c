//! The schedule (the bot page, "What the bot does"): sites on the list and every site already
//! analysed are checked again when their result expires ([`RESULT_LIFETIME`](crate::limits::RESULT_LIFETIME)), one site at a
//! time with [`BETWEEN_SITES`] between two, by one process at a time (a lease that moves when
//! that process dies). A site that could not be reached or asked for fewer requests backs off
//! from [`FAILURE_BACKOFF_FIRST`], doubling up to [`FAILURE_BACKOFF_MAX`] (a `Retry-After` is
//! honoured up to the same limit); one that refuses the bot or shows it a challenge backs off
//! from [`REFUSAL_BACKOFF_FIRST`], doubling up to [`REFUSAL_BACKOFF_MAX`]. The state is in the
//! store, so it survives restarts.

use std::time::Duration;

use audit::report::RobotsStatus;
use audit::{Analysis, CheckId};
use db::{Holder, Lease};
use jiff::Timestamp;
use tokio::sync::watch;
use url::Url;

use crate::analyzer::AnalyzerError;
use crate::clock::add;
use crate::error::ServiceError;
use crate::limits::{
    BETWEEN_SITES, FAILURE_BACKOFF_FIRST, FAILURE_BACKOFF_MAX, REFUSAL_BACKOFF_FIRST,
    REFUSAL_BACKOFF_MAX, RESULT_LIFETIME, RETRY_AFTER_MAX, SCHEDULER_IDLE_POLL, SCHEDULER_LEASE,
};
use crate::model::ReportState;
use crate::service::Service;
use crate::store::{Backoff, LastOutcome, ScheduleRow};
use serde::Serialize;

/// The scheduler's named lease.
pub const SCHEDULER_LEASE_NAME: &str = "service.scheduler";

/// What one scheduled check found, for the back-off.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CheckOutcome {
    /// The site answered.
    Ok,
    /// Unreachable, or it asked for fewer requests (429, 5xx, network errors), with the
    /// `Retry-After` it sent.
    Failure {
        /// The `Retry-After` honoured, if one was sent.
        retry_after: Option<Duration>,
    },
    /// It refused the bot (401, 403) or showed it a challenge.
    Refusal,
}

impl CheckOutcome {
    /// What the back-off remembers of it.
    fn last_outcome(self) -> LastOutcome {
        match self {
            CheckOutcome::Ok => LastOutcome::Ok,
            CheckOutcome::Failure { .. } => LastOutcome::Failure,
            CheckOutcome::Refusal => LastOutcome::Refusal,
        }
    }
}

fn refused(status: Option<fetch::StatusCode>) -> bool {
    status.is_some_and(|s| s.as_u16() == 401 || s.as_u16() == 403)
}

fn overloaded(status: Option<fetch::StatusCode>) -> bool {
    status.is_some_and(|s| s.as_u16() == 429 || s.is_server_error())
}

/// What an analysis (or its failure to run) means for the schedule. A challenge is
/// recognised on robots.txt's answer (the `fetch.challenge` finding) and on the page's
/// ([`audit::PageReport::challenge`]); a `Retry-After` is read from either answer as the
/// server sent it, the longer one counting.
pub fn classify(result: Result<&Analysis, &AnalyzerError>) -> CheckOutcome {
    let Ok(analysis) = result else {
        return CheckOutcome::Failure { retry_after: None };
    };
    let challenge = analysis.page.challenge
        || analysis
            .findings
            .iter()
            .any(|f| f.id == CheckId::FetchChallenge);
    if challenge || refused(analysis.robots.status) || refused(analysis.page.status) {
        return CheckOutcome::Refusal;
    }
    let robots_failed = matches!(
        analysis.robots.outcome,
        RobotsStatus::Unreachable | RobotsStatus::RateLimited
    );
    if robots_failed || overloaded(analysis.page.status) {
        // Reports written before the value as sent was recorded have the capped one only.
        let robots = analysis
            .robots
            .retry_after_sent_s
            .or(analysis.robots.retry_after_s);
        let retry_after = robots
            .max(analysis.page.retry_after_sent_s)
            .map(Duration::from_secs);
        return CheckOutcome::Failure { retry_after };
    }
    CheckOutcome::Ok
}

/// `first` doubled `n - 1` times, at most `max`.
fn doubled(first: Duration, n: u32, max: Duration) -> Duration {
    let factor = 1u32.checked_shl(n.saturating_sub(1)).unwrap_or(u32::MAX);
    first.saturating_mul(factor).min(max)
}

/// The back-off after a check with `outcome` at `now`, given the one before.
pub fn next_backoff(previous: Option<&Backoff>, outcome: CheckOutcome, now: Timestamp) -> Backoff {
    let (failures, refusals) = previous.map_or((0, 0), |b| (b.failures, b.refusals));
    let (failures, refusals, wait) = match outcome {
        CheckOutcome::Ok => (0, 0, Duration::ZERO),
        CheckOutcome::Failure { retry_after } => {
            let n = failures.saturating_add(1);
            let wait = doubled(FAILURE_BACKOFF_FIRST, n, FAILURE_BACKOFF_MAX);
            let wait = retry_after.map_or(wait, |r| wait.max(r.min(RETRY_AFTER_MAX)));
            (n, 0, wait)
        }
        CheckOutcome::Refusal => {
            let n = refusals.saturating_add(1);
            (0, n, doubled(REFUSAL_BACKOFF_FIRST, n, REFUSAL_BACKOFF_MAX))
        }
    };
    Backoff {
        failures,
        refusals,
        until: add(now, wait),
        last_outcome: outcome.last_outcome(),
    }
}

/// A back-off in force, in words.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct BackoffView {
    /// The site is not checked before this.
    pub until: Timestamp,
    /// Why: `failure` (unreachable, or asked for fewer requests) or `refusal` (refused the
    /// bot, or showed it a challenge).
    pub reason: LastOutcome,
    /// How many checks in a row ended so.
    pub in_a_row: u32,
}

/// When a URL is checked next, and why then.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct UrlSchedule {
    /// The URL.
    pub url: Url,
    /// When it was put on the sites list (absent: analysed before, not listed).
    pub added_at: Option<Timestamp>,
    /// When its newest report was asked for (absent: never analysed).
    pub last_check: Option<Timestamp>,
    /// What came of it: `done`, `failed`, `queued` or `running` (absent: never analysed).
    pub outcome: Option<ReportState>,
    /// Its score, when done.
    pub score: Option<u8>,
    /// Why it failed, when it did.
    pub error: Option<String>,
    /// The next scheduled check: when its result expires ([`RESULT_LIFETIME`] after the last
    /// one), when its site's back-off ends if that is later (or if this URL's check is the
    /// one that failed), now when it was never analysed.
    pub next_check: Timestamp,
    /// Its site's back-off, when one is in force.
    pub backoff: Option<BackoffView>,
}

impl UrlSchedule {
    /// The schedule of `row` at `now`, as [`Store::next_due`](crate::Store::next_due)
    /// decides it.
    pub fn of(row: &ScheduleRow, now: Timestamp) -> UrlSchedule {
        let last = row.last.as_ref();
        let expiry = last.map_or(now, |last| add(last.at, RESULT_LIFETIME));
        let backoff = row.backoff.as_ref();
        let retry = backoff.filter(|b| b.last_outcome != LastOutcome::Ok && row.last_of_site);
        let next_check = match (retry, backoff) {
            (Some(b), _) => b.until,
            (None, Some(b)) => expiry.max(b.until),
            (None, None) => expiry,
        };
        let in_force = backoff.filter(|b| b.until > now && b.last_outcome != LastOutcome::Ok);
        UrlSchedule {
            url: row.url.clone(),
            added_at: row.added_at,
            last_check: last.map(|l| l.at),
            outcome: last.map(|l| l.state),
            score: last.and_then(|l| l.score),
            error: last.and_then(|l| l.error.clone()),
            next_check,
            backoff: in_force.map(|b| BackoffView {
                until: b.until,
                reason: b.last_outcome,
                in_a_row: b.failures.max(b.refusals),
            }),
        }
    }
}

impl Service {
    /// When each URL on the sites list is checked next (`jittybot sites list`).
    pub async fn listed_schedule(&self) -> Result<Vec<UrlSchedule>, ServiceError> {
        let now = self.clock().now();
        let rows = self.store().listed_schedule().await?;
        Ok(rows.iter().map(|row| UrlSchedule::of(row, now)).collect())
    }

    /// The next scheduled check of any URL of `domain` (its page shows it); `None` when none
    /// of its URLs is on the schedule.
    pub async fn next_check(&self, domain: &str) -> Result<Option<Timestamp>, ServiceError> {
        let now = self.clock().now();
        let domain = crate::ids::normalize_domain(domain);
        let rows = self.store().domain_schedule(&domain).await?;
        Ok(rows
            .iter()
            .map(|row| UrlSchedule::of(row, now).next_check)
            .min())
    }
}

/// What one turn of the scheduler did.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Tick {
    /// It checked a URL.
    Checked {
        /// The URL.
        url: Url,
        /// What the check found.
        outcome: CheckOutcome,
    },
    /// Nothing is due.
    NothingDue,
    /// Another process holds the scheduler lease.
    NotLeader,
    /// The due URL's site is being analysed (a person asked for it): later.
    SiteBusy,
}

/// The scheduler of one process.
#[derive(Debug)]
pub struct Scheduler {
    service: Service,
    holder: Holder,
}

impl Scheduler {
    /// A scheduler for `service`, holding leases as a new holder.
    pub fn new(service: Service) -> Scheduler {
        Scheduler {
            service,
            holder: Holder::new(),
        }
    }

    /// Check the most overdue URL, if this process holds (or takes) the scheduler lease.
    pub async fn tick(&self) -> Result<Tick, ServiceError> {
        let (store, clock) = (self.service.store(), self.service.clock());
        let now = clock.now();
        let lease = Lease {
            holder: &self.holder,
            now,
            ttl: SCHEDULER_LEASE,
        };
        if !store.db().try_lease(SCHEDULER_LEASE_NAME, &lease).await? {
            return Ok(Tick::NotLeader);
        }
        let Some(due) = store.next_due(now).await? else {
            return Ok(Tick::NothingDue);
        };
        if !store.lease_site(&due.site, &self.holder, now).await? {
            return Ok(Tick::SiteBusy);
        }
        let id = store.start_report(&due.url, now).await?;
        let result = self.service.analyze(&due.url).await;
        match &result {
            Ok(analyzed) => store.finish_report(&id, &analyzed.analysis).await?,
            Err(error) => {
                store
                    .fail_report(&id, &crate::worker::failure_message(error))
                    .await?
            }
        }
        let outcome = classify(result.as_ref().map(|a| &a.analysis));
        let previous = store.backoff(&due.site).await?;
        let backoff = next_backoff(previous.as_ref(), outcome, clock.now());
        store.set_backoff(&due.site, &backoff).await?;
        // The icon, while the site is still this check's: from what the analysis read, and
        // only from a site that answered (never after a refusal, a challenge, a 429 or an
        // error).
        if let Ok(analyzed) = &result {
            if let Err(error) = self.service.icon_after_analysis(&due.url, analyzed).await {
                tracing::warn!(url = %due.url, error = %error, "icon not stored");
            }
        }
        store.release_site(&due.site, &self.holder).await?;
        store.set_last_check(clock.now()).await?;
        tracing::info!(url = %due.url, outcome = outcome.last_outcome().as_str(), "scheduled check");
        Ok(Tick::Checked {
            url: due.url,
            outcome,
        })
    }

    /// One turn and the wait after it: [`BETWEEN_SITES`] after a check, or
    /// [`SCHEDULER_IDLE_POLL`] when idle.
    pub async fn step(&self) -> Tick {
        let tick = match self.tick().await {
            Ok(tick) => tick,
            Err(error) => {
                tracing::warn!(error = %error, "scheduler: store error");
                Tick::NothingDue
            }
        };
        let wait = match tick {
            Tick::Checked { .. } | Tick::SiteBusy => BETWEEN_SITES,
            Tick::NothingDue | Tick::NotLeader => SCHEDULER_IDLE_POLL,
        };
        self.service.clock().sleep(wait).await;
        tick
    }

    /// Wait out what is left of [`BETWEEN_SITES`] since the last check of any process (a
    /// restart does not shorten it).
    pub async fn resume(&self) -> Result<(), ServiceError> {
        let clock = self.service.clock();
        if let Some(last) = self.service.store().last_check().await? {
            let next = add(last, BETWEEN_SITES);
            let now = clock.now();
            if next > now {
                let left = now.duration_until(next).unsigned_abs();
                clock.sleep(left).await;
            }
        }
        Ok(())
    }

    /// Run until `stop` turns true, then give up the lease.
    pub async fn run(self, mut stop: watch::Receiver<bool>) {
        if let Err(error) = self.resume().await {
            tracing::warn!(error = %error, "scheduler: store error");
        }
        while !*stop.borrow() {
            tokio::select! {
                _ = self.step() => {}
                changed = stop.changed() => if changed.is_err() { break },
            }
        }
        let _ = self
            .service
            .store()
            .db()
            .release_lease(SCHEDULER_LEASE_NAME, &self.holder)
            .await;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const H: u64 = 3600;
    const D: u64 = 86_400;

    fn walk(outcomes: &[CheckOutcome]) -> Vec<u64> {
        let now = Timestamp::UNIX_EPOCH;
        let mut previous: Option<Backoff> = None;
        outcomes
            .iter()
            .map(|&o| {
                let b = next_backoff(previous.as_ref(), o, now);
                let secs = now.duration_until(b.until).as_secs().unsigned_abs();
                previous = Some(b);
                secs
            })
            .collect()
    }

    #[test]
    fn failures_back_off_from_an_hour_doubling_to_seven_days() {
        let f = CheckOutcome::Failure { retry_after: None };
        assert_eq!(
            walk(&[f; 10]),
            vec![
                H,
                2 * H,
                4 * H,
                8 * H,
                16 * H,
                32 * H,
                64 * H,
                128 * H,
                7 * D,
                7 * D
            ]
        );
        assert_eq!(
            walk(&[f, f, CheckOutcome::Ok, f]),
            vec![H, 2 * H, 0, H],
            "reset by success"
        );
    }

    #[test]
    fn retry_after_is_honoured_up_to_seven_days() {
        let r = |s| CheckOutcome::Failure {
            retry_after: Some(Duration::from_secs(s)),
        };
        assert_eq!(walk(&[r(2 * H)]), vec![2 * H]);
        assert_eq!(walk(&[r(60)]), vec![H], "never shorter than the back-off");
        assert_eq!(
            walk(&[r(3 * D)]),
            vec![3 * D],
            "longer than the fetcher's day"
        );
        assert_eq!(walk(&[r(30 * D)]), vec![7 * D]);
        assert_eq!(walk(&[r(u64::MAX)]), vec![7 * D], "no overflow");
    }

    #[test]
    fn refusals_back_off_from_a_day_doubling_to_thirty_days() {
        let r = CheckOutcome::Refusal;
        assert_eq!(
            walk(&[r; 7]),
            vec![D, 2 * D, 4 * D, 8 * D, 16 * D, 30 * D, 30 * D]
        );
        let f = CheckOutcome::Failure { retry_after: None };
        assert_eq!(
            walk(&[r, f, r]),
            vec![D, H, D],
            "each kind counts its own row"
        );
        assert_eq!(
            walk(&[CheckOutcome::Refusal; 40]).last(),
            Some(&(30 * D)),
            "no overflow"
        );
    }
}
