//! One origin's pacing state, as a pure state machine on tokio's clock: when the next
//! request may start, and what a response teaches.

use std::collections::HashMap;
use std::time::Duration;

use http::{HeaderMap, StatusCode};
use tokio::time::Instant;

use crate::error::{ErrorKind, FetchError};
use crate::headers::retry_after;

/// Default minimum gap between the starts of two requests to one origin: 1 s (JittyBot is
/// "deliberately conservative").
pub const DEFAULT_PACE: Duration = Duration::from_secs(1);
/// Default first back-off after a failure: 30 s, doubled per failure in a row ...
pub const DEFAULT_BACKOFF_BASE: Duration = Duration::from_secs(30);
/// ... up to 1 hour.
pub const DEFAULT_BACKOFF_MAX: Duration = Duration::from_secs(60 * 60);
/// Default failures in a row after which an origin is paused until a probe succeeds.
pub const DEFAULT_PAUSE_AFTER: u32 = 5;
/// Longest wait between probes of a paused origin: 1 day.
pub const MAX_PROBE_INTERVAL: Duration = Duration::from_secs(24 * 60 * 60);
/// Longest crawl-delay honoured: 1 day. A larger value would stop the host for good;
/// this one already lets through one request a day.
pub const MAX_CRAWL_DELAY: Duration = Duration::from_secs(24 * 60 * 60);

/// The pacing rules.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PacerConfig {
    /// Minimum gap between the starts of two requests to one origin (`--pace`).
    pub pace: Duration,
    /// First back-off after a failure (`--backoff-base`); `n` failures in a row wait
    /// `base × 2^(n−1)`.
    pub backoff_base: Duration,
    /// Longest back-off (`--backoff-max`).
    pub backoff_max: Duration,
    /// Failures in a row after which the origin is paused (`--pause-after`); 0 never pauses.
    pub pause_after: u32,
    /// Longest honoured `Retry-After`.
    pub max_retry_after: Duration,
}

impl Default for PacerConfig {
    /// JittyBot's defaults.
    fn default() -> PacerConfig {
        PacerConfig {
            pace: DEFAULT_PACE,
            backoff_base: DEFAULT_BACKOFF_BASE,
            backoff_max: DEFAULT_BACKOFF_MAX,
            pause_after: DEFAULT_PAUSE_AFTER,
            max_retry_after: crate::headers::MAX_RETRY_AFTER,
        }
    }
}

impl PacerConfig {
    /// RobotsTxtParser within one analysis: no pace of its own and no back-off (the
    /// service's schedule leaves failing sites alone between analyses), only the site's
    /// crawl-delay, within the analysis's wait budget.
    pub fn analysis() -> PacerConfig {
        PacerConfig {
            pace: Duration::ZERO,
            backoff_base: Duration::ZERO,
            backoff_max: Duration::ZERO,
            pause_after: 0,
            max_retry_after: Duration::ZERO,
        }
    }

    /// The back-off after `failures` failures in a row: `base × 2^(failures−1)`, at most
    /// `limit`.
    pub fn backoff(&self, failures: u32, limit: Duration) -> Duration {
        let doublings = failures.saturating_sub(1).min(30);
        self.backoff_base
            .saturating_mul(1u32 << doublings)
            .min(limit)
    }
}

/// What one response (or failure) teaches the pacer.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(tag = "learned", rename_all = "snake_case")]
pub enum Learned {
    /// The origin answered normally (2xx, 3xx, 4xx but 429, other 5xx): a run of failures
    /// ends.
    Success,
    /// 429, 500, 502, 503, 504, or a retryable network error (timeout, reset, DNS): back off.
    Failure {
        /// `Retry-After`, as honoured (bounded), when sent.
        retry_after: Option<Duration>,
    },
    /// The origin answered a request that does not speak for its pages (robots.txt, 2xx to
    /// 4xx): a pause ends, so that a page request can test the origin again, but the run of
    /// failures and its back-off stand. Only a page's answer ([`Learned::Success`]) ends a
    /// run of failures: a site that serves its robots.txt and fails everything else must not
    /// have its exponential back-off reset between two failures.
    Answered,
    /// Nothing to learn about the origin's load (a refused address, a TLS failure, a
    /// request cancelled).
    Nothing,
}

impl Learned {
    /// What a response with `status` and `headers` teaches (JittyBot's documented "Backing off").
    pub fn from_response(status: StatusCode, headers: &HeaderMap) -> Learned {
        Learned::from_status(status, retry_after(headers, jiff::Timestamp::now()))
    }

    /// What `status` teaches, with the `Retry-After` already read.
    pub fn from_status(status: StatusCode, retry_after: Option<Duration>) -> Learned {
        match status.as_u16() {
            429 | 500 | 502 | 503 | 504 => Learned::Failure { retry_after },
            _ => Learned::Success,
        }
    }

    /// What a robots.txt request's answer teaches: a failure as for any request (429, 5xx
    /// with their `Retry-After`), any other answer only [`Learned::Answered`].
    pub fn from_robots_txt(status: StatusCode, retry_after: Option<Duration>) -> Learned {
        match Learned::from_status(status, retry_after) {
            Learned::Success => Learned::Answered,
            failure => failure,
        }
    }

    /// What a failed request teaches.
    pub fn from_error(error: &FetchError) -> Learned {
        if error.is_retryable() {
            Learned::Failure { retry_after: None }
        } else {
            Learned::Nothing
        }
    }

    /// What a failed request teaches, `https_probe` when it was the first HTTPS attempt at a
    /// host not known to serve HTTPS. Such an attempt that fails to connect as a host
    /// without HTTPS does ([`shows_no_https`]) teaches nothing: it says the host has no
    /// HTTPS, not that the origin is loaded. Were it a failure, the origin's other sites
    /// would wait out a back-off (30 s by default) for every host tried, and the host's own
    /// HTTP requests with them.
    pub fn from_failure(error: &FetchError, https_probe: bool) -> Learned {
        if https_probe && shows_no_https(error) {
            Learned::Nothing
        } else {
            Learned::from_error(error)
        }
    }
}

/// Whether a request over HTTPS failed as a host without working HTTPS fails: the
/// connection refused or reset, the handshake failed, or the answer was not HTTP (a
/// plain-HTTP server on the port).
pub fn shows_no_https(error: &FetchError) -> bool {
    matches!(
        error.kind(),
        ErrorKind::Tls
            | ErrorKind::ConnectRefused
            | ErrorKind::ConnectionReset
            | ErrorKind::MalformedResponse
    )
}

/// Why a request has to wait.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum WaitReason {
    /// The origin's pace.
    Pace,
    /// The host's crawl-delay.
    CrawlDelay,
    /// Back-off after failures (or `Retry-After`).
    BackOff,
    /// The origin is paused until a probe succeeds.
    Paused,
}

/// When a request may start.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Plan {
    /// At `at` (now or later), waiting for `reason`.
    At {
        /// The earliest start.
        at: Instant,
        /// What the wait is for (`Pace` when there is none).
        reason: WaitReason,
    },
    /// Paused: only a probe may be sent, at `probe_at`.
    Paused {
        /// When the next probe may start.
        probe_at: Instant,
    },
}

/// One origin's state.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct OriginState {
    /// When the last request to the origin started.
    pub(crate) last_start: Option<Instant>,
    /// When the last request to each host started (for its crawl-delay).
    pub(crate) host_starts: HashMap<String, Instant>,
    /// Failures in a row.
    pub(crate) failures: u32,
    /// No request before this (back-off, `Retry-After`, next probe).
    pub(crate) not_before: Option<Instant>,
    /// Paused until a probe succeeds.
    pub(crate) paused: bool,
    /// Since when this process holds the origin without knowing for certain when its last
    /// request started (a restart, a lease taken over from another process): the first
    /// request waits a full pace, crawl-delay and back-off from then ([`OriginState::unsure`]).
    pub(crate) unsure_since: Option<Instant>,
}

impl OriginState {
    /// The last request's start is not known for certain at `now` (the origin was taken over
    /// from a process that may have sent requests it never recorded): until a request
    /// starts, the next one waits the stricter of the pace, its host's crawl-delay and the
    /// back-off of the failures known, counted from `now`, as if a request had just started.
    pub fn unsure(&mut self, now: Instant) {
        self.unsure_since = Some(self.unsure_since.map_or(now, |t| t.max(now)));
    }

    /// Takes in the state of another origin that turned out to be the same infrastructure:
    /// the stricter of the two in every respect (later starts, more failures, paused if
    /// either was).
    pub fn absorb(&mut self, other: &OriginState) {
        self.last_start = self.last_start.max(other.last_start);
        for (host, start) in &other.host_starts {
            let mine = self.host_starts.entry(host.clone()).or_insert(*start);
            *mine = (*mine).max(*start);
        }
        self.failures = self.failures.max(other.failures);
        self.not_before = self.not_before.max(other.not_before);
        self.paused |= other.paused;
        self.unsure_since = self.unsure_since.max(other.unsure_since);
    }

    /// When a request to `host` (with the host's `crawl_delay`) may start; `probe` for the
    /// request that tests a paused origin (its robots.txt).
    pub fn plan(
        &self,
        config: &PacerConfig,
        host: &str,
        crawl_delay: Option<Duration>,
        probe: bool,
        now: Instant,
    ) -> Plan {
        if self.paused && !probe {
            return Plan::Paused {
                probe_at: self.not_before.unwrap_or(now).max(now),
            };
        }
        let mut at = now;
        let mut reason = WaitReason::Pace;
        let mut later = |candidate: Option<Instant>, why: WaitReason| {
            if let Some(candidate) = candidate.filter(|c| *c > at) {
                at = candidate;
                reason = why;
            }
        };
        later(
            self.last_start.and_then(|s| s.checked_add(config.pace)),
            WaitReason::Pace,
        );
        let delay = crawl_delay.map(|d| d.min(MAX_CRAWL_DELAY));
        later(
            delay.and_then(|d| self.host_starts.get(host)?.checked_add(d)),
            WaitReason::CrawlDelay,
        );
        let why = if self.paused {
            WaitReason::Paused
        } else {
            WaitReason::BackOff
        };
        later(self.not_before, why);
        if let Some(since) = self.unsure_since {
            later(since.checked_add(config.pace), WaitReason::Pace);
            later(
                delay.and_then(|d| since.checked_add(d)),
                WaitReason::CrawlDelay,
            );
            if self.failures > 0 {
                let backoff = config.backoff(self.failures, config.backoff_max);
                later(since.checked_add(backoff), WaitReason::BackOff);
            }
        }
        Plan::At { at, reason }
    }

    /// A request to `host` starts at `now`.
    pub fn started(&mut self, host: &str, now: Instant) {
        self.last_start = Some(now);
        // From here on this process knows when the last request started.
        self.unsure_since = None;
        // Entries older than any crawl-delay honoured constrain nothing any more.
        self.host_starts
            .retain(|_, start| now.saturating_duration_since(*start) < MAX_CRAWL_DELAY);
        self.host_starts.insert(host.to_owned(), now);
    }

    /// The answer to the request to `host` (its response head, or its failure) arrived at
    /// `now`: the pace and the host's crawl-delay count from here. A request's start is when
    /// the client began it, but a server sees it only once the connection is up (a new TLS
    /// handshake can take tens of ms), so gaps counted from starts can look shorter to the
    /// server; counted from the answer, which comes after the server saw the request, they
    /// never do.
    pub fn answered(&mut self, host: &str, now: Instant) {
        if self.last_start.is_some_and(|start| start < now) {
            self.last_start = Some(now);
        }
        if let Some(start) = self.host_starts.get_mut(host) {
            *start = (*start).max(now);
        }
    }

    /// Learns from a response (or failure) at `now`.
    pub fn learn(&mut self, config: &PacerConfig, learned: Learned, now: Instant) {
        match learned {
            Learned::Nothing => {}
            Learned::Answered => self.paused = false,
            Learned::Success => {
                self.failures = 0;
                self.not_before = None;
                self.paused = false;
            }
            Learned::Failure { retry_after } => {
                self.failures = self.failures.saturating_add(1);
                if config.pause_after > 0 && self.failures >= config.pause_after {
                    self.paused = true;
                }
                // A paused origin is probed on the same exponential schedule, up to a day.
                let limit = if self.paused {
                    MAX_PROBE_INTERVAL
                } else {
                    config.backoff_max
                };
                let wait = match retry_after {
                    Some(wait) => wait.min(config.max_retry_after),
                    None => config.backoff(self.failures, limit),
                };
                self.not_before = now.checked_add(wait);
            }
        }
    }

    /// Failures in a row.
    pub fn failures(&self) -> u32 {
        self.failures
    }

    /// True while the origin is paused.
    pub fn is_paused(&self) -> bool {
        self.paused
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_https_probe_refused_teaches_nothing_an_ordinary_request_refused_is_a_failure() {
        let refused = FetchError::ConnectRefused {
            host: "a.test".into(),
            source: crate::error::Cause::message("refused"),
        };
        let timeout = FetchError::Timeout {
            phase: crate::error::TimeoutPhase::Connect,
        };
        let failure = Learned::Failure { retry_after: None };
        assert_eq!(Learned::from_failure(&refused, true), Learned::Nothing);
        assert_eq!(Learned::from_failure(&refused, false), failure);
        // A probe that timed out says nothing of HTTPS: the origin may be loaded.
        assert_eq!(Learned::from_failure(&timeout, true), failure);
        assert!(shows_no_https(&refused) && !shows_no_https(&timeout));
    }

    #[test]
    fn a_crawl_delay_over_the_longest_waits_the_longest() {
        let config = PacerConfig::default();
        let mut state = OriginState::default();
        let now = Instant::now();
        state.started("a.test", now);
        let wait = |delay: Duration| match state.plan(&config, "a.test", Some(delay), false, now) {
            Plan::At { at, reason } => (at - now, reason),
            Plan::Paused { .. } => panic!("not paused"),
        };
        let under = MAX_CRAWL_DELAY - Duration::from_secs(1);
        assert_eq!(wait(under), (under, WaitReason::CrawlDelay));
        let longest = (MAX_CRAWL_DELAY, WaitReason::CrawlDelay);
        assert_eq!(wait(MAX_CRAWL_DELAY * 10), longest);
        assert_eq!(wait(Duration::MAX), longest);
    }

    #[test]
    fn a_paused_origin_is_probed_doubling_up_to_a_day() {
        let config = PacerConfig::default();
        let mut state = OriginState::default();
        let now = Instant::now();
        let mut waits = Vec::new();
        for _ in 0..20 {
            state.learn(&config, Learned::Failure { retry_after: None }, now);
            waits.push(state.not_before.map(|at| at - now));
        }
        assert!(state.is_paused());
        let base = config.backoff_base;
        // 30 s doubling; paused after 5 failures, when the 1 h maximum gives way to a day.
        assert_eq!(waits[0], Some(base));
        assert_eq!(waits[3], Some(base * 8));
        assert_eq!(waits[8], Some(base * 256), "past the 1 h back-off maximum");
        assert_eq!(waits[19], Some(MAX_PROBE_INTERVAL));
        assert!(waits
            .iter()
            .all(|wait| wait.is_some_and(|w| w <= MAX_PROBE_INTERVAL)));
    }
}
