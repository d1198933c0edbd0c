//! One analysis of one URL, as the bot does it: robots.txt fresh, then the page if allowed,
//! then the declared sitemaps, all paced by the bot's crawl-delay within fixed budgets.

use std::collections::HashMap;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use robots::{AgentRules, RobotsTxt};
use serde::{Deserialize, Serialize};
use tokio::time::Instant;
use url::Url;

use crate::crawlers::{self, CrawlerAccess, BOT_TOKEN, CRAWLERS};
use crate::directives::PageDirectives;
use crate::finding::{CheckId, Evidence, Finding};
use crate::head::{self, MetaTag};
use crate::net::{FailureKind, GetRequest, HttpResponse, Transport, TransportError};
use crate::robots_audit::{
    self, looks_like_html, FileContext, FileSummary, Findings, HtmlKind, Omitted,
};
use crate::score::{Grade, Score};

/// How much of robots.txt is read: 500 KiB, as the engine reads.
pub const ROBOTS_MAX_BYTES: usize = robots::MAX_ROBOTS_TXT_BYTES;
/// Redirects followed for robots.txt.
pub const ROBOTS_MAX_REDIRECTS: usize = 5;
/// How much of the page is read, at most (reading stops at [`PAGE_STOP_MARKER`] first).
pub const PAGE_MAX_BYTES: usize = 1024 * 1024;
/// Reading the page stops after this marker.
pub const PAGE_STOP_MARKER: &[u8] = b"</head>";
/// Redirects followed for the page and for each sitemap (each hop checked against the rules).
pub const MAX_REDIRECTS: usize = 5;
/// At most this many declared sitemaps are requested.
pub const MAX_SITEMAPS_CHECKED: usize = 10;
/// No sitemap request starts later than this after the first sitemap request could start.
pub const SITEMAP_TIME_BUDGET: Duration = Duration::from_secs(20);
/// How much of each sitemap is read: enough to recognise one.
pub const SITEMAP_READ_BYTES: usize = 2 * 1024;
/// The most the bot waits in all to honour a crawl-delay within one analysis.
pub const CRAWL_DELAY_BUDGET: Duration = Duration::from_secs(10);

/// The limits of one analysis; [`Limits::default`] is the published set.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Limits {
    /// See [`ROBOTS_MAX_BYTES`].
    pub robots_max_bytes: usize,
    /// See [`ROBOTS_MAX_REDIRECTS`].
    pub robots_max_redirects: usize,
    /// See [`PAGE_MAX_BYTES`].
    pub page_max_bytes: usize,
    /// See [`MAX_REDIRECTS`].
    pub max_redirects: usize,
    /// See [`MAX_SITEMAPS_CHECKED`].
    pub max_sitemaps: usize,
    /// See [`SITEMAP_TIME_BUDGET`].
    pub sitemap_time_budget: Duration,
    /// See [`SITEMAP_READ_BYTES`].
    pub sitemap_read_bytes: usize,
    /// See [`CRAWL_DELAY_BUDGET`].
    pub crawl_delay_budget: Duration,
}

impl Default for Limits {
    fn default() -> Limits {
        Limits {
            robots_max_bytes: ROBOTS_MAX_BYTES,
            robots_max_redirects: ROBOTS_MAX_REDIRECTS,
            page_max_bytes: PAGE_MAX_BYTES,
            max_redirects: MAX_REDIRECTS,
            max_sitemaps: MAX_SITEMAPS_CHECKED,
            sitemap_time_budget: SITEMAP_TIME_BUDGET,
            sitemap_read_bytes: SITEMAP_READ_BYTES,
            crawl_delay_budget: CRAWL_DELAY_BUDGET,
        }
    }
}

/// Why an analysis could not run at all.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum AnalysisError {
    /// The URL is not an absolute `http`/`https` URL with a host.
    #[error("{url:?} is not an http(s) URL with a host: {reason}")]
    InvalidUrl {
        /// The URL as given.
        url: String,
        /// Why.
        reason: String,
    },
}

// ---------------------------------------------------------------------------------------------
// The report

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

/// One redirect followed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Hop {
    /// The URL requested.
    pub url: String,
    /// Its status.
    pub status: u16,
    /// Where it pointed.
    pub location: String,
}

/// The robots.txt part of the report.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RobotsReport {
    /// The robots.txt URL (empty for a provided file).
    pub url: String,
    /// Whether it was requested (false for a provided file).
    pub requested: bool,
    /// What the answer means.
    pub outcome: RobotsStatus,
    /// The final status, if a response arrived.
    pub status: Option<u16>,
    /// The final URL, if a response arrived.
    pub final_url: Option<String>,
    /// The redirects followed.
    pub redirects: Vec<Hop>,
    /// The `Content-Type`.
    pub content_type: Option<String>,
    /// Bytes of the body kept (at most [`ROBOTS_MAX_BYTES`]).
    pub size: usize,
    /// Whether the body was longer than [`ROBOTS_MAX_BYTES`] and was cut.
    pub truncated: bool,
    /// The body as text (invalid UTF-8 replaced; see `body_is_utf8`).
    pub body: String,
    /// Whether the body was valid UTF-8.
    pub body_is_utf8: bool,
    /// Every `X-Robots-Tag` header of the response.
    pub x_robots_tag: Vec<String>,
    /// Why the request failed, if it did.
    pub error: Option<String>,
    /// The file's shape, when it was read as rules.
    pub summary: Option<FileSummary>,
    /// The bot's crawl-delay on this site, in seconds, if set.
    pub crawl_delay: Option<f64>,
}

/// Why a request was not made.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "reason", rename_all = "snake_case")]
pub enum SkipReason {
    /// Nothing is fetched from a site whose robots.txt is unreachable or rate-limited.
    RobotsUnreachable {
        /// The robots.txt URL.
        robots_url: String,
    },
    /// The rules forbid it.
    Disallowed {
        /// The robots.txt URL whose rules decided.
        robots_url: String,
        /// The deciding line.
        line: usize,
        /// The deciding rule as written.
        rule: String,
    },
    /// Honouring the crawl-delay would exceed [`CRAWL_DELAY_BUDGET`].
    CrawlDelayBudget {
        /// The wait it would have needed, in milliseconds.
        wait_ms: u64,
    },
    /// It would start after [`SITEMAP_TIME_BUDGET`].
    TimeBudget,
    /// Beyond the first [`MAX_SITEMAPS_CHECKED`] sitemaps.
    TooManySitemaps,
    /// The URL cannot be fetched.
    InvalidUrl,
    /// A provided file: nothing is fetched.
    OfflineAudit,
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
            SkipReason::CrawlDelayBudget { wait_ms } => write!(
                f,
                "honouring the crawl-delay would need {wait_ms} ms more than the {} s budget",
                CRAWL_DELAY_BUDGET.as_secs()
            ),
            SkipReason::TimeBudget => write!(
                f,
                "not started within the {} s sitemap budget",
                SITEMAP_TIME_BUDGET.as_secs()
            ),
            SkipReason::TooManySitemaps => {
                write!(
                    f,
                    "only the first {MAX_SITEMAPS_CHECKED} sitemaps are checked"
                )
            }
            SkipReason::InvalidUrl => f.write_str("not a fetchable URL"),
            SkipReason::OfflineAudit => f.write_str("offline audit: nothing fetched"),
        }
    }
}

/// The analysed page part of the report. No page content is kept.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PageReport {
    /// The URL analysed.
    pub url: String,
    /// Whether it was requested.
    pub requested: bool,
    /// Why not, when it was not (or why a redirect was not followed).
    pub skipped: Option<SkipReason>,
    /// The final status, if a response arrived.
    pub status: Option<u16>,
    /// The final URL.
    pub final_url: Option<String>,
    /// The redirects followed.
    pub redirects: Vec<Hop>,
    /// The `Content-Type`.
    pub content_type: Option<String>,
    /// Every `X-Robots-Tag` header.
    pub x_robots_tag: Vec<String>,
    /// The robots meta tags (`robots` and crawler names) of the `<head>`.
    pub meta: Vec<MetaTag>,
    /// The directives they carry.
    pub directives: PageDirectives,
    /// Why the request failed, if it did.
    pub error: Option<String>,
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

/// Recognises a sitemap from its first bytes.
pub fn sniff_sitemap(body: &[u8]) -> Option<SitemapKind> {
    if body.starts_with(&[0x1f, 0x8b]) {
        return Some(SitemapKind::Gzip);
    }
    let body = body.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(body);
    let start = body.iter().position(|b| !b.is_ascii_whitespace())?;
    let text: Vec<u8> = body[start..].iter().map(u8::to_ascii_lowercase).collect();
    let has = |needle: &[u8]| text.windows(needle.len()).any(|window| window == needle);
    if text.starts_with(b"<") {
        if has(b"<urlset") {
            return Some(SitemapKind::Urlset);
        }
        if has(b"<sitemapindex") {
            return Some(SitemapKind::SitemapIndex);
        }
        if has(b"<rss") || has(b"<feed") {
            return Some(SitemapKind::Feed);
        }
        return None;
    }
    (text.starts_with(b"http://") || text.starts_with(b"https://")).then_some(SitemapKind::TextList)
}

/// One declared sitemap.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SitemapReport {
    /// The URL as declared.
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
    pub status: Option<u16>,
    /// The `Content-Type`.
    pub content_type: Option<String>,
    /// Whether the start looks like a sitemap (when it answered).
    pub looks_like_sitemap: Option<bool>,
    /// What it looks like.
    pub kind: Option<SitemapKind>,
    /// The final URL.
    pub final_url: Option<String>,
    /// The redirects followed.
    pub redirects: Vec<Hop>,
    /// Why the request failed, if it did.
    pub error: Option<String>,
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
    pub url: String,
    /// What for.
    pub purpose: Purpose,
    /// When it started (or would have), in ms since the analysis began.
    pub at_ms: u64,
    /// How long the bot waited before it for the crawl-delay, in ms.
    pub waited_ms: u64,
    /// The status, if a response arrived.
    pub status: Option<u16>,
    /// Why it failed, if it did.
    pub error: Option<String>,
    /// Why it was not made, if it was not.
    pub skipped: Option<SkipReason>,
}

/// One full analysis: everything the bot collected, the findings, and the score.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Analysis {
    /// The URL analysed (the page), or empty for a provided file without one.
    pub url: String,
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
    /// Every request made or skipped, in order.
    pub requests: Vec<RequestRecord>,
    /// The bot's product token.
    pub bot: String,
    /// When the analysis started (RFC 3339, UTC).
    pub analysed_at: String,
    /// How long it took, in ms.
    pub duration_ms: u64,
    /// The scoring method's version.
    pub scoring_version: String,
}

// ---------------------------------------------------------------------------------------------
// Pacing

/// Spaces requests to each origin by the bot's crawl-delay, within one shared wait budget.
#[derive(Debug)]
pub(crate) struct Pacer {
    budget: Duration,
    waited: Duration,
    last_start: HashMap<String, Instant>,
}

impl Pacer {
    pub(crate) fn new(budget: Duration) -> Pacer {
        Pacer {
            budget,
            waited: Duration::ZERO,
            last_start: HashMap::new(),
        }
    }

    /// How long to wait before a request to `origin` at `now`, or why it must be skipped.
    pub(crate) fn plan(
        &self,
        origin: &str,
        delay: Option<Duration>,
        now: Instant,
    ) -> Result<Duration, SkipReason> {
        let wait = match (delay, self.last_start.get(origin)) {
            (Some(delay), Some(last)) => match last.checked_add(delay) {
                Some(ready) => ready.saturating_duration_since(now),
                None => Duration::MAX,
            },
            _ => Duration::ZERO,
        };
        let total = self.waited.saturating_add(wait);
        if total > self.budget {
            let over = wait.min(Duration::from_secs(u64::from(u32::MAX)));
            return Err(SkipReason::CrawlDelayBudget {
                wait_ms: millis(over),
            });
        }
        Ok(wait)
    }

    /// Records a request to `origin` starting at `start` after waiting `wait`.
    pub(crate) fn record(&mut self, origin: &str, wait: Duration, start: Instant) {
        self.waited = self.waited.saturating_add(wait);
        self.last_start.insert(origin.to_owned(), start);
    }
}

fn millis(duration: Duration) -> u64 {
    u64::try_from(duration.as_millis()).unwrap_or(u64::MAX)
}

// ---------------------------------------------------------------------------------------------
// The run

/// The rules of one origin, as read during the analysis.
#[derive(Debug, Clone)]
enum HostRules {
    Rules(Box<RobotsTxt>),
    NoFile,
    Unreachable,
}

/// A robots.txt fetch, following redirects.
struct RobotsFetched {
    robots_url: Url,
    response: Option<HttpResponse>,
    final_url: Option<Url>,
    redirects: Vec<Hop>,
    error: Option<TransportError>,
    too_many_redirects: bool,
}

impl RobotsFetched {
    fn status(&self) -> RobotsStatus {
        match &self.response {
            _ if self.too_many_redirects || self.error.is_some() => RobotsStatus::Unreachable,
            Some(response) => match response.status {
                200..=299 => RobotsStatus::Rules,
                429 => RobotsStatus::RateLimited,
                400..=499 => RobotsStatus::NoFile,
                _ => RobotsStatus::Unreachable,
            },
            None => RobotsStatus::Unreachable,
        }
    }
}

/// A request made through the rules, following redirects hop by hop.
struct Obeyed {
    response: Option<HttpResponse>,
    final_url: Option<Url>,
    redirects: Vec<Hop>,
    error: Option<TransportError>,
    skipped: Option<SkipReason>,
}

struct Run<'a, T: Transport> {
    transport: &'a T,
    limits: &'a Limits,
    started: Instant,
    pacer: Pacer,
    requests: Vec<RequestRecord>,
    hosts: HashMap<String, HostRules>,
}

fn origin_key(url: &Url) -> String {
    url.origin().ascii_serialization()
}

/// The robots.txt that governs `url` (its scheme, host and port), as the fetcher scopes it.
fn robots_url_of(url: &Url) -> Option<Url> {
    fetch::robots_txt_url(url).ok()
}

fn bot_rules(rules: &HostRules) -> Option<AgentRules> {
    match rules {
        HostRules::Rules(robots) => Some(robots.rules_for(&crawlers::BOT_TOKENS)),
        _ => None,
    }
}

impl<'a, T: Transport> Run<'a, T> {
    fn at_ms(&self, at: Instant) -> u64 {
        millis(at.saturating_duration_since(self.started))
    }

    fn record_skip(&mut self, url: &str, purpose: Purpose, reason: SkipReason) {
        let at_ms = self.at_ms(Instant::now());
        self.requests.push(RequestRecord {
            url: url.to_owned(),
            purpose,
            at_ms,
            waited_ms: 0,
            status: None,
            error: None,
            skipped: Some(reason),
        });
    }

    /// One GET, recorded.
    async fn get(
        &mut self,
        url: &Url,
        purpose: Purpose,
        max_body_bytes: usize,
        stop_marker: Option<&[u8]>,
        waited: Duration,
    ) -> Result<HttpResponse, TransportError> {
        let at_ms = self.at_ms(Instant::now());
        let result = self
            .transport
            .get(GetRequest {
                url: url.clone(),
                max_body_bytes,
                stop_marker: stop_marker.map(<[u8]>::to_vec),
            })
            .await;
        self.requests.push(RequestRecord {
            url: url.to_string(),
            purpose,
            at_ms,
            waited_ms: millis(waited),
            status: result.as_ref().ok().map(|response| response.status),
            error: result.as_ref().err().map(ToString::to_string),
            skipped: None,
        });
        result
    }

    /// Fetches a robots.txt fresh, following up to the redirect limit.
    async fn fetch_robots(&mut self, robots_url: Url, purpose: Purpose) -> RobotsFetched {
        let mut url = robots_url.clone();
        let mut redirects = Vec::new();
        let start = Instant::now();
        self.pacer.record(&origin_key(&url), Duration::ZERO, start);
        loop {
            match self
                .get(
                    &url,
                    purpose,
                    self.limits.robots_max_bytes,
                    None,
                    Duration::ZERO,
                )
                .await
            {
                Err(error) => {
                    return RobotsFetched {
                        robots_url,
                        response: None,
                        final_url: None,
                        redirects,
                        error: Some(error),
                        too_many_redirects: false,
                    }
                }
                Ok(response) => {
                    let next = response
                        .redirect_location()
                        .and_then(|location| url.join(location.trim()).ok())
                        .filter(|next| matches!(next.scheme(), "http" | "https"));
                    let Some(next) = next else {
                        return RobotsFetched {
                            robots_url,
                            response: Some(response),
                            final_url: Some(url),
                            redirects,
                            error: None,
                            too_many_redirects: false,
                        };
                    };
                    redirects.push(Hop {
                        url: url.to_string(),
                        status: response.status,
                        location: response.redirect_location().unwrap_or_default().to_owned(),
                    });
                    let looped = redirects.iter().any(|hop| hop.url == next.as_str());
                    if redirects.len() > self.limits.robots_max_redirects || looped {
                        return RobotsFetched {
                            robots_url,
                            response: Some(response),
                            final_url: Some(url),
                            redirects,
                            error: None,
                            too_many_redirects: true,
                        };
                    }
                    url = next;
                }
            }
        }
    }

    /// The rules of `url`'s origin, reading that origin's robots.txt first if need be.
    async fn host_rules(
        &mut self,
        url: &Url,
        deadline: Option<Instant>,
    ) -> Result<HostRules, SkipReason> {
        let key = origin_key(url);
        if let Some(rules) = self.hosts.get(&key) {
            return Ok(rules.clone());
        }
        let Some(robots_url) = robots_url_of(url) else {
            return Err(SkipReason::InvalidUrl);
        };
        if deadline.is_some_and(|deadline| Instant::now() >= deadline) {
            self.record_skip(
                robots_url.as_str(),
                Purpose::HostRobots,
                SkipReason::TimeBudget,
            );
            return Err(SkipReason::TimeBudget);
        }
        let fetched = self.fetch_robots(robots_url, Purpose::HostRobots).await;
        let rules = match fetched.status() {
            RobotsStatus::Rules => HostRules::Rules(Box::new(RobotsTxt::parse(
                fetched
                    .response
                    .as_ref()
                    .map_or(&[][..], |r| r.body.as_slice()),
            ))),
            RobotsStatus::NoFile => HostRules::NoFile,
            _ => HostRules::Unreachable,
        };
        self.hosts.insert(key, rules.clone());
        Ok(rules)
    }

    /// Requests `url` only where the rules allow, waiting for the crawl-delay, following
    /// redirects hop by hop (each hop checked against its own host's rules).
    async fn obey(
        &mut self,
        url: Url,
        purpose: Purpose,
        max_body_bytes: usize,
        stop_marker: Option<&[u8]>,
        deadline: Option<Instant>,
    ) -> Obeyed {
        let mut url = url;
        let mut redirects = Vec::new();
        let mut result = Obeyed {
            response: None,
            final_url: None,
            redirects: Vec::new(),
            error: None,
            skipped: None,
        };
        loop {
            let skip = match self.host_rules(&url, deadline).await {
                Err(reason) => Some(reason),
                Ok(HostRules::Unreachable) => Some(SkipReason::RobotsUnreachable {
                    robots_url: robots_url_of(&url)
                        .map(|u| u.to_string())
                        .unwrap_or_default(),
                }),
                Ok(rules) => {
                    let agent = bot_rules(&rules);
                    let decision = agent
                        .as_ref()
                        .map(|agent| agent.check(url.as_str()).explain());
                    match decision {
                        Some(decision) if !decision.allowed => Some(SkipReason::Disallowed {
                            robots_url: robots_url_of(&url)
                                .map(|u| u.to_string())
                                .unwrap_or_default(),
                            line: decision.rule.as_ref().map_or(0, |rule| rule.line),
                            rule: decision
                                .rule
                                .as_ref()
                                .map(|rule| format!("{}: {}", rule.kind, rule.pattern))
                                .unwrap_or_default(),
                        }),
                        _ => {
                            let delay = agent
                                .and_then(|agent| agent.crawl_delay())
                                .map(|delay| delay.duration());
                            let now = Instant::now();
                            match self.pacer.plan(&origin_key(&url), delay, now) {
                                Err(reason) => Some(reason),
                                Ok(wait) => {
                                    let late = deadline.is_some_and(|deadline| {
                                        now.checked_add(wait).is_none_or(|start| start > deadline)
                                    });
                                    if late {
                                        Some(SkipReason::TimeBudget)
                                    } else {
                                        tokio::time::sleep(wait).await;
                                        let start = Instant::now();
                                        self.pacer.record(&origin_key(&url), wait, start);
                                        let response = self
                                            .get(&url, purpose, max_body_bytes, stop_marker, wait)
                                            .await;
                                        match response {
                                            Err(error) => {
                                                result.error = Some(error);
                                                result.final_url = Some(url.clone());
                                                None
                                            }
                                            Ok(response) => {
                                                let next = response
                                                    .redirect_location()
                                                    .and_then(|location| {
                                                        url.join(location.trim()).ok()
                                                    })
                                                    .filter(|next| {
                                                        matches!(next.scheme(), "http" | "https")
                                                    });
                                                match next {
                                                    Some(next)
                                                        if redirects.len()
                                                            < self.limits.max_redirects =>
                                                    {
                                                        redirects.push(Hop {
                                                            url: url.to_string(),
                                                            status: response.status,
                                                            location: response
                                                                .redirect_location()
                                                                .unwrap_or_default()
                                                                .to_owned(),
                                                        });
                                                        url = next;
                                                        continue;
                                                    }
                                                    _ => {
                                                        result.response = Some(response);
                                                        result.final_url = Some(url.clone());
                                                        None
                                                    }
                                                }
                                            }
                                        }
                                    }
                                }
                            }
                        }
                    }
                }
            };
            if let Some(reason) = skip {
                if !matches!(reason, SkipReason::TimeBudget) || redirects.is_empty() {
                    self.record_skip(url.as_str(), purpose, reason.clone());
                }
                result.skipped = Some(reason);
                if !redirects.is_empty() {
                    result.final_url = Some(url.clone());
                }
            }
            result.redirects = redirects;
            return result;
        }
    }
}

/// Formats a time as RFC 3339 UTC (`2026-11-30T06:40:00Z`).
pub fn rfc3339(time: SystemTime) -> String {
    let seconds = time.duration_since(UNIX_EPOCH).map_or(0, |d| d.as_secs());
    let days = i64::try_from(seconds / 86_400).unwrap_or(0);
    let rest = seconds % 86_400;
    // Civil date from days since 1970-01-01 (Howard Hinnant's algorithm).
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1_460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!(
        "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}Z",
        rest / 3_600,
        rest % 3_600 / 60,
        rest % 60
    )
}

/// Validates the URL to analyse.
pub fn parse_target(url: &str) -> Result<Url, AnalysisError> {
    let invalid = |reason: &str| AnalysisError::InvalidUrl {
        url: url.to_owned(),
        reason: reason.to_owned(),
    };
    let parsed = Url::parse(url.trim()).map_err(|error| invalid(&error.to_string()))?;
    if !matches!(parsed.scheme(), "http" | "https") {
        return Err(invalid("only http and https URLs can be analysed"));
    }
    if parsed.host_str().is_none_or(str::is_empty) {
        return Err(invalid("no host"));
    }
    Ok(parsed)
}

/// Runs one analysis of `url` with the published limits.
pub async fn analyze<T: Transport>(transport: &T, url: &str) -> Result<Analysis, AnalysisError> {
    analyze_with(transport, url, &Limits::default()).await
}

/// Runs one analysis of `url` with the given limits.
pub async fn analyze_with<T: Transport>(
    transport: &T,
    url: &str,
    limits: &Limits,
) -> Result<Analysis, AnalysisError> {
    let target = parse_target(url)?;
    let analysed_at = rfc3339(SystemTime::now());
    let robots_url = robots_url_of(&target).ok_or_else(|| AnalysisError::InvalidUrl {
        url: url.to_owned(),
        reason: "no host".to_owned(),
    })?;
    let mut run = Run {
        transport,
        limits,
        started: Instant::now(),
        pacer: Pacer::new(limits.crawl_delay_budget),
        requests: Vec::new(),
        hosts: HashMap::new(),
    };
    let mut findings = Findings::default();

    // 1. robots.txt, fresh.
    let fetched = run.fetch_robots(robots_url.clone(), Purpose::Robots).await;
    let status = fetched.status();
    robots_fetch_findings(&fetched, &target, &mut findings);
    let body: &[u8] = match (&fetched.response, status) {
        (Some(response), RobotsStatus::Rules) => &response.body,
        _ => &[],
    };
    let robots = RobotsTxt::parse(body);
    let host_rules = match status {
        RobotsStatus::Rules => HostRules::Rules(Box::new(robots.clone())),
        RobotsStatus::NoFile => HostRules::NoFile,
        _ => HostRules::Unreachable,
    };
    run.hosts.insert(origin_key(&target), host_rules.clone());
    let page_path = &target[url::Position::BeforePath..];
    let crawler_table = match status {
        RobotsStatus::Rules => crawlers::table(&robots, Some(page_path)),
        _ => crawlers::table(&RobotsTxt::parse(b""), Some(page_path)),
    };
    if status == RobotsStatus::Rules {
        robots_audit::audit_parsed(
            &robots,
            body,
            &FileContext {
                robots_url: Some(&robots_url),
                page: Some(page_path),
            },
            &crawler_table,
            &mut findings,
        );
    }
    let robots_report = robots_report(&fetched, status, &robots, &host_rules);

    // 2. The page, if the rules allow it.
    let page = if matches!(
        status,
        RobotsStatus::Unreachable | RobotsStatus::RateLimited
    ) {
        let reason = SkipReason::RobotsUnreachable {
            robots_url: robots_url.to_string(),
        };
        run.record_skip(target.as_str(), Purpose::Page, reason.clone());
        PageReport::skipped(&target, reason)
    } else {
        let obeyed = run
            .obey(
                target.clone(),
                Purpose::Page,
                limits.page_max_bytes,
                Some(PAGE_STOP_MARKER),
                None,
            )
            .await;
        page_report(&target, obeyed)
    };
    page_findings(&page, &robots, status, &mut findings);

    // 3. The declared sitemaps.
    let sitemaps = if status == RobotsStatus::Rules {
        check_sitemaps(&mut run, &robots, &mut findings).await
    } else {
        Vec::new()
    };

    let (findings, omitted_findings) = findings.finish();
    let scoring = Score::compute(&findings);
    let duration_ms = millis(run.started.elapsed());
    Ok(Analysis {
        url: target.to_string(),
        score: scoring.score,
        grade: scoring.grade,
        findings,
        omitted_findings,
        robots: robots_report,
        page,
        sitemaps,
        crawlers: crawler_table,
        requests: run.requests,
        bot: BOT_TOKEN.to_owned(),
        analysed_at,
        duration_ms,
        scoring_version: scoring.method_version.clone(),
        scoring,
    })
}

/// Audits a pasted or uploaded robots.txt: only the checks that need no network. `page`,
/// when given (URL or path), is checked against the rules too.
pub fn analyze_file(body: &[u8], page: Option<&str>) -> Analysis {
    let robots = RobotsTxt::parse(body);
    let page_url = page.and_then(|page| Url::parse(page).ok());
    let robots_url = page_url.as_ref().and_then(robots_url_of);
    let page_path = match &page_url {
        Some(url) => Some(url[url::Position::BeforePath..].to_owned()),
        None => page.map(str::to_owned),
    };
    let mut findings = Findings::default();
    let crawler_table = crawlers::table(&robots, page_path.as_deref());
    robots_audit::audit_parsed(
        &robots,
        body,
        &FileContext {
            robots_url: robots_url.as_ref(),
            page: page_path.as_deref(),
        },
        &crawler_table,
        &mut findings,
    );
    let (findings, omitted_findings) = findings.finish();
    let scoring = Score::compute(&findings);
    let summary = summary_of(&robots);
    let sitemaps = robots
        .sitemaps()
        .iter()
        .map(|sitemap| SitemapReport::skipped(&sitemap.url, sitemap.line, SkipReason::OfflineAudit))
        .collect();
    let bot_delay = robots
        .rules_for(&crawlers::BOT_TOKENS)
        .crawl_delay()
        .map(|d| d.seconds);
    Analysis {
        url: page.unwrap_or_default().to_owned(),
        score: scoring.score,
        grade: scoring.grade,
        findings,
        omitted_findings,
        robots: RobotsReport {
            url: robots_url.map(|url| url.to_string()).unwrap_or_default(),
            requested: false,
            outcome: RobotsStatus::Provided,
            status: None,
            final_url: None,
            redirects: Vec::new(),
            content_type: None,
            size: body.len().min(ROBOTS_MAX_BYTES),
            truncated: body.len() > ROBOTS_MAX_BYTES,
            body: String::from_utf8_lossy(&body[..body.len().min(ROBOTS_MAX_BYTES)]).into_owned(),
            body_is_utf8: std::str::from_utf8(body).is_ok(),
            x_robots_tag: Vec::new(),
            error: None,
            summary: Some(summary),
            crawl_delay: bot_delay,
        },
        page: PageReport::skipped_text(page.unwrap_or_default(), SkipReason::OfflineAudit),
        sitemaps,
        crawlers: crawler_table,
        requests: Vec::new(),
        bot: BOT_TOKEN.to_owned(),
        analysed_at: rfc3339(SystemTime::now()),
        duration_ms: 0,
        scoring_version: scoring.method_version.clone(),
        scoring,
    }
}

/// The shape of a parsed file, as reported.
pub(crate) fn summary_of(robots: &RobotsTxt) -> FileSummary {
    FileSummary {
        bytes: robots.bytes_total(),
        bytes_read: robots.bytes_read(),
        lines: robots.line_count(),
        groups: robots.groups().len(),
        rules: robots.groups().iter().map(|group| group.rules.len()).sum(),
        sitemaps: robots.sitemaps().iter().map(|s| s.url.clone()).collect(),
    }
}

fn robots_report(
    fetched: &RobotsFetched,
    status: RobotsStatus,
    robots: &RobotsTxt,
    rules: &HostRules,
) -> RobotsReport {
    let response = fetched.response.as_ref();
    let body = response.map_or(&[][..], |response| response.body.as_slice());
    RobotsReport {
        url: fetched.robots_url.to_string(),
        requested: true,
        outcome: status,
        status: response.map(|response| response.status),
        final_url: fetched.final_url.as_ref().map(ToString::to_string),
        redirects: fetched.redirects.clone(),
        content_type: response
            .and_then(|r| r.header("content-type"))
            .map(str::to_owned),
        size: body.len(),
        truncated: response.is_some_and(|response| response.truncated),
        body: String::from_utf8_lossy(body).into_owned(),
        body_is_utf8: std::str::from_utf8(body).is_ok(),
        x_robots_tag: response
            .map(|r| r.header_values("x-robots-tag"))
            .unwrap_or_default(),
        error: fetched.error.as_ref().map(ToString::to_string),
        summary: (status == RobotsStatus::Rules).then(|| summary_of(robots)),
        crawl_delay: bot_rules(rules)
            .and_then(|agent| agent.crawl_delay())
            .map(|delay| delay.seconds),
    }
}

fn robots_fetch_findings(fetched: &RobotsFetched, target: &Url, findings: &mut Findings) {
    let url = fetched.robots_url.to_string();
    let at = |text: String| Evidence {
        url: Some(url.clone()),
        ..Evidence::text(text)
    };
    if let Some(error) = &fetched.error {
        let what = match error.kind {
            FailureKind::Dns => "the host name does not resolve",
            FailureKind::Timeout => "the request timed out",
            FailureKind::Connect => "the connection failed",
            FailureKind::Tls => "TLS failed",
            FailureKind::AddressRefused => "the address is private and was not contacted",
            FailureKind::Malformed => "the answer is not valid HTTP",
            FailureKind::InvalidUrl | FailureKind::Other => "the request failed",
        };
        findings.push(Finding::new(
            CheckId::FetchUnreachable,
            format!("robots.txt could not be fetched: {what}"),
            at(error.message.clone()),
        ));
        return;
    }
    let target_host = target.host_str().unwrap_or_default().to_ascii_lowercase();
    if let Some(hop) = fetched.redirects.first() {
        let chain: Vec<String> = fetched
            .redirects
            .iter()
            .map(|hop| format!("{} {} -> {}", hop.status, hop.url, hop.location))
            .collect();
        findings.push(Finding::new(
            CheckId::FetchRedirected,
            format!("robots.txt redirects ({} hop(s))", fetched.redirects.len()),
            Evidence {
                url: Some(hop.url.clone()),
                ..Evidence::text(chain.join("; "))
            },
        ));
    }
    if fetched.too_many_redirects {
        findings.push(Finding::new(
            CheckId::FetchTooManyRedirects,
            format!(
                "robots.txt redirects more than {ROBOTS_MAX_REDIRECTS} times (or loops); it is treated as unreachable"
            ),
            at(fetched
                .redirects
                .iter()
                .map(|hop| hop.url.as_str())
                .collect::<Vec<_>>()
                .join(" -> ")),
        ));
        return;
    }
    if let Some(final_url) = &fetched.final_url {
        let final_host = final_url
            .host_str()
            .unwrap_or_default()
            .to_ascii_lowercase();
        if !fetched.redirects.is_empty() && final_host != target_host {
            findings.push(Finding::new(
                CheckId::FetchRedirectOtherHost,
                format!("robots.txt of {target_host} redirects to {final_host}"),
                Evidence::url(final_url.to_string()),
            ));
        }
    }
    let Some(response) = &fetched.response else {
        return;
    };
    let challenge_header = response
        .header("cf-mitigated")
        .is_some_and(|value| value.eq_ignore_ascii_case("challenge"));
    let html = looks_like_html(&response.body);
    let status = response.status;
    match status {
        200..=299 => {
            if challenge_header && html.is_none() {
                findings.push(Finding::new(
                    CheckId::FetchChallenge,
                    "robots.txt is answered with a bot challenge",
                    Evidence::header("cf-mitigated", "challenge"),
                ));
            }
            if response.truncated {
                findings.push(Finding::new(
                    CheckId::FetchTooLarge,
                    format!(
                        "robots.txt is larger than {ROBOTS_MAX_BYTES} bytes; the rest is ignored"
                    ),
                    Evidence::url(url.clone()),
                ));
            }
            match response.header("content-type") {
                None => findings.push(Finding::new(
                    CheckId::FetchNoContentType,
                    "robots.txt is served without a Content-Type",
                    Evidence::url(url.clone()),
                )),
                Some(content_type) => {
                    let essence = content_type
                        .split(';')
                        .next()
                        .unwrap_or_default()
                        .trim()
                        .to_ascii_lowercase();
                    if essence != "text/plain" && html.is_none() {
                        findings.push(Finding::new(
                            CheckId::FetchContentType,
                            format!("robots.txt is served as {essence}"),
                            Evidence::header("Content-Type", content_type),
                        ));
                    }
                }
            }
            let tags = response.header_values("x-robots-tag");
            if let Some(tag) = tags.first() {
                findings.push(Finding::new(
                    CheckId::FetchRobotsNoindex,
                    "robots.txt is sent with an X-Robots-Tag header",
                    Evidence::header("X-Robots-Tag", tag),
                ));
            }
        }
        429 => findings.push(Finding::new(
            CheckId::FetchRateLimited,
            "robots.txt answers 429: every path is treated as disallowed",
            at(format!("HTTP {status}")),
        )),
        500..=599 => {
            findings.push(Finding::new(
                CheckId::FetchServerError,
                format!("robots.txt answers {status}: every path is treated as disallowed"),
                at(format!("HTTP {status}")),
            ));
            if challenge_header || html == Some(HtmlKind::Challenge) {
                findings.push(Finding::new(
                    CheckId::FetchChallenge,
                    "robots.txt is answered with a bot challenge",
                    Evidence::url(url.clone()),
                ));
            }
        }
        401 | 403 if challenge_header || html == Some(HtmlKind::Challenge) => {
            findings.push(Finding::new(
                CheckId::FetchChallenge,
                format!("robots.txt answers {status} with a bot challenge; crawlers get no rules"),
                at(format!("HTTP {status}")),
            ))
        }
        401 | 403 => findings.push(Finding::new(
            CheckId::FetchForbidden,
            format!("robots.txt answers {status}: major crawlers read that as no rules at all"),
            at(format!("HTTP {status}")),
        )),
        404 | 410 => findings.push(Finding::new(
            CheckId::FetchNotFound,
            format!("robots.txt answers {status}: no rules, every path may be crawled"),
            at(format!("HTTP {status}")),
        )),
        400..=499 => findings.push(Finding::new(
            CheckId::FetchOtherClientError,
            format!("robots.txt answers {status}: crawlers read that as no rules"),
            at(format!("HTTP {status}")),
        )),
        _ => findings.push(Finding::new(
            CheckId::FetchUnexpectedStatus,
            format!("robots.txt answers {status}; it is treated as unreachable"),
            at(format!("HTTP {status}")),
        )),
    }
}

impl PageReport {
    fn skipped(url: &Url, reason: SkipReason) -> PageReport {
        PageReport::skipped_text(url.as_str(), reason)
    }

    fn skipped_text(url: &str, reason: SkipReason) -> PageReport {
        PageReport {
            url: url.to_owned(),
            requested: false,
            skipped: Some(reason),
            status: None,
            final_url: None,
            redirects: Vec::new(),
            content_type: None,
            x_robots_tag: Vec::new(),
            meta: Vec::new(),
            directives: PageDirectives::default(),
            error: None,
        }
    }
}

fn page_report(target: &Url, obeyed: Obeyed) -> PageReport {
    let response = obeyed.response.as_ref();
    let x_robots_tag = response
        .map(|r| r.header_values("x-robots-tag"))
        .unwrap_or_default();
    let content_type = response
        .and_then(|r| r.header("content-type"))
        .map(str::to_owned);
    let is_html = response.is_some_and(|response| {
        (200..300).contains(&response.status)
            && content_type.as_deref().is_none_or(|ct| {
                let ct = ct.to_ascii_lowercase();
                ct.contains("html") || ct.contains("xml")
            })
    });
    let meta: Vec<MetaTag> = match response {
        Some(response) if is_html => head::meta_tags(&response.body)
            .into_iter()
            .filter(|meta| {
                let mut probe = PageDirectives::default();
                probe.add_meta(&meta.name, &meta.content);
                !probe.directives.is_empty() || !probe.invalid.is_empty()
            })
            .collect(),
        _ => Vec::new(),
    };
    let directives = PageDirectives::read(
        x_robots_tag.iter().map(String::as_str),
        meta.iter()
            .map(|meta| (meta.name.as_str(), meta.content.as_str())),
    );
    PageReport {
        url: target.to_string(),
        requested: response.is_some() || obeyed.error.is_some() || !obeyed.redirects.is_empty(),
        skipped: obeyed.skipped,
        status: response.map(|response| response.status),
        final_url: obeyed.final_url.map(|url| url.to_string()),
        redirects: obeyed.redirects,
        content_type,
        x_robots_tag,
        meta,
        directives,
        error: obeyed.error.map(|error| error.to_string()),
    }
}

fn page_findings(
    page: &PageReport,
    robots: &RobotsTxt,
    status: RobotsStatus,
    findings: &mut Findings,
) {
    let url = page.url.clone();
    if let Some(error) = &page.error {
        findings.push(Finding::new(
            CheckId::PageUnreachable,
            "the page could not be fetched",
            Evidence {
                url: Some(url.clone()),
                ..Evidence::text(error)
            },
        ));
    } else if let Some(code) = page.status.filter(|code| *code >= 400) {
        findings.push(Finding::new(
            CheckId::PageUnreachable,
            format!("the page answers {code}"),
            Evidence::url(url.clone()),
        ));
    }
    match &page.skipped {
        Some(SkipReason::CrawlDelayBudget { .. }) | Some(SkipReason::RobotsUnreachable { .. })
            if page.requested =>
        {
            findings.push(Finding::new(
                CheckId::PageNotChecked,
                format!(
                    "a redirect of the page was not followed: {}",
                    page.skipped
                        .as_ref()
                        .map(ToString::to_string)
                        .unwrap_or_default()
                ),
                Evidence::url(page.final_url.clone().unwrap_or_else(|| url.clone())),
            ));
        }
        Some(SkipReason::CrawlDelayBudget { .. }) => findings.push(Finding::new(
            CheckId::PageNotChecked,
            "the page was not requested: the crawl-delay budget ran out",
            Evidence::url(url.clone()),
        )),
        Some(SkipReason::Disallowed {
            robots_url,
            line,
            rule,
        }) if page.requested => findings.push(Finding::new(
            CheckId::PageNotChecked,
            format!(
                "the page redirects to a URL disallowed by line {line} ({rule}) of {robots_url}"
            ),
            Evidence::url(page.final_url.clone().unwrap_or_else(|| url.clone())),
        )),
        _ => {}
    }
    let directives = &page.directives;
    let evidence_for = |name: &str| {
        directives
            .directives
            .iter()
            .find(|d| d.name == name || (d.name == "none" && name == "noindex"))
            .map(|d| Evidence {
                url: Some(url.clone()),
                ..Evidence::text(d.source.to_string())
            })
            .unwrap_or_else(|| Evidence::url(url.clone()))
    };
    if directives.noindex_for_all() {
        findings.push(Finding::new(
            CheckId::PageNoindex,
            "the page asks every crawler not to index it (noindex)",
            evidence_for("noindex"),
        ));
    }
    let scoped = directives.scoped("noindex");
    if !scoped.is_empty() {
        findings.push(Finding::new(
            CheckId::PageNoindexForBot,
            format!("the page asks {} not to index it", scoped.join(", ")),
            evidence_for("noindex"),
        ));
    }
    for conflict in directives.conflicts() {
        let scope = conflict
            .scope
            .clone()
            .unwrap_or_else(|| "every crawler".to_owned());
        findings.push(Finding::new(
            CheckId::PageConflict,
            format!(
                "{} and {} both address {scope}; search engines apply {}",
                conflict.permissive, conflict.restrictive, conflict.restrictive
            ),
            evidence_for(&conflict.restrictive),
        ));
    }
    for invalid in &directives.invalid {
        findings.push(Finding::new(
            CheckId::PageInvalidDirective,
            format!("\"{}\": {}", invalid.text, invalid.reason),
            Evidence {
                url: Some(url.clone()),
                ..Evidence::text(invalid.source.to_string())
            },
        ));
    }
    // Disallowed and noindex: the search engines that may not fetch it never see the noindex.
    if status == RobotsStatus::Rules {
        let path = Url::parse(&url)
            .map(|u| u[url::Position::BeforePath..].to_owned())
            .unwrap_or_else(|_| "/".to_owned());
        for crawler in CRAWLERS.iter().filter(|crawler| crawler.major) {
            if !directives.noindex_for(crawler.token) {
                continue;
            }
            let rules = crawlers::rules_for(robots, crawler);
            let decision = rules.check(&path);
            if let (false, Some(rule)) = (decision.allowed, decision.rule) {
                findings.push(Finding::new(
                    CheckId::LogicNoindexUnseen,
                    format!(
                        "{} may not fetch the page (line {}: {}: {}), so it never sees its noindex",
                        crawler.token, rule.line, rule.kind, rule.pattern
                    ),
                    Evidence {
                        url: Some(url.clone()),
                        ..Evidence::line(rule.line, format!("{}: {}", rule.kind, rule.pattern))
                    },
                ));
            }
        }
    }
}

impl SitemapReport {
    fn skipped(url: &str, line: usize, reason: SkipReason) -> SitemapReport {
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
        }
    }
}

async fn check_sitemaps<T: Transport>(
    run: &mut Run<'_, T>,
    robots: &RobotsTxt,
    findings: &mut Findings,
) -> Vec<SitemapReport> {
    let mut reports = Vec::new();
    let deadline = Instant::now().checked_add(run.limits.sitemap_time_budget);
    let mut checked = 0usize;
    for sitemap in robots.sitemaps() {
        let evidence = || Evidence {
            url: Some(sitemap.url.clone()),
            line: Some(sitemap.line),
            ..Evidence::default()
        };
        if checked >= run.limits.max_sitemaps {
            run.record_skip(&sitemap.url, Purpose::Sitemap, SkipReason::TooManySitemaps);
            findings.push(Finding::new(
                CheckId::SitemapNotChecked,
                format!("line {}: {}", sitemap.line, SkipReason::TooManySitemaps),
                evidence(),
            ));
            reports.push(SitemapReport::skipped(
                &sitemap.url,
                sitemap.line,
                SkipReason::TooManySitemaps,
            ));
            continue;
        }
        checked += 1;
        let Ok(url) = Url::parse(&sitemap.url) else {
            reports.push(SitemapReport::skipped(
                &sitemap.url,
                sitemap.line,
                SkipReason::InvalidUrl,
            ));
            continue;
        };
        if deadline.is_some_and(|deadline| Instant::now() >= deadline) {
            run.record_skip(&sitemap.url, Purpose::Sitemap, SkipReason::TimeBudget);
            findings.push(Finding::new(
                CheckId::SitemapNotChecked,
                format!("line {}: {}", sitemap.line, SkipReason::TimeBudget),
                evidence(),
            ));
            reports.push(SitemapReport::skipped(
                &sitemap.url,
                sitemap.line,
                SkipReason::TimeBudget,
            ));
            continue;
        }
        let obeyed = run
            .obey(
                url,
                Purpose::Sitemap,
                run.limits.sitemap_read_bytes,
                None,
                deadline,
            )
            .await;
        let response = obeyed.response.as_ref();
        let kind = response
            .filter(|r| (200..300).contains(&r.status))
            .and_then(|r| sniff_sitemap(&r.body));
        let answered = response.is_some_and(|r| (200..300).contains(&r.status));
        let report = SitemapReport {
            url: sitemap.url.clone(),
            line: sitemap.line,
            requested: response.is_some() || obeyed.error.is_some(),
            skipped: obeyed.skipped.clone(),
            answered,
            status: response.map(|r| r.status),
            content_type: response
                .and_then(|r| r.header("content-type"))
                .map(str::to_owned),
            looks_like_sitemap: answered.then_some(kind.is_some()),
            kind,
            final_url: obeyed.final_url.as_ref().map(ToString::to_string),
            redirects: obeyed.redirects.clone(),
            error: obeyed.error.as_ref().map(ToString::to_string),
        };
        if let Some(reason) = &report.skipped {
            findings.push(Finding::new(
                CheckId::SitemapNotChecked,
                format!("line {}: {reason}", sitemap.line),
                evidence(),
            ));
        } else if let Some(error) = &report.error {
            findings.push(Finding::new(
                CheckId::SitemapUnreachable,
                format!(
                    "line {}: the sitemap could not be fetched ({error})",
                    sitemap.line
                ),
                evidence(),
            ));
        } else if !answered {
            let status = report
                .status
                .map_or_else(|| "no answer".to_owned(), |s| format!("HTTP {s}"));
            findings.push(Finding::new(
                CheckId::SitemapUnreachable,
                format!("line {}: the sitemap answers {status}", sitemap.line),
                evidence(),
            ));
        } else if kind.is_none() {
            let content_type = report
                .content_type
                .clone()
                .unwrap_or_else(|| "no content type".to_owned());
            findings.push(Finding::new(
                CheckId::SitemapNotASitemap,
                format!(
                    "line {}: the sitemap does not look like one ({content_type})",
                    sitemap.line
                ),
                evidence(),
            ));
        }
        reports.push(report);
    }
    reports
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn limits_are_the_published_ones() {
        assert_eq!(ROBOTS_MAX_BYTES, 512_000);
        assert_eq!(ROBOTS_MAX_REDIRECTS, 5);
        assert_eq!(PAGE_MAX_BYTES, 1_048_576);
        assert_eq!(PAGE_STOP_MARKER, b"</head>");
        assert_eq!(MAX_REDIRECTS, 5);
        assert_eq!(MAX_SITEMAPS_CHECKED, 10);
        assert_eq!(SITEMAP_TIME_BUDGET, Duration::from_secs(20));
        assert_eq!(SITEMAP_READ_BYTES, 2_048);
        assert_eq!(CRAWL_DELAY_BUDGET, Duration::from_secs(10));
        let limits = Limits::default();
        assert_eq!(limits.max_sitemaps, MAX_SITEMAPS_CHECKED);
        assert_eq!(limits.crawl_delay_budget, CRAWL_DELAY_BUDGET);
    }

    #[test]
    fn sitemaps_are_recognised() {
        assert_eq!(sniff_sitemap(b"\x1f\x8b\x08\x00"), Some(SitemapKind::Gzip));
        assert_eq!(
            sniff_sitemap(b"<?xml version=\"1.0\"?>\n<urlset xmlns=\"...\">"),
            Some(SitemapKind::Urlset)
        );
        assert_eq!(
            sniff_sitemap(b"\xEF\xBB\xBF <SitemapIndex>"),
            Some(SitemapKind::SitemapIndex)
        );
        assert_eq!(
            sniff_sitemap(b"<rss version=\"2.0\">"),
            Some(SitemapKind::Feed)
        );
        assert_eq!(
            sniff_sitemap(b"https://e.com/a\nhttps://e.com/b\n"),
            Some(SitemapKind::TextList)
        );
        assert_eq!(sniff_sitemap(b"<!doctype html><html>"), None);
        assert_eq!(sniff_sitemap(b""), None);
    }

    #[test]
    fn rfc3339_formats_utc() {
        assert_eq!(rfc3339(UNIX_EPOCH), "1970-01-01T00:00:00Z");
        assert_eq!(
            rfc3339(UNIX_EPOCH + Duration::from_secs(1_709_210_096)),
            "2024-02-29T12:34:56Z"
        );
    }

    #[test]
    fn targets_must_be_http_with_a_host() {
        assert!(parse_target("https://example.com/a?b").is_ok());
        assert!(parse_target("ftp://example.com/").is_err());
        assert!(parse_target("/relative").is_err());
        assert!(parse_target("mailto:a@b.c").is_err());
    }

    #[tokio::test(start_paused = true)]
    async fn pacer_spaces_requests_within_the_budget() {
        let mut pacer = Pacer::new(CRAWL_DELAY_BUDGET);
        let delay = Some(Duration::from_secs(4));
        let now = Instant::now();
        assert_eq!(pacer.plan("a", delay, now), Ok(Duration::ZERO));
        pacer.record("a", Duration::ZERO, now);
        let wait = pacer.plan("a", delay, now).unwrap();
        assert_eq!(wait, Duration::from_secs(4));
        // Another origin has its own spacing.
        assert_eq!(pacer.plan("b", delay, now), Ok(Duration::ZERO));
        tokio::time::advance(wait).await;
        pacer.record("a", wait, Instant::now());
        let wait = pacer.plan("a", delay, Instant::now()).unwrap();
        tokio::time::advance(wait).await;
        pacer.record("a", wait, Instant::now());
        // 8 s waited: 4 more would exceed 10.
        assert_eq!(
            pacer.plan("a", delay, Instant::now()),
            Err(SkipReason::CrawlDelayBudget { wait_ms: 4_000 })
        );
        // Time passing on its own frees the spacing.
        tokio::time::advance(Duration::from_secs(4)).await;
        assert_eq!(pacer.plan("a", delay, Instant::now()), Ok(Duration::ZERO));
        // A huge delay is skipped, not awaited.
        assert!(pacer
            .plan("a", Some(Duration::MAX), Instant::now())
            .is_err());
    }
}
