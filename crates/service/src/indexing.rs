//! Whether a report's page may be indexed and ranked (the bot page, "Headers and meta tags
//! too"): the one rule, applied when a report is stored (the `indexable` column the ranking,
//! the sitemap and the domain pages read) and when its page is shown.
//!
//! A URL is left out of the ranking and of the sitemap, and its report pages are `noindex`,
//! when its page asks every crawler not to index it (`noindex` or `none`, in an
//! `X-Robots-Tag` header or a robots meta tag), or when its robots.txt keeps RobotsTxtParser
//! or every crawler (`User-agent: *`) off that page. A robots.txt that was unreachable or
//! rate-limited disallows everything for the bot (RFC 9309 2.3.1.4), so such a page is not
//! indexable either: the service never publishes what it was not allowed to look at. The
//! newest report of a URL decides for its older reports. A directive addressed only to named
//! crawlers is passed on to them ([`Indexing::named`]). A paste (a provided file, no page) is
//! never published.

use audit::crawlers::BOT_TOKENS;
use audit::report::RobotsStatus;
use audit::Analysis;
use robots::RobotsTxt;

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
    /// The URL's newest report forbids indexing: its older reports follow it.
    NewerReportForbids,
    /// A domain page: none of the domain's URLs may be indexed, by its newest report.
    NoIndexableUrl,
    /// Not a published page at all (a paste, an analysis in progress or failed, a 404).
    NotPublished,
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
            NoindexReason::NewerReportForbids => {
                "a newer report of the same address may not be indexed"
            }
            NoindexReason::NoIndexableUrl => "none of the domain's addresses may be indexed",
            NoindexReason::NotPublished => "it is not a published report",
        }
    }
}

/// What search engines are told about one page.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Indexing {
    /// Why no search engine may index it, if none may.
    pub noindex: Option<NoindexReason>,
    /// Crawlers (lowercase tokens of `[A-Za-z0-9._-]`, at most [`MAX_NAMED_NOINDEX`]) the page
    /// asks by name not to index it: the same request is passed on to them.
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

    /// The decision for a report whose URL's newest report says `newest_indexable` (`None`:
    /// no finished report, which cannot happen for a finished one).
    pub fn of_report(analysis: &Analysis, newest_indexable: Option<bool>) -> Indexing {
        let own = Indexing::of(analysis);
        if own.noindex.is_none() && newest_indexable == Some(false) {
            return Indexing::forbidden(NoindexReason::NewerReportForbids);
        }
        own
    }

    /// A decision that keeps every search engine out.
    pub fn forbidden(reason: NoindexReason) -> Indexing {
        Indexing {
            noindex: Some(reason),
            named: Vec::new(),
        }
    }

    /// Whether search engines may index it.
    pub fn indexable(&self) -> bool {
        self.noindex.is_none()
    }
}

/// Whether `analysis`'s URL may be indexed and ranked.
pub fn indexable(analysis: &Analysis) -> bool {
    reason(analysis).is_none()
}

/// Why `analysis`'s URL may not be indexed, if it may not.
pub fn reason(analysis: &Analysis) -> Option<NoindexReason> {
    if analysis.page.directives.noindex_for_all() {
        return Some(NoindexReason::PageAsks);
    }
    match analysis.robots.outcome {
        RobotsStatus::Rules => {}
        RobotsStatus::NoFile => return None,
        RobotsStatus::Unreachable | RobotsStatus::RateLimited => {
            return Some(NoindexReason::RobotsUnreadable)
        }
        RobotsStatus::Provided => return Some(NoindexReason::NotPublished),
    }
    let Some(path) = page_path(analysis) else {
        return Some(NoindexReason::NotPublished);
    };
    let rules = RobotsTxt::parse(analysis.robots.body.as_bytes());
    if !rules.rules_for(&BOT_TOKENS).is_allowed(&path) {
        return Some(NoindexReason::RobotsKeepsBotOff);
    }
    if !rules.global_rules().is_allowed(&path) {
        return Some(NoindexReason::RobotsKeepsEveryoneOff);
    }
    None
}

/// The path and query checked against the rules (never the fragment, which is not sent).
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
