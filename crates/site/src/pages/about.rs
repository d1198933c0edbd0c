//! `/scoring` and `/bot`.
//!
//! "How scoring works" is `SCORING.md` itself, compiled in and rendered from Markdown: the
//! page and the file cannot disagree, and `crates/audit/tests/scoring_doc.rs` keeps the file in
//! step with the scoring code (every check with its severity and points, every constant).

use maud::html;
use pulldown_cmark::{Event, Options, Parser};
use url::Url;

use super::Html;
use crate::html::{page as shell, trusted, Head};
use service::paths::absolute;

/// The published scoring method, as committed at the repository root.
pub const SCORING_MD: &str = include_str!("../../../../SCORING.md");

/// The address site owners write to for data removal.
pub const CONTACT: &str = "robots@leopoletto.dev";

/// `SCORING.md` as HTML. Raw HTML in the file is shown as text, not passed through.
pub fn scoring_html() -> String {
    let parser = Parser::new_ext(SCORING_MD, Options::ENABLE_TABLES).map(|event| match event {
        Event::Html(text) | Event::InlineHtml(text) => Event::Text(text),
        other => other,
    });
    let mut out = String::with_capacity(SCORING_MD.len() * 2);
    pulldown_cmark::html::push_html(&mut out, parser);
    out
}

/// `/scoring`.
pub(crate) fn scoring() -> Html {
    let body = html! { div.prose { (trusted(scoring_html())) } };
    Html::ok(shell("How scoring works", &Head::default(), body))
}

/// `/bot`: what the bot does, in the site's words.
pub(crate) fn bot(public: &Url) -> Html {
    let bot_url = absolute(public, "/bot");
    let body = html! {
        h1 { "About RobotsTxtParser, the bot" }
        p { "RobotsTxtParser is the crawler behind this site. It identifies itself with "
            code { "RobotsTxtParser" } " and a link to this page (" code { "+" (bot_url) } "). If you found it in your logs, here is what it did and why." }
        h2 { "What it requests" }
        p { "For each site it analyses, it makes at most three kinds of request, and it follows no links:" }
        ul {
            li { code { "/robots.txt" } " at the root of the site, following up to 5 redirects." }
            li { "The one page being analysed, only when your robots.txt allows it. It reads the response headers and the "
                 code { "<head>" } " for " code { "X-Robots-Tag" } " headers and robots meta tags, stops at "
                 code { "</head>" } " or after 1 MB, and never runs scripts." }
            li { "The sitemaps your robots.txt declares, to check that they exist: the first 10, one at a time, none after 20 seconds, and only the first 2 KB of each." }
        }
        p { "A site is analysed when someone enters its address here, or when it is on the list of sites checked on a schedule; once analysed, it is checked again each time its result expires. Scheduled checks are slow on purpose: one site at a time, 15 seconds between sites, a URL at most once every 7 days, also when a site's back-off ends (only the address whose check failed is tried again then). An analysis someone asks for here is not part of the schedule: it fetches robots.txt and the page when asked, except that an address asked for less than 10 minutes ago gets that report instead of a new fetch. A site that could not be reached or asked for fewer requests is left alone for an hour, then twice as long after each failure in a row, up to 7 days, and a " code { "Retry-After" } " header is honoured up to the same limit. A site that refuses the bot or shows it a challenge is left alone from a day up to 30 days. A " code { "Crawl-delay" } " addressed to the bot spaces its requests within one analysis; it waits at most 10 seconds in all and skips what would take longer." }
        h2 { "How it follows RFC 9309" }
        ul {
            li { "It matches its product token against your " code { "User-agent" } " lines, ignoring case, and uses the " code { "*" } " group only when no group names it." }
            li { "The longest matching " code { "Allow" } " or " code { "Disallow" } " rule decides; on a tie, " code { "Allow" } " wins." }
            li { "A robots.txt answering 4xx means no rules. One answering 5xx or 429 is treated as disallowing every path." }
            li { "It reads up to 500 KB of robots.txt, and fetches it again for every analysis, just before the page, so it never acts on old rules." }
        }
        h2 { "What it keeps" }
        ul {
            li { "The robots.txt file (up to 500 KB), its status code, size, final address and redirects." }
            li { "The " code { "X-Robots-Tag" } " headers of robots.txt and of the analysed page, the page's robots meta tags and its status code." }
            li { "For each declared sitemap: whether it answered, its status code and content type, and whether it looks like a sitemap." }
            li { "The findings and the score worked out from all of that." }
            li { "The site's icon, shrunk to 64 pixels, looked for again when 30 days old (weekly while there is none): first the icons the home page declares, then " code { "/favicon.ico" } ", skipping any path your robots.txt forbids." }
        }
        p { "It keeps no page content, no cookies, no form data, and nothing about the people who visit your site." }
        h2 { "For how long" }
        p { "Each report is kept in full for 6 months. Then the reports of each domain are folded into one summary per month (how many reports, how many addresses, the best, average and lowest score) and deleted. The newest report of each address is the exception: it stays until a newer one replaces it, so the ranking and the domain pages still show the site's current state. A robots.txt pasted or uploaded here is never published and is deleted after the same 6 months, with no summary." }
        h2 { "Why" }
        p { "To show the state of the web when it comes to robots.txt: how sites use it, which crawlers they name, where files have mistakes, and how that changes over time. Every file is audited against the same rules and scored out of 100, so sites can be compared. "
            a href="/scoring" { "How scoring works" } "." }
        h2 { "What is published, and what search engines see" }
        p { "The home page ranks six domains of each grade, picked at random every 30 minutes, with totals for every site analysed. Each domain has a page at " code { "/score/{domain}" } " and each report one at " code { "/score/{domain}/{report}" } "; a report folded into its monthly summary leads to its domain page." }
        p { "A page that asks every crawler not to index it (" code { "noindex" } " or " code { "none" } ", in a header or a meta tag), or that your robots.txt keeps this bot or every crawler off, is left out of the ranking and of our sitemap.xml, with its older reports, and its report pages are sent with a noindex header and meta tag. A request made only to named crawlers is passed on to those crawlers in the same way. A domain page is kept out of search engines when none of the domain's addresses may be indexed." }
        h2 { "Blocking the bot" }
        p { "Add this to your robots.txt:" }
        pre { code { "User-agent: RobotsTxtParser\nDisallow: /" } }
        p { "The bot still reads robots.txt itself, since that is how it learns the rule, and reports on the file. It requests no page or sitemap your rules forbid. A sitemap on another host (www against the bare domain too) follows that host's own robots.txt, read first." }
        h2 { "Removing your data" }
        p { "Blocking the bot stops new requests but does not remove reports already published. To have the reports and monthly summaries of your domain removed, write to "
            a href=(format!("mailto:{CONTACT}")) { (CONTACT) } " from an address at that domain, or tell us how we can confirm you run it. Say so if you also want the domain kept off the ranking: anyone can still analyse a public robots.txt here, which creates a new report." }
    };
    Html::ok(shell("About the bot", &Head::default(), body))
}
