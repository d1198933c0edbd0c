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
use crate::limits::JOB_LEASE;

const JOBS: LeaseTable = LeaseTable {
    table: "service_jobs",
    key: "job_id",
};

/// Jobs whose site is not being analysed by anyone (`$4` is now).
const SITE_FREE: &str = "NOT EXISTS (SELECT 1 FROM db_leases l \
     WHERE l.name = 'service.site:' || service_jobs.site \
     AND l.lease_holder IS NOT NULL AND l.lease_until > $4)";

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
    /// Take the oldest job whose site is free, with its site's lease, for `holder`. `None`
    /// when there is none (or another worker took the site in between: try again later).
    pub async fn claim_job(
        &self,
        holder: &Holder,
        now: Timestamp,
    ) -> Result<Option<Job>, ServiceError> {
        let lease = Lease {
            holder,
            now,
            ttl: JOB_LEASE,
        };
        let keys = self
            .db
            .claim(JOBS, SITE_FREE, "queued_at, job_id", 1, &lease)
            .await?;
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
