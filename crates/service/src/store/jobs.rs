//! The analysis queue: jobs claimed under a lease (`FOR UPDATE SKIP LOCKED` on PostgreSQL,
//! one write transaction on SQLite), one site at a time.
//!
//! A worker takes a job and then its site's named lease (`service.site:<site>`): the claim
//! skips jobs whose site is leased, and the site lease itself is taken atomically, so two
//! workers (in one process or several) never analyse one site at once. A job left running by
//! a dead process keeps its lease until it expires, then is claimed again: a restart loses
//! nothing queued.

use db::{sqlx, Holder, Lease, LeaseTable};
use jiff::Timestamp;
use url::Url;

use super::Store;
use crate::error::{q, ServiceError};
use crate::ids::ReportId;
use std::time::Duration;

use crate::limits::{JOB_LEASE, MAX_RUNNING_PER_CLIENT};

const JOBS: LeaseTable = LeaseTable {
    table: "service_jobs",
    key: "job_id",
};

/// Jobs whose site is not being analysed by anyone (`$4` is now).
const SITE_FREE: &str = "NOT EXISTS (SELECT 1 FROM db_leases l \
     WHERE l.name = 'service.site:' || service_jobs.site \
     AND l.lease_holder IS NOT NULL AND l.lease_until > $4)";

/// Jobs of one client running now (leased), for the job `service_jobs` of the claim (`$4` is
/// now).
const RUNNING_OF_CLIENT: &str = "(SELECT COUNT(*) FROM service_jobs r \
     WHERE r.client = service_jobs.client \
     AND r.lease_holder IS NOT NULL AND r.lease_until > $4)";

/// The named lease of one site.
pub(crate) fn site_lease(site: &str) -> String {
    format!("service.site:{site}")
}

/// A job taken by a worker.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Job {
    /// Its key.
    pub job_id: i64,
    /// The report it fills.
    pub report: ReportId,
    /// The URL to analyse.
    pub url: Url,
    /// Its site (see [`crate::ids::site_of`]).
    pub site: String,
    /// How many times it was started, this time included.
    pub attempts: i64,
}

impl Store {
    /// Take a job whose site is free, with its site's lease, for `holder`, for [`JOB_LEASE`].
    /// See [`Store::claim_job_for`].
    pub async fn claim_job(
        &self,
        holder: &Holder,
        now: Timestamp,
    ) -> Result<Option<Job>, ServiceError> {
        self.claim_job_for(holder, now, JOB_LEASE).await
    }

    /// Take a job whose site is free, with its site's lease, for `holder`, for `ttl`: clients
    /// in turn. Jobs of a client that already has [`MAX_RUNNING_PER_CLIENT`] running wait;
    /// among the others, the client with the fewest running goes first (the schedule's jobs,
    /// of no client, count none), then the oldest job. `None` when there is none (or another
    /// worker took the site in between: try again later).
    pub async fn claim_job_for(
        &self,
        holder: &Holder,
        now: Timestamp,
        ttl: Duration,
    ) -> Result<Option<Job>, ServiceError> {
        let lease = Lease { holder, now, ttl };
        let ready = format!(
            "{SITE_FREE} AND (client IS NULL OR {RUNNING_OF_CLIENT} < {MAX_RUNNING_PER_CLIENT})"
        );
        let order = format!(
            "CASE WHEN client IS NULL THEN 0 ELSE {RUNNING_OF_CLIENT} END, queued_at, job_id"
        );
        let keys = self.db.claim(JOBS, &ready, &order, 1, &lease).await?;
        let Some(&key) = keys.first() else {
            return Ok(None);
        };
        let sql = "UPDATE service_jobs SET attempts = attempts + 1 WHERE job_id = $1 \
                   RETURNING report_id, url, site, attempts";
        let row: Option<(String, String, String, i64)> = db::with_pool!(&self.db, pool =>
            sqlx::query_as(sql).bind(key).fetch_optional(pool).await)
        .map_err(q("read job"))?;
        let Some((report, url, site, attempts)) = row else {
            return Ok(None);
        };
        let (Ok(report), Ok(url)) = (report.parse::<ReportId>(), Url::parse(&url)) else {
            // Not written by this service: drop it rather than retry it forever.
            self.delete_job(key).await?;
            return Ok(None);
        };
        if !self.db.try_lease(&site_lease(&site), &lease).await? {
            self.db.release(JOBS, &[key], holder).await?;
            return Ok(None);
        }
        Ok(Some(Job {
            job_id: key,
            report,
            url,
            site,
            attempts,
        }))
    }

    /// Extend `holder`'s leases on `job` and its site to `now + ttl` (a long analysis keeps
    /// both): false when the job's lease was lost (it expired and another worker took it).
    pub async fn renew_job(
        &self,
        job: &Job,
        holder: &Holder,
        now: Timestamp,
        ttl: Duration,
    ) -> Result<bool, ServiceError> {
        let lease = Lease { holder, now, ttl };
        let kept = self.db.renew(JOBS, &[job.job_id], &lease).await?;
        let site = self.db.try_lease(&site_lease(&job.site), &lease).await?;
        Ok(!kept.is_empty() && site)
    }

    /// A job is done (its report stored): remove it and free its site.
    pub async fn finish_job(&self, job: &Job, holder: &Holder) -> Result<(), ServiceError> {
        self.delete_job(job.job_id).await?;
        self.db
            .release_lease(&site_lease(&job.site), holder)
            .await?;
        Ok(())
    }

    async fn delete_job(&self, key: i64) -> Result<(), ServiceError> {
        let sql = "DELETE FROM service_jobs WHERE job_id = $1";
        db::with_pool!(&self.db, pool => sqlx::query(sql).bind(key).execute(pool).await.map(drop))
            .map_err(q("delete job"))?;
        Ok(())
    }

    /// Jobs waiting or running (`/api/health`).
    pub async fn job_count(&self) -> Result<i64, ServiceError> {
        db::with_pool!(&self.db, pool => sqlx::query_scalar("SELECT COUNT(*) FROM service_jobs").fetch_one(pool).await)
            .map_err(q("count jobs"))
    }

    /// Take `site`'s lease outside the queue (the schedule): false when it is being analysed.
    pub async fn lease_site(
        &self,
        site: &str,
        holder: &Holder,
        now: Timestamp,
    ) -> Result<bool, ServiceError> {
        let lease = Lease {
            holder,
            now,
            ttl: JOB_LEASE,
        };
        Ok(self.db.try_lease(&site_lease(site), &lease).await?)
    }

    /// Free `site`'s lease.
    pub async fn release_site(&self, site: &str, holder: &Holder) -> Result<(), ServiceError> {
        Ok(self.db.release_lease(&site_lease(site), holder).await?)
    }

    /// The time a queued job was queued (tests, health): the oldest waiting.
    pub async fn oldest_job(&self) -> Result<Option<i64>, ServiceError> {
        db::with_pool!(&self.db, pool => sqlx::query_scalar("SELECT MIN(queued_at) FROM service_jobs").fetch_one(pool).await)
            .map_err(q("oldest job"))
    }
}
