//! The crawl itself: seeds in, sitemaps first, origins leased and worked in
//! parallel (one request in flight per origin, paced by fetch's pacer), everything archived
//! and committed in batches, until nothing is left, `--max-pages`, or a stop.

mod archive;
mod committer;
mod config;
mod https;
mod interactive;
mod lease;
mod outcome;
mod page;
mod places;
mod redirects;
mod request;
mod robots_store;
mod schedule;
mod settle;
mod sitemaps;
mod turns;
mod unreachable;
mod worker;

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use db::{DbError, Holder};
use fetch::{Fetcher, OriginKey, OriginSnapshot, Pacer, Policy, Polite, RobotsCache};
use jiff::Timestamp;
use tokio::sync::mpsc;

pub use config::{
    warc_options, CrawlConfig, FollowLinks, COMMIT_BATCH, COMMIT_INTERVAL, DEFAULT_ACTIVE_ORIGINS,
    DEFAULT_MAX_ATTEMPTS, DEFAULT_REVISIT_AFTER, MAX_MEDIA_BYTES, MAX_PAGE_BYTES, MAX_TURN_WAIT,
    MEDIA_AGENT, MEDIA_TOKENS, PAGE_TOKENS, SEEN_KEYS, STORE_RETRIES, URL_CLAIM_BATCH,
    URL_DEADLINE,
};
pub use https::{HTTPS_RETRY_AFTER, MAX_HTTPS_FAILURES_REMEMBERED};
pub use interactive::{chromium_available, Interactive};
pub use robots_store::StoreRobots;
pub use sitemaps::{MAX_SITEMAP_TRIES, SITEMAP_TURN_WAIT};
pub use turns::STOP_POLL;

pub use crate::counters::{LiveCounters, StageTimes};
pub use crate::event::EndReason;

use crate::event::Event;
use crate::normal::NormalUrl;
use crate::origins::OriginModel;
use crate::store::{NewUrl, SiteId, Store, UrlKind, PRIORITY_LINKED};
use places::Places;
use warc::{WarcError, WarcWriter};

/// How often the scheduler looks for origins that became due.
const SCHEDULER_TICK: Duration = Duration::from_millis(100);

/// How often the whole crawl's queued URLs and origins backing off or paused are counted for
/// the progress display (a count over the frontier: not on every tick).
pub const PROGRESS_REFRESH: Duration = Duration::from_secs(2);

/// What can stop a crawl.
#[derive(Debug, thiserror::Error)]
pub enum CrawlError {
    /// The store failed.
    #[error("the crawl store failed")]
    Store(#[from] DbError),
    /// Writing WARC files failed.
    #[error("writing WARC files failed")]
    Warc(#[from] WarcError),
    /// The writer task ended early (after an error of its own).
    #[error("the WARC and store writer stopped")]
    WriterGone,
    /// A task panicked (or was cancelled).
    #[error("a crawl task failed")]
    Task(#[from] tokio::task::JoinError),
    /// A task still held the crawl's state when the run ended, so the writer could not be
    /// told to finish.
    #[error("crawl state still shared at the end")]
    StillShared,
    /// The operator's levers could not be set up (a bad `--control` file).
    #[error(transparent)]
    Levers(#[from] crate::control::LeversError),
}

/// The shared state of a running crawl.
pub(crate) struct Ctx {
    store: Store,
    polite: Polite,
    places: Places,
    config: CrawlConfig,
    holder: Holder,
    levers: Arc<crate::control::Levers>,
    /// Hosts whose HTTPS failed in this run.
    https: https::HttpsMemory,
    committer: committer::Committer,
    events: mpsc::UnboundedSender<Event>,
    stop: Arc<AtomicBool>,
    counters: Arc<LiveCounters>,
    pages: AtomicU64,
    max_pages_hit: AtomicBool,
    site_follow: Mutex<HashMap<SiteId, bool>>,
    media_seen: Mutex<std::collections::HashSet<String>>,
    browsers: interactive::Browsers,
}

impl Ctx {
    fn stopping(&self) -> bool {
        self.stop.load(Ordering::SeqCst) || self.max_pages_hit.load(Ordering::SeqCst)
    }

    fn emit(&self, event: Event) {
        let _ = self.events.send(event);
    }

    fn emit_all(&self, events: Vec<Event>) {
        events.into_iter().for_each(|e| self.emit(e));
    }

    fn count_page(&self) {
        let n = self.pages.fetch_add(1, Ordering::SeqCst) + 1;
        if self.config.max_pages.is_some_and(|max| n >= max) {
            self.max_pages_hit.store(true, Ordering::SeqCst);
        }
    }

    fn site_follow(&self, site: SiteId) -> Option<bool> {
        self.site_follow
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .get(&site)
            .copied()
    }

    fn set_site_follow(&self, site: SiteId, follow: bool) {
        self.site_follow
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .insert(site, follow);
    }

    /// Whether this process has not seen these media bytes yet (remembering them).
    fn first_media(&self, hash: &str) -> bool {
        self.media_seen
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .insert(hash.to_string())
    }

    /// Back-off and pause events, from the pacer's state before and after a request.
    fn pacing_events(&self, key: &OriginKey, before: &OriginSnapshot) {
        let Some(after) = self.polite.pacer().export(key) else {
            return;
        };
        let origin = key.as_str().to_string();
        if after.paused && !before.paused {
            let probe_at = after.next_start.unwrap_or_else(Timestamp::now);
            self.emit(Event::Pause { origin, probe_at });
        } else if before.paused && !after.paused {
            self.emit(Event::Resume { origin });
        } else if after.failures > before.failures {
            let until = after.next_start.unwrap_or_else(Timestamp::now);
            self.emit(Event::Backoff {
                origin,
                failures: after.failures,
                until,
            });
        }
    }
}

/// The summary of a run.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct Summary {
    /// Responses received in this run.
    pub fetched: u64,
    /// Why it ended.
    pub reason: EndReason,
}

/// A crawl over a store, a fetcher and a configuration.
pub struct Crawler {
    store: Store,
    fetcher: Fetcher,
    config: CrawlConfig,
    stop: Arc<AtomicBool>,
    counters: Arc<LiveCounters>,
}

impl Crawler {
    /// A crawl of `store` with `fetcher` (its token should be `JittyBot`).
    pub fn new(store: Store, fetcher: Fetcher, config: CrawlConfig) -> Crawler {
        Crawler {
            store: store.with_origin_lease(config.origin_lease),
            fetcher,
            config,
            stop: Arc::new(AtomicBool::new(false)),
            counters: Arc::new(LiveCounters::default()),
        }
    }

    /// Setting this flag stops the crawl cleanly: requests under way finish, claimed URLs go
    /// back to the queue, the WARC file is closed and the state committed.
    pub fn stop_flag(&self) -> Arc<AtomicBool> {
        Arc::clone(&self.stop)
    }

    /// The live counters.
    pub fn counters(&self) -> Arc<LiveCounters> {
        Arc::clone(&self.counters)
    }

    /// Tells `observer` about every request the crawl sends (the metrics,
    /// `crate::metrics::CrawlMetrics`).
    pub fn observe_requests(&mut self, observer: Arc<dyn fetch::Observer>) {
        self.fetcher = self.fetcher.with_observer(observer);
    }

    /// Sets a run up: this process registered as a lease holder (the leases of dead ones
    /// freed), the WARC writer and the store's writer task started, the pipeline built.
    async fn start(
        &self,
        events: mpsc::UnboundedSender<Event>,
    ) -> Result<(Arc<Ctx>, tokio::task::JoinHandle<Result<(), CrawlError>>), CrawlError> {
        let holder = Holder::new();
        let freed = self.store.register_and_free_dead(&holder).await?;
        if !freed.holders.is_empty() {
            tracing::info!(
                holders = freed.holders.len(),
                leases = freed.leases,
                "freed the leases of dead processes of this machine"
            );
        }
        let (warc, recovered) = WarcWriter::open(&self.config.warc_dir, self.config.warc.clone())?;
        for r in recovered {
            tracing::warn!(file = %r.path.display(), dropped = r.dropped_bytes, "recovered a WARC file left open");
        }
        let (committer, writer) = committer::Committer::start(
            self.store.clone(),
            warc,
            holder.clone(),
            Arc::clone(&self.counters),
        );
        let places = Places::new(
            self.store.clone(),
            self.fetcher.clone(),
            OriginModel::new(self.config.origin_rules.clone()),
            holder.clone(),
        );
        let robots = RobotsCache::with_store(
            self.fetcher.clone(),
            Policy::Cached,
            fetch::CacheLimits::default(),
            Arc::new(StoreRobots(self.store.clone())),
        );
        let levers =
            crate::control::Levers::load(&self.store, self.config.control_file.as_deref()).await?;
        let pacer = Pacer::new(self.config.pacer)
            .with_overrides(Arc::clone(&levers) as Arc<dyn fetch::Overrides>);
        let polite = Polite::new(robots, pacer, places.origins.clone());
        let ctx = Arc::new(Ctx {
            store: self.store.clone(),
            polite,
            places,
            config: self.config.clone(),
            holder: holder.clone(),
            levers,
            https: https::HttpsMemory::default(),
            committer,
            events,
            stop: Arc::clone(&self.stop),
            counters: Arc::clone(&self.counters),
            pages: AtomicU64::new(0),
            max_pages_hit: AtomicBool::new(false),
            site_follow: Mutex::new(HashMap::new()),
            media_seen: Mutex::new(Default::default()),
            browsers: interactive::Browsers::default(),
        });
        Ok((ctx, writer))
    }

    /// Add `seeds` to the crawl and run it to the end, sending events as they happen.
    pub async fn run(
        self,
        seeds: &[NormalUrl],
        events: mpsc::UnboundedSender<Event>,
    ) -> Result<Summary, CrawlError> {
        let (ctx, writer) = self.start(events).await?;
        let started = std::time::Instant::now();
        let result = run(&ctx, seeds).await;
        ctx.browsers.close().await;
        // Drop the last sender so the writer drains, closes the WARC file and ends.
        let Ok(ctx) = Arc::try_unwrap(ctx) else {
            return Err(CrawlError::StillShared);
        };
        let Ctx {
            committer, events, ..
        } = ctx;
        drop(committer);
        let written = writer.await?;
        let reason = result?;
        written?;
        let fetched = self.counters.fetched.load(Ordering::SeqCst);
        let _ = events.send(Event::Done {
            fetched,
            reason,
            seconds: crate::event::seconds(started.elapsed()),
        });
        Ok(Summary { fetched, reason })
    }
}

async fn run(ctx: &Arc<Ctx>, seeds: &[NormalUrl]) -> Result<EndReason, CrawlError> {
    let now = Timestamp::now();
    ctx.store.requeue_due(now, ctx.config.revisit_after).await?;
    ctx.store.retry_failed().await?;
    let events = ctx.places.load().await?;
    ctx.emit_all(events);
    add_seeds(ctx, seeds).await?;
    schedule::schedule(ctx).await
}

async fn add_seeds(ctx: &Arc<Ctx>, seeds: &[NormalUrl]) -> Result<(), CrawlError> {
    let mut urls = Vec::new();
    for seed in seeds {
        ctx.places.add_seed_site(seed).await?;
        let (host, events) = ctx.places.host(seed, ctx.polite.pacer()).await?;
        ctx.emit_all(events);
        // The sitemaps this host's robots.txt declares, read before its pages: every host
        // has its own, so each seed host of a site gets its entry.
        urls.extend(sitemaps::entry_for_host(ctx, seed, &host));
        ctx.places.first_sight(seed.key());
        urls.push(NewUrl {
            key: seed.key().to_string(),
            host,
            kind: UrlKind::Page,
            priority: PRIORITY_LINKED,
            in_sitemap: false,
            lastmod: None,
        });
    }
    ctx.store.enqueue(&urls).await?;
    ctx.store.requeue_sitemaps().await?;
    Ok(())
}
