//! The one per-origin pacer of both bots: one request in flight per origin, a minimum gap
//! between starts (the pace, raised per host by its crawl-delay), exponential back-off with
//! `Retry-After`, a pause after failures in a row with probing, and a wait budget for an
//! analysis. [`OriginState`] is the pure state machine; [`Pacer`] waits for it.

mod state;

use std::collections::{BTreeMap, HashMap};
use std::fmt;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::Duration;

use tokio::sync::OwnedMutexGuard;
use tokio::time::Instant;
use url::Url;

use crate::cache::Clocks;
use crate::deadline::Deadline;
use crate::error::FetchError;
use crate::scope::Scope;

pub use state::{
    shows_no_https, Learned, OriginState, PacerConfig, Plan, WaitReason, DEFAULT_BACKOFF_BASE,
    DEFAULT_BACKOFF_MAX, DEFAULT_PACE, DEFAULT_PAUSE_AFTER, MAX_CRAWL_DELAY, MAX_PROBE_INTERVAL,
};

/// The name of an origin, the pacing unit. The caller decides what it is: the crawler groups
/// hosts into origins; the analysis uses scheme + host + port ([`OriginKey::of_scope`]).
#[derive(
    Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize, serde::Deserialize,
)]
#[serde(transparent)]
pub struct OriginKey(String);

impl OriginKey {
    /// An origin by name.
    pub fn new(name: impl Into<String>) -> OriginKey {
        OriginKey(name.into())
    }

    /// The origin of `url` when every scope is its own origin: `https://example.com:8443`.
    pub fn of_scope(url: &Url) -> Result<OriginKey, FetchError> {
        Ok(OriginKey(Scope::of(url)?.to_string()))
    }

    /// The name.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for OriginKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// The most one operation may wait in all for pacing (RobotsTxtParser: 10 s in all for
/// crawl-delays within one analysis). Shared by every request of the operation: clones share
/// what was spent.
#[derive(Debug, Clone)]
pub struct WaitBudget {
    limit: Duration,
    spent: Arc<Mutex<Duration>>,
}

impl WaitBudget {
    /// A budget of `limit`.
    pub fn new(limit: Duration) -> WaitBudget {
        WaitBudget {
            limit,
            spent: Arc::new(Mutex::new(Duration::ZERO)),
        }
    }

    /// The budget.
    pub fn limit(&self) -> Duration {
        self.limit
    }

    /// What was waited so far.
    pub fn spent(&self) -> Duration {
        *self.spent.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// What is left.
    pub fn left(&self) -> Duration {
        self.limit.saturating_sub(self.spent())
    }

    fn spend(&self, wait: Duration) {
        let mut spent = self.spent.lock().unwrap_or_else(PoisonError::into_inner);
        *spent = spent.saturating_add(wait);
    }
}

/// How long a caller is prepared to wait for its turn.
#[derive(Debug, Clone, Copy, Default)]
pub struct WaitLimit<'a> {
    /// Do not start after this.
    pub deadline: Option<Deadline>,
    /// Wait at most what is left of this budget.
    pub budget: Option<&'a WaitBudget>,
    /// Wait at most this long (a crawler that would rather do other work: `Some(ZERO)`).
    pub max_wait: Option<Duration>,
}

/// Why a request was not started: always a typed result, never an error.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(tag = "skip", rename_all = "snake_case")]
pub enum PaceSkip {
    /// The origin is paused until a probe succeeds.
    Paused {
        /// When the next probe may start.
        probe_at: jiff::Timestamp,
    },
    /// Waiting would exceed the operation's wait budget.
    WaitBudget {
        /// The wait needed.
        needed: Duration,
        /// What was left of the budget.
        left: Duration,
        /// What the wait was for.
        reason: WaitReason,
    },
    /// The request could not start before the operation's deadline.
    Deadline {
        /// The wait needed.
        needed: Duration,
        /// What the wait was for.
        reason: WaitReason,
    },
    /// The wait is longer than the caller's `max_wait`: come back then.
    NotBefore {
        /// The earliest start.
        at: jiff::Timestamp,
        /// What the wait is for.
        reason: WaitReason,
    },
    /// The operator holds every request to this host ([`Overrides::held`]).
    Held,
}

/// An operator's overrides of the pacing, consulted on every turn (so cheap to ask): the
/// crawler's levers for complaints. Floors pace an origin more slowly than the pace (and are
/// part of its exported next start, so they hold across processes as the pace does); a held
/// host gets no request at all.
pub trait Overrides: Send + Sync + fmt::Debug {
    /// The least gap between two requests to origin `key`, when a request goes to `host`
    /// (empty when asked for the origin as a whole), if the operator set one.
    fn floor(&self, key: &OriginKey, host: &str) -> Option<Duration>;
    /// Whether requests to `host` are held: none is made while it is.
    fn held(&self, host: &str) -> bool;
}

/// One origin's state as exported for a store, with wall-clock times (the crawler shares
/// "next allowed start" across processes through it).
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct OriginSnapshot {
    /// When the last request started.
    pub last_start: Option<jiff::Timestamp>,
    /// When the last request to each host started.
    pub host_starts: BTreeMap<String, jiff::Timestamp>,
    /// Failures in a row.
    pub failures: u32,
    /// No request before this.
    pub not_before: Option<jiff::Timestamp>,
    /// Paused until a probe succeeds.
    pub paused: bool,
    /// The next allowed start of an ordinary request under `config`, computed at export
    /// (for queries and leases; ignored on import).
    pub next_start: Option<jiff::Timestamp>,
    /// Every request the exporting process made to the origin is in this state: it was
    /// written when the process gave the origin back. [`Pacer::export`] never sets it; the
    /// caller does, on the state it stores at a release. A process that takes over an origin
    /// whose stored state is not complete (its holder was killed, or lost its lease) cannot
    /// know when the last request started, and waits a full pace first ([`Pacer::unsure`]).
    #[serde(default)]
    pub complete: bool,
}

struct Slot {
    state: Mutex<OriginState>,
    turn: Arc<tokio::sync::Mutex<()>>,
    /// The slot of the origin this one was merged into ([`Pacer::merge`]): a request that
    /// waited for this slot's turn waits for that one's instead, and a permit taken here
    /// teaches that one.
    merged_into: Mutex<Option<Arc<Slot>>>,
}

impl Slot {
    fn new() -> Slot {
        Slot {
            state: Mutex::new(OriginState::default()),
            turn: Arc::new(tokio::sync::Mutex::new(())),
            merged_into: Mutex::new(None),
        }
    }

    /// The slot that paces this one now: itself, or the one it was merged into.
    fn live(self: &Arc<Slot>) -> Arc<Slot> {
        let mut slot = Arc::clone(self);
        loop {
            let next = lock(&slot.merged_into).clone();
            match next {
                Some(next) => slot = next,
                None => return slot,
            }
        }
    }
}

/// The async pacer: waits for an origin's turn and learns from what happened.
pub struct Pacer {
    config: PacerConfig,
    origins: Mutex<HashMap<OriginKey, Arc<Slot>>>,
    overrides: Option<Arc<dyn Overrides>>,
}

impl fmt::Debug for Pacer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Pacer")
            .field("config", &self.config)
            .field("overrides", &self.overrides)
            .finish_non_exhaustive()
    }
}

/// The turn of one request: holds the origin (one request in flight) until dropped, and
/// teaches the pacer what [`Permit::learn`] was told when it is.
pub struct Permit {
    slot: Arc<Slot>,
    host: String,
    config: PacerConfig,
    learned: Learned,
    waited: Duration,
    _turn: OwnedMutexGuard<()>,
}

impl fmt::Debug for Permit {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Permit")
            .field("learned", &self.learned)
            .field("waited", &self.waited)
            .finish_non_exhaustive()
    }
}

impl Permit {
    /// Records what the request taught (the last call wins; applied when dropped).
    pub fn learn(&mut self, learned: Learned) {
        self.learned = learned;
    }

    /// How long this request waited for its turn.
    pub fn waited(&self) -> Duration {
        self.waited
    }

    /// The request's answer (response head or failure) arrived now: the next request of the
    /// origin is paced from here ([`OriginState::answered`]), so the server never sees two
    /// requests closer than the pace, whatever a connection's setup delayed.
    pub fn answered(&self) {
        lock(&self.slot.live().state).answered(&self.host, Instant::now());
    }
}

impl Drop for Permit {
    fn drop(&mut self) {
        let slot = self.slot.live();
        let mut state = slot.state.lock().unwrap_or_else(PoisonError::into_inner);
        state.learn(&self.config, self.learned, Instant::now());
    }
}

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

impl Pacer {
    /// A pacer with `config`.
    pub fn new(config: PacerConfig) -> Pacer {
        Pacer {
            config,
            origins: Mutex::new(HashMap::new()),
            overrides: None,
        }
    }

    /// This pacer, obeying an operator's `overrides` on every turn.
    pub fn with_overrides(mut self, overrides: Arc<dyn Overrides>) -> Pacer {
        self.overrides = Some(overrides);
        self
    }

    /// Whether the operator holds every request to `host` ([`Overrides::held`]).
    pub fn holds(&self, host: &str) -> bool {
        self.overrides.as_ref().is_some_and(|o| o.held(host))
    }

    /// The rules.
    pub fn config(&self) -> &PacerConfig {
        &self.config
    }

    /// The rules for a request to `host` of origin `key`: the pace raised to the operator's
    /// floor, if any.
    fn config_for(&self, key: &OriginKey, host: &str) -> PacerConfig {
        let mut config = self.config;
        if let Some(floor) = self.overrides.as_ref().and_then(|o| o.floor(key, host)) {
            config.pace = config.pace.max(floor);
        }
        config
    }

    fn slot(&self, key: &OriginKey) -> Arc<Slot> {
        Arc::clone(
            lock(&self.origins)
                .entry(key.clone())
                .or_insert_with(|| Arc::new(Slot::new())),
        )
    }

    /// Origin `absorbed` turned out to be the same infrastructure as `into`: from now on both
    /// names share one turn and one state, the stricter of the two
    /// ([`OriginState::absorb`]). A request waiting for `absorbed`'s turn waits for the
    /// merged one; one in flight teaches the merged state when it ends. The next request to
    /// any host of either waits for the merged origin's turn.
    pub fn merge(&self, absorbed: &OriginKey, into: &OriginKey) {
        if absorbed == into {
            return;
        }
        let mut origins = lock(&self.origins);
        let target = Arc::clone(
            origins
                .entry(into.clone())
                .or_insert_with(|| Arc::new(Slot::new())),
        );
        let Some(old) = origins.get(absorbed).cloned() else {
            origins.insert(absorbed.clone(), target);
            return;
        };
        if Arc::ptr_eq(&old, &target) {
            return;
        }
        let old_state = lock(&old.state).clone();
        lock(&target.state).absorb(&old_state);
        *lock(&old.merged_into) = Some(Arc::clone(&target));
        // Every name that paced with the absorbed slot (earlier merges) follows it.
        for slot in origins.values_mut() {
            if Arc::ptr_eq(slot, &old) {
                *slot = Arc::clone(&target);
            }
        }
    }

    /// This process takes origin `key` without knowing for certain when its last request
    /// started (a restart after a kill, a lease taken over): the next request waits a full
    /// pace, crawl-delay and back-off from now ([`OriginState::unsure`]).
    pub fn unsure(&self, key: &OriginKey) {
        lock(&self.slot(key).state).unsure(Instant::now());
    }

    /// Waits for the turn of a request to `host` in origin `key` (one in flight per origin,
    /// the pace, the host's crawl-delay, back-off), within `limit`. `probe` marks the
    /// request that tests a paused origin. The permit's `learn` feeds the result back.
    pub async fn acquire(
        &self,
        key: &OriginKey,
        host: &str,
        crawl_delay: Option<Duration>,
        probe: bool,
        limit: WaitLimit<'_>,
    ) -> Result<Permit, PaceSkip> {
        if self.overrides.as_ref().is_some_and(|o| o.held(host)) {
            return Err(PaceSkip::Held);
        }
        let mut slot = self.slot(key);
        let mut waited = Duration::ZERO;
        loop {
            let (live, turn) = Self::turn_of(slot, &limit).await?;
            slot = live;
            // Asked again with the turn in hand: a hold set while this request waited for it.
            if self.overrides.as_ref().is_some_and(|o| o.held(host)) {
                return Err(PaceSkip::Held);
            }
            let config = self.config_for(key, host);
            let now = Instant::now();
            let plan = lock(&slot.state).plan(&config, host, crawl_delay, probe, now);
            let (at, reason) = match plan {
                Plan::Paused { probe_at } => {
                    let probe_at = Clocks::now().to_wall(probe_at);
                    tracing::debug!(origin = %key, %probe_at, "origin paused");
                    return Err(PaceSkip::Paused { probe_at });
                }
                Plan::At { at, reason } => (at, reason),
            };
            let wait = at.saturating_duration_since(now);
            self.check_limit(wait, at, reason, &limit)?;
            if !wait.is_zero() {
                tracing::debug!(origin = %key, ?wait, ?reason, "waiting for the origin's turn");
                tokio::time::sleep_until(at).await;
                if let Some(budget) = limit.budget {
                    budget.spend(wait);
                }
                waited += wait;
                // Merged into another origin while this request slept: that origin's turn
                // and pace hold now (planned without them, it could start a moment after a
                // request of the other).
                if !Arc::ptr_eq(&slot.live(), &slot) {
                    drop(turn);
                    continue;
                }
            }
            lock(&slot.state).started(host, Instant::now());
            return Ok(Permit {
                slot,
                host: host.to_owned(),
                config,
                learned: Learned::Nothing,
                waited,
                _turn: turn,
            });
        }
    }

    /// The turn of `slot`, or of the origin it was merged into while this request waited.
    async fn turn_of(
        mut slot: Arc<Slot>,
        limit: &WaitLimit<'_>,
    ) -> Result<(Arc<Slot>, OwnedMutexGuard<()>), PaceSkip> {
        loop {
            let turn = Arc::clone(&slot.turn);
            let turn = match limit.deadline {
                Some(deadline) => tokio::time::timeout_at(deadline.instant(), turn.lock_owned())
                    .await
                    .map_err(|_| PaceSkip::Deadline {
                        needed: Duration::ZERO,
                        reason: WaitReason::Pace,
                    })?,
                None => turn.lock_owned().await,
            };
            let live = slot.live();
            if Arc::ptr_eq(&live, &slot) {
                return Ok((slot, turn));
            }
            drop(turn);
            slot = live;
        }
    }

    fn check_limit(
        &self,
        wait: Duration,
        at: Instant,
        reason: WaitReason,
        limit: &WaitLimit<'_>,
    ) -> Result<(), PaceSkip> {
        if let Some(budget) = limit.budget {
            if wait > budget.left() {
                return Err(PaceSkip::WaitBudget {
                    needed: wait,
                    left: budget.left(),
                    reason,
                });
            }
        }
        if limit
            .deadline
            .is_some_and(|deadline| at > deadline.instant())
        {
            return Err(PaceSkip::Deadline {
                needed: wait,
                reason,
            });
        }
        if limit.max_wait.is_some_and(|max| wait > max) {
            return Err(PaceSkip::NotBefore {
                at: Clocks::now().to_wall(at),
                reason,
            });
        }
        Ok(())
    }

    /// The state of origin `key`, for a store.
    pub fn export(&self, key: &OriginKey) -> Option<OriginSnapshot> {
        let slot = lock(&self.origins).get(key).cloned()?;
        // Read under the lock rather than cloned first: the clone copied every host's name
        // once more, after every page of a crawl.
        let state = lock(&slot.state);
        let clocks = Clocks::now();
        let config = self.config_for(key, "");
        let next_start = match state.plan(&config, "", None, false, clocks.now) {
            Plan::At { at, .. } => at,
            Plan::Paused { probe_at } => probe_at,
        };
        Some(OriginSnapshot {
            last_start: state.last_start.map(|t| clocks.to_wall(t)),
            host_starts: state
                .host_starts
                .iter()
                .map(|(host, t)| (host.clone(), clocks.to_wall(*t)))
                .collect(),
            failures: state.failures,
            not_before: state.not_before.map(|t| clocks.to_wall(t)),
            paused: state.paused,
            next_start: Some(clocks.to_wall(next_start)),
            complete: false,
        })
    }

    /// Replaces the state of origin `key` with a stored one (a restart, another process).
    /// Whether this process is unsure of the last start ([`Pacer::unsure`]) is its own
    /// knowledge and stays.
    pub fn import(&self, key: &OriginKey, snapshot: &OriginSnapshot) {
        let clocks = Clocks::now();
        let slot = self.slot(key);
        let mut current = lock(&slot.state);
        *current = OriginState {
            last_start: snapshot.last_start.map(|t| clocks.to_instant(t)),
            host_starts: snapshot
                .host_starts
                .iter()
                .map(|(host, t)| (host.clone(), clocks.to_instant(*t)))
                .collect(),
            failures: snapshot.failures,
            not_before: snapshot.not_before.map(|t| clocks.to_instant(t)),
            paused: snapshot.paused,
            unsure_since: current.unsure_since,
        };
    }

    /// Every origin known.
    pub fn origins(&self) -> Vec<OriginKey> {
        lock(&self.origins).keys().cloned().collect()
    }
}
