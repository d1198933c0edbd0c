//! The robots.txt cache: one copy per scope, shared by every token, refreshed conditionally,
//! kept when refreshing fails, and fetched once however many callers ask at the same time.
//!
//! Time is read from [`tokio::time::Instant`], so the whole state machine runs on tokio's
//! paused clock in tests.

use std::collections::HashMap;
use std::future::Future;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, SystemTime};

use robots::{AgentRules, RobotsTxt};
use tokio::time::Instant;
use url::Url;

use crate::client::{Fetcher, Validators};
use crate::error::FetchError;
use crate::robots_txt::{bounded_retry_after, fetch_robots_txt_url, RobotsFetch, RobotsOutcome};
use crate::scope::Scope;
use crate::verdict::{RulesSource, Verdict};

/// How long past its lifetime a copy is still used while refreshing it fails: 7 days. After
/// that the failure rules apply (unreachable: disallow all; 429: back off).
pub const MAX_STALE: Duration = Duration::from_secs(7 * 24 * 60 * 60);
/// First wait before retrying an unreachable robots.txt (or a 429 without `Retry-After`):
/// 1 minute, doubled after each failure in a row ...
pub const FIRST_RETRY_DELAY: Duration = Duration::from_secs(60);
/// ... up to 1 hour.
pub const MAX_RETRY_DELAY: Duration = Duration::from_secs(60 * 60);
/// Default bound on the number of scopes cached.
pub const DEFAULT_MAX_ENTRIES: usize = 10_000;
/// Default bound on the robots.txt bytes cached, all scopes together: 64 MiB.
pub const DEFAULT_MAX_CACHED_BYTES: usize = 64 * 1024 * 1024;
/// Token lists whose rules one cached copy keeps ready (pages and media make two); the
/// oldest is rebuilt when a further one is asked for.
pub const MAX_TOKEN_LISTS_PER_COPY: usize = 8;

/// Where the cache gets robots.txt files from: the [`Fetcher`], or a script in tests.
pub trait RobotsSource: Send + Sync {
    /// Fetches `robots_url`, conditionally when `validators` are given.
    fn fetch_robots_txt(
        &self,
        robots_url: &Url,
        validators: Option<&Validators>,
    ) -> impl Future<Output = RobotsFetch> + Send;
}

impl RobotsSource for Fetcher {
    fn fetch_robots_txt(
        &self,
        robots_url: &Url,
        validators: Option<&Validators>,
    ) -> impl Future<Output = RobotsFetch> + Send {
        fetch_robots_txt_url(self, robots_url, validators)
    }
}

/// The cache's bounds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CacheLimits {
    /// Scopes kept; the least recently used is dropped first.
    pub max_entries: usize,
    /// robots.txt bytes kept, all scopes together.
    pub max_bytes: usize,
}

impl Default for CacheLimits {
    fn default() -> CacheLimits {
        CacheLimits {
            max_entries: DEFAULT_MAX_ENTRIES,
            max_bytes: DEFAULT_MAX_CACHED_BYTES,
        }
    }
}

/// A robots.txt cache over a [`RobotsSource`].
pub struct RobotsCache<S = Fetcher> {
    source: S,
    limits: CacheLimits,
    slots: Mutex<HashMap<Scope, SlotRef>>,
}

struct SlotRef {
    slot: Arc<Slot>,
    last_used: Instant,
    bytes: usize,
}

/// One scope's state, and the lock that makes concurrent callers share one fetch.
struct Slot {
    robots_url: Url,
    state: Mutex<State>,
    refreshing: tokio::sync::Mutex<()>,
}

#[derive(Default)]
struct State {
    /// The last 2xx copy.
    copy: Option<Copy>,
    /// The last answer was 4xx: no restrictions until then.
    no_file_until: Option<Instant>,
    /// Failures in a row since the last success.
    failure: Option<Failure>,
}

/// A parsed robots.txt and the rules already chosen from it, per token list: building a
/// crawler's rules (merging its groups, indexing them) is done once per copy, not per URL.
struct ParsedCopy {
    robots: RobotsTxt,
    agents: Mutex<Vec<(Vec<String>, Arc<AgentRules>)>>,
}

impl ParsedCopy {
    fn new(robots: RobotsTxt) -> Arc<ParsedCopy> {
        Arc::new(ParsedCopy {
            robots,
            agents: Mutex::new(Vec::new()),
        })
    }

    fn rules_for(&self, tokens: &[&str]) -> Arc<AgentRules> {
        let mut agents = self.agents.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some((_, rules)) = agents.iter().find(|(list, _)| list.iter().eq(tokens)) {
            return Arc::clone(rules);
        }
        let rules = Arc::new(crate::verdict::rules_for(&self.robots, tokens));
        if agents.len() >= MAX_TOKEN_LISTS_PER_COPY {
            agents.remove(0);
        }
        let list = tokens.iter().map(|token| (*token).to_owned()).collect();
        agents.push((list, Arc::clone(&rules)));
        rules
    }
}

#[derive(Clone)]
struct Copy {
    robots: Arc<ParsedCopy>,
    body: Arc<Vec<u8>>,
    validators: Validators,
    fetched_at: Instant,
    expires_at: Instant,
}

#[derive(Clone, Copy)]
struct Failure {
    backing_off: bool,
    failures: u32,
    retry_at: Instant,
}

impl State {
    fn needs_fetch(&self, now: Instant) -> bool {
        if let Some(failure) = &self.failure {
            return now >= failure.retry_at;
        }
        match (&self.copy, self.no_file_until) {
            (Some(copy), _) => now >= copy.expires_at,
            (None, Some(until)) => now >= until,
            (None, None) => true,
        }
    }

    fn verdict(&self, url: &str, tokens: &[&str], now: Instant, fetched: bool) -> Verdict {
        let left = |until: Instant| Some(until.saturating_duration_since(now));
        match (&self.copy, &self.failure) {
            (Some(copy), None) if now < copy.expires_at => {
                let source = if fetched {
                    RulesSource::Fresh
                } else {
                    RulesSource::Cached
                };
                return Verdict::from_rules(
                    &copy.robots.rules_for(tokens),
                    url,
                    source,
                    left(copy.expires_at),
                );
            }
            (Some(copy), Some(failure)) if now < copy.expires_at + MAX_STALE => {
                let until = failure.retry_at.min(copy.expires_at + MAX_STALE);
                return Verdict::from_rules(
                    &copy.robots.rules_for(tokens),
                    url,
                    RulesSource::Stale,
                    left(until),
                );
            }
            _ => {}
        }
        match (self.no_file_until, &self.failure) {
            (_, Some(failure)) => {
                let source = if failure.backing_off {
                    RulesSource::BackingOff
                } else {
                    RulesSource::Unreachable
                };
                Verdict::without_rules(source, left(failure.retry_at))
            }
            (Some(until), None) => Verdict::without_rules(RulesSource::NoFile, left(until)),
            // Not reached: a state without copy, 4xx or failure is always fetched first.
            (None, None) => Verdict::without_rules(RulesSource::Unreachable, None),
        }
    }

    fn apply(&mut self, fetch: RobotsFetch, now: Instant) {
        let lifetime = fetch.cache_lifetime;
        match fetch.outcome {
            RobotsOutcome::Rules => {
                let robots = fetch
                    .robots
                    .unwrap_or_else(|| RobotsTxt::parse(&fetch.body));
                self.copy = Some(Copy {
                    robots: ParsedCopy::new(robots),
                    body: Arc::new(fetch.body),
                    validators: fetch.validators,
                    fetched_at: now,
                    expires_at: now + lifetime,
                });
                self.no_file_until = None;
                self.failure = None;
            }
            RobotsOutcome::NotModified if self.copy.is_some() => {
                if let Some(copy) = &mut self.copy {
                    copy.fetched_at = now;
                    copy.expires_at = now + lifetime;
                    if !fetch.validators.is_empty() {
                        copy.validators = fetch.validators;
                    }
                }
                self.failure = None;
            }
            RobotsOutcome::NoFile => {
                // The file is gone: its old rules no longer say anything.
                self.copy = None;
                self.no_file_until = Some(now + lifetime);
                self.failure = None;
            }
            RobotsOutcome::BackingOff => self.fail(true, fetch.retry_after, now),
            // A 304 with nothing to revalidate cannot be trusted either.
            RobotsOutcome::Unreachable | RobotsOutcome::NotModified => {
                self.fail(false, fetch.retry_after, now)
            }
        }
    }

    fn fail(&mut self, backing_off: bool, retry_after: Option<Duration>, now: Instant) {
        let failures = self.failure.map_or(0, |f| f.failures).saturating_add(1);
        let wait = match retry_after {
            Some(wait) => bounded_retry_after(wait),
            None => retry_delay(failures),
        };
        // A 4xx answer says nothing once the site fails: fall back to the failure rules.
        self.no_file_until = None;
        self.failure = Some(Failure {
            backing_off,
            failures,
            retry_at: now + wait,
        });
    }

    fn bytes(&self) -> usize {
        self.copy.as_ref().map_or(0, |copy| copy.body.len())
    }
}

/// The wait before retry number `failures` (1-based): [`FIRST_RETRY_DELAY`] doubled after
/// each failure in a row, at most [`MAX_RETRY_DELAY`].
pub fn retry_delay(failures: u32) -> Duration {
    let doublings = failures.saturating_sub(1).min(16);
    FIRST_RETRY_DELAY
        .saturating_mul(1 << doublings)
        .min(MAX_RETRY_DELAY)
}

impl<S: RobotsSource> RobotsCache<S> {
    /// An empty cache with the default limits.
    pub fn new(source: S) -> RobotsCache<S> {
        RobotsCache::with_limits(source, CacheLimits::default())
    }

    /// An empty cache with `limits`.
    pub fn with_limits(source: S, limits: CacheLimits) -> RobotsCache<S> {
        RobotsCache {
            source,
            limits,
            slots: Mutex::new(HashMap::new()),
        }
    }

    /// May `url` be fetched as `tokens` (product tokens in order of preference)?
    ///
    /// Fetches or refreshes the scope's robots.txt when needed; concurrent callers for one
    /// scope wait for the same fetch. Fails only when `url` has no robots.txt scope.
    pub async fn check(&self, url: &Url, tokens: &[&str]) -> Result<Verdict, FetchError> {
        let scope = Scope::of(url)?;
        let slot = self.slot(&scope);
        {
            let state = lock(&slot.state);
            let now = Instant::now();
            if !state.needs_fetch(now) {
                return Ok(state.verdict(url.as_str(), tokens, now, false));
            }
        }
        // One fetch per scope at a time; whoever waited finds the state refreshed.
        let _refreshing = slot.refreshing.lock().await;
        let validators = {
            let state = lock(&slot.state);
            let now = Instant::now();
            if !state.needs_fetch(now) {
                return Ok(state.verdict(url.as_str(), tokens, now, false));
            }
            state.copy.as_ref().map(|copy| copy.validators.clone())
        };
        let validators = validators.filter(|v| !v.is_empty());
        let fetched = self
            .source
            .fetch_robots_txt(&slot.robots_url, validators.as_ref())
            .await;
        let (verdict, bytes) = {
            let mut state = lock(&slot.state);
            let now = Instant::now();
            state.apply(fetched, now);
            (
                state.verdict(url.as_str(), tokens, now, true),
                state.bytes(),
            )
        };
        self.account(&scope, bytes);
        Ok(verdict)
    }

    /// How many scopes are cached.
    pub fn len(&self) -> usize {
        lock(&self.slots).len()
    }

    /// True when nothing is cached.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Drops every cached scope.
    pub fn clear(&self) {
        lock(&self.slots).clear();
    }

    /// Everything cached, to be saved and later given to [`RobotsCache::restore`].
    pub fn save(&self) -> Vec<SavedEntry> {
        let slots: Vec<(Scope, Arc<Slot>)> = lock(&self.slots)
            .iter()
            .map(|(scope, slot)| (scope.clone(), Arc::clone(&slot.slot)))
            .collect();
        let now = Instant::now();
        let wall = SystemTime::now();
        slots
            .into_iter()
            .map(|(scope, slot)| {
                let state = lock(&slot.state);
                SavedEntry {
                    scope,
                    copy: state.copy.as_ref().map(|copy| SavedCopy {
                        body: copy.body.as_ref().clone(),
                        validators: copy.validators.clone(),
                        fetched_at: to_wall(copy.fetched_at, now, wall),
                        expires_at: to_wall(copy.expires_at, now, wall),
                    }),
                    no_file_until: state.no_file_until.map(|t| to_wall(t, now, wall)),
                    failure: state.failure.map(|failure| SavedFailure {
                        backing_off: failure.backing_off,
                        failures: failure.failures,
                        retry_at: to_wall(failure.retry_at, now, wall),
                    }),
                }
            })
            .collect()
    }

    /// Loads saved entries (replacing what is cached for their scopes), within the limits.
    pub fn restore(&self, entries: Vec<SavedEntry>) {
        let now = Instant::now();
        let wall = SystemTime::now();
        for entry in entries {
            let state = State {
                copy: entry.copy.map(|copy| Copy {
                    robots: ParsedCopy::new(RobotsTxt::parse(&copy.body)),
                    body: Arc::new(copy.body),
                    validators: copy.validators,
                    fetched_at: from_wall(copy.fetched_at, now, wall),
                    expires_at: from_wall(copy.expires_at, now, wall),
                }),
                no_file_until: entry.no_file_until.map(|t| from_wall(t, now, wall)),
                failure: entry.failure.map(|failure| Failure {
                    backing_off: failure.backing_off,
                    failures: failure.failures,
                    retry_at: from_wall(failure.retry_at, now, wall),
                }),
            };
            let bytes = state.bytes();
            let slot = Arc::new(Slot {
                robots_url: entry.scope.robots_txt_url().clone(),
                state: Mutex::new(state),
                refreshing: tokio::sync::Mutex::new(()),
            });
            lock(&self.slots).insert(
                entry.scope.clone(),
                SlotRef {
                    slot,
                    last_used: now,
                    bytes,
                },
            );
            self.account(&entry.scope, bytes);
        }
    }

    /// The scope's slot, created if needed; marks it used.
    fn slot(&self, scope: &Scope) -> Arc<Slot> {
        let now = Instant::now();
        let mut slots = lock(&self.slots);
        if let Some(existing) = slots.get_mut(scope) {
            existing.last_used = now;
            return Arc::clone(&existing.slot);
        }
        while slots.len() >= self.limits.max_entries.max(1) {
            if !evict_least_recently_used(&mut slots, None) {
                break;
            }
        }
        let slot = Arc::new(Slot {
            robots_url: scope.robots_txt_url().clone(),
            state: Mutex::new(State::default()),
            refreshing: tokio::sync::Mutex::new(()),
        });
        slots.insert(
            scope.clone(),
            SlotRef {
                slot: Arc::clone(&slot),
                last_used: now,
                bytes: 0,
            },
        );
        slot
    }

    /// Records the scope's size and drops other scopes until the total fits.
    fn account(&self, scope: &Scope, bytes: usize) {
        let mut slots = lock(&self.slots);
        if let Some(slot) = slots.get_mut(scope) {
            slot.bytes = bytes;
        }
        while slots.values().map(|s| s.bytes).sum::<usize>() > self.limits.max_bytes {
            if !evict_least_recently_used(&mut slots, Some(scope)) {
                break;
            }
        }
        while slots.len() > self.limits.max_entries.max(1) {
            if !evict_least_recently_used(&mut slots, Some(scope)) {
                break;
            }
        }
    }
}

/// Drops the least recently used scope other than `keep`; false if there was none.
fn evict_least_recently_used(slots: &mut HashMap<Scope, SlotRef>, keep: Option<&Scope>) -> bool {
    let oldest = slots
        .iter()
        .filter(|(scope, _)| Some(*scope) != keep)
        .min_by_key(|(_, slot)| slot.last_used)
        .map(|(scope, _)| scope.clone());
    match oldest {
        Some(scope) => slots.remove(&scope).is_some(),
        None => false,
    }
}

fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    // The state is plain data updated in one step, so a panic elsewhere cannot leave it
    // half-written: keep using it.
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

fn to_wall(instant: Instant, now: Instant, wall: SystemTime) -> SystemTime {
    if instant >= now {
        wall + (instant - now)
    } else {
        wall - (now - instant)
    }
}

fn from_wall(time: SystemTime, now: Instant, wall: SystemTime) -> Instant {
    match time.duration_since(wall) {
        Ok(ahead) => now + ahead,
        Err(behind) => now.checked_sub(behind.duration()).unwrap_or(now),
    }
}

/// One cached scope as saved by [`RobotsCache::save`].
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct SavedEntry {
    /// The scope.
    pub scope: Scope,
    /// The last 2xx copy.
    pub copy: Option<SavedCopy>,
    /// Until when the last 4xx answer holds.
    pub no_file_until: Option<SystemTime>,
    /// Failures in a row since the last success.
    pub failure: Option<SavedFailure>,
}

/// A saved robots.txt copy.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct SavedCopy {
    /// The file as read (at most 500 KiB).
    pub body: Vec<u8>,
    /// Its validators.
    pub validators: Validators,
    /// When it was fetched or last revalidated.
    pub fetched_at: SystemTime,
    /// When its lifetime ends.
    pub expires_at: SystemTime,
}

/// Saved failures in a row.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct SavedFailure {
    /// True for 429, false for unreachable.
    pub backing_off: bool,
    /// How many in a row.
    pub failures: u32,
    /// When to retry.
    pub retry_at: SystemTime,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn retries_double_up_to_the_maximum() {
        assert_eq!(retry_delay(1), FIRST_RETRY_DELAY);
        assert_eq!(retry_delay(2), FIRST_RETRY_DELAY * 2);
        assert_eq!(retry_delay(3), FIRST_RETRY_DELAY * 4);
        assert_eq!(retry_delay(7), MAX_RETRY_DELAY);
        assert_eq!(retry_delay(u32::MAX), MAX_RETRY_DELAY);
        assert_eq!(FIRST_RETRY_DELAY, Duration::from_secs(60));
        assert_eq!(MAX_RETRY_DELAY, Duration::from_secs(3600));
        assert_eq!(MAX_STALE, Duration::from_secs(7 * 86_400));
    }

    #[test]
    fn cache_bounds_default_to_documented_values() {
        let limits = CacheLimits::default();
        assert_eq!(limits.max_entries, DEFAULT_MAX_ENTRIES);
        assert_eq!(limits.max_bytes, DEFAULT_MAX_CACHED_BYTES);
        // Every copy fits: a full-size robots.txt never evicts itself.
        assert!(limits.max_bytes >= crate::ROBOTS_TXT_MAX_BYTES);
    }
}
