//! The crawl store: the frontier, hosts, origins, sites, media, sitemaps and robots.txt cache
//! entries, in SQLite or PostgreSQL (`crates/db`), behind one type.
//!
//! One type serves both backends: every statement is written once (`$N` placeholders, `ON
//! CONFLICT`, `RETURNING` work on both) and run on whichever pool the store holds; where the
//! backends differ (claims: `FOR UPDATE SKIP LOCKED`), `crates/db` hides it. The same test
//! suite runs on both.
//!
//! ## The frontier lives here
//! Memory stays bounded however many URLs are queued: a process holds only the URLs it has
//! claimed. Work is claimed in two steps: a process leases *origins* ([`Store::claim_origins`],
//! a lease with expiry: a dead process's origins are taken over), then claims batches of an
//! origin's queued URLs ([`Store::claim_urls`]), which become `in_flight`. Taking an origin's
//! lease returns its `in_flight` URLs (left by a process that died) to the queue first, so
//! after `kill -9` every URL is either done or queued again.
//!
//! ## Group commit and crash safety
//! Results are committed in batches ([`Store::commit`]: URL outcomes, origin pacing, newly
//! found URLs and media in ONE transaction). The crawler flushes the WARC records of a batch
//! before committing it: a URL's state is committed only after its WARC record is written.

mod frontier;
mod ids;
mod outcomes;
mod pacing;
mod places;
mod schema;
mod side;

use std::time::Duration;

use db::{Db, DbError, DbTarget, Holder};

pub use frontier::{Batch, ClaimedUrl, Due, FetchFacts, NewUrl, OriginUpdate, Outcome};
pub use ids::{HostId, OriginId, SiteId, UrlId};
pub use places::{HostEvidence, HostInfo, OriginRow};
pub use schema::CRAWL_SCHEMA;
pub use side::{MediaRow, OriginStatus, Progress, SitemapRow, StatusReport};

/// How long an origin lease lasts unless renewed. The crawler renews every third of it.
pub const ORIGIN_LEASE: Duration = Duration::from_secs(30);

/// A URL's state in the frontier.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum UrlState {
    /// Waiting to be fetched.
    Queued,
    /// Claimed by a process, being fetched.
    InFlight,
    /// Fetched (any HTTP status); may become due again for a revisit.
    Fetched,
    /// Given up after too many failed attempts, with the last error.
    Failed,
    /// robots.txt disallows it.
    Disallowed,
    /// Not fetched for another reason (out of scope, not HTML, too large, ...), with the reason.
    Skipped,
}

impl UrlState {
    /// Every state, in display order.
    pub const ALL: [UrlState; 6] = [
        UrlState::Queued,
        UrlState::InFlight,
        UrlState::Fetched,
        UrlState::Failed,
        UrlState::Disallowed,
        UrlState::Skipped,
    ];

    /// The stored code.
    pub fn code(self) -> i16 {
        match self {
            UrlState::Queued => 0,
            UrlState::InFlight => 1,
            UrlState::Fetched => 2,
            UrlState::Failed => 3,
            UrlState::Disallowed => 4,
            UrlState::Skipped => 5,
        }
    }

    /// The state of a stored code.
    pub fn from_code(code: i16) -> Option<UrlState> {
        UrlState::ALL.into_iter().find(|s| s.code() == code)
    }

    /// Its name (`queued`, `in_flight`, ...).
    pub fn name(self) -> &'static str {
        match self {
            UrlState::Queued => "queued",
            UrlState::InFlight => "in_flight",
            UrlState::Fetched => "fetched",
            UrlState::Failed => "failed",
            UrlState::Disallowed => "disallowed",
            UrlState::Skipped => "skipped",
        }
    }
}

/// What a URL is fetched as.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum UrlKind {
    /// A page (JittyBot's rules, parsed for links).
    Page,
    /// An image or other media (JittyBot-Image's rules, never parsed).
    Media,
    /// A seed site's sitemaps, read from the robots.txt at this key: queued again at the
    /// start of every run and claimed before the site's pages (sitemaps first).
    Sitemaps,
}

/// Claim priority of a site's sitemaps entry (first).
pub const PRIORITY_SITEMAPS: i16 = 0;
/// Claim priority of URLs listed in a sitemap.
pub const PRIORITY_LISTED: i16 = 1;
/// Claim priority of seeds and links.
pub const PRIORITY_LINKED: i16 = 2;

impl UrlKind {
    /// The stored code.
    pub fn code(self) -> i16 {
        match self {
            UrlKind::Page => 0,
            UrlKind::Media => 1,
            UrlKind::Sitemaps => 2,
        }
    }

    /// The kind of a stored code (unknown codes read as pages).
    pub fn from_code(code: i16) -> UrlKind {
        match code {
            1 => UrlKind::Media,
            2 => UrlKind::Sitemaps,
            _ => UrlKind::Page,
        }
    }
}

/// The crawl's store.
#[derive(Clone, Debug)]
pub struct Store {
    db: Db,
    origin_lease: Duration,
}

impl Store {
    /// Open (creating and migrating) the store at `target`.
    pub async fn open(target: &DbTarget) -> Result<Store, DbError> {
        Ok(Store {
            db: Db::open(target, &[&CRAWL_SCHEMA, &crate::control::LEVERS_SCHEMA]).await?,
            origin_lease: ORIGIN_LEASE,
        })
    }

    /// The same store with origin leases of `lease` (default [`ORIGIN_LEASE`]): shorter hands
    /// a dead process's origins over sooner, at the cost of more renewals.
    pub fn with_origin_lease(mut self, lease: Duration) -> Store {
        self.origin_lease = lease.max(Duration::from_millis(100));
        self
    }

    /// How long an origin lease lasts unless renewed.
    pub fn origin_lease(&self) -> Duration {
        self.origin_lease
    }

    /// The underlying store (for leases and backend-specific needs).
    pub fn db(&self) -> &Db {
        &self.db
    }

    /// Close the connections.
    pub async fn close(&self) {
        self.db.close().await;
    }

    /// A fresh lease holder id for this process.
    pub fn holder() -> Holder {
        Holder::new()
    }
}

/// Row ids as an SQL list (`1,2,3`) for `IN (...)`: integers, written by us, so inlined
/// rather than bound (both backends cap the number of bound values per statement).
///
/// A statement whose text changes from call to call (such a list, or a multi-row `VALUES` of
/// however many rows a batch has) runs with `persistent(false)`: sqlx otherwise keeps every
/// distinct text as a prepared statement, up to 100 per connection, and SQLite's program
/// for a multi-row `VALUES` is tens of kilobytes. heaptrack showed 35 MB of such programs,
/// hardly ever run twice, in the peak heap of a 15,000-page crawl. A full chunk (always the
/// same text) stays prepared: re-preparing those cost 5 % CPU per page.
pub(crate) fn id_list<Id: std::fmt::Display>(ids: &[Id]) -> String {
    ids.iter().map(Id::to_string).collect::<Vec<_>>().join(",")
}
