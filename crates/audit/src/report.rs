//! The report of one analysis: what the bot asked, what it got, what it found.
//!
//! The report is a versioned contract: the service stores it for years and must load every
//! report it ever wrote. [`REPORT_VERSION`] names the shape; a field added later must load as
//! absent from older reports (`#[serde(default)]`), and a check retired later still loads (see
//! [`crate::CheckId::Unknown`]). `tests/stored_report.rs` loads a committed report of each
//! version.

use fetch::ErrorKind;
use http::StatusCode;
use jiff::Timestamp;
use page::directives::PageDirectives;
use page::head::MetaTag;
use std::time::Duration;

use serde::{Deserialize, Serialize};
use url::Url;

use crate::collect::Omitted;
use crate::cost::LimitsReached;
use crate::crawlers::CrawlerAccess;
use crate::file::FileSummary;
use crate::finding::Finding;
use crate::score::{Grade, Score};

/// The version of the report's shape, stored in every report ([`Analysis::report_version`]).
/// Bumped when a change could stop an older reader from reading a new report; every version
/// ever written stays loadable.
pub const REPORT_VERSION: u32 = 1;

/// What robots.txt's answer means for the bot.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RobotsStatus {
    /// 2xx: rules apply.
    Rules,
    /// 4xx except 429: no rules.
    NoFile,
    /// 5xx, network failure, too many redirects: everything disallowed.
    Unreachable,
    /// 429: everything disallowed, back off.
    RateLimited,
    /// Not fetched: a pasted or uploaded file.
    Provided,
}

impl From<fetch::RobotsOutcome> for RobotsStatus {
    /// The fetcher's status table, in the report's words. A fresh fetch sends no validators,
    /// so it never gets `NotModified`; were it to, nothing usable came back.
    fn from(outcome: fetch::RobotsOutcome) -> RobotsStatus {
        match outcome {
            fetch::RobotsOutcome::Rules => RobotsStatus::Rules,
            fetch::RobotsOutcome::NoFile => RobotsStatus::NoFile,
            fetch::RobotsOutcome::BackingOff => RobotsStatus::RateLimited,
            fetch::RobotsOutcome::Unreachable | fetch::RobotsOutcome::NotModified => {
                RobotsStatus::Unreachable
            }
        }
    }
}

impl RobotsReport {
    /// The body exactly as received (up to [`fetch::ROBOTS_TXT_MAX_BYTES`]): the raw bytes
    /// when they are not valid UTF-8, else `body`'s.
    pub fn body_bytes(&self) -> &[u8] {
        self.raw_body.as_deref().unwrap_or(self.body.as_bytes())
    }

    /// Set the body from bytes as received: `body` their text (lossy when they are not UTF-8),
    /// `raw_body` the bytes themselves when that text is not exact.
    pub fn set_body_bytes(&mut self, bytes: &[u8]) {
        (self.body, self.body_is_utf8, self.raw_body) = body_fields(bytes);
    }
}

/// `body`, `body_is_utf8` and `raw_body` of a [`RobotsReport`] from the bytes as received:
/// the one place they are derived (the UTF-8 check runs once).
pub(crate) fn body_fields(bytes: &[u8]) -> (String, bool, Option<Vec<u8>>) {
    match std::str::from_utf8(bytes) {
        Ok(text) => (text.to_owned(), true, None),
        Err(_) => (
            String::from_utf8_lossy(bytes).into_owned(),
            false,
            Some(bytes.to_vec()),
        ),
    }
}

/// One redirect followed (stored in the report's own shape, whatever the fetcher's becomes).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Hop {
    /// The URL requested.
    pub url: Url,
    /// Its status.
    #[serde(with = "fetch::serde_status")]
    pub status: StatusCode,
    /// Where it pointed, as sent (it may be relative).
    pub location: String,
}

/// The robots.txt part of the report.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RobotsReport {
    /// The robots.txt URL (none for a provided file without a page URL).
    pub url: Option<Url>,
    /// Whether it was requested (false for a provided file).
    pub requested: bool,
    /// What the answer means.
    pub outcome: RobotsStatus,
    /// The final status, if a response arrived.
    #[serde(with = "fetch::serde_status::option")]
    pub status: Option<StatusCode>,
    /// The final URL, if a response arrived.
    pub final_url: Option<Url>,
    /// The redirects followed.
    pub redirects: Vec<Hop>,
    /// The `Content-Type`.
    pub content_type: Option<String>,
    /// Bytes of the body kept (at most [`fetch::ROBOTS_TXT_MAX_BYTES`]).
    pub size: usize,
    /// Whether the body was longer than the limit and was cut.
    pub truncated: bool,
    /// The body as text (invalid UTF-8 replaced; see `body_is_utf8`).
    pub body: String,
    /// Whether the body was valid UTF-8.
    pub body_is_utf8: bool,
    /// The body's bytes as received when they are not valid UTF-8 (`body` is then a lossy
    /// reading of them); `None` when `body` is exact. Not serialised: a store keeps the bytes
    /// in a column of their own ([`RobotsReport::body_bytes`]) and puts them back here.
    #[serde(skip)]
    pub raw_body: Option<Vec<u8>>,
    /// Every `X-Robots-Tag` header of the response.
    pub x_robots_tag: Vec<String>,
    /// Why the request failed, if it did.
    pub error: Option<String>,
    /// What kind of failure [`RobotsReport::error`] is (absent from reports before it was
    /// recorded).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error_kind: Option<ErrorKind>,
    /// A `Retry-After` sent with a 429 or 5xx answer, in seconds, as honoured: within
    /// [`fetch::MIN_RETRY_AFTER`] and [`fetch::MAX_RETRY_AFTER`].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub retry_after_s: Option<u64>,
    /// The same `Retry-After` as the server sent it, in seconds, without the crawler's bounds
    /// (a schedule that plans in days applies its own limit).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub retry_after_sent_s: Option<u64>,
    /// The file's shape, when it was read as rules.
    pub summary: Option<FileSummary>,
    /// The bot's crawl-delay on this site, in seconds, if set.
    pub crawl_delay: Option<f64>,
}

/// Why a request was not made. Each carries what the message needs, the limit in effect
/// included.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "reason", rename_all = "snake_case")]
pub enum SkipReason {
    /// Nothing is fetched from a site whose robots.txt is unreachable or rate-limited.
    RobotsUnreachable {
        /// The robots.txt URL.
        robots_url: Url,
    },
    /// The rules forbid it.
    Disallowed {
        /// The robots.txt URL whose rules decided.
        robots_url: Url,
        /// The deciding line.
        line: usize,
        /// The deciding rule as written.
        rule: String,
    },
    /// Honouring the crawl-delay would exceed the analysis's crawl-delay budget.
    CrawlDelayBudget {
        /// The wait it would have needed, in milliseconds.
        wait_ms: u64,
        /// The budget in effect, in milliseconds.
        budget_ms: u64,
    },
    /// It would start after the sitemap time budget, or it was started and the budget ran
    /// out before it finished.
    TimeBudget {
        /// The budget in effect, in milliseconds.
        budget_ms: u64,
    },
    /// The analysis's overall budget ([`crate::limits::ANALYSIS_BUDGET`]) ran out before the
    /// request could start or finish.
    AnalysisBudget {
        /// The budget in effect, in milliseconds.
        budget_ms: u64,
    },
    /// Beyond the first sitemaps checked.
    TooManySitemaps {
        /// How many sitemaps are checked at most (the limit in effect).
        max: usize,
    },
    /// The URL cannot be fetched.
    InvalidUrl,
    /// A provided file: nothing is fetched.
    OfflineAudit,
}

/// `10 s`, `0.5 s`.
fn seconds(ms: u64) -> String {
    format!("{} s", Duration::from_millis(ms).as_secs_f64())
}

impl std::fmt::Display for SkipReason {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            SkipReason::RobotsUnreachable { robots_url } => {
                write!(f, "{robots_url} is unreachable, so nothing else is fetched")
            }
            SkipReason::Disallowed {
                robots_url,
                line,
                rule,
            } => write!(f, "disallowed by line {line} ({rule}) of {robots_url}"),
            SkipReason::CrawlDelayBudget { wait_ms, budget_ms } => write!(
                f,
                "honouring the crawl-delay would mean waiting {} more, past the {} budget",
                seconds(*wait_ms),
                seconds(*budget_ms)
            ),
            SkipReason::TimeBudget { budget_ms } => write!(
                f,
                "not started within the {} sitemap budget",
                seconds(*budget_ms)
            ),
            SkipReason::AnalysisBudget { budget_ms } => write!(
                f,
                "the {} budget of the whole analysis ran out",
                seconds(*budget_ms)
            ),
            SkipReason::TooManySitemaps { max } => {
                write!(f, "only the first {max} sitemaps are checked")
            }
            SkipReason::InvalidUrl => f.write_str("not a fetchable URL"),
            SkipReason::OfflineAudit => f.write_str("offline audit: nothing fetched"),
        }
    }
}

/// The analysed page part of the report. No page content is kept.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PageReport {
    /// The page analysed, when given as a URL.
    pub url: Option<Url>,
    /// The path (and query) checked against the rules: the URL's, or the path given with a
    /// provided file.
    pub path: Option<String>,
    /// Whether it was requested.
    pub requested: bool,
    /// Why not, when it was not (or why a redirect was not followed).
    pub skipped: Option<SkipReason>,
    /// The final status, if a response arrived.
    #[serde(with = "fetch::serde_status::option")]
    pub status: Option<StatusCode>,
    /// The final URL.
    pub final_url: Option<Url>,
    /// The redirects followed.
    pub redirects: Vec<Hop>,
    /// The `Content-Type`.
    pub content_type: Option<String>,
    /// Every `X-Robots-Tag` header, each cut to [`page::MAX_SOURCE_CHARS`] characters (the
    /// directives are read from the whole value).
    pub x_robots_tag: Vec<String>,
    /// The robots meta tags (`robots` and crawler names) of the `<head>`, their content cut
    /// to [`page::MAX_SOURCE_CHARS`] characters (the directives are read from the whole).
    pub meta: Vec<MetaTag>,
    /// The directives they carry (at most [`page::directives::MAX_DIRECTIVES`], the rest
    /// counted).
    pub directives: PageDirectives,
    /// Body bytes read (decoded): the reading stops where the HTML tokenizer ends the head,
    /// or at [`crate::limits::PAGE_MAX_BYTES`] (absent from reports before it was recorded,
    /// and when no body was read).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bytes_read: Option<u64>,
    /// Why the request failed, if it did.
    pub error: Option<String>,
    /// What kind of failure [`PageReport::error`] is.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error_kind: Option<ErrorKind>,
    /// A `Retry-After` sent with a 429 or 5xx answer, in seconds, as the server sent it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub retry_after_sent_s: Option<u64>,
    /// Whether the answer was a bot challenge instead of the page: `cf-mitigated: challenge`,
    /// or a 401, 403, 429 or 5xx whose HTML is a challenge page (absent: none, and in
    /// reports before it was recorded).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub challenge: bool,
}

/// What the start of a sitemap looks like.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SitemapKind {
    /// `<urlset>`.
    Urlset,
    /// `<sitemapindex>`.
    SitemapIndex,
    /// gzip data (a `.xml.gz` sitemap).
    Gzip,
    /// An RSS or Atom feed (accepted as a sitemap by major search engines).
    Feed,
    /// A plain-text list of URLs.
    TextList,
}

/// One declared sitemap.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SitemapReport {
    /// The URL as declared (it may not be a valid URL).
    pub url: String,
    /// The robots.txt line declaring it.
    pub line: usize,
    /// Whether it was requested.
    pub requested: bool,
    /// Why not, when it was not.
    pub skipped: Option<SkipReason>,
    /// Whether it answered with a 2xx.
    pub answered: bool,
    /// The final status, if a response arrived.
    #[serde(with = "fetch::serde_status::option")]
    pub status: Option<StatusCode>,
    /// The `Content-Type`.
    pub content_type: Option<String>,
    /// Whether the start looks like a sitemap (when it answered).
    pub looks_like_sitemap: Option<bool>,
    /// What it looks like.
    pub kind: Option<SitemapKind>,
    /// The final URL.
    pub final_url: Option<Url>,
    /// The redirects followed.
    pub redirects: Vec<Hop>,
    /// Why the request failed, if it did.
    pub error: Option<String>,
    /// What kind of failure [`SitemapReport::error`] is.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error_kind: Option<ErrorKind>,
}

/// What a request was for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Purpose {
    /// The site's robots.txt.
    Robots,
    /// The analysed page.
    Page,
    /// A declared sitemap.
    Sitemap,
    /// The robots.txt of another host, read before requesting something there.
    HostRobots,
}

/// One request made, or skipped.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RequestRecord {
    /// The URL.
    pub url: Url,
    /// What for.
    pub purpose: Purpose,
    /// When it was sent (or would have been), in ms since the analysis began, by the wall
    /// clock.
    pub at_ms: u64,
    /// How long the bot waited before it for the crawl-delay, in ms.
    pub waited_ms: u64,
    /// The status, if a response arrived.
    #[serde(with = "fetch::serde_status::option")]
    pub status: Option<StatusCode>,
    /// Why it failed, if it did.
    pub error: Option<String>,
    /// What kind of failure [`RequestRecord::error`] is.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error_kind: Option<ErrorKind>,
    /// Why it was not made, if it was not.
    pub skipped: Option<SkipReason>,
}

/// One full analysis: everything the bot collected, the findings, and the score.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Analysis {
    /// The shape of this report ([`REPORT_VERSION`] when written by this version).
    pub report_version: u32,
    /// The page URL analysed; none for a provided file given without one.
    pub url: Option<Url>,
    /// 0–100.
    pub score: u8,
    /// The letter grade.
    pub grade: Grade,
    /// The findings, worst first.
    pub findings: Vec<Finding>,
    /// Findings counted but not listed.
    pub omitted_findings: Vec<Omitted>,
    /// How the score was reached.
    pub scoring: Score,
    /// robots.txt.
    pub robots: RobotsReport,
    /// The page.
    pub page: PageReport,
    /// The declared sitemaps, in file order.
    pub sitemaps: Vec<SitemapReport>,
    /// What each notable crawler may fetch.
    pub crawlers: Vec<CrawlerAccess>,
    /// The audit's own limits this report reached, and what the audit left out for them
    /// (absent when it left nothing out, and from reports written before it was recorded).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub limits_reached: Option<LimitsReached>,
    /// Every request made or skipped, in order.
    pub requests: Vec<RequestRecord>,
    /// The bot's product token.
    pub bot: String,
    /// When the analysis started (RFC 3339, UTC).
    pub analysed_at: Timestamp,
    /// How long it took, in ms.
    pub duration_ms: u64,
    /// The scoring method's version.
    pub scoring_version: String,
}

impl PageReport {
    /// A page that was not requested.
    pub(crate) fn skipped(
        url: Option<Url>,
        path: Option<String>,
        reason: SkipReason,
    ) -> PageReport {
        PageReport {
            url,
            path,
            requested: false,
            skipped: Some(reason),
            status: None,
            final_url: None,
            redirects: Vec::new(),
            content_type: None,
            x_robots_tag: Vec::new(),
            meta: Vec::new(),
            directives: PageDirectives::default(),
            bytes_read: None,
            error: None,
            error_kind: None,
            retry_after_sent_s: None,
            challenge: false,
        }
    }
}

impl SitemapReport {
    pub(crate) fn skipped(url: &str, line: usize, reason: SkipReason) -> SitemapReport {
        SitemapReport {
            url: url.to_owned(),
            line,
            requested: false,
            skipped: Some(reason),
            answered: false,
            status: None,
            content_type: None,
            looks_like_sitemap: None,
            kind: None,
            final_url: None,
            redirects: Vec::new(),
            error: None,
            error_kind: None,
        }
    }
}

impl From<&fetch::RedirectHop> for Hop {
    fn from(hop: &fetch::RedirectHop) -> Hop {
        Hop {
            url: hop.url.clone(),
            status: hop.status,
            location: hop.location.clone(),
        }
    }
}
