//! Analyses run on threads of their own.
//!
//! `audit::analyze_with`'s future is not `Send`, and the cause is not small: the page's head
//! is read while its body streams in (`page::scan::HeadScanner`, so the download stops where
//! the head ends), and that scanner is html5ever's tokenizer, whose buffers are `StrTendril`s
//! with a non-atomic reference count (`!Send` by design). The scanner has to live across the
//! awaits between body chunks, so the future holds it. Making it `Send` would mean an
//! `unsafe impl` over html5ever's internals, buffering the whole page before tokenizing (losing
//! the early stop), or a tokenizer thread per page; instead, each of [`WORKERS`] threads runs a
//! single-threaded runtime that takes one analysis at a time from a shared queue, and callers
//! await the answer from any runtime. `icon::find_icon` reads the home page's icon links with
//! the same scanner, so `icons::FetchedIcons` runs it on a thread of its own.

use std::sync::Arc;

use audit::{AnalysisError, Analyzed, Limits};
use fetch::Fetcher;
use tokio::sync::{mpsc, oneshot, Mutex};
use url::Url;

use crate::limits::WORKERS;

type Reply = oneshot::Sender<Result<Analyzed, AnalysisError>>;

/// Why an analysis thread could not answer.
#[derive(Debug, thiserror::Error)]
pub enum AnalyzerError {
    /// The analysis threads are gone (the runtime could not start, or shutdown).
    #[error("the analysis threads are not running")]
    Gone,
    /// The analysis could not run (see [`AnalysisError`]).
    #[error(transparent)]
    Analysis(#[from] Box<AnalysisError>),
}

/// A handle to the analysis threads; they stop when every handle is dropped.
#[derive(Clone, Debug)]
pub struct Analyzer {
    tx: mpsc::Sender<(Url, Reply)>,
}

impl Analyzer {
    /// Start [`WORKERS`] analysis threads using `fetcher` and `limits`.
    pub fn start(fetcher: Fetcher, limits: Limits) -> Analyzer {
        let (tx, rx) = mpsc::channel::<(Url, Reply)>(WORKERS);
        let rx = Arc::new(Mutex::new(rx));
        for n in 0..WORKERS {
            let (rx, fetcher, limits) = (rx.clone(), fetcher.clone(), limits.clone());
            let spawned = std::thread::Builder::new()
                .name(format!("analysis-{n}"))
                .spawn(move || run_thread(&rx, &fetcher, &limits));
            if let Err(error) = spawned {
                tracing::error!(error = %error, "cannot start an analysis thread");
            }
        }
        Analyzer { tx }
    }

    /// Analyse `url` on one of the threads (the report, and the page's head as read).
    pub async fn analyze(&self, url: &Url) -> Result<Analyzed, AnalyzerError> {
        let (reply, answer) = oneshot::channel();
        self.tx
            .send((url.clone(), reply))
            .await
            .map_err(|_| AnalyzerError::Gone)?;
        answer
            .await
            .map_err(|_| AnalyzerError::Gone)?
            .map_err(|e| AnalyzerError::Analysis(Box::new(e)))
    }
}

fn run_thread(rx: &Mutex<mpsc::Receiver<(Url, Reply)>>, fetcher: &Fetcher, limits: &Limits) {
    let runtime = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime,
        Err(error) => {
            tracing::error!(error = %error, "cannot start an analysis runtime");
            return;
        }
    };
    runtime.block_on(async {
        loop {
            let task = rx.lock().await.recv().await;
            let Some((url, reply)) = task else {
                break;
            };
            let result = audit::analyze_keeping_head(fetcher, &url, limits).await;
            // The caller may have given up waiting (shutdown): nothing to do then.
            let _ = reply.send(result);
        }
    });
}
