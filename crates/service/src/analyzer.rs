//! Analyses run as tokio tasks, at most [`WORKERS`] at once per process.
//!
//! `audit::analyze_keeping_head` reads the page's head while its body streams in, on
//! `page`'s tokenizer, which is plain data (`Send`): the analysis runs on the service's own
//! runtime like any other task. The bound is kept here rather than left to the callers (the
//! job workers, also [`WORKERS`], and the scheduler), so that the schedule's analyses and
//! the people's never add up to more than [`WORKERS`] analyses in flight: each holds a permit
//! of one semaphore while it runs.

use std::sync::Arc;

use audit::{AnalysisError, Analyzed, Limits};
use fetch::Fetcher;
use tokio::sync::Semaphore;
use url::Url;

use crate::limits::WORKERS;

/// Why an analysis could not answer.
#[derive(Debug, thiserror::Error)]
pub enum AnalyzerError {
    /// The analysis task ended without an answer (it panicked, or the runtime is shutting
    /// down).
    #[error("the analysis did not finish")]
    Gone,
    /// The analysis could not run (see [`AnalysisError`]).
    #[error(transparent)]
    Analysis(#[from] Box<AnalysisError>),
}

/// Runs analyses with one fetcher and one set of limits, at most [`WORKERS`] at once.
#[derive(Clone, Debug)]
pub struct Analyzer {
    fetcher: Fetcher,
    limits: Limits,
    permits: Arc<Semaphore>,
}

impl Analyzer {
    /// Analyses using `fetcher` and `limits`.
    pub fn start(fetcher: Fetcher, limits: Limits) -> Analyzer {
        Analyzer {
            fetcher,
            limits,
            permits: Arc::new(Semaphore::new(WORKERS)),
        }
    }

    /// Analyse `url` in a task of its own once fewer than [`WORKERS`] others run (the
    /// report, and the page's head as read). A caller that stops waiting does not stop the
    /// analysis: it finishes and releases its permit, as it would on a thread of its own.
    pub async fn analyze(&self, url: &Url) -> Result<Analyzed, AnalyzerError> {
        let permit = Arc::clone(&self.permits)
            .acquire_owned()
            .await
            .map_err(|_| AnalyzerError::Gone)?;
        let (fetcher, limits, url) = (self.fetcher.clone(), self.limits.clone(), url.clone());
        // `spawn` asks for a `Send` future: the analysis, head reader included, is one.
        let task = tokio::spawn(async move {
            let result = audit::analyze_keeping_head(&fetcher, &url, &limits).await;
            drop(permit);
            result
        });
        task.await
            .map_err(|_| AnalyzerError::Gone)?
            .map_err(|e| AnalyzerError::Analysis(Box::new(e)))
    }
}
