//! The parts of a running crawl, by responsibility, so that each step of the chain (fetch,
//! settle, extract, archive, commit) takes only the parts it uses:
//!
//! - [`Requester`]: how requests go out (fetch's polite pipeline, where hosts belong, what
//!   this process saw of hosts' HTTPS, the operator's levers, the browsers);
//! - [`Keeper`]: where results go (the store, the writer, this process's lease holder);
//! - [`Progress`]: what the crawl tells and how far it got (events, counters, the page count
//!   against `--max-pages`, the stop flag);
//! - [`Rules`]: what the settle and extract steps decide by (their settings, and what this
//!   process remembers for them).
//!
//! A [`Crew`] holds one of each: the scheduler and every per-origin worker hold a crew and
//! hand each step its parts.

use std::collections::{HashMap, HashSet};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use db::Holder;
use fetch::{OriginKey, OriginSnapshot, PacerConfig, Polite, ResponseHead};
use jiff::Timestamp;
use tokio::sync::mpsc;

use super::config::FollowLinks;
use super::https::HttpsMemory;
use super::interactive::{self, Browsers, Interactive, RenderedPage};
use super::places::Places;
use super::{committer::Committer, LiveCounters};
use crate::control::Levers;
use crate::event::Event;
use crate::store::{SiteId, Store};

/// How requests go out.
pub(crate) struct Requester {
    /// fetch's polite pipeline: robots.txt, the pacer, the origins map.
    pub(crate) polite: Polite,
    /// Where hosts belong (sites, origins), what this process queued.
    pub(crate) places: Places,
    /// Hosts whose HTTPS failed in this run.
    pub(crate) https: HttpsMemory,
    /// The operator's levers (paces, exclusions).
    pub(crate) levers: Arc<Levers>,
    /// The browsers of interactive mode.
    pub(crate) browsers: Browsers,
    /// The pacer's settings: the gap stored with an origin, the longest back-off.
    pub(crate) pacing: PacerConfig,
}

impl Requester {
    /// The back-off or pause event, if any, from the pacer's state before and after a request.
    pub(crate) fn pacing_event(&self, key: &OriginKey, before: &OriginSnapshot) -> Option<Event> {
        let after = self.polite.pacer().export(key)?;
        let origin = key.as_str().to_string();
        if after.paused && !before.paused {
            let probe_at = after.next_start.unwrap_or_else(Timestamp::now);
            Some(Event::Pause { origin, probe_at })
        } else if before.paused && !after.paused {
            Some(Event::Resume { origin })
        } else if after.failures > before.failures {
            let until = after.next_start.unwrap_or_else(Timestamp::now);
            Some(Event::Backoff {
                origin,
                failures: after.failures,
                until,
            })
        } else {
            None
        }
    }

    /// The page `url` (served with `head` and decoded `body`) rendered in one of the
    /// browsers, whose requests go through this requester's polite pipeline; `None` when no
    /// browser can be used.
    pub(crate) async fn render(
        self: &Arc<Self>,
        url: &fetch::Url,
        head: &ResponseHead,
        body: &[u8],
    ) -> Option<RenderedPage> {
        let source = Arc::clone(self) as Arc<dyn render::PoliteSource>;
        interactive::render_page(&self.browsers, source, url, head, body).await
    }
}

/// The browsers' requests go through the crawl's polite pipeline.
impl render::PoliteSource for Requester {
    fn polite(&self) -> &Polite {
        &self.polite
    }
}

/// Where results go.
pub(crate) struct Keeper {
    /// The crawl's store.
    pub(crate) store: Store,
    /// The writer: WARC records first, then the store, in batches.
    pub(crate) committer: Committer,
    /// This process as a lease holder.
    pub(crate) holder: Holder,
}

/// What the crawl tells and how far it got.
pub(crate) struct Progress {
    events: mpsc::UnboundedSender<Event>,
    /// Set to stop the crawl cleanly.
    pub(crate) stop: Arc<AtomicBool>,
    /// The live counters.
    pub(crate) counters: Arc<LiveCounters>,
    pages: AtomicU64,
    max_pages: Option<u64>,
    /// Set once `--max-pages` pages were fetched.
    pub(crate) max_pages_hit: AtomicBool,
}

impl Progress {
    /// Progress told to `events`, counted in `counters`, stopped by `stop` or after
    /// `max_pages`.
    pub(crate) fn new(
        events: mpsc::UnboundedSender<Event>,
        stop: Arc<AtomicBool>,
        counters: Arc<LiveCounters>,
        max_pages: Option<u64>,
    ) -> Progress {
        Progress {
            events,
            stop,
            counters,
            pages: AtomicU64::new(0),
            max_pages,
            max_pages_hit: AtomicBool::new(false),
        }
    }

    /// Whether the crawl is stopping (a stop, or `--max-pages` reached).
    pub(crate) fn stopping(&self) -> bool {
        self.stop.load(Ordering::SeqCst) || self.max_pages_hit.load(Ordering::SeqCst)
    }

    /// Tell `event`.
    pub(crate) fn emit(&self, event: Event) {
        let _ = self.events.send(event);
    }

    /// Tell each of `events`.
    pub(crate) fn emit_all(&self, events: impl IntoIterator<Item = Event>) {
        events.into_iter().for_each(|e| self.emit(e));
    }

    /// One more page fetched.
    pub(crate) fn count_page(&self) {
        let n = self.pages.fetch_add(1, Ordering::SeqCst) + 1;
        if self.max_pages.is_some_and(|max| n >= max) {
            self.max_pages_hit.store(true, Ordering::SeqCst);
        }
    }
}

/// What the settle and extract steps decide by.
pub(crate) struct Rules {
    /// Failed attempts before a URL is given up (`--max-attempts`).
    pub(crate) max_attempts: u32,
    /// When links are followed (`--follow-links`).
    pub(crate) follow_links: FollowLinks,
    /// Which sites are rendered in a browser.
    pub(crate) interactive: Interactive,
    /// How long after a fetch a page is due again (`--revisit-after`).
    pub(crate) revisit_after: Duration,
    site_follow: Mutex<HashMap<SiteId, bool>>,
    media_seen: Mutex<HashSet<String>>,
}

impl Rules {
    /// The rules of a crawl with these settings, nothing remembered yet.
    pub(crate) fn new(
        max_attempts: u32,
        follow_links: FollowLinks,
        interactive: Interactive,
        revisit_after: Duration,
    ) -> Rules {
        Rules {
            max_attempts,
            follow_links,
            interactive,
            revisit_after,
            site_follow: Mutex::new(HashMap::new()),
            media_seen: Mutex::new(HashSet::new()),
        }
    }

    /// Whether links of `site` are followed, if decided already.
    pub(crate) fn site_follow(&self, site: SiteId) -> Option<bool> {
        self.site_follow
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .get(&site)
            .copied()
    }

    /// Links of `site` are followed (or not) from now on.
    pub(crate) fn set_site_follow(&self, site: SiteId, follow: bool) {
        self.site_follow
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .insert(site, follow);
    }

    /// Whether this process has not seen these media bytes yet (remembering them).
    pub(crate) fn first_media(&self, hash: &str) -> bool {
        self.media_seen
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .insert(hash.to_string())
    }
}

/// One of each part: what the scheduler and every per-origin worker hold.
#[derive(Clone)]
pub(crate) struct Crew {
    /// How requests go out.
    pub(crate) req: Arc<Requester>,
    /// Where results go.
    pub(crate) keep: Arc<Keeper>,
    /// What the crawl tells and how far it got.
    pub(crate) progress: Arc<Progress>,
    /// What the settle and extract steps decide by.
    pub(crate) rules: Arc<Rules>,
}
