//! The crawl's Prometheus metrics (`jittybot crawl --metrics-listen`), in the OpenMetrics text
//! format that Prometheus scrapes.
//!
//! | metric | type | labels | from |
//! |---|---|---|---|
//! | `jittybot_crawl_requests_total` | counter | `kind` (page, robots, sitemap, media), `status` (2xx, 3xx, 4xx, 5xx, 1xx, error) | every request this process sent: fetch's [`fetch::Observer`] at the one place requests are sent, so it counts what servers saw (`error`: no answer, whether or not the request reached a server) |
//! | `jittybot_crawl_response_bytes_total` | counter | `kind` | response body bytes received on the wire |
//! | `jittybot_crawl_warc_bytes_total` | counter | | compressed WARC bytes this process wrote |
//! | `jittybot_crawl_store_commit_seconds` | histogram | | one group commit of results to the store (its transaction, retries included) |
//! | `jittybot_crawl_urls` | gauge | `state` (queued, in_flight, fetched, failed, disallowed, skipped) | the whole crawl (every process), read from the store at most every [`STORE_FIGURES_MAX_AGE`] |
//! | `jittybot_crawl_origins` | gauge | `state` (active: worked by this process; backing_off, paused: the whole crawl) | the scheduler's figures, refreshed every `crawler::PROGRESS_REFRESH` |
//! | `jittybot_crawl_pages_total` | counter | | responses this process received for the crawl's URLs |

use std::collections::HashMap;
use std::sync::atomic::{AtomicI64, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use fetch::{FetchError, RequestKind, StatusCode};
use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::registry::Registry;

use crate::counters::LiveCounters;
pub use crate::counters::{CommitLatency, COMMIT_BUCKETS};
use crate::store::{Store, UrlState};

/// The longest the store's figures (URLs by state) are reused between scrapes: counting the
/// frontier is a scan, so a scraper polling fast (or many at once) costs the store at most
/// one count per this interval.
pub const STORE_FIGURES_MAX_AGE: Duration = Duration::from_secs(5);

/// The content type of the exposition.
pub const CONTENT_TYPE: &str = "application/openmetrics-text; version=1.0.0; charset=utf-8";

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct RequestLabels {
    kind: &'static str,
    status: &'static str,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct KindLabel {
    kind: &'static str,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct StateLabel {
    state: &'static str,
}

/// The metrics of one crawl process.
#[derive(Debug)]
pub struct CrawlMetrics {
    registry: Registry,
    requests: Family<RequestLabels, Counter>,
    bytes: Family<KindLabel, Counter>,
    urls: Family<StateLabel, Gauge<i64, AtomicI64>>,
    origins: Family<StateLabel, Gauge<i64, AtomicI64>>,
    warc_bytes: Counter,
    pages: Counter,
    counters: Arc<LiveCounters>,
    store: Store,
    /// When the store's figures were last read.
    read_at: Mutex<Option<Instant>>,
    /// What the live counters said at the last scrape (counters only go up by the difference).
    last: Mutex<(u64, u64)>,
}

fn status_class(answer: Result<StatusCode, &FetchError>) -> &'static str {
    match answer.map(|s| s.as_u16() / 100) {
        Ok(1) => "1xx",
        Ok(2) => "2xx",
        Ok(3) => "3xx",
        Ok(4) => "4xx",
        Ok(_) => "5xx",
        Err(_) => "error",
    }
}

impl CrawlMetrics {
    /// The metrics of a crawl of `store` whose live figures are `counters` (the crawler's,
    /// [`crate::crawler::Crawler::counters`]). Hand it to the fetcher as its observer
    /// (`Fetcher::with_observer`) so that requests are counted.
    pub fn new(store: Store, counters: Arc<LiveCounters>) -> CrawlMetrics {
        let mut registry = Registry::default();
        let requests = Family::<RequestLabels, Counter>::default();
        registry.register(
            "jittybot_crawl_requests",
            "Requests this process sent, by kind and status class of the answer (error: none)",
            requests.clone(),
        );
        let bytes = Family::<KindLabel, Counter>::default();
        registry.register(
            "jittybot_crawl_response_bytes",
            "Response body bytes received on the wire, by kind of request",
            bytes.clone(),
        );
        let urls = Family::<StateLabel, Gauge<i64, AtomicI64>>::default();
        registry.register(
            "jittybot_crawl_urls",
            "URLs of the whole crawl (every process) by state",
            urls.clone(),
        );
        let origins = Family::<StateLabel, Gauge<i64, AtomicI64>>::default();
        registry.register(
            "jittybot_crawl_origins",
            "Origins by state: active (worked by this process), backing_off and paused (the whole crawl)",
            origins.clone(),
        );
        let warc_bytes = Counter::default();
        registry.register(
            "jittybot_crawl_warc_bytes",
            "Compressed WARC bytes this process wrote",
            warc_bytes.clone(),
        );
        registry.register(
            "jittybot_crawl_store_commit_seconds",
            "Time of one group commit of results to the store",
            counters.commit_latency.0.clone(),
        );
        let pages = Counter::default();
        registry.register(
            "jittybot_crawl_pages",
            "Responses this process received for the crawl's URLs",
            pages.clone(),
        );
        // Every series exists from the start (a rate over a series that appears late misses
        // its first increments).
        for kind in RequestKind::ALL {
            drop(bytes.get_or_create(&KindLabel { kind: kind.name() }));
            for status in ["2xx", "3xx", "4xx", "5xx", "error"] {
                drop(requests.get_or_create(&RequestLabels {
                    kind: kind.name(),
                    status,
                }));
            }
        }
        CrawlMetrics {
            registry,
            requests,
            bytes,
            urls,
            origins,
            warc_bytes,
            pages,
            counters,
            store,
            read_at: Mutex::new(None),
            last: Mutex::new((0, 0)),
        }
    }

    /// The exposition, with the store's figures read again if they are older than
    /// [`STORE_FIGURES_MAX_AGE`].
    pub async fn render(&self) -> String {
        self.refresh().await;
        let mut text = String::new();
        if let Err(e) = prometheus_client::encoding::text::encode(&mut text, &self.registry) {
            tracing::warn!(error = %e, "cannot encode the metrics");
        }
        text
    }

    async fn refresh(&self) {
        let c = &self.counters;
        {
            let mut last = self.last.lock().unwrap_or_else(PoisonError::into_inner);
            let (warc, pages) = (
                c.warc_bytes.load(Ordering::Relaxed),
                c.fetched.load(Ordering::Relaxed),
            );
            self.warc_bytes.inc_by(warc.saturating_sub(last.0));
            self.pages.inc_by(pages.saturating_sub(last.1));
            *last = (warc.max(last.0), pages.max(last.1));
        }
        let gauge =
            |family: &Family<StateLabel, Gauge<i64, AtomicI64>>, state, value: &AtomicU64| {
                family
                    .get_or_create(&StateLabel { state })
                    .set(i64::try_from(value.load(Ordering::Relaxed)).unwrap_or(i64::MAX));
            };
        gauge(&self.origins, "active", &c.active_origins);
        gauge(&self.origins, "backing_off", &c.backing_off);
        gauge(&self.origins, "paused", &c.paused);
        let due = self
            .read_at
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .is_none_or(|at| at.elapsed() >= STORE_FIGURES_MAX_AGE);
        if !due {
            return;
        }
        match url_counts(&self.store).await {
            Ok(counts) => {
                for state in UrlState::ALL {
                    let n = counts.get(&state).copied().unwrap_or(0);
                    self.urls
                        .get_or_create(&StateLabel {
                            state: state.name(),
                        })
                        .set(i64::try_from(n).unwrap_or(i64::MAX));
                }
                *self.read_at.lock().unwrap_or_else(PoisonError::into_inner) = Some(Instant::now());
            }
            Err(e) => tracing::warn!(error = %e, "cannot count the crawl's URLs for the metrics"),
        }
    }
}

/// The whole crawl's URLs by state.
async fn url_counts(store: &Store) -> Result<HashMap<UrlState, u64>, db::DbError> {
    let rows: Vec<(i16, i64)> = db::with_pool!(store.db(), pool => sqlx::query_as(
        "SELECT state, COUNT(*) FROM crawl_urls GROUP BY state")
        .fetch_all(pool)
        .await)
    .map_err(db::DbError::query("count URLs by state"))?;
    Ok(rows
        .into_iter()
        .filter_map(|(code, n)| Some((UrlState::from_code(code)?, u64::try_from(n).ok()?)))
        .collect())
}

impl fetch::Observer for CrawlMetrics {
    fn answered(&self, kind: RequestKind, answer: Result<StatusCode, &FetchError>) {
        self.requests
            .get_or_create(&RequestLabels {
                kind: kind.name(),
                status: status_class(answer),
            })
            .inc();
    }

    fn body_read(&self, kind: RequestKind, bytes: u64) {
        self.bytes
            .get_or_create(&KindLabel { kind: kind.name() })
            .inc_by(bytes);
    }
}
