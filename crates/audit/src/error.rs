//! Why an analysis could not run at all.

use url::Url;

/// What kind of failure an [`AnalysisError`] is, for callers that branch on it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum AnalysisErrorKind {
    /// The URL cannot be analysed (see [`AnalysisError::InvalidTarget`]).
    InvalidTarget,
}

/// Why an analysis could not run at all. (Everything that goes wrong once it runs, such as
/// an unreachable site, is part of the report instead.)
#[derive(Debug, Clone, thiserror::Error)]
pub enum AnalysisError {
    /// The URL is not an absolute `http`/`https` URL with a host, so it has no robots.txt.
    #[error("{url} cannot be analysed")]
    InvalidTarget {
        /// The URL given.
        url: Url,
        /// Why the fetcher cannot scope it.
        #[source]
        source: fetch::FetchError,
    },
}

impl AnalysisError {
    /// What kind of failure this is.
    pub fn kind(&self) -> AnalysisErrorKind {
        match self {
            AnalysisError::InvalidTarget { .. } => AnalysisErrorKind::InvalidTarget,
        }
    }
}
