//! The analysis workers: take queued jobs, run `audit::analyze_with` on the fetcher's polite
//! pipeline, store the report.

use std::time::Duration;

use audit::{AnalysisError, Analyzed};

use crate::analyzer::AnalyzerError;
use db::Holder;
use tokio::sync::watch;
use url::Url;

use crate::error::ServiceError;
use crate::limits::{JOB_LEASE_MARGIN, JOB_LEASE_RENEW, MAX_JOB_ATTEMPTS, WORKER_POLL};
use crate::service::Service;
use crate::store::Job;

/// Why an analysis did not run, in words stored with the failed report.
pub fn failure_message(error: &AnalyzerError) -> String {
    let AnalyzerError::Analysis(error) = error else {
        return error.to_string();
    };
    let cause = match error.as_ref() {
        AnalysisError::InvalidTarget { source, .. }
        | AnalysisError::NotContacted { source, .. } => source.full_message(),
        AnalysisError::NoTime { .. } => String::new(),
    };
    if cause.is_empty() {
        error.to_string()
    } else {
        format!("{error}: {cause}")
    }
}

impl Service {
    /// Run one analysis of `url` with the service's fetcher and limits (on the analysis
    /// threads): the report, and the page's head as read.
    pub async fn analyze(&self, url: &Url) -> Result<Analyzed, AnalyzerError> {
        self.inner.analyzer.analyze(url).await
    }

    /// How long a worker's job lease lasts: always longer than the analysis's deadline
    /// (the configured budget plus [`JOB_LEASE_MARGIN`]), and renewed while it runs.
    pub fn job_lease(&self) -> Duration {
        self.inner.config.limits.analysis_budget + JOB_LEASE_MARGIN
    }

    /// Take and run one queued job, if there is one whose site is free; true when one ran.
    pub async fn run_one_job(&self, holder: &Holder) -> Result<bool, ServiceError> {
        let store = &self.inner.store;
        let now = self.inner.clock.now();
        let Some(job) = store.claim_job_for(holder, now, self.job_lease()).await? else {
            return Ok(false);
        };
        tokio::select! {
            ran = self.run_job(&job) => ran?,
            () = self.keep_lease(&job, holder) => {
                // Another worker has the job now: leave it to that one.
                tracing::warn!(id = %job.report, "job lease lost");
                return Ok(true);
            }
        }
        store.finish_job(&job, holder).await?;
        Ok(true)
    }

    /// Renew `job`'s leases every [`JOB_LEASE_RENEW`]; returns only when one was lost (a
    /// store error is retried at the next turn: the lease outlasts several).
    async fn keep_lease(&self, job: &Job, holder: &Holder) {
        loop {
            tokio::time::sleep(JOB_LEASE_RENEW).await;
            let now = self.inner.clock.now();
            let renewed = self
                .inner
                .store
                .renew_job(job, holder, now, self.job_lease());
            match renewed.await {
                Ok(true) => {}
                Ok(false) => return,
                Err(error) => tracing::warn!(error = %error, "cannot renew a job's lease"),
            }
        }
    }

    async fn run_job(&self, job: &Job) -> Result<(), ServiceError> {
        let store = &self.inner.store;
        if job.attempts > MAX_JOB_ATTEMPTS {
            let message = format!("given up after {MAX_JOB_ATTEMPTS} attempts");
            return store.fail_report(&job.report, &message).await;
        }
        store.set_running(&job.report).await?;
        match self.analyze(&job.url).await {
            Ok(analyzed) => {
                let analysis = &analyzed.analysis;
                tracing::info!(id = %job.report, score = analysis.score, "report stored");
                store.finish_report(&job.report, analysis).await?;
                // The site's icon from what this analysis read, as after a scheduled check;
                // a failure to store it does not undo the report.
                if let Err(error) = self.icon_after_analysis(&job.url, &analyzed).await {
                    tracing::warn!(id = %job.report, error = %error, "icon not stored");
                }
                Ok(())
            }
            Err(error) => {
                tracing::info!(id = %job.report, error = %error, "analysis failed");
                store
                    .fail_report(&job.report, &failure_message(&error))
                    .await
            }
        }
    }

    /// Run a worker until `stop` turns true: jobs queued by this process wake it at once,
    /// jobs queued by others are found within [`WORKER_POLL`].
    pub async fn worker(&self, mut stop: watch::Receiver<bool>) {
        let holder = Holder::new();
        while !*stop.borrow() {
            match self.run_one_job(&holder).await {
                Ok(true) => continue,
                Ok(false) => {}
                Err(error) => tracing::warn!(error = %error, "worker: store error"),
            }
            tokio::select! {
                _ = self.inner.wake.notified() => {}
                _ = tokio::time::sleep(WORKER_POLL) => {}
                changed = stop.changed() => if changed.is_err() { break },
            }
        }
    }
}
