//! What the pages read and submit: the [`SiteData`] trait and its typed values.
//!
//! The site renders; the store (the service's handle, or [`crate::memory::MemoryData`] in
//! tests) keeps reports and runs analyses. The trait holds exactly the reads and submissions
//! the pages need, so the two can be built and tested apart.

use std::fmt;
use std::future::Future;
use std::net::IpAddr;
use std::time::Duration;

use audit::{Analysis, Grade};
use jiff::Timestamp;
use serde::{Deserialize, Serialize};
use url::Url;

use crate::stats::Stats;

/// The longest id accepted in an address; anything longer is not an id of ours.
pub const MAX_ID_CHARS: usize = 64;

/// The id of a report or a paste, as it appears in addresses: 1 to [`MAX_ID_CHARS`] ASCII
/// letters, digits, `-` or `_`. Checked before any lookup, so a hostile path never reaches
/// the store.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub struct ReportId(String);

impl ReportId {
    /// The id, if `text` has the shape of one.
    pub fn parse(text: &str) -> Option<ReportId> {
        let ok = !text.is_empty()
            && text.len() <= MAX_ID_CHARS
            && text
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_');
        ok.then(|| ReportId(text.to_owned()))
    }

    /// The id as text.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for ReportId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// Where an analysis stands.
#[derive(Debug, Clone, PartialEq)]
pub enum ReportState {
    /// Waiting for its turn.
    Queued,
    /// Being fetched and audited.
    Running,
    /// Finished: the full report.
    Done(Box<Analysis>),
    /// The analysis could not run (a refused address, an unreachable site...): why, in plain
    /// words, as the store recorded it.
    Failed(String),
}

/// One report as stored, with its place.
#[derive(Debug, Clone, PartialEq)]
pub struct StoredReport {
    /// Its id.
    pub id: ReportId,
    /// The domain page it belongs to (lowercase host).
    pub domain: String,
    /// The URL analysed.
    pub url: Url,
    /// When it was asked for.
    pub created_at: Timestamp,
    /// Where it stands.
    pub state: ReportState,
}

/// What a report address leads to.
#[derive(Debug, Clone, PartialEq)]
pub enum ReportLookup {
    /// The report.
    Found(StoredReport),
    /// It was folded into its domain's monthly summary: the domain page has what is left.
    Folded,
    /// No such report of this domain.
    Missing,
}

/// One line of a domain page: a finished report.
#[derive(Debug, Clone, PartialEq)]
pub struct ReportSummary {
    /// Its id.
    pub id: ReportId,
    /// The URL analysed.
    pub url: Url,
    /// When it was analysed.
    pub analysed_at: Timestamp,
    /// Its score.
    pub score: u8,
    /// Its grade.
    pub grade: Grade,
    /// Whether search engines may index it (see [`crate::indexing`]), as decided by the
    /// newest report of its URL.
    pub indexable: bool,
}

/// A calendar month of a domain's reports, folded.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MonthlySummary {
    /// The year.
    pub year: i16,
    /// The month, 1 to 12.
    pub month: i8,
    /// How many reports were folded.
    pub reports: u32,
    /// How many distinct URLs they covered.
    pub urls: u32,
    /// The best score.
    pub best: u8,
    /// The average score.
    pub average: f64,
    /// The lowest score.
    pub lowest: u8,
}

/// Everything a domain page shows.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct DomainHistory {
    /// Finished reports, newest first.
    pub reports: Vec<ReportSummary>,
    /// Monthly summaries of folded reports, newest first.
    pub months: Vec<MonthlySummary>,
    /// Whether the store holds an icon for the domain.
    pub has_icon: bool,
}

/// The newest finished report of one URL: what the ranking, the totals and the sitemap are
/// made of.
#[derive(Debug, Clone, PartialEq)]
pub struct CurrentReport {
    /// The domain.
    pub domain: String,
    /// The report's id.
    pub id: ReportId,
    /// The URL.
    pub url: Url,
    /// When it was analysed.
    pub analysed_at: Timestamp,
    /// Its score.
    pub score: u8,
    /// Whether search engines may index it ([`crate::indexing::Indexing::indexable`]).
    pub indexable: bool,
    /// Whether its domain is kept off the ranking (data removal with `--keep-off-ranking`).
    pub domain_off_ranking: bool,
    /// Whether the store holds an icon for the domain.
    pub has_icon: bool,
}

/// Where a new analysis can be followed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Submitted {
    /// The report's id.
    pub id: ReportId,
    /// Its domain.
    pub domain: String,
}

/// Why a submission was not accepted, in words for the person who made it.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SubmitError {
    /// The input was refused (not an http(s) URL, a private address, too long...).
    #[error("{0}")]
    Invalid(String),
    /// Too many submissions from this address: try again after the delay.
    #[error("too many analyses asked for from your address; try again in {} s", retry_after.as_secs())]
    TooMany {
        /// How long to wait.
        retry_after: Duration,
    },
    /// The store could not take it.
    #[error("the service could not take the request: {0}")]
    Unavailable(String),
}

/// A store failure while reading.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("the store could not be read: {0}")]
pub struct DataError(pub String);

/// What the pages need from the store. Implemented over the service's store by
/// `service::ServiceData` and in memory by `crate::memory::MemoryData` (feature `testing`).
///
/// Every method is a read or one submission; none blocks for an analysis to finish.
pub trait SiteData: Send + Sync + 'static {
    /// Queues an analysis of `url` asked for from `client`.
    fn submit_url(
        &self,
        url: &str,
        client: IpAddr,
    ) -> impl Future<Output = Result<Submitted, SubmitError>> + Send;

    /// Audits a pasted or uploaded robots.txt (at most [`crate::MAX_PASTE_BYTES`]); its
    /// report is reachable only at the id returned.
    fn submit_paste(
        &self,
        body: Vec<u8>,
        client: IpAddr,
    ) -> impl Future<Output = Result<ReportId, SubmitError>> + Send;

    /// The report `id` of `domain`.
    fn report(
        &self,
        domain: &str,
        id: &ReportId,
    ) -> impl Future<Output = Result<ReportLookup, DataError>> + Send;

    /// The paste `id`, if it exists.
    fn paste(
        &self,
        id: &ReportId,
    ) -> impl Future<Output = Result<Option<StoredReport>, DataError>> + Send;

    /// The newest finished report of `url` analysed before `before`.
    fn previous_report(
        &self,
        url: &Url,
        before: Timestamp,
    ) -> impl Future<Output = Result<Option<Analysis>, DataError>> + Send;

    /// Whether the newest finished report of `url` lets search engines index it (older
    /// reports follow the newest one); `None` when there is none.
    fn url_indexable(
        &self,
        url: &Url,
    ) -> impl Future<Output = Result<Option<bool>, DataError>> + Send;

    /// A domain's reports and summaries; `None` when the store knows nothing of it.
    fn domain(
        &self,
        domain: &str,
    ) -> impl Future<Output = Result<Option<DomainHistory>, DataError>> + Send;

    /// The newest finished report of every published URL (no pastes).
    fn current_reports(&self)
        -> impl Future<Output = Result<Vec<CurrentReport>, DataError>> + Send;

    /// The aggregates of `/stats`.
    fn stats(&self) -> impl Future<Output = Result<Stats, DataError>> + Send;

    /// The domain's icon, a PNG of at most 64×64.
    fn icon(&self, domain: &str)
        -> impl Future<Output = Result<Option<Vec<u8>>, DataError>> + Send;
}
