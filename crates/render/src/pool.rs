//! A small pool of long-lived browsers. Each page is rendered in a fresh incognito browser
//! context of one of them (see [`Renderer::render`]), several pages of one browser at once;
//! a browser that crashed, hung, served its share of pages or grew too big is closed and
//! replaced, and never more browsers run than the pool has slots.

use std::path::PathBuf;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::Duration;

use tokio::sync::Notify;

use crate::browser::{Renderer, HUNG_AFTER};
use crate::gate::RequestGate;
use crate::render::{Health, PageToRender};
use crate::{RenderError, RenderLimits, Rendered};

/// The most browsers a pool runs when its size comes from the machine: one per core up to
/// this (a browser with its pages open is a few hundred MB).
pub const MAX_POOL_BROWSERS: usize = 4;
/// The environment variable that sets a pool's size (1 to [`POOL_SIZE_CEILING`]) instead of
/// the machine's cores.
pub const POOL_SIZE_ENV: &str = "JITTYBOT_BROWSERS";
/// The most browsers [`POOL_SIZE_ENV`] may ask for.
pub const POOL_SIZE_CEILING: usize = 16;
/// Pages one browser renders at once, each in its own context (and renderer process, a few
/// tens of MB). A page spends most of its time waiting for its origin's turns and its quiet
/// spell, so many share a browser's CPU well.
pub const PAGES_PER_BROWSER: usize = 12;
/// Pages a browser renders before it is replaced by a fresh one (what a long-lived browser
/// leaks stays bounded).
pub const BROWSER_MAX_PAGES: usize = 500;
/// Memory of a browser's processes together (proportional set sizes: what they share is
/// counted once) above which it is replaced once its pages in progress are done.
pub const BROWSER_MAX_MEMORY_BYTES: u64 = 1024 * 1024 * 1024;
/// A browser's memory is read after every this many pages (a walk over `/proc`).
pub const MEMORY_CHECK_EVERY: usize = 25;

/// Why a browser of a pool was replaced.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum RetireReason {
    /// Its process or DevTools connection was gone (crashed, killed).
    Gone,
    /// It answered nothing for the pool's hung limit ([`HUNG_AFTER`] by default).
    Hung,
    /// It had rendered its [`BROWSER_MAX_PAGES`].
    PagesServed,
    /// Its processes held more than [`BROWSER_MAX_MEMORY_BYTES`].
    Memory,
}

impl RetireReason {
    /// A short lower-case label.
    pub fn label(self) -> &'static str {
        match self {
            RetireReason::Gone => "gone (crashed or killed)",
            RetireReason::Hung => "hung (answered nothing)",
            RetireReason::PagesServed => "pages served",
            RetireReason::Memory => "memory",
        }
    }
}

/// A browser a pool replaced.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Retirement {
    /// Why.
    pub reason: RetireReason,
    /// Pages it had rendered.
    pub pages: usize,
}

/// Browsers replaced by the pools of this process so far, in order (for benchmarks and
/// tests, as [`crate::browser::launches`]).
static RETIRED: Mutex<Vec<Retirement>> = Mutex::new(Vec::new());

/// Every browser the pools of this process replaced so far, and why.
pub fn retirements() -> Vec<Retirement> {
    RETIRED
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .clone()
}

/// The pool size for this machine: [`POOL_SIZE_ENV`] when set to a number from 1 to
/// [`POOL_SIZE_CEILING`], else one browser per core up to [`MAX_POOL_BROWSERS`].
pub fn pool_size() -> usize {
    let asked = std::env::var(POOL_SIZE_ENV)
        .ok()
        .and_then(|v| v.trim().parse::<usize>().ok())
        .filter(|n| (1..=POOL_SIZE_CEILING).contains(n));
    asked.unwrap_or_else(|| {
        std::thread::available_parallelism()
            .map_or(1, usize::from)
            .clamp(1, MAX_POOL_BROWSERS)
    })
}

/// How a pool is sized and when its browsers are replaced.
#[derive(Clone, Debug)]
pub struct PoolConfig {
    /// The browser's executable.
    pub executable: PathBuf,
    /// Browsers running at most.
    pub browsers: usize,
    /// Pages one browser renders at once.
    pub pages_per_browser: usize,
    /// Pages before a browser is replaced.
    pub max_pages: usize,
    /// Bytes (all its processes, proportional set sizes) above which a browser is replaced.
    pub max_memory_bytes: u64,
    /// Silence after which a browser is judged hung and replaced.
    pub hung_after: Duration,
}

impl PoolConfig {
    /// The defaults for `executable`: [`pool_size`] browsers, [`PAGES_PER_BROWSER`],
    /// [`BROWSER_MAX_PAGES`], [`BROWSER_MAX_MEMORY_BYTES`], [`HUNG_AFTER`].
    pub fn new(executable: PathBuf) -> PoolConfig {
        PoolConfig {
            executable,
            browsers: pool_size(),
            pages_per_browser: PAGES_PER_BROWSER,
            max_pages: BROWSER_MAX_PAGES,
            max_memory_bytes: BROWSER_MAX_MEMORY_BYTES,
            hung_after: HUNG_AFTER,
        }
    }
}

/// What a slot of the pool holds.
#[derive(Debug, Default)]
enum SlotState {
    /// No browser: the next page launches one.
    #[default]
    Empty,
    /// A browser is starting.
    Launching,
    /// A browser takes pages.
    Ready(Arc<Renderer>),
    /// The browser takes no more pages: closed when its pages in progress end, then the slot
    /// is empty again (its replacement is not started before it is gone).
    Draining(Option<Arc<Renderer>>, RetireReason),
}

#[derive(Debug, Default)]
struct Slot {
    state: SlotState,
    /// Pages in progress on the slot's browser.
    active: usize,
    /// Pages its browser rendered.
    pages: usize,
}

#[derive(Debug)]
struct Inner {
    config: PoolConfig,
    slots: Mutex<Vec<Slot>>,
    changed: Notify,
}

impl Inner {
    fn slots(&self) -> MutexGuard<'_, Vec<Slot>> {
        self.slots.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// A pool of browsers rendering pages (cheap to clone: clones share the browsers).
#[derive(Clone, Debug)]
pub struct BrowserPool {
    inner: Arc<Inner>,
}

/// What a page waiting for a browser does next.
enum Pick {
    Use(usize, Arc<Renderer>),
    Launch(usize),
    Wait,
}

/// A page's hold on a browser; given back when dropped (also when the render is cancelled).
struct Hold {
    pool: Arc<Inner>,
    slot: usize,
    renderer: Arc<Renderer>,
    /// How the browser answered when the page was closed (`None`: not closed, the render
    /// was cancelled).
    health: Option<Health>,
}

impl BrowserPool {
    /// A pool of `config.browsers` slots (at least one); browsers start with the first pages.
    pub fn new(mut config: PoolConfig) -> BrowserPool {
        config.browsers = config.browsers.max(1);
        config.pages_per_browser = config.pages_per_browser.max(1);
        let slots = (0..config.browsers).map(|_| Slot::default()).collect();
        BrowserPool {
            inner: Arc::new(Inner {
                config,
                slots: Mutex::new(slots),
                changed: Notify::new(),
            }),
        }
    }

    /// The pool's configuration.
    pub fn config(&self) -> &PoolConfig {
        &self.inner.config
    }

    /// Browsers running or starting now (never more than the pool's slots).
    pub fn running(&self) -> usize {
        self.inner
            .slots()
            .iter()
            .filter(|s| !matches!(s.state, SlotState::Empty))
            .count()
    }

    /// The main process ids of the browsers that take pages now.
    pub fn pids(&self) -> Vec<u32> {
        self.inner
            .slots()
            .iter()
            .filter_map(|s| match &s.state {
                SlotState::Ready(r) => r.pid(),
                _ => None,
            })
            .collect()
    }

    /// Render `page` in a fresh context of one of the pool's browsers. A render that
    /// fails (out of time, its browser crashed or hung) is not tried again: the error is
    /// returned. The result does not wait for the page's context to be disposed of: that
    /// happens meanwhile, the page keeping its place on the browser until it is done; a
    /// browser that answers nothing for the pool's hung limit then, or whose process is
    /// gone, is replaced. A browser that answers late is only slow: it stays.
    pub async fn render<G: RequestGate>(
        &self,
        page: PageToRender,
        gate: Arc<G>,
        limits: &RenderLimits,
    ) -> Result<Rendered, RenderError> {
        let waited = tokio::time::Instant::now();
        let mut hold = self.hold().await?;
        crate::timing::add(crate::timing::Phase::WaitBrowser, waited.elapsed());
        let (result, opened) = hold.renderer.render_open(page, gate, limits).await;
        let hung_after = self.inner.config.hung_after;
        tokio::spawn(async move {
            hold.health = Some(hold.renderer.close_page(opened, hung_after).await);
            drop(hold);
        });
        result
    }

    /// Close every browser (pages in progress fail).
    pub async fn close(&self) {
        let renderers: Vec<Arc<Renderer>> = {
            let mut slots = self.inner.slots();
            slots
                .iter_mut()
                .filter_map(|s| match std::mem::take(&mut s.state) {
                    SlotState::Ready(r) | SlotState::Draining(Some(r), _) => Some(r),
                    _ => None,
                })
                .collect()
        };
        for r in renderers {
            r.shut_down().await;
        }
    }

    async fn hold(&self) -> Result<Hold, RenderError> {
        loop {
            let changed = self.inner.changed.notified();
            tokio::pin!(changed);
            changed.as_mut().enable();
            let pick = self.pick();
            match pick {
                Pick::Use(slot, renderer) => {
                    return Ok(Hold {
                        pool: Arc::clone(&self.inner),
                        slot,
                        renderer,
                        health: None,
                    })
                }
                Pick::Launch(slot) => self.launch(slot).await?,
                Pick::Wait => changed.await,
            }
        }
    }

    fn pick(&self) -> Pick {
        let per = self.inner.config.pages_per_browser;
        let mut slots = self.inner.slots();
        for (i, slot) in slots.iter_mut().enumerate() {
            if matches!(&slot.state, SlotState::Ready(r) if !r.is_alive()) {
                // Crashed or killed: no new page goes to it.
                drain(slot, RetireReason::Gone);
                if slot.active == 0 {
                    close_slot(&self.inner, slot, i);
                }
            }
        }
        // The least busy browser with room.
        let best = slots
            .iter()
            .enumerate()
            .filter(|(_, s)| matches!(s.state, SlotState::Ready(_)) && s.active < per)
            .min_by_key(|(_, s)| s.active)
            .map(|(i, _)| i);
        if let Some(i) = best {
            if let SlotState::Ready(r) = &slots[i].state {
                let r = Arc::clone(r);
                slots[i].active += 1;
                return Pick::Use(i, r);
            }
        }
        if let Some(i) = slots
            .iter()
            .position(|s| matches!(s.state, SlotState::Empty))
        {
            slots[i].state = SlotState::Launching;
            return Pick::Launch(i);
        }
        Pick::Wait
    }

    /// Start the browser of `slot` (marked launching); the slot is empty again if it fails.
    async fn launch(&self, slot: usize) -> Result<(), RenderError> {
        // A task of its own: a page given up while its browser starts leaves no slot
        // launching forever.
        let inner = Arc::clone(&self.inner);
        let task = tokio::spawn(async move {
            let launched = Renderer::launch(&inner.config.executable).await;
            let result = {
                let mut slots = inner.slots();
                let s = &mut slots[slot];
                match launched {
                    Ok(r) => {
                        s.state = SlotState::Ready(Arc::new(r));
                        s.pages = 0;
                        s.active = 0;
                        Ok(())
                    }
                    Err(e) => {
                        s.state = SlotState::Empty;
                        Err(e)
                    }
                }
            };
            inner.changed.notify_waiters();
            result
        });
        task.await
            .unwrap_or_else(|e| Err(RenderError::LaunchTask(e)))
    }
}

/// Stop giving pages to `slot`'s browser (ready) for `reason`, recorded.
fn drain(slot: &mut Slot, reason: RetireReason) {
    let SlotState::Ready(r) = &slot.state else {
        return;
    };
    tracing::warn!(
        reason = reason.label(),
        pages = slot.pages,
        "browser replaced"
    );
    RETIRED
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .push(Retirement {
            reason,
            pages: slot.pages,
        });
    slot.state = SlotState::Draining(Some(Arc::clone(r)), reason);
}

/// Take `slot`'s browser out (draining, no page in progress) and close it in a task; the slot
/// is empty once the browser is gone.
fn close_slot(inner: &Arc<Inner>, slot: &mut Slot, index: usize) {
    let SlotState::Draining(renderer, reason) = &mut slot.state else {
        return;
    };
    let Some(renderer) = renderer.take() else {
        return;
    };
    let reason = *reason;
    let inner = Arc::clone(inner);
    tokio::spawn(async move {
        match reason {
            // A browser that answers nothing would not answer a request to close either.
            RetireReason::Hung => renderer.kill_when_free().await,
            _ => renderer.shut_down().await,
        }
        {
            let mut slots = inner.slots();
            if let Some(s) = slots.get_mut(index) {
                s.state = SlotState::Empty;
                s.active = 0;
                s.pages = 0;
            }
        }
        inner.changed.notify_waiters();
    });
}

impl Drop for Hold {
    fn drop(&mut self) {
        let config = &self.pool.config;
        let check_memory = {
            let slots = self.pool.slots();
            slots
                .get(self.slot)
                .is_some_and(|s| (s.pages + 1) % MEMORY_CHECK_EVERY.max(1) == 0)
        };
        // Read outside the lock: a walk over /proc.
        let too_big = check_memory && self.renderer.memory_bytes() > config.max_memory_bytes;
        {
            let mut slots = self.pool.slots();
            let Some(slot) = slots.get_mut(self.slot) else {
                return;
            };
            slot.active = slot.active.saturating_sub(1);
            slot.pages += 1;
            let reason = match self.health {
                Some(Health::Gone) => Some(RetireReason::Gone),
                Some(Health::Silent) => Some(RetireReason::Hung),
                _ if !self.renderer.is_alive() => Some(RetireReason::Gone),
                _ if too_big => Some(RetireReason::Memory),
                _ if slot.pages >= config.max_pages => Some(RetireReason::PagesServed),
                _ => None,
            };
            let same = matches!(&slot.state, SlotState::Ready(r) if Arc::ptr_eq(r, &self.renderer));
            if let (Some(reason), true) = (reason, same) {
                drain(slot, reason);
            }
            if slot.active == 0 {
                close_slot(&self.pool, slot, self.slot);
            }
        }
        self.pool.changed.notify_waiters();
    }
}
