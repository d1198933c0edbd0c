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
mod parts;
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

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use db::{DbError, Holder};
use fetch::{Fetcher, Pacer, Policy, Polite, RobotsCache};
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
use crate::store::{NewUrl, Store, UrlKind, PRIORITY_LINKED};
use parts::{Crew, Keeper, Progress, Requester, Rules};
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
    /// freed), the WARC writer and the store's writer task started, the crew built.
    async fn start(
        &self,
        events: mpsc::UnboundedSender<Event>,
    ) -> Result<(Crew, tokio::task::JoinHandle<Result<(), CrawlError>>), CrawlError> {
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
        let config = &self.config;
        let crew = Crew {
            req: Arc::new(self.requester(&holder).await?),
            keep: Arc::new(Keeper {
                store: self.store.clone(),
                committer,
                holder,
            }),
            progress: Arc::new(Progress::new(
                events,
                Arc::clone(&self.stop),
                Arc::clone(&self.counters),
                config.max_pages,
            )),
            rules: Arc::new(Rules::new(
                config.max_attempts,
                config.follow_links,
                config.interactive.clone(),
                config.revisit_after,
            )),
        };
        Ok((crew, writer))
    }

    /// The requesting part of a run of `holder`: origins, robots.txt through the store, the
    /// pacer under the operator's levers.
    async fn requester(&self, holder: &Holder) -> Result<Requester, CrawlError> {
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
        Ok(Requester {
            polite,
            places,
            https: https::HttpsMemory::default(),
            levers,
            browsers: interactive::Browsers::default(),
            pacing: self.config.pacer,
        })
    }

    /// Add `seeds` to the crawl and run it to the end, sending events as they happen.
    pub async fn run(
        self,
        seeds: &[NormalUrl],
        events: mpsc::UnboundedSender<Event>,
    ) -> Result<Summary, CrawlError> {
        let (crew, writer) = self.start(events).await?;
        let started = std::time::Instant::now();
        let result = run(&crew, seeds, self.config.active_origins).await;
        crew.req.browsers.close().await;
        let Crew { keep, progress, .. } = crew;
        // Drop the last sender of work so the writer drains, closes the WARC file and ends.
        let Ok(keep) = Arc::try_unwrap(keep) else {
            return Err(CrawlError::StillShared);
        };
        drop(keep);
        let written = writer.await?;
        let reason = result?;
        written?;
        let fetched = self.counters.fetched.load(Ordering::SeqCst);
        progress.emit(Event::Done {
            fetched,
            reason,
            seconds: crate::event::seconds(started.elapsed()),
        });
        Ok(Summary { fetched, reason })
    }
}

async fn run(
    crew: &Crew,
    seeds: &[NormalUrl],
    active_origins: usize,
) -> Result<EndReason, CrawlError> {
    let Crew {
        req,
        keep,
        progress,
        rules,
    } = crew;
    let now = Timestamp::now();
    keep.store.requeue_due(now, rules.revisit_after).await?;
    keep.store.retry_failed().await?;
    progress.emit_all(req.places.load().await?);
    add_seeds(req, keep, progress, seeds).await?;
    schedule::schedule(crew, active_origins).await
}

async fn add_seeds(
    req: &Requester,
    keep: &Keeper,
    progress: &Progress,
    seeds: &[NormalUrl],
) -> Result<(), CrawlError> {
    let mut urls = Vec::new();
    for seed in seeds {
        req.places.add_seed_site(seed).await?;
        let (host, events) = req.places.host(seed, req.polite.pacer()).await?;
        progress.emit_all(events);
        // The sitemaps this host's robots.txt declares, read before its pages: every host
        // has its own, so each seed host of a site gets its entry.
        urls.extend(sitemaps::entry_for_host(&req.places, seed, &host));
        req.places.first_sight(seed.key());
        urls.push(NewUrl {
            key: seed.key().to_string(),
            host,
            kind: UrlKind::Page,
            priority: PRIORITY_LINKED,
            in_sitemap: false,
            lastmod: None,
        });
    }
    keep.store.enqueue(&urls).await?;
    keep.store.requeue_sitemaps().await?;
    Ok(())
}
