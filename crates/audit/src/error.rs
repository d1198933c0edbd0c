//! Why an analysis could not run at all, and why one of its requests failed.

use std::time::Duration;

use fetch::{ErrorKind, FetchError};
use url::Url;

/// What kind of failure an [`AnalysisError`] is, for callers that branch on it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum AnalysisErrorKind {
    /// The URL cannot be analysed (see [`AnalysisError::InvalidTarget`]).
    InvalidTarget,
    /// The site was never contacted (see [`AnalysisError::NotContacted`]).
    NotContacted,
    /// No time to start (see [`AnalysisError::NoTime`]).
    NoTime,
}

/// Why an analysis could not run at all. (Everything that goes wrong once it runs, such as
/// an unreachable site, is part of the report instead.) No report, so no grade, comes with
/// these: they say nothing about the site.
#[derive(Debug, Clone, thiserror::Error)]
pub enum AnalysisError {
    /// The URL is not an absolute `http`/`https` URL with a host, so it has no robots.txt.
    #[error("{url} cannot be analysed")]
    InvalidTarget {
        /// The URL given.
        url: Url,
        /// Why the fetcher cannot scope it.
        #[source]
        source: FetchError,
    },
    /// The address policy refused the site's own address (a loopback, private or otherwise
    /// non-public address without the opt-in): no request was sent, so there is nothing to
    /// grade. (A site that answers and redirects robots.txt to such an address was contacted:
    /// its robots.txt is unreachable, and that is graded.)
    #[error("{url} was not contacted")]
    NotContacted {
        /// The robots.txt URL that would have been requested first.
        url: Url,
        /// The refusal.
        #[source]
        source: FetchError,
    },
    /// The analysis budget left no time to request robots.txt (a budget of zero).
    #[error("the analysis budget of {budget:?} leaves no time to request {url}")]
    NoTime {
        /// The robots.txt URL.
        url: Url,
        /// The budget in effect.
        budget: Duration,
    },
}

impl AnalysisError {
    /// What kind of failure this is.
    pub fn kind(&self) -> AnalysisErrorKind {
        match self {
            AnalysisError::InvalidTarget { .. } => AnalysisErrorKind::InvalidTarget,
            AnalysisError::NotContacted { .. } => AnalysisErrorKind::NotContacted,
            AnalysisError::NoTime { .. } => AnalysisErrorKind::NoTime,
        }
    }

    /// Whether trying again later can help: never for these, which depend on the URL, the
    /// address policy and the limits, not on the site's state.
    pub fn is_retryable(&self) -> bool {
        false
    }
}

/// One request of an analysis that failed: the URL and the fetcher's error.
#[derive(Debug, Clone, thiserror::Error)]
#[error("{url}: request failed")]
pub struct RequestFailed {
    /// The URL whose request failed.
    pub url: Url,
    /// Why.
    #[source]
    pub source: FetchError,
}

impl RequestFailed {
    /// The failure's kind, as stored in reports.
    pub fn kind(&self) -> ErrorKind {
        self.source.kind()
    }

    /// Whether trying again later can help.
    pub fn is_retryable(&self) -> bool {
        self.source.is_retryable()
    }

    /// One line with every cause, as stored in reports.
    pub fn message(&self) -> String {
        self.source.full_message()
    }
}
