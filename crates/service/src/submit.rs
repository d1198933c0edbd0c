//! Submissions: an analysis of a URL, or the offline audit of a pasted robots.txt. Both the
//! JSON API and the pages' forms submit here, and answer with the same [`SubmitError`].

use std::hash::BuildHasher;
use std::net::IpAddr;
use std::time::Duration;

use axum::http::StatusCode;
use fetch::{ErrorKind, FetchError, TargetError};
use url::Url;

use crate::client::ClientKey;
use crate::clock::sub;
use crate::error::ServiceError;
use crate::ids::registrable_domain;
use crate::limits::{
    BUSY_RETRY_AFTER, CLIENT_SUBMISSIONS_PER_DAY, MAX_PASTE_BYTES, MAX_QUEUED_PER_CLIENT,
    QUEUE_SHARE_RETRY_AFTER, REUSE_WINDOW,
};
use crate::model::{ReportRow, ReportState, Submitted};
use crate::paths;
use crate::service::Service;
use crate::store::Queued;

/// Why a submission was refused. Each is the person's to fix, except [`SubmitError::Store`].
/// [`SubmitError::explain`] says it in words for them.
#[derive(Debug, thiserror::Error)]
pub enum SubmitError {
    /// Not an absolute address (no `scheme://`).
    #[error("give an absolute address starting with http:// or https://")]
    NotAbsolute,
    /// Not an http/https URL with a host and without credentials, of at most 2,048 bytes.
    #[error("that address cannot be analysed")]
    BadUrl(#[source] TargetError),
    /// The URL has no scope the bot could fetch (no host it can name).
    #[error("that address cannot be analysed")]
    NoScope(#[source] FetchError),
    /// The host's address is not public: the fetcher's guard refused it.
    #[error("{host} is not a public address")]
    NotPublic {
        /// The host as given.
        host: String,
        /// The guard's refusal (names the address: logged, never shown).
        #[source]
        source: FetchError,
    },
    /// The host name does not resolve.
    #[error("{host} cannot be reached")]
    Unresolvable {
        /// The host as given.
        host: String,
        /// Why.
        #[source]
        source: FetchError,
    },
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
    /// The service is too busy to take it now (pastes being audited, or the queue full).
    #[error("the service is busy; try again in {} s", retry_after.as_secs().max(1))]
    Busy {
        /// When to try again.
        retry_after: Duration,
    },
    /// This client made [`CLIENT_SUBMISSIONS_PER_DAY`] submissions in its day.
    #[error("this address has made {max} analyses and pastes today, the most allowed; try again in {} h", retry_after.as_secs().div_ceil(3600).max(1))]
    DailyQuota {
        /// The quota.
        max: u32,
        /// When its day ends.
        retry_after: Duration,
    },
    /// This client already has [`MAX_QUEUED_PER_CLIENT`] analyses waiting or running.
    #[error("this address already has {max} analyses waiting; try again when they are done")]
    QueueShare {
        /// The limit.
        max: usize,
    },
    /// The store failed.
    #[error("the service could not take the request")]
    Store(#[from] ServiceError),
}

impl SubmitError {
    /// What went wrong, in words for the person who submitted, with what to do. Never the
    /// address a name resolved to (that stays in the log).
    pub fn explain(&self) -> String {
        match self {
            SubmitError::BadUrl(reason) => format!("that address cannot be analysed: {reason}"),
            SubmitError::NotPublic { host, .. } => {
                format!("{host} is not a public address: the bot only visits public sites")
            }
            SubmitError::Unresolvable { host, .. } => {
                format!("{host} cannot be reached: the name does not resolve")
            }
            SubmitError::Store(_) => {
                "the service could not take the request just now; try again in a minute".into()
            }
            other => other.to_string(),
        }
    }

    /// The HTTP status that answers it.
    pub fn status(&self) -> StatusCode {
        match self {
            SubmitError::NotAbsolute
            | SubmitError::BadUrl(_)
            | SubmitError::NoScope(_)
            | SubmitError::NotPublic { .. }
            | SubmitError::Unresolvable { .. } => StatusCode::BAD_REQUEST,
            SubmitError::TooLarge { .. } => StatusCode::PAYLOAD_TOO_LARGE,
            SubmitError::TooMany { .. }
            | SubmitError::QueueShare { .. }
            | SubmitError::DailyQuota { .. } => StatusCode::TOO_MANY_REQUESTS,
            SubmitError::Busy { .. } | SubmitError::Store(_) => StatusCode::SERVICE_UNAVAILABLE,
        }
    }

    /// How long to wait before trying again, when waiting helps (`Retry-After`).
    pub fn retry_after(&self) -> Option<Duration> {
        match self {
            SubmitError::TooMany { retry_after }
            | SubmitError::Busy { retry_after }
            | SubmitError::DailyQuota { retry_after, .. } => {
                Some((*retry_after).max(Duration::from_secs(1)))
            }
            SubmitError::QueueShare { .. } => Some(QUEUE_SHARE_RETRY_AFTER),
            _ => None,
        }
    }
}

impl Service {
    fn submitted(&self, row: &ReportRow, reused: bool) -> Submitted {
        let path = row.path();
        Submitted {
            id: row.id.clone(),
            state: row.state,
            reused,
            address: self.public(&path),
            api: self.public(&paths::api_report(&row.id)),
            path,
        }
    }

    /// The client of a request from `peer` with `headers` (`X-Forwarded-For` counts only from
    /// the configured trusted proxies).
    pub fn client(&self, peer: IpAddr, headers: &axum::http::HeaderMap) -> ClientKey {
        self.inner.config.trusted_proxies.client(peer, headers)
    }

    /// Count one submission of `client` against the per-minute limit and the daily quota:
    /// the refusal when it is over one of them.
    fn over_limits(&self, client: ClientKey) -> Option<SubmitError> {
        if let Err(retry_after) = self.inner.limiter.check(client) {
            return Some(SubmitError::TooMany { retry_after });
        }
        let retry_after = self.inner.daily.check(client).err()?;
        Some(SubmitError::DailyQuota {
            max: CLIENT_SUBMISSIONS_PER_DAY,
            retry_after,
        })
    }

    /// The tag `client`'s jobs carry in the queue: keyed by a secret of this process, so the
    /// store never holds an address.
    fn client_tag(&self, client: ClientKey) -> String {
        format!("{:016x}", self.inner.client_secret.hash_one(client))
    }

    /// Queue an analysis of `input` for `client`, checked first: an absolute http/https URL
    /// without credentials, at most 2,048 bytes, on a public address (the fetcher's guard).
    /// Its query string and fragment are dropped (people paste URLs with tokens in them: they
    /// are neither fetched nor published). A URL asked for less than [`REUSE_WINDOW`] ago
    /// answers with that report. The client gets at most [`MAX_QUEUED_PER_CLIENT`] jobs in the
    /// queue, which holds at most [`crate::limits::MAX_QUEUED_JOBS`].
    pub async fn submit_analysis(
        &self,
        input: &str,
        client: impl Into<ClientKey>,
    ) -> Result<Submitted, SubmitError> {
        let client = client.into();
        let url = self.check_url(input).await?;
        let now = self.inner.clock.now();
        let store = &self.inner.store;
        if let Some(row) = store.recent_for_url(&url, sub(now, REUSE_WINDOW)).await? {
            return Ok(self.submitted(&row, true));
        }
        if let Some(refused) = self.over_limits(client) {
            return Err(refused);
        }
        let id = match store
            .queue_for_client(&url, now, &self.client_tag(client))
            .await?
        {
            Queued::Queued(id) => id,
            Queued::ClientShareFull => {
                return Err(SubmitError::QueueShare {
                    max: MAX_QUEUED_PER_CLIENT,
                })
            }
            Queued::QueueFull => {
                return Err(SubmitError::Busy {
                    retry_after: BUSY_RETRY_AFTER,
                })
            }
        };
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
            return Err(SubmitError::NotAbsolute);
        }
        let mut url = fetch::parse_target(trimmed).map_err(SubmitError::BadUrl)?;
        url.set_query(None);
        url.set_fragment(None);
        let scope = fetch::Scope::of(&url).map_err(SubmitError::NoScope)?;
        match self.inner.fetcher.resolve(scope.host(), scope.port()).await {
            Ok(_) => Ok(url),
            Err(source) => {
                tracing::info!(host = scope.host(), error = %source.full_message(), "submission refused");
                let host = scope.host().to_owned();
                Err(if source.kind() == ErrorKind::AddressRefused {
                    SubmitError::NotPublic { host, source }
                } else {
                    SubmitError::Unresolvable { host, source }
                })
            }
        }
    }

    /// Audit a pasted or uploaded robots.txt offline (on the blocking pool, never on the
    /// runtime's threads: [`crate::cpu`]) and store it as a paste: never listed, reachable
    /// only by its id.
    pub async fn submit_paste(
        &self,
        body: &[u8],
        client: impl Into<ClientKey>,
    ) -> Result<Submitted, SubmitError> {
        let client = client.into();
        if body.len() > MAX_PASTE_BYTES {
            return Err(SubmitError::TooLarge {
                len: body.len(),
                max: MAX_PASTE_BYTES,
            });
        }
        if let Some(refused) = self.over_limits(client) {
            return Err(refused);
        }
        let now = self.inner.clock.now();
        let owned = body.to_vec();
        let mut analysis = self
            .inner
            .audits
            .run(move || audit::analyze_file(audit::ProvidedFile::whole(&owned), None))
            .await
            .map_err(|_| SubmitError::Busy {
                retry_after: BUSY_RETRY_AFTER,
            })?;
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
            grade: Some(analysis.grade),
            indexable: false,
            error: None,
        };
        Ok(self.submitted(&row, false))
    }
}
