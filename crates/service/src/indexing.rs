//! Whether a report's page may be indexed and ranked (the bot page, "Headers and meta tags too").
//!
//! A URL is left out of the ranking and of the sitemap, and its report pages are `noindex`,
//! when its page asks every crawler not to index it (`noindex` or `none`, in an
//! `X-Robots-Tag` header or a robots meta tag), or when its robots.txt keeps RobotsTxtParser
//! or every crawler (`User-agent: *`) off that page. A robots.txt that was unreachable or
//! rate-limited disallows everything for the bot (RFC 9309 2.3.1.4), so such a page is not
//! indexable either: the service never publishes what it was not allowed to look at.
//! Directives addressed only to named crawlers are passed on by the pages
//! ([`noindex_for_named`]).

use audit::crawlers::BOT_TOKENS;
use audit::report::RobotsStatus;
use audit::Analysis;
use robots::RobotsTxt;

/// Whether the analysed page may be indexed and ranked. Pastes never are.
pub fn indexable(analysis: &Analysis) -> bool {
    if analysis.page.directives.noindex_for_all() {
        return false;
    }
    let Some(url) = &analysis.url else {
        return false;
    };
    let path = &url[url::Position::BeforePath..];
    match analysis.robots.outcome {
        RobotsStatus::NoFile => true,
        RobotsStatus::Unreachable | RobotsStatus::RateLimited | RobotsStatus::Provided => false,
        RobotsStatus::Rules => {
            let rules = RobotsTxt::parse(analysis.robots.body.as_bytes());
            rules.rules_for(&BOT_TOKENS).is_allowed(path) && rules.global_rules().is_allowed(path)
        }
    }
}

/// The crawlers (lower-case tokens) the page asks, by name only, not to index it: the report
/// pages pass the same request on to them (`X-Robots-Tag: googlebot: noindex`).
pub fn noindex_for_named(analysis: &Analysis) -> Vec<String> {
    analysis.page.directives.scoped("noindex")
}
