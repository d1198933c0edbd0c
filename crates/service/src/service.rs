//! The service handle: what the JSON API, the pages (`crates/site`), the workers and the
//! scheduler share. Submissions are in [`crate::submit`], reads in [`crate::read`].

use std::sync::Arc;
use std::time::Duration;

use fetch::Fetcher;
use tokio::sync::Notify;
use url::Url;

use crate::analyzer::Analyzer;
use crate::client::TrustedProxies;
use crate::clock::Clock;
use crate::connections::ConnectionLimits;
use crate::cpu::AuditPool;
use crate::icon_source::IconSource;
use crate::limits::{DATA_REFRESH, STATS_REFRESH};
use crate::ratelimit::RateLimiter;
use crate::store::Store;
use crate::views::Views;

/// How the service is set up.
#[derive(Clone, Debug)]
pub struct ServiceConfig {
    /// The address the public reaches the service at (absolute links, the sitemap).
    pub public_url: Url,
    /// The limits of each analysis.
    pub limits: audit::Limits,
    /// How long the list of every URL's current report (ranking, totals, sitemap) is reused
    /// before it is read again ([`DATA_REFRESH`]; zero reads it on every request).
    pub data_refresh: Duration,
    /// How long the statistics are reused ([`STATS_REFRESH`]; zero: every request).
    pub stats_refresh: Duration,
    /// The limits on connections (`serve`).
    pub connections: ConnectionLimits,
    /// Reverse proxies whose `X-Forwarded-For` names the client (none by default).
    pub trusted_proxies: TrustedProxies,
}

impl ServiceConfig {
    /// The published defaults for a service reached at `public_url`.
    pub fn new(public_url: Url) -> ServiceConfig {
        ServiceConfig {
            public_url,
            limits: audit::Limits::default(),
            data_refresh: DATA_REFRESH,
            stats_refresh: STATS_REFRESH,
            connections: ConnectionLimits::default(),
            trusted_proxies: TrustedProxies::default(),
        }
    }
}

pub(crate) struct Inner {
    pub(crate) store: Store,
    pub(crate) fetcher: Fetcher,
    pub(crate) analyzer: Analyzer,
    pub(crate) config: ServiceConfig,
    pub(crate) clock: Arc<dyn Clock>,
    pub(crate) limiter: RateLimiter,
    /// The per-client daily quota.
    pub(crate) daily: RateLimiter,
    /// The key of the queue's client tags (`submit`): random per process.
    pub(crate) client_secret: std::hash::RandomState,
    /// Where pastes are audited (off the async runtime).
    pub(crate) audits: AuditPool,
    pub(crate) wake: Notify,
    pub(crate) icons: std::sync::OnceLock<Arc<dyn IconSource>>,
    /// The values every visitor reads, made once and shared.
    pub(crate) views: Views,
}

/// The service: cheap to clone, shared by the API, the pages, the workers and the scheduler.
#[derive(Clone)]
pub struct Service {
    pub(crate) inner: Arc<Inner>,
}

impl std::fmt::Debug for Service {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Service")
            .field("public_url", &self.inner.config.public_url.as_str())
            .finish_non_exhaustive()
    }
}

impl Service {
    /// A service on `store`, fetching with `fetcher` (its User-Agent should point to
    /// `<public URL>/bot`), reading time from `clock`. Starts the analysis threads (see
    /// [`crate::analyzer`]); call from within a tokio runtime.
    pub fn new(
        store: Store,
        fetcher: Fetcher,
        config: ServiceConfig,
        clock: Arc<dyn Clock>,
    ) -> Service {
        let analyzer = Analyzer::start(fetcher.clone(), config.limits.clone());
        let inner = Inner {
            store,
            fetcher,
            analyzer,
            config,
            clock,
            limiter: RateLimiter::default(),
            daily: RateLimiter::daily(),
            audits: AuditPool::default(),
            client_secret: std::hash::RandomState::new(),
            wake: Notify::new(),
            icons: std::sync::OnceLock::new(),
            views: Views::new(),
        };
        Service {
            inner: Arc::new(inner),
        }
    }

    /// The store.
    pub fn store(&self) -> &Store {
        &self.inner.store
    }

    /// The configuration.
    pub fn config(&self) -> &ServiceConfig {
        &self.inner.config
    }

    /// The clock.
    pub fn clock(&self) -> &Arc<dyn Clock> {
        &self.inner.clock
    }

    /// The absolute address of `path` (which starts with `/`).
    pub fn public(&self, path: &str) -> String {
        crate::paths::absolute(&self.inner.config.public_url, path)
    }
}

impl Service {
    /// Use `source` to find icons (once; later calls are ignored).
    pub fn set_icon_source(&self, source: Arc<dyn IconSource>) {
        let _ = self.inner.icons.set(source);
    }
}
