//! The crawl itself: seeds in, sitemaps first, origins leased and worked in
//! parallel (one request in flight per origin, paced by fetch's pacer), everything archived
//! and committed in batches, until nothing is left, `--max-pages`, or a stop.

mod archive;
mod committer;
mod config;
mod https;
mod interactive;
mod lease;
mod page;
mod places;
mod redirects;
mod robots_store;
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
use tokio::task::JoinSet;

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

use crate::event::Event;
use crate::normal::NormalUrl;
use crate::origins::OriginModel;
use crate::store::{NewUrl, Store, UrlKind, PRIORITY_LINKED, PRIORITY_SITEMAPS};
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
    /// A task panicked.
    #[error("a crawl task failed: {0}")]
    Task(String),
    /// The operator's levers could not be set up (a bad `--control` file).
    #[error(transparent)]
    Levers(#[from] crate::control::LeversError),
}

/// Why the crawl ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum EndReason {
    /// Nothing left to fetch.
    Finished,
    /// `--max-pages` reached.
    MaxPages,
    /// Stopped (Ctrl-C).
    Interrupted,
}

/// Live counters (the progress display reads them while the crawl runs).
#[derive(Debug, Default)]
pub struct LiveCounters {
    /// Responses received.
    pub fetched: AtomicU64,
    /// URLs skipped.
    pub skipped: AtomicU64,
    /// Failed attempts.
    pub errors: AtomicU64,
    /// Body bytes.
    pub bytes: AtomicU64,
    /// Origins being worked on.
    pub active_origins: AtomicU64,
    /// URLs queued in the whole crawl (every process), refreshed every [`PROGRESS_REFRESH`].
    pub queued: AtomicU64,
    /// Origins backing off (failures in a row, next start later), refreshed likewise.
    pub backing_off: AtomicU64,
    /// Origins paused until a probe succeeds, refreshed likewise.
    pub paused: AtomicU64,
    /// Compressed WARC bytes written.
    pub warc_bytes: AtomicU64,
    /// How long store group commits take.
    pub commit_latency: crate::metrics::CommitLatency,
    /// Time spent in each stage, summed over tasks (benchmark breakdown).
    pub time: StageTimes,
}

/// Nanoseconds spent per stage of the crawl, summed over all tasks.
#[derive(Debug, Default)]
pub struct StageTimes {
    /// Polite requests: robots.txt checks, turns, hops, reading bodies.
    pub fetch: AtomicU64,
    /// HTML tokenizing (links, media, meta).
    pub parse: AtomicU64,
    /// Turning found links into frontier entries (scope, hosts, dedup).
    pub links: AtomicU64,
    /// Building and compressing WARC records.
    pub warc_encode: AtomicU64,
    /// Appending and flushing WARC files.
    pub warc_write: AtomicU64,
    /// Committing batches to the store.
    pub store: AtomicU64,
}

impl StageTimes {
    pub(crate) fn add(counter: &AtomicU64, since: std::time::Instant) {
        counter.fetch_add(since.elapsed().as_nanos() as u64, Ordering::Relaxed);
    }
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
    site_follow: Mutex<HashMap<i64, bool>>,
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

    fn site_follow(&self, site: i64) -> Option<bool> {
        self.site_follow
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .get(&site)
            .copied()
    }

    fn set_site_follow(&self, site: i64, follow: bool) {
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

    /// Add `seeds` to the crawl and run it to the end, sending events as they happen.
    pub async fn run(
        self,
        seeds: &[NormalUrl],
        events: mpsc::UnboundedSender<Event>,
    ) -> Result<Summary, CrawlError> {
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
        let started = std::time::Instant::now();
        let result = run(&ctx, seeds).await;
        ctx.browsers.close().await;
        // Drop the last sender so the writer drains, closes the WARC file and ends.
        let Ok(ctx) = Arc::try_unwrap(ctx) else {
            return Err(CrawlError::Task(
                "crawl state still shared at the end".into(),
            ));
        };
        let Ctx {
            committer, events, ..
        } = ctx;
        drop(committer);
        let written = writer.await.map_err(|e| CrawlError::Task(e.to_string()))?;
        let reason = result?;
        written?;
        let fetched = self.counters.fetched.load(Ordering::SeqCst);
        let _ = events.send(Event::Done {
            fetched,
            reason: format!("{reason:?}")
                .to_ascii_lowercase()
                .replace("maxpages", "max_pages"),
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
    schedule(ctx).await
}

async fn add_seeds(ctx: &Arc<Ctx>, seeds: &[NormalUrl]) -> Result<(), CrawlError> {
    let mut urls = Vec::new();
    let mut sites = std::collections::HashSet::new();
    for seed in seeds {
        ctx.places.add_seed_site(seed).await?;
        let (host, events) = ctx.places.host(seed, ctx.polite.pacer()).await?;
        ctx.emit_all(events);
        ctx.places.first_sight(seed.key());
        if sites.insert(host.site_id) {
            // The site's sitemaps, read from this host's robots.txt before its pages.
            if let Ok(robots) = NormalUrl::join(seed.url(), "/robots.txt") {
                urls.push(NewUrl {
                    key: robots.key().to_string(),
                    host: host.clone(),
                    kind: UrlKind::Sitemaps,
                    priority: PRIORITY_SITEMAPS,
                    in_sitemap: false,
                    lastmod: None,
                });
            }
        }
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

/// Lease due origins and work them until nothing is left (or a stop).
async fn schedule(ctx: &Arc<Ctx>) -> Result<EndReason, CrawlError> {
    let mut workers: JoinSet<Result<(), CrawlError>> = JoinSet::new();
    let mut active: HashMap<tokio::task::Id, (i64, Arc<lease::LeaseWatch>)> = HashMap::new();
    let mut last_renewal = tokio::time::Instant::now();
    let mut last_progress: Option<tokio::time::Instant> = None;
    let mut last_levers: Option<tokio::time::Instant> = None;
    let mut first_error = None;
    loop {
        if ctx.stopping() {
            break;
        }
        if last_progress.is_none_or(|t| t.elapsed() >= PROGRESS_REFRESH) {
            refresh_progress(ctx).await?;
            last_progress = Some(tokio::time::Instant::now());
        }
        if last_levers.is_none_or(|t| t.elapsed() >= crate::control::LEVERS_REFRESH) {
            ctx.levers.refresh(&ctx.store, ctx.polite.robots()).await?;
            last_levers = Some(tokio::time::Instant::now());
        }
        let room = ctx.config.active_origins.saturating_sub(workers.len());
        if room > 0 {
            let claim_started = tokio::time::Instant::now();
            // Origins whose only work is of excluded sites are left alone.
            let mut except = ctx.committer.in_hand();
            except.extend(ctx.levers.parked_origins());
            let claimed = ctx
                .store
                .claim_origins_except(
                    &ctx.holder,
                    Timestamp::now(),
                    u32::try_from(room).unwrap_or(u32::MAX),
                    &except,
                )
                .await?;
            for origin in claimed {
                ctx.committer.hold(origin.id);
                let lost = Arc::new(lease::LeaseWatch::new(
                    claim_started,
                    ctx.store.origin_lease(),
                ));
                let id = origin.id;
                let handle = workers.spawn(worker::work_origin(
                    Arc::clone(ctx),
                    origin,
                    Arc::clone(&lost),
                ));
                active.insert(handle.id(), (id, lost));
            }
        }
        ctx.counters
            .active_origins
            .store(workers.len() as u64, Ordering::Relaxed);
        if last_renewal.elapsed() >= ctx.store.origin_lease() / 3 {
            renew(ctx, &active).await?;
            last_renewal = tokio::time::Instant::now();
        }
        if workers.is_empty() && ctx.committer.pending.load(Ordering::SeqCst) == 0 {
            let (left, next) = ctx.store.pending_work().await?;
            if left == 0 {
                return Ok(EndReason::Finished);
            }
            let behind_robots = ctx.store.pending_behind_robots().await?;
            if behind_robots >= left {
                tracing::warn!(
                    urls = behind_robots,
                    "only URLs of sites whose robots.txt is unreachable are left: they stay queued for a later run"
                );
                ctx.emit(Event::RobotsWaiting {
                    urls: behind_robots,
                });
                return Ok(EndReason::Finished);
            }
            if let Some(held) = ctx.levers.only_held_left(&ctx.store, left).await? {
                tracing::warn!(
                    urls = held,
                    "only URLs of excluded sites are left: they stay queued for a later run"
                );
                return Ok(EndReason::Finished);
            }
            // Wait for the earliest origin to be due (or for another process's work).
            let wait = next
                .map(|t| t.duration_since(Timestamp::now()).unsigned_abs())
                .unwrap_or(SCHEDULER_TICK)
                .clamp(SCHEDULER_TICK, Duration::from_secs(1));
            tokio::time::sleep(wait).await;
            continue;
        }
        tokio::select! {
            done = workers.join_next_with_id(), if !workers.is_empty() => {
                if let Some(done) = done {
                    let (id, result) = match done {
                        Ok((id, r)) => (id, r),
                        Err(e) => (e.id(), Err(CrawlError::Task(e.to_string()))),
                    };
                    active.remove(&id);
                    if let Err(e) = result {
                        first_error.get_or_insert(e);
                        ctx.stop.store(true, Ordering::SeqCst);
                    }
                }
            }
            _ = tokio::time::sleep(SCHEDULER_TICK) => {}
        }
    }
    while let Some(done) = workers.join_next().await {
        if let Ok(Err(e)) | Err(e) = done.map_err(|e| CrawlError::Task(e.to_string())) {
            first_error.get_or_insert(e);
        }
    }
    if let Some(e) = first_error {
        return Err(e);
    }
    Ok(if ctx.max_pages_hit.load(Ordering::SeqCst) {
        EndReason::MaxPages
    } else {
        EndReason::Interrupted
    })
}

/// The whole crawl's figures for the progress display.
async fn refresh_progress(ctx: &Ctx) -> Result<(), CrawlError> {
    let p = ctx.store.progress(Timestamp::now()).await?;
    ctx.counters.queued.store(p.queued, Ordering::Relaxed);
    ctx.counters
        .backing_off
        .store(p.backing_off, Ordering::Relaxed);
    ctx.counters.paused.store(p.paused, Ordering::Relaxed);
    Ok(())
}

async fn renew(
    ctx: &Ctx,
    active: &HashMap<tokio::task::Id, (i64, Arc<lease::LeaseWatch>)>,
) -> Result<(), CrawlError> {
    let ids: Vec<i64> = active.values().map(|(id, _)| *id).collect();
    let started = tokio::time::Instant::now();
    let kept = committer::retrying(|| ctx.store.renew_origins(&ids, &ctx.holder, Timestamp::now()))
        .await?;
    for (id, lease) in active.values() {
        if kept.contains(id) {
            lease.renewed(started);
        } else {
            // Another process took it over (or it was merged): stop working it.
            lease.lose();
        }
    }
    Ok(())
}
