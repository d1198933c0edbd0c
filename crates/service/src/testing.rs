//! A throwaway store of the service and helpers to fill it (feature `testing`): the pages'
//! tests run the real service, its store and its decisions, on a SQLite file in a temporary
//! folder, with no server to start.

use std::sync::Arc;
use std::time::Duration;

use audit::Analysis;
use db::testing::TestDb;
use db::Backend;
use fetch::{FetchConfig, Fetcher};
use jiff::Timestamp;
use url::Url;

use crate::clock::{Clock, SystemClock};
use crate::ids::ReportId;
use crate::service::{Service, ServiceConfig};
use crate::store::Store;

/// A fetcher with the default configuration: every address a test could name is refused
/// (loopback and private ranges are not public), so nothing is ever fetched.
pub fn offline_fetcher() -> Fetcher {
    let config = FetchConfig::new("RobotsTxtParser", "http://robotstxtparser.test/bot");
    Fetcher::new(config).expect("a fetcher")
}

/// A service on a store of its own, removed when dropped.
#[derive(Debug)]
pub struct TestService {
    service: Service,
    _db: TestDb,
}

impl TestService {
    /// A service reached at `public`, fetching with `fetcher`, on a fresh SQLite store. Lists
    /// and statistics are read again on every request (no reuse window), so what a test
    /// stores shows at once.
    pub async fn new(public: &str, fetcher: Fetcher) -> TestService {
        let mut config = ServiceConfig::new(Url::parse(public).expect("a public URL"));
        config.data_refresh = Duration::ZERO;
        config.stats_refresh = Duration::ZERO;
        TestService::with_config(config, fetcher).await
    }

    /// A service set up as `config` says, fetching with `fetcher`, on a fresh SQLite store.
    pub async fn with_config(config: ServiceConfig, fetcher: Fetcher) -> TestService {
        TestService::with_clock(config, fetcher, Arc::new(SystemClock)).await
    }

    /// The same, reading the time from `clock`.
    pub async fn with_clock(
        config: ServiceConfig,
        fetcher: Fetcher,
        clock: Arc<dyn Clock>,
    ) -> TestService {
        let db = TestDb::new(Backend::Sqlite).await;
        let store = Store::open(&db.target).await.expect("a test store");
        let service = Service::new(store, fetcher, config, clock);
        TestService { service, _db: db }
    }

    /// A service whose analyses cannot reach anything: for tests that store reports made
    /// offline.
    pub async fn offline(public: &str) -> TestService {
        TestService::new(public, offline_fetcher()).await
    }

    /// The service.
    pub fn service(&self) -> &Service {
        &self.service
    }

    /// Its store.
    pub fn store(&self) -> &Store {
        self.service.store()
    }

    /// Store `analysis` (of its URL) as a finished report asked for at its `analysed_at`.
    pub async fn insert(&self, analysis: &Analysis) -> ReportId {
        let url = analysis.url.as_ref().expect("an analysis of a URL");
        let id = self
            .store()
            .start_report(url, analysis.analysed_at)
            .await
            .expect("a report");
        self.store()
            .finish_report(&id, analysis)
            .await
            .expect("a finished report");
        id
    }

    /// A report of `url` asked for at `at`, still waiting for a worker.
    pub async fn insert_queued(&self, url: &Url, at: Timestamp) -> ReportId {
        let id = self
            .store()
            .queue_analysis(url, at, false)
            .await
            .expect("a queued report");
        id
    }

    /// A report of `url` asked for at `at` that failed with `message`.
    pub async fn insert_failed(&self, url: &Url, at: Timestamp, message: &str) -> ReportId {
        let id = self.store().start_report(url, at).await.expect("a report");
        self.store()
            .fail_report(&id, message)
            .await
            .expect("a failed report");
        id
    }
}
