//! The robots.txt cache: one [`RobotsState`](state) per scope on a bounded O(1) cache (moka),
//! shared by every token list, refreshed conditionally, kept when refreshing fails, fetched
//! once however many callers ask at the same time, and persisted entry by entry through a
//! [`RobotsStore`].
//!
//! Time is read from [`tokio::time::Instant`], so the whole state machine runs on tokio's
//! paused clock in tests.

mod state;
mod store;

use std::future::Future;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use robots::ProductTokens;
use tokio::time::Instant;
use url::Url;

use crate::deadline::Deadline;
use crate::error::FetchError;
use crate::fetcher::{Fetcher, Validators};
use crate::robots_txt::{fetch_robots_txt_within, RobotsFetch};
use crate::scope::Scope;
use crate::verdict::Verdict;

use state::RobotsState;
pub(crate) use store::Clocks;
pub use store::{
    MemoryStore, NoStore, RobotsStore, StoreError, StoredCopy, StoredEntry, StoredFailure,
    StoredState,
};

/// How long past its lifetime a copy is still used while refreshing it fails: 7 days. After
/// that the failure rules apply (unreachable: disallow all; 429: back off).
pub const MAX_STALE: Duration = Duration::from_secs(7 * 24 * 60 * 60);
/// First wait before retrying an unreachable robots.txt (or a 429 without `Retry-After`):
/// 1 minute, doubled after each failure in a row ...
pub const FIRST_RETRY_DELAY: Duration = Duration::from_secs(60);
/// ... up to 1 hour.
pub const MAX_RETRY_DELAY: Duration = Duration::from_secs(60 * 60);
/// Default bound on what the cache holds: 64 MiB, counting each entry as its robots.txt
/// bytes plus [`ENTRY_OVERHEAD_BYTES`].
pub const DEFAULT_MAX_CACHED_BYTES: u64 = 64 * 1024 * 1024;
/// What one entry counts for beyond its file, so that many empty entries are bounded too
/// (64 MiB hold at most 32,768 scopes).
pub const ENTRY_OVERHEAD_BYTES: u32 = 2 * 1024;
/// Token lists whose rules one cached copy keeps ready (pages and media make two); the
/// oldest is rebuilt when a further one is asked for.
pub const MAX_TOKEN_LISTS_PER_COPY: usize = 8;

/// The wait before retry number `failures` (1-based): [`FIRST_RETRY_DELAY`] doubled after
/// each failure in a row, at most [`MAX_RETRY_DELAY`].
pub fn retry_delay(failures: u32) -> Duration {
    let doublings = failures.saturating_sub(1).min(16);
    FIRST_RETRY_DELAY
        .saturating_mul(1 << doublings)
        .min(MAX_RETRY_DELAY)
}

/// Whether copies are kept across operations.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Policy {
    /// JittyBot: copies live for their cache lifetime, failures are retried on a schedule
    /// (JittyBot's documented "Caching").
    #[default]
    Cached,
    /// RobotsTxtParser: robots.txt is fetched fresh for every operation (the bot page: "fetched
    /// again for every analysis ... so the bot never acts on old rules"); within one
    /// operation each scope is fetched once and its answer memoised. Use one cache per
    /// operation.
    FreshPerOperation,
}

/// The cache's bound.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CacheLimits {
    /// Bytes held: every entry counts its robots.txt bytes plus [`ENTRY_OVERHEAD_BYTES`].
    pub max_bytes: u64,
}

impl Default for CacheLimits {
    fn default() -> CacheLimits {
        CacheLimits {
            max_bytes: DEFAULT_MAX_CACHED_BYTES,
        }
    }
}

/// One scope's state, and the lock that makes concurrent callers share one fetch.
struct Slot {
    robots_url: Url,
    state: Mutex<Loaded>,
    weight: AtomicU32,
    refreshing: tokio::sync::Mutex<()>,
}

struct Loaded {
    /// False until the store was asked.
    loaded: bool,
    state: RobotsState,
}

impl Slot {
    fn new(scope: &Scope) -> Slot {
        Slot {
            robots_url: scope.robots_txt_url().clone(),
            state: Mutex::new(Loaded {
                loaded: false,
                state: RobotsState::Unknown,
            }),
            weight: AtomicU32::new(ENTRY_OVERHEAD_BYTES),
            refreshing: tokio::sync::Mutex::new(()),
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Loaded> {
        // The state is replaced in one step, so a panic elsewhere cannot leave it
        // half-written: keep using it.
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// The robots.txt lifecycle of both bots.
pub struct RobotsCache {
    fetcher: Fetcher,
    policy: Policy,
    slots: moka::sync::Cache<Scope, Arc<Slot>>,
    store: Arc<dyn RobotsStore>,
}

impl std::fmt::Debug for RobotsCache {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RobotsCache")
            .field("policy", &self.policy)
            .field("entries", &self.slots.entry_count())
            .finish_non_exhaustive()
    }
}

impl RobotsCache {
    /// A cache fetching through `fetcher`, with `policy`, the default bound and no store.
    pub fn new(fetcher: Fetcher, policy: Policy) -> RobotsCache {
        RobotsCache::with_store(fetcher, policy, CacheLimits::default(), Arc::new(NoStore))
    }

    /// A cache with a bound and a store.
    pub fn with_store(
        fetcher: Fetcher,
        policy: Policy,
        limits: CacheLimits,
        store: Arc<dyn RobotsStore>,
    ) -> RobotsCache {
        let slots = moka::sync::Cache::builder()
            .max_capacity(limits.max_bytes)
            .weigher(|_: &Scope, slot: &Arc<Slot>| slot.weight.load(Ordering::Relaxed))
            .build();
        RobotsCache {
            fetcher,
            policy,
            slots,
            store,
        }
    }

    /// The fetcher robots.txt files come through.
    pub fn fetcher(&self) -> &Fetcher {
        &self.fetcher
    }

    /// The policy.
    pub fn policy(&self) -> Policy {
        self.policy
    }

    /// May `url` be fetched as `tokens` (product tokens in order of preference)? Fetches
    /// the robots.txt when needed, unpaced, under `deadline`. Fails only when `url` has no
    /// robots.txt scope.
    pub async fn check(
        &self,
        url: &Url,
        tokens: &ProductTokens,
        deadline: Deadline,
    ) -> Result<Verdict, FetchError> {
        let scope = Scope::of(url)?;
        let fetcher = &self.fetcher;
        let result = self
            .check_with(&scope, url, tokens, |robots_url, validators| async move {
                Ok::<_, FetchError>(
                    fetch_robots_txt_within(fetcher, &robots_url, validators.as_ref(), deadline)
                        .await,
                )
            })
            .await;
        result.map(|(verdict, _)| verdict)
    }

    /// The verdict for `url` (in `scope`) as `tokens`, fetching the robots.txt with `fetch`
    /// when the state says so (`fetch` gets the robots.txt URL and the validators for a
    /// conditional request, and may refuse with `E`, e.g. when the pacer has no time; the
    /// state is then unchanged). Concurrent callers for one scope share one fetch. The
    /// second value is the fetch made for this answer, if any (for the record).
    pub async fn check_with<F, Fut, E>(
        &self,
        scope: &Scope,
        url: &Url,
        tokens: &ProductTokens,
        fetch: F,
    ) -> Result<(Verdict, Option<RobotsFetch>), E>
    where
        F: FnOnce(Url, Option<Validators>) -> Fut,
        Fut: Future<Output = Result<RobotsFetch, E>>,
    {
        let slot = self
            .slots
            .entry(scope.clone())
            .or_insert_with(|| Arc::new(Slot::new(scope)))
            .into_value();
        if let Some(verdict) = self.ready(&slot, url, tokens) {
            return Ok((verdict, None));
        }
        // One fetch per scope at a time; whoever waited finds the state refreshed.
        let _refreshing = slot.refreshing.lock().await;
        self.load(scope, &slot).await;
        if let Some(verdict) = self.ready(&slot, url, tokens) {
            return Ok((verdict, None));
        }
        let validators = slot
            .lock()
            .state
            .copy()
            .map(|copy| copy.validators.clone())
            .filter(|v| !v.is_empty());
        let fetched = fetch(slot.robots_url.clone(), validators).await?;
        let (verdict, entry) = self.apply(&slot, scope, url, tokens, &fetched);
        // Re-inserted so the bound sees the new weight.
        self.slots.insert(scope.clone(), Arc::clone(&slot));
        if self.policy == Policy::Cached {
            if let Err(error) = self.store.save(&entry).await {
                tracing::warn!(scope = %scope, error = %error, "cannot save the robots.txt state");
            }
        }
        tracing::debug!(url = %url, allowed = verdict.allowed, source = %verdict.source, "robots decision");
        Ok((verdict, Some(fetched)))
    }

    /// Moves `slot` to the state `fetched` leads to, and answers for `url` from it: the
    /// verdict, and the entry to store. The slot's weight is updated for the cache's bound.
    fn apply(
        &self,
        slot: &Slot,
        scope: &Scope,
        url: &Url,
        tokens: &ProductTokens,
        fetched: &RobotsFetch,
    ) -> (Verdict, StoredEntry) {
        let mut loaded = slot.lock();
        let now = Instant::now();
        let next = loaded.state.apply(fetched.clone(), now);
        tracing::debug!(scope = %scope, from = loaded.state.name(), to = next.name(), "robots.txt state");
        loaded.state = next;
        let verdict = loaded.state.verdict(
            url.as_str(),
            tokens,
            now,
            true,
            &slot.robots_url,
            self.policy,
        );
        let entry = StoredEntry {
            scope: scope.clone(),
            state: Clocks::now().state_out(&loaded.state),
        };
        let weight = u32::try_from(loaded.state.bytes())
            .unwrap_or(u32::MAX)
            .saturating_add(ENTRY_OVERHEAD_BYTES);
        slot.weight.store(weight, Ordering::Relaxed);
        (verdict, entry)
    }

    /// The verdict without fetching, if the state allows it.
    fn ready(&self, slot: &Slot, url: &Url, tokens: &ProductTokens) -> Option<Verdict> {
        let loaded = slot.lock();
        let now = Instant::now();
        (loaded.loaded && !loaded.state.needs_fetch(now, self.policy)).then(|| {
            let verdict = loaded
                .state
                .verdict(url.as_str(), tokens, now, false, &slot.robots_url, self.policy);
            tracing::debug!(url = %url, allowed = verdict.allowed, source = %verdict.source, "robots decision");
            verdict
        })
    }

    /// Loads the scope's stored entry on first use.
    async fn load(&self, scope: &Scope, slot: &Slot) {
        if slot.lock().loaded {
            return;
        }
        let stored = if self.policy == Policy::Cached {
            match self.store.load(scope).await {
                Ok(stored) => stored,
                Err(error) => {
                    tracing::warn!(scope = %scope, error = %error, "cannot load the robots.txt state");
                    None
                }
            }
        } else {
            None
        };
        let mut loaded = slot.lock();
        if let Some(entry) = stored {
            loaded.state = Clocks::now().state_in(entry.state);
        }
        loaded.loaded = true;
    }

    /// How many scopes are cached (after pending evictions ran).
    pub fn len(&self) -> u64 {
        self.slots.run_pending_tasks();
        self.slots.entry_count()
    }

    /// True when nothing is cached.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Drops every cached scope (stored entries stay in the store).
    pub fn clear(&self) {
        self.slots.invalidate_all();
        self.slots.run_pending_tasks();
    }

    /// Drops the cached scopes for which `which` holds (an operator's "fetch this site's
    /// robots.txt again"): the next check of such a scope loads it from the store, and
    /// fetches it when the store has none. Returns how many were dropped.
    pub fn forget(&self, which: impl Fn(&Scope) -> bool) -> usize {
        let dropped: Vec<Arc<Scope>> = self
            .slots
            .iter()
            .filter(|(scope, _)| which(scope))
            .map(|(scope, _)| scope)
            .collect();
        for scope in &dropped {
            self.slots.invalidate(scope.as_ref());
        }
        dropped.len()
    }

    /// The state of `scope` as it would be stored, if cached.
    pub fn entry(&self, scope: &Scope) -> Option<StoredEntry> {
        let slot = self.slots.get(scope)?;
        let loaded = slot.lock();
        Some(StoredEntry {
            scope: scope.clone(),
            state: Clocks::now().state_out(&loaded.state),
        })
    }
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
    }

    #[test]
    fn a_full_size_robots_txt_fits_the_default_bound() {
        let limits = CacheLimits::default();
        assert!(limits.max_bytes >= crate::ROBOTS_TXT_MAX_BYTES as u64);
    }
}
