//! The service's store: typed methods over [`db::Db`] with the tables of [`crate::schema::SCHEMA`].
//!
//! What is stored is the bot page's list and nothing else: per analysis the report document
//! (`audit::Analysis`: robots.txt status, size, final address and redirects, X-Robots-Tag of
//! robots.txt and of the page, the page's robots meta tags and status, the sitemap answers,
//! findings, score with the scoring version, the time) with robots.txt's bytes in their own
//! binary column; per domain its icon and whether it is kept off the ranking.

use db::{Db, DbTarget};
use jiff::Timestamp;

use crate::error::ServiceError;

mod domains;
mod jobs;
mod pages;
mod reports;
pub mod retention;
mod schedule;
mod summaries;

pub use crate::model::{ReportRow, ReportState, StoredReport};
pub use domains::{domain_of_name, DomainIcon, Removed, SiteEntry};
pub use jobs::Job;
pub use reports::Queued;
pub use schedule::{Backoff, DueUrl, LastOutcome, LastReport, ScheduleRow};

/// The service's store (cheap to clone: a connection pool).
#[derive(Clone, Debug)]
pub struct Store {
    db: Db,
}

impl Store {
    /// Open (creating a SQLite file on first use) and migrate the store at `target`.
    pub async fn open(target: &DbTarget) -> Result<Store, ServiceError> {
        let db = Db::open(target, &[&crate::schema::SCHEMA]).await?;
        Ok(Store { db })
    }

    /// The underlying store (leases).
    pub fn db(&self) -> &Db {
        &self.db
    }

    /// Close every connection.
    pub async fn close(&self) {
        self.db.close().await;
    }

    /// Whether the store answers (`/api/health`).
    pub async fn ping(&self) -> Result<(), ServiceError> {
        db::with_pool!(&self.db, pool => db::sqlx::query("SELECT 1").execute(pool).await.map(drop))
            .map_err(crate::error::q("ping"))
    }
}

/// A stored time.
pub(crate) fn ms(t: Timestamp) -> i64 {
    db::millis(t)
}

/// A stored time, read back.
pub(crate) fn ts(ms: i64) -> Timestamp {
    db::from_millis(ms)
}

/// A duration in stored milliseconds.
pub(crate) fn dur_ms(d: std::time::Duration) -> i64 {
    i64::try_from(d.as_millis()).unwrap_or(i64::MAX)
}
