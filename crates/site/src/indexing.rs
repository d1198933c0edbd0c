//! What search engines may see (the bot page, "Headers and meta tags too").
//!
//! A URL is kept out of the ranking and `/sitemap.xml`, and its report pages are sent with
//! `X-Robots-Tag: noindex` and `<meta name="robots" content="noindex">`, when its page asks
//! every crawler not to index it (`noindex` or `none`, header or meta), or its robots.txt keeps
//! RobotsTxtParser or every crawler (`User-agent: *`) off the page. A directive addressed only
//! to named crawlers is passed on to those crawlers, the same way.
//!
//! A robots.txt that could not be read (5xx, 429, a network failure) disallows every path for
//! the bot (RFC 9309 section 2.3.1.4): the page was kept off limits, so it is not published
//! either (the service's store decides the same way). A provided file with no page is a
//! paste, never published.

use audit::crawlers::BOT_TOKENS;
use audit::report::RobotsStatus;
use audit::Analysis;
use robots::{AgentRules, RobotsTxt};

/// The most named crawlers passed a `noindex` on; a page naming more gets the first ones
/// (sorted), so a hostile page cannot make our headers grow without bound.
pub const MAX_NAMED_NOINDEX: usize = 20;

/// The longest crawler name passed on, in bytes.
pub const MAX_NAMED_TOKEN_BYTES: usize = 64;

/// Why a URL may not be indexed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NoindexReason {
    /// Its page says `noindex` or `none` to every crawler (header or meta tag).
    PageAsks,
    /// Its robots.txt keeps RobotsTxtParser off the page.
    RobotsKeepsBotOff,
    /// Its robots.txt keeps every crawler (`User-agent: *`) off the page.
    RobotsKeepsEveryoneOff,
    /// Its robots.txt could not be read, which disallows every path for the bot.
    RobotsUnreadable,
}

impl NoindexReason {
    /// In plain words, for the report page.
    pub fn describe(self) -> &'static str {
        match self {
            NoindexReason::PageAsks => "the page asks every crawler not to index it",
            NoindexReason::RobotsKeepsBotOff => "its robots.txt keeps RobotsTxtParser off the page",
            NoindexReason::RobotsKeepsEveryoneOff => {
                "its robots.txt keeps every crawler (User-agent: *) off the page"
            }
            NoindexReason::RobotsUnreadable => {
                "its robots.txt could not be read, which keeps the bot off every page"
            }
        }
    }
}

/// The indexing decision for one report.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Indexing {
    /// Why no search engine may index it, if none may.
    pub noindex: Option<NoindexReason>,
    /// Crawlers (lowercase tokens) the page asks by name not to index it.
    pub named: Vec<String>,
}

impl Indexing {
    /// The decision for `analysis` alone.
    pub fn of(analysis: &Analysis) -> Indexing {
        let named = analysis
            .page
            .directives
            .scoped("noindex")
            .into_iter()
            .filter(|token| is_token(token))
            .take(MAX_NAMED_NOINDEX)
            .collect();
        Indexing {
            noindex: reason(analysis),
            named,
        }
    }

    /// A decision that keeps every search engine out (a report whose URL's newest report
    /// forbids indexing, a paste).
    pub fn none() -> Indexing {
        Indexing {
            noindex: Some(NoindexReason::PageAsks),
            named: Vec::new(),
        }
    }

    /// Whether search engines may index it.
    pub fn indexable(&self) -> bool {
        self.noindex.is_none()
    }

    /// The `X-Robots-Tag` values to send: `noindex`, or one `token: noindex` per named
    /// crawler.
    pub fn header_values(&self) -> Vec<String> {
        if self.noindex.is_some() {
            return vec!["noindex".to_owned()];
        }
        self.named
            .iter()
            .map(|token| format!("{token}: noindex"))
            .collect()
    }

    /// The `(name, content)` of each robots meta tag to write.
    pub fn meta_tags(&self) -> Vec<(String, &'static str)> {
        if self.noindex.is_some() {
            return vec![("robots".to_owned(), "noindex")];
        }
        self.named
            .iter()
            .map(|token| (token.clone(), "noindex"))
            .collect()
    }
}

/// Whether `analysis`'s URL may be indexed.
pub fn indexable(analysis: &Analysis) -> bool {
    reason(analysis).is_none()
}

fn reason(analysis: &Analysis) -> Option<NoindexReason> {
    if analysis.page.directives.noindex_for_all() {
        return Some(NoindexReason::PageAsks);
    }
    match analysis.robots.outcome {
        RobotsStatus::Rules => {}
        RobotsStatus::NoFile => return None,
        RobotsStatus::Unreachable | RobotsStatus::RateLimited | RobotsStatus::Provided => {
            return Some(NoindexReason::RobotsUnreadable)
        }
    }
    let path = page_path(analysis)?;
    let body = analysis.robots.body.as_bytes();
    if !AgentRules::parse(body, &BOT_TOKENS).is_allowed(&path) {
        return Some(NoindexReason::RobotsKeepsBotOff);
    }
    if !RobotsTxt::parse(body).global_rules().is_allowed(&path) {
        return Some(NoindexReason::RobotsKeepsEveryoneOff);
    }
    None
}

/// The path and query checked against the rules.
fn page_path(analysis: &Analysis) -> Option<String> {
    if let Some(path) = &analysis.page.path {
        return Some(path.clone());
    }
    let url = analysis.url.as_ref()?;
    Some(match url.query() {
        Some(query) => format!("{}?{query}", url.path()),
        None => url.path().to_owned(),
    })
}

/// A name safe to repeat in a header and an attribute.
fn is_token(token: &str) -> bool {
    !token.is_empty()
        && token.len() <= MAX_NAMED_TOKEN_BYTES
        && token
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_' || b == b'.')
}
