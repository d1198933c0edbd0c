//! The service's store: typed methods over [`db::Db`] with the tables of [`crate::SCHEMA`].
//!
//! What is stored is the bot page's list and nothing else: per analysis the report document
//! (`audit::Analysis`: robots.txt status, size, final address and redirects, X-Robots-Tag of
//! robots.txt and of the page, the page's robots meta tags and status, the sitemap answers,
//! findings, score with the scoring version, the time) with robots.txt's bytes in their own
//! binary column; per domain its icon and whether it is kept off the ranking.

use db::{Db, DbTarget};
use jiff::Timestamp;
use serde::Serialize;
use url::Url;

use crate::error::ServiceError;
use crate::ids::ReportId;

pub mod codec;
mod domains;
mod jobs;
mod pages;
mod reports;
pub mod retention;
mod schedule;

pub use domains::{DomainIcon, Removed, SiteEntry};
pub use jobs::Job;
pub use pages::CurrentRow;
pub use reports::{RankingRow, StoredReport};
pub use schedule::{Backoff, DueUrl};

/// Where a report is in its life.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ReportState {
    /// Waiting for a worker.
    Queued,
    /// Being analysed.
    Running,
    /// Finished: the report is there.
    Done,
    /// The analysis could not run (the error says why).
    Failed,
}

impl ReportState {
    /// The stored name.
    pub fn as_str(self) -> &'static str {
        match self {
            ReportState::Queued => "queued",
            ReportState::Running => "running",
            ReportState::Done => "done",
            ReportState::Failed => "failed",
        }
    }

    fn parse(text: &str) -> ReportState {
        match text {
            "queued" => ReportState::Queued,
            "running" => ReportState::Running,
            "done" => ReportState::Done,
            // Unknown states (a newer build) read as failed: nothing to show.
            _ => ReportState::Failed,
        }
    }
}

/// One report's columns (everything but the document and the robots.txt bytes).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ReportRow {
    /// Its unguessable id.
    pub id: ReportId,
    /// The registrable domain (none for a paste).
    pub domain: Option<String>,
    /// The URL analysed (none for a paste given without one).
    pub url: Option<Url>,
    /// A pasted or uploaded file: never listed, ranked or published.
    pub is_paste: bool,
    /// Queued by the schedule rather than by a person.
    pub scheduled: bool,
    /// Where it is in its life.
    pub state: ReportState,
    /// When it was asked for.
    pub created_at: Timestamp,
    /// When the analysis ran (done reports).
    pub analysed_at: Option<Timestamp>,
    /// The score, 0–100 (done reports).
    pub score: Option<u8>,
    /// The grade letter (done reports).
    pub grade: Option<String>,
    /// Whether the page may be indexed and ranked (see [`crate::indexing`]).
    pub indexable: bool,
    /// Why the analysis could not run (failed reports).
    pub error: Option<String>,
}

/// The service's store (cheap to clone: a connection pool).
#[derive(Clone, Debug)]
pub struct Store {
    db: Db,
}

impl Store {
    /// Open (creating a SQLite file on first use) and migrate the store at `target`.
    pub async fn open(target: &DbTarget) -> Result<Store, ServiceError> {
        let db = Db::open(target, &[&crate::SCHEMA]).await?;
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
