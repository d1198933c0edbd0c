//! The service handle: what the JSON API and the HTML pages (`crates/site`) call. Submitting
//! an analysis or a paste, reading reports, domains and the ranking.

use std::net::IpAddr;
use std::sync::Arc;
use std::time::Duration;

use fetch::{ErrorKind, Fetcher};
use serde::Serialize;
use tokio::sync::Notify;
use url::Url;

use crate::analyzer::Analyzer;
use crate::clock::{add, sub, Clock};
use crate::error::ServiceError;
use crate::ids::{normalize_domain, registrable_domain, ReportId};
use crate::limits::{MAX_DOMAIN_REPORTS, MAX_PASTE_BYTES, RANKING_CACHE, REUSE_WINDOW};
use crate::ranking::{ranking, Ranking};
use crate::ratelimit::RateLimiter;
use crate::store::retention::MonthlySummary;
use crate::store::{RankingRow, ReportRow, ReportState, Store, StoredReport};

/// How the service is set up.
#[derive(Clone, Debug)]
pub struct ServiceConfig {
    /// The address the public reaches the service at (absolute links).
    pub public_url: Url,
    /// The limits of each analysis.
    pub limits: audit::Limits,
}

/// Why a submission was refused. Each is the person's to fix, except [`SubmitError::Store`].
#[derive(Debug, thiserror::Error)]
pub enum SubmitError {
    /// Not an absolute http/https URL without credentials of at most 2,048 bytes.
    #[error("{0}")]
    BadUrl(String),
    /// The host's address is not public (or does not resolve).
    #[error("{0}")]
    NotPublic(String),
    /// The paste is larger than [`MAX_PASTE_BYTES`].
    #[error("the file is {len} bytes long; at most {max} are accepted")]
    TooLarge {
        /// Its length.
        len: usize,
        /// The limit.
        max: usize,
    },
    /// This client queued too many analyses in the current window.
    #[error("too many analyses from this address; try again in {} s", retry_after.as_secs().max(1))]
    TooMany {
        /// When its window ends.
        retry_after: Duration,
    },
    /// The store failed.
    #[error(transparent)]
    Store(#[from] ServiceError),
}

/// A submission accepted: the report that answers it.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Submitted {
    /// The report's id.
    pub id: ReportId,
    /// Its state now.
    pub state: ReportState,
    /// Whether it is a report of less than 10 minutes ago, given again instead of a new one.
    pub reused: bool,
    /// The report's page (`/score/{domain}/{id}`, `/paste/{id}` for pastes).
    pub address: String,
    /// The report as JSON (`/api/report/{id}`).
    pub api: String,
}

/// A domain's reports (newest first) and monthly summaries (newest month first).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct DomainView {
    /// The domain.
    pub domain: String,
    /// Its reports, newest first, at most [`MAX_DOMAIN_REPORTS`].
    pub reports: Vec<ReportRow>,
    /// How many reports it has in all.
    pub total_reports: i64,
    /// The monthly summaries of earlier reports.
    pub summaries: Vec<MonthlySummary>,
    /// Whether it is kept off the ranking.
    pub off_ranking: bool,
    /// Whether it has an icon (the page shows it; not part of the API's answer).
    #[serde(skip)]
    pub has_icon: bool,
}

pub(crate) struct Inner {
    pub(crate) store: Store,
    pub(crate) fetcher: Fetcher,
    pub(crate) analyzer: Analyzer,
    pub(crate) config: ServiceConfig,
    pub(crate) clock: Arc<dyn Clock>,
    pub(crate) limiter: RateLimiter,
    pub(crate) wake: Notify,
    pub(crate) icons: std::sync::OnceLock<Arc<dyn crate::icons::IconSource>>,
    /// The ranking rows and when (by the service clock) they were read.
    ranking_rows: tokio::sync::Mutex<Option<(jiff::Timestamp, Arc<Vec<RankingRow>>)>>,
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
            wake: Notify::new(),
            icons: std::sync::OnceLock::new(),
            ranking_rows: tokio::sync::Mutex::new(None),
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
        format!(
            "{}{path}",
            self.inner.config.public_url.as_str().trim_end_matches('/')
        )
    }

    /// The page of a report.
    pub fn report_address(&self, row: &ReportRow) -> String {
        match (&row.domain, row.is_paste) {
            (Some(domain), false) => self.public(&format!("/score/{domain}/{}", row.id)),
            _ => self.public(&format!("/paste/{}", row.id)),
        }
    }

    fn submitted(&self, row: &ReportRow, reused: bool) -> Submitted {
        Submitted {
            id: row.id.clone(),
            state: row.state,
            reused,
            address: self.report_address(row),
            api: self.public(&format!("/api/report/{}", row.id)),
        }
    }

    /// Queue an analysis of `input` for `client`, checked first: an absolute http/https URL
    /// without credentials, at most 2,048 bytes, on a public address (the fetcher's guard).
    /// A URL asked for less than [`REUSE_WINDOW`] ago answers with that report.
    pub async fn submit_analysis(
        &self,
        input: &str,
        client: IpAddr,
    ) -> Result<Submitted, SubmitError> {
        let url = self.check_url(input).await?;
        let now = self.inner.clock.now();
        let store = &self.inner.store;
        if let Some(row) = store.recent_for_url(&url, sub(now, REUSE_WINDOW)).await? {
            return Ok(self.submitted(&row, true));
        }
        self.inner
            .limiter
            .check(client)
            .map_err(|retry_after| SubmitError::TooMany { retry_after })?;
        let id = store.queue_analysis(&url, now, false).await?;
        self.inner.wake.notify_one();
        let row = ReportRow {
            id,
            domain: registrable_domain(&url),
            url: Some(url),
            is_paste: false,
            scheduled: false,
            state: ReportState::Queued,
            created_at: now,
            analysed_at: None,
            score: None,
            grade: None,
            indexable: false,
            error: None,
        };
        tracing::info!(id = %row.id, url = ?row.url.as_ref().map(Url::as_str), "analysis queued");
        Ok(self.submitted(&row, false))
    }

    async fn check_url(&self, input: &str) -> Result<Url, SubmitError> {
        let trimmed = input.trim();
        if !trimmed.contains("://") && !trimmed.is_empty() {
            return Err(SubmitError::BadUrl(
                "give an absolute address starting with http:// or https://".into(),
            ));
        }
        let url = fetch::parse_target(trimmed).map_err(|e| SubmitError::BadUrl(e.to_string()))?;
        let scope = fetch::Scope::of(&url).map_err(|e| SubmitError::BadUrl(e.full_message()))?;
        match self.inner.fetcher.resolve(scope.host(), scope.port()).await {
            Ok(_) => Ok(url),
            Err(e) if e.kind() == ErrorKind::AddressRefused => {
                Err(SubmitError::NotPublic(format!(
                    "{} is not a public address: {}",
                    scope.host(),
                    e.full_message()
                )))
            }
            Err(e) => Err(SubmitError::NotPublic(format!(
                "{} cannot be reached: {}",
                scope.host(),
                e.full_message()
            ))),
        }
    }

    /// Audit a pasted or uploaded robots.txt offline and store it as a paste: never listed,
    /// reachable only by its id.
    pub async fn submit_paste(
        &self,
        body: &[u8],
        client: IpAddr,
    ) -> Result<Submitted, SubmitError> {
        if body.len() > MAX_PASTE_BYTES {
            return Err(SubmitError::TooLarge {
                len: body.len(),
                max: MAX_PASTE_BYTES,
            });
        }
        self.inner
            .limiter
            .check(client)
            .map_err(|retry_after| SubmitError::TooMany { retry_after })?;
        let now = self.inner.clock.now();
        let mut analysis = audit::analyze_file(audit::ProvidedFile::whole(body), None);
        analysis.analysed_at = now;
        let id = self.inner.store.insert_paste(&analysis, body, now).await?;
        let row = ReportRow {
            id,
            domain: None,
            url: None,
            is_paste: true,
            scheduled: false,
            state: ReportState::Done,
            created_at: now,
            analysed_at: Some(now),
            score: Some(analysis.score),
            grade: Some(analysis.grade.to_string()),
            indexable: false,
            error: None,
        };
        Ok(self.submitted(&row, false))
    }

    /// One report (any state), with its document when done.
    pub async fn report(&self, id: &ReportId) -> Result<Option<StoredReport>, ServiceError> {
        self.inner.store.report(id).await
    }

    /// A domain's reports and summaries; `None` when it has neither.
    pub async fn domain(&self, domain: &str) -> Result<Option<DomainView>, ServiceError> {
        let domain = normalize_domain(domain);
        let store = &self.inner.store;
        // Two queries at once on two connections: one round trip's wait, not four.
        let ((reports, total_reports), (summaries, off_ranking, has_icon)) = tokio::try_join!(
            store.domain_reports(&domain, MAX_DOMAIN_REPORTS),
            store.summaries_and_flags(&domain)
        )?;
        if reports.is_empty() && summaries.is_empty() {
            return Ok(None);
        }
        Ok(Some(DomainView {
            domain,
            reports,
            total_reports,
            summaries,
            off_ranking,
            has_icon,
        }))
    }

    /// The ranking of the current 30-minute window, from data at most [`RANKING_CACHE`] old.
    pub async fn ranking(&self) -> Result<Ranking, ServiceError> {
        let now = self.inner.clock.now();
        let mut cached = self.inner.ranking_rows.lock().await;
        let fresh = cached
            .as_ref()
            .filter(|(at, _)| *at <= now && add(*at, RANKING_CACHE) > now)
            .map(|(_, rows)| rows.clone());
        let rows = match fresh {
            Some(rows) => rows,
            None => {
                let rows = Arc::new(self.inner.store.ranking_rows().await?);
                *cached = Some((now, rows.clone()));
                rows
            }
        };
        drop(cached);
        Ok(ranking(&rows, now))
    }
}
