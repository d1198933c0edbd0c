//! One scope's robots.txt state, as an explicit state machine on tokio's clock.

use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use robots::{AgentRules, ProductTokens, RobotsTxt};
use tokio::time::Instant;
use url::Url;

use crate::fetcher::Validators;
use crate::headers::bounded_retry_after;
use crate::robots_txt::{RobotsFetch, RobotsOutcome};
use crate::verdict::{RulesSource, Verdict};

use super::{retry_delay, Policy, MAX_STALE, MAX_TOKEN_LISTS_PER_COPY};

/// A parsed robots.txt and the rules already chosen from it, per token list: building a
/// crawler's rules (merging its groups, indexing them) is done once per copy, not per URL.
pub(crate) struct ParsedCopy {
    robots: RobotsTxt,
    agents: Mutex<Vec<(ProductTokens, Arc<AgentRules>)>>,
}

impl ParsedCopy {
    pub(crate) fn new(robots: RobotsTxt) -> Arc<ParsedCopy> {
        Arc::new(ParsedCopy {
            robots,
            agents: Mutex::new(Vec::new()),
        })
    }

    fn rules_for(&self, tokens: &ProductTokens) -> Arc<AgentRules> {
        let mut agents = self.agents.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some((_, rules)) = agents.iter().find(|(list, _)| list == tokens) {
            return Arc::clone(rules);
        }
        let rules = Arc::new(self.robots.rules_for(tokens));
        if agents.len() >= MAX_TOKEN_LISTS_PER_COPY {
            agents.remove(0);
        }
        agents.push((tokens.clone(), Arc::clone(&rules)));
        rules
    }
}

/// A 2xx copy.
#[derive(Clone)]
pub(crate) struct Copy {
    pub(crate) robots: Arc<ParsedCopy>,
    pub(crate) body: Arc<Vec<u8>>,
    pub(crate) validators: Validators,
    pub(crate) fetched_at: Instant,
    pub(crate) expires_at: Instant,
}

impl Copy {
    pub(crate) fn new(
        body: Vec<u8>,
        validators: Validators,
        fetched_at: Instant,
        expires_at: Instant,
    ) -> Copy {
        Copy {
            robots: ParsedCopy::new(RobotsTxt::parse(&body)),
            body: Arc::new(body),
            validators,
            fetched_at,
            expires_at,
        }
    }
}

/// Failures in a row since the last success, with the copy kept from before them.
#[derive(Clone)]
pub(crate) struct Failure {
    pub(crate) copy: Option<Copy>,
    pub(crate) failures: u32,
    pub(crate) retry_at: Instant,
}

/// What is known of one scope's robots.txt.
#[derive(Clone, Default)]
pub(crate) enum RobotsState {
    /// Never fetched (or not loaded yet).
    #[default]
    Unknown,
    /// A 2xx copy; past `expires_at` it is revalidated before use.
    Fresh(Copy),
    /// The last answer was 4xx: no restrictions until `until`.
    NoFile { until: Instant },
    /// Unreachable (5xx, network error, redirect failure) since `failures` tries.
    Failing(Failure),
    /// 429 since `failures` tries.
    BackingOff(Failure),
}

impl RobotsState {
    pub(crate) fn copy(&self) -> Option<&Copy> {
        match self {
            RobotsState::Fresh(copy) => Some(copy),
            RobotsState::Failing(failure) | RobotsState::BackingOff(failure) => {
                failure.copy.as_ref()
            }
            RobotsState::Unknown | RobotsState::NoFile { .. } => None,
        }
    }

    fn failure(&self) -> Option<&Failure> {
        match self {
            RobotsState::Failing(failure) | RobotsState::BackingOff(failure) => Some(failure),
            _ => None,
        }
    }

    /// The state name, for logs.
    pub(crate) fn name(&self) -> &'static str {
        match self {
            RobotsState::Unknown => "unknown",
            RobotsState::Fresh(_) => "fresh",
            RobotsState::NoFile { .. } => "no_file",
            RobotsState::Failing(_) => "failing",
            RobotsState::BackingOff(_) => "backing_off",
        }
    }

    pub(crate) fn needs_fetch(&self, now: Instant, policy: Policy) -> bool {
        if policy == Policy::FreshPerOperation {
            // Fetched once for the operation, then memoised whatever it said.
            return matches!(self, RobotsState::Unknown);
        }
        match self {
            RobotsState::Unknown => true,
            RobotsState::Fresh(copy) => now >= copy.expires_at,
            RobotsState::NoFile { until } => now >= *until,
            RobotsState::Failing(failure) | RobotsState::BackingOff(failure) => {
                now >= failure.retry_at
            }
        }
    }

    pub(crate) fn verdict(
        &self,
        url: &str,
        tokens: &ProductTokens,
        now: Instant,
        fetched: bool,
        robots_url: &Url,
        policy: Policy,
    ) -> Verdict {
        let left = |until: Instant| Some(until.saturating_duration_since(now));
        let robots_url = Some(robots_url);
        match self {
            RobotsState::Fresh(copy) => {
                let source = match (
                    fetched,
                    now < copy.expires_at || policy == Policy::FreshPerOperation,
                ) {
                    (true, _) => RulesSource::Fresh,
                    (false, true) => RulesSource::Cached,
                    (false, false) => RulesSource::Stale,
                };
                Verdict::from_rules(
                    &copy.robots.rules_for(tokens),
                    url,
                    source,
                    left(copy.expires_at),
                    robots_url,
                )
            }
            RobotsState::NoFile { until } => {
                Verdict::without_rules(RulesSource::NoFile, left(*until), robots_url)
            }
            RobotsState::Failing(failure) | RobotsState::BackingOff(failure) => {
                if let Some(copy) = failure
                    .copy
                    .as_ref()
                    .filter(|copy| now < copy.expires_at + MAX_STALE)
                {
                    let until = failure.retry_at.min(copy.expires_at + MAX_STALE);
                    return Verdict::from_rules(
                        &copy.robots.rules_for(tokens),
                        url,
                        RulesSource::Stale,
                        left(until),
                        robots_url,
                    );
                }
                let source = match self {
                    RobotsState::BackingOff(_) => RulesSource::BackingOff,
                    _ => RulesSource::Unreachable,
                };
                Verdict::without_rules(source, left(failure.retry_at), robots_url)
            }
            // Not reached: an unknown state is always fetched first.
            RobotsState::Unknown => {
                Verdict::without_rules(RulesSource::Unreachable, None, robots_url)
            }
        }
    }

    /// The state after `fetch`, at `now`.
    pub(crate) fn apply(&self, fetch: RobotsFetch, now: Instant) -> RobotsState {
        let lifetime = fetch.cache_lifetime;
        match fetch.outcome {
            RobotsOutcome::Rules => {
                let robots = fetch
                    .robots
                    .unwrap_or_else(|| RobotsTxt::parse(&fetch.body));
                RobotsState::Fresh(Copy {
                    robots: ParsedCopy::new(robots),
                    body: Arc::new(fetch.body),
                    validators: fetch.validators,
                    fetched_at: now,
                    expires_at: now + lifetime,
                })
            }
            RobotsOutcome::NotModified if self.copy().is_some() => match self.copy() {
                Some(copy) => {
                    let mut copy = copy.clone();
                    copy.fetched_at = now;
                    copy.expires_at = now + lifetime;
                    if !fetch.validators.is_empty() {
                        copy.validators = fetch.validators;
                    }
                    RobotsState::Fresh(copy)
                }
                None => RobotsState::Failing(self.fail(fetch.retry_after, now)),
            },
            // The file is gone: its old rules no longer say anything.
            RobotsOutcome::NoFile => RobotsState::NoFile {
                until: now + lifetime,
            },
            RobotsOutcome::BackingOff => RobotsState::BackingOff(self.fail(fetch.retry_after, now)),
            // A 304 with nothing to revalidate cannot be trusted either.
            RobotsOutcome::Unreachable | RobotsOutcome::NotModified => {
                RobotsState::Failing(self.fail(fetch.retry_after, now))
            }
        }
    }

    fn fail(&self, retry_after: Option<Duration>, now: Instant) -> Failure {
        let failures = self.failure().map_or(0, |f| f.failures).saturating_add(1);
        let wait = match retry_after {
            Some(wait) => bounded_retry_after(wait),
            None => retry_delay(failures),
        };
        // A previous 4xx says nothing once the site fails: only a 2xx copy is kept.
        Failure {
            copy: self.copy().cloned(),
            failures,
            retry_at: now + wait,
        }
    }

    pub(crate) fn bytes(&self) -> usize {
        self.copy().map_or(0, |copy| copy.body.len())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_copy_keeps_rules_for_at_most_eight_token_lists() {
        let copy = ParsedCopy::new(RobotsTxt::parse(b"User-agent: *\nDisallow: /x\n"));
        let lists: Vec<ProductTokens> = (0..=MAX_TOKEN_LISTS_PER_COPY)
            .map(|i| {
                ProductTokens::new([format!("Bot{}", char::from(b'A' + i as u8))]).expect("a token")
            })
            .collect();
        let first = copy.rules_for(&lists[0]);
        // Asked again: the same rules, not merged and indexed again.
        assert!(Arc::ptr_eq(&first, &copy.rules_for(&lists[0])));
        for tokens in &lists[1..] {
            copy.rules_for(tokens);
        }
        let kept = copy
            .agents
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .len();
        assert_eq!(kept, MAX_TOKEN_LISTS_PER_COPY);
        // The oldest list went first; it is prepared again when asked for.
        assert!(!Arc::ptr_eq(&first, &copy.rules_for(&lists[0])));
    }
}
