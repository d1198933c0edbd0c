//! The catalogue of checks: each check's stable id, severity, category, generic title, why it
//! matters and how to fix it.
//!
//! A finding stores only its check's id (with its severity and category at the time) and its
//! own evidence and parameters; the text comes from here when the finding is shown (see
//! [`crate::finding::Finding::title`]). A check's id never changes meaning once published; a
//! retired check's id still loads, as [`CheckId::Unknown`].

mod kinds;

use std::fmt;

use serde::{Deserialize, Serialize};

pub use kinds::{Category, Severity};

/// One entry of the catalogue.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Check {
    /// The check.
    pub id: CheckId,
    /// Its severity.
    pub severity: Severity,
    /// Its category.
    pub category: Category,
    /// A generic one-line title (findings render a specific one from their parameters).
    pub title: &'static str,
    /// Why it matters.
    pub why: &'static str,
    /// How to fix it.
    pub fix: &'static str,
}

macro_rules! checks {
    ($( $(#[$doc:meta])* $variant:ident = $id:literal, $severity:ident, $category:ident,
        $title:literal, $why:literal, $fix:literal; )*) => {
        /// The stable identifier of a check. Its string form (e.g. `syntax.missing-colon`)
        /// never changes meaning once published.
        #[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
        pub enum CheckId {
            $( $(#[$doc])* $variant, )*
            /// A check this version does not know: retired, or added by a later version. A
            /// stored report that names it still loads, and keeps the id.
            Unknown(String),
        }

        /// The catalogue: every check this version knows, in report order.
        pub const CHECKS: &[Check] = &[
            $( Check {
                id: CheckId::$variant,
                severity: Severity::$severity,
                category: Category::$category,
                title: $title,
                why: $why,
                fix: $fix,
            }, )*
        ];

        impl CheckId {
            /// The stable string id.
            pub fn as_str(&self) -> &str {
                match self {
                    $( CheckId::$variant => $id, )*
                    CheckId::Unknown(id) => id,
                }
            }

            /// The check with string id `id`; [`CheckId::Unknown`] when this version does not
            /// know it.
            pub fn from_id(id: &str) -> CheckId {
                match id {
                    $( $id => CheckId::$variant, )*
                    other => CheckId::Unknown(other.to_owned()),
                }
            }
        }
    };
}

checks! {
    // ----- Fetching -----
    /// robots.txt answered 5xx.
    FetchServerError = "fetch.server-error", Critical, Fetching,
        "robots.txt answers with a server error",
        "RFC 9309 tells crawlers to treat every path as disallowed while robots.txt answers 5xx: the whole site drops out of crawling, and search engines eventually drop pages.",
        "Serve robots.txt with status 200 (or 404 if you want no rules). Check the server, CDN or firewall rule that fails on /robots.txt.";
    /// robots.txt answered 429.
    FetchRateLimited = "fetch.rate-limited", Critical, Fetching,
        "robots.txt answers 429 Too Many Requests",
        "A crawler that gets 429 for robots.txt must not assume the site is open: it treats every path as disallowed and backs off.",
        "Exempt /robots.txt from rate limiting; it is requested rarely and must always answer.";
    /// robots.txt could not be fetched at all.
    FetchUnreachable = "fetch.unreachable", Critical, Fetching,
        "robots.txt could not be fetched",
        "DNS failures, timeouts, resets and refused connections are treated like a server error: every path is disallowed.",
        "Make sure the host resolves and answers on /robots.txt over the scheme and port the site uses.";
    /// Too many redirects, or a redirect loop.
    FetchTooManyRedirects = "fetch.too-many-redirects", Critical, Fetching,
        "robots.txt redirects too many times, or in a loop",
        "Crawlers follow at most 5 redirects (RFC 9309 section 2.3.1.2). Beyond that, or in a loop, the file is unreachable: RobotsTxtParser and JittyBot treat it as a server error and disallow every path, as careful crawlers do.",
        "Serve robots.txt directly, or with a single redirect to its final address.";
    /// 401 or 403.
    FetchForbidden = "fetch.forbidden", Error, Fetching,
        "robots.txt is forbidden (401/403)",
        "Major crawlers read a 4xx robots.txt as \"no rules\": every path may be crawled. A 401/403 usually comes from a firewall or bot protection that meant to do the opposite.",
        "Let crawlers fetch /robots.txt with status 200, and put the rules you want in it.";
    /// A challenge page was served instead of robots.txt.
    FetchChallenge = "fetch.challenge", Error, Fetching,
        "a bot challenge is served instead of robots.txt",
        "Crawlers cannot solve challenges: they get no rules (or an error), and cannot learn what you want.",
        "Exempt /robots.txt from bot protection and challenges.";
    /// An HTML page served as robots.txt.
    FetchHtml = "fetch.html", Error, Fetching,
        "an HTML page is served as robots.txt",
        "The markup is read as invalid lines and ignored, so crawlers see no rules at all; usually a catch-all route or a soft 404.",
        "Serve a real plain-text robots.txt, or answer 404 if you want none.";
    /// 404 or 410.
    FetchNotFound = "fetch.not-found", Warning, Fetching,
        "there is no robots.txt (404)",
        "Without a file every crawler may fetch everything, and you cannot point crawlers to your sitemap.",
        "Publish a robots.txt, even a minimal one with a Sitemap line.";
    /// Another 4xx status.
    FetchOtherClientError = "fetch.client-error", Warning, Fetching,
        "robots.txt answers with an unexpected 4xx status",
        "Crawlers read any 4xx other than 429 as \"no rules\".",
        "Serve robots.txt with status 200.";
    /// Another unexpected status (1xx, 3xx without location, 6xx and above).
    FetchUnexpectedStatus = "fetch.unexpected-status", Critical, Fetching,
        "robots.txt answers with an unexpected status",
        "A status outside 2xx, 4xx and 5xx, or a redirect without a Location, gives crawlers no file to read: RobotsTxtParser and JittyBot treat it as a server error and disallow every path, and other crawlers disagree about it.",
        "Serve robots.txt with status 200.";
    /// Redirect to another host.
    FetchRedirectOtherHost = "fetch.redirect-other-host", Warning, Fetching,
        "robots.txt redirects to another host",
        "The rules then come from another host's file. Google follows such redirects, but some crawlers do not, and the rules of one host can silently change another's.",
        "Serve each host's robots.txt on that host.";
    /// Any redirect.
    FetchRedirected = "fetch.redirected", Info, Fetching,
        "robots.txt is redirected",
        "Crawlers follow up to 5 redirects for robots.txt; one hop is normal (for example http to https).",
        "Nothing to do, unless the redirect was not intended.";
    /// Content type other than text/plain.
    FetchContentType = "fetch.content-type", Warning, Fetching,
        "robots.txt is not served as text/plain",
        "RFC 9309 expects a text/plain file. Some crawlers refuse other types; a wrong type often reveals an error page.",
        "Serve robots.txt with Content-Type: text/plain; charset=utf-8.";
    /// No content type.
    FetchNoContentType = "fetch.no-content-type", Notice, Fetching,
        "robots.txt has no Content-Type",
        "Most crawlers cope, but a missing type is fragile.",
        "Serve robots.txt with Content-Type: text/plain; charset=utf-8.";
    /// Over 500 KiB.
    FetchTooLarge = "fetch.too-large", Error, Fetching,
        "robots.txt is larger than 500 KiB",
        "Crawlers read at most 500 KiB (RFC 9309 section 2.5); rules past the limit are ignored.",
        "Consolidate the rules: disallow directories rather than single URLs, and use wildcards.";
    /// Empty file.
    FetchEmpty = "fetch.empty", Notice, Fetching,
        "robots.txt is empty",
        "An empty file means no rules: every crawler may fetch everything.",
        "Add at least a Sitemap line, and the rules you want.";
    /// X-Robots-Tag on robots.txt itself.
    FetchRobotsNoindex = "fetch.robots-txt-noindex", Info, Fetching,
        "robots.txt itself carries X-Robots-Tag",
        "A noindex on robots.txt only keeps the file out of search results; crawlers still obey it.",
        "Nothing to do.";

    // ----- Syntax -----
    /// UTF-8 byte order mark.
    SyntaxBom = "syntax.bom", Notice, Syntax,
        "the file starts with a byte order mark",
        "RFC 9309 parsers and Google skip it, but some older parsers read it as part of the first field, losing the first line.",
        "Save the file as UTF-8 without BOM.";
    /// Invalid UTF-8.
    SyntaxInvalidUtf8 = "syntax.invalid-utf8", Warning, Syntax,
        "the file is not valid UTF-8",
        "robots.txt must be UTF-8. Paths in another encoding (Latin-1, Windows-1252) do not match the URLs crawlers request.",
        "Save the file as UTF-8, and percent-encode non-ASCII paths.";
    /// Very long line.
    SyntaxLongLine = "syntax.long-line", Warning, Syntax,
        "a line is very long",
        "Google's parser cuts lines after 16,664 bytes; the rest of the line is lost and a pattern can become broader than intended.",
        "Split the rule, or use a wildcard.";
    /// A typo of a known field.
    SyntaxFieldTypo = "syntax.field-typo", Error, Syntax,
        "a misspelt field name",
        "Strict RFC 9309 parsers ignore the line. Google accepts a few common misspellings (Dissallow, Useragent...), so crawlers disagree about the rule.",
        "Spell the field exactly: User-agent, Allow, Disallow, Sitemap or Crawl-delay.";
    /// Noindex in robots.txt.
    SyntaxNoindex = "syntax.noindex", Error, Syntax,
        "Noindex: in robots.txt is not supported",
        "No major search engine honours Noindex in robots.txt (Google stopped in 2019): the pages may still be indexed.",
        "Use a robots meta tag or an X-Robots-Tag header on the pages, and let crawlers fetch them to see it.";
    /// A non-standard extension field.
    SyntaxExtensionField = "syntax.extension-field", Info, Syntax,
        "a non-standard field",
        "Fields such as Host, Clean-param or Content-Signal are extensions some crawlers read; RFC 9309 crawlers ignore them.",
        "Nothing to do if you meant it.";
    /// An unknown field.
    SyntaxUnknownField = "syntax.unknown-field", Warning, Syntax,
        "an unknown field",
        "Crawlers ignore fields they do not know; the line has no effect.",
        "Remove the line, or use one of User-agent, Allow, Disallow, Sitemap, Crawl-delay.";
    /// A missing colon.
    SyntaxMissingColon = "syntax.missing-colon", Error, Syntax,
        "a line without a colon",
        "A line needs a field, a colon and a value; without the colon crawlers ignore it.",
        "Write it as Field: value, or make it a comment with #.";
    /// A rule before any user-agent.
    SyntaxRuleOutsideGroup = "syntax.rule-outside-group", Error, Syntax,
        "a rule before any User-agent line",
        "Rules belong to the group of the User-agent lines above them; a rule before any group applies to no crawler.",
        "Put User-agent: * (or the crawler you mean) above the rule.";
    /// Crawl-delay before any user-agent.
    SyntaxCrawlDelayOutsideGroup = "syntax.crawl-delay-outside-group", Warning, Syntax,
        "a Crawl-delay before any User-agent line",
        "Crawl-delay belongs to a group; outside one it applies to no crawler.",
        "Move it into the group of the crawlers it is for.";
    /// Empty user-agent.
    SyntaxEmptyUserAgent = "syntax.empty-user-agent", Error, Syntax,
        "an empty User-agent",
        "An empty User-agent names no crawler: its group's rules apply to nobody.",
        "Name the crawler, or use * for all.";
    /// A user-agent with no product token.
    SyntaxInvalidUserAgent = "syntax.invalid-user-agent", Warning, Syntax,
        "a User-agent that is not a product token",
        "Crawlers match User-agent values by product token (letters, '-' and '_'); a value starting otherwise matches no crawler.",
        "Use the crawler's product token as it documents it.";
    /// A full User-Agent string used as a token.
    SyntaxUserAgentFullString = "syntax.user-agent-full-string", Warning, Syntax,
        "a full User-Agent header used as a token",
        "Only the product token counts; a browser-style string is read as its first word (often Mozilla), which names no crawler.",
        "Write only the product token, e.g. User-agent: Googlebot.";
    /// A User-agent that starts with * and names something.
    SyntaxStarredUserAgent = "syntax.starred-user-agent", Warning, Syntax,
        "a User-agent value that starts with * and names something",
        "Only a bare * is the group for every crawler (RFC 9309 section 2.2.1). A value like *bot* is no product token: RFC 9309 parsers, Google and JittyBot read it as naming no crawler, so its rules apply to nobody; parsers that look only at its first character read it as *, and apply its rules to every crawler. The file means different things to different crawlers.",
        "Name the crawler by its product token (User-agent: OrkashBot), or write * alone for every crawler.";
    /// A Crawl-delay between two User-agent lines.
    SyntaxAgentListSplit = "syntax.agent-list-split", Warning, Syntax,
        "a Crawl-delay splits a list of User-agent lines",
        "JittyBot closes a list of User-agent lines at a Crawl-delay, so the User-agent after it starts a group of its own, with the rules below (the media example of its documentation means exactly that). RFC 9309 parsers and Google ignore the Crawl-delay line and make one group of all the agents, which then all get those rules. The file means different things to different crawlers.",
        "Write each group's User-agent lines together, then its Crawl-delay and its rules; give agents that need different rules groups of their own, separated by a rule line.";
    /// A token with a version or other suffix.
    SyntaxUserAgentNotAToken = "syntax.user-agent-not-a-token", Notice, Syntax,
        "a User-agent with text after its product token",
        "Only the product token counts (Googlebot/2.1 means Googlebot); some parsers compare the whole value and never match.",
        "Write only the product token.";
    /// A path starting with neither / nor *.
    SyntaxPatternNotAPath = "syntax.pattern-not-a-path", Error, Syntax,
        "a rule path that starts with neither / nor *",
        "Rules match URL paths, which start with '/': this rule never matches (Google prepends '/', others ignore it).",
        "Start the path with '/', and never write the scheme and host.";
    /// $ in mid-pattern.
    SyntaxDollarInPattern = "syntax.dollar-mid-pattern", Warning, Syntax,
        "a $ before the end of a path",
        "$ anchors only as the last character; elsewhere it is a literal dollar sign.",
        "Put $ last, or remove it.";
    /// Regex syntax.
    SyntaxRegex = "syntax.regex", Warning, Syntax,
        "regular-expression syntax in a path",
        "Paths support only * and $; characters like ., ?, +, ( or \\ are literal, so regex-style rules match something else.",
        "Rewrite the rule with * and $ only.";
    /// Raw non-ASCII in a path.
    SyntaxNonAscii = "syntax.non-ascii-path", Notice, Syntax,
        "a path with unencoded non-ASCII characters",
        "RFC 9309 crawlers percent-encode it before matching, but older parsers compare raw bytes and miss.",
        "Write the path percent-encoded (e.g. /caf%C3%A9).";
    /// Invalid crawl-delay.
    SyntaxInvalidCrawlDelay = "syntax.invalid-crawl-delay", Warning, Syntax,
        "a Crawl-delay that is not a number of seconds",
        "Crawlers ignore a Crawl-delay they cannot read.",
        "Give a plain number of seconds, e.g. Crawl-delay: 5.";
    /// Several crawl-delays in one group.
    SyntaxDuplicateCrawlDelay = "syntax.duplicate-crawl-delay", Notice, Syntax,
        "several Crawl-delay lines in one group",
        "Crawlers disagree which one applies (first, last or largest).",
        "Keep one Crawl-delay per group.";
    /// An empty Allow.
    SyntaxEmptyAllow = "syntax.empty-allow", Notice, Syntax,
        "an Allow with no path",
        "An empty Allow adds no rule.",
        "Remove it, or give the path you meant.";
    /// An empty Disallow (the allow-all idiom).
    SyntaxEmptyDisallow = "syntax.empty-disallow", Info, Syntax,
        "an empty Disallow (allows everything)",
        "Disallow: with no path is the classic way to allow everything; it adds no rule.",
        "Nothing to do.";

    // ----- Logic -----
    /// Everything blocked for everyone.
    LogicBlocksAll = "logic.blocks-all", Critical, Logic,
        "every crawler is disallowed from the whole site",
        "Disallow: / for * with no named group for the major search engines keeps the whole site out of crawling; a leftover from staging is the usual cause.",
        "Remove Disallow: / from the * group, or give the crawlers you want a group of their own.";
    /// A major search engine blocked.
    LogicSearchEngineBlocked = "logic.search-engine-blocked", Error, Logic,
        "a major search engine is disallowed from the whole site",
        "Googlebot or Bingbot cannot crawl the site, so it will drop out of their results.",
        "Remove Disallow: / from that crawler's group (or its fallback).";
    /// A named group drops the * rules.
    LogicDropsGlobalRules = "logic.named-group-drops-global", Warning, Logic,
        "a named group silently drops the * rules",
        "A crawler with a group of its own never reads the * group: the global rules you did not repeat do not apply to it.",
        "Repeat the global rules you still want inside the named group.";
    /// A token named by several groups.
    LogicDuplicateGroup = "logic.duplicate-group", Warning, Logic,
        "the same crawler is named by several groups",
        "RFC 9309 crawlers merge the groups, but older parsers read only the first one.",
        "Merge the groups into one.";
    /// Identical Allow and Disallow.
    LogicAllowDisallowSame = "logic.allow-disallow-same", Warning, Logic,
        "identical Allow and Disallow rules",
        "On a tie RFC 9309 crawlers let Allow win, but others take the first line: crawlers disagree.",
        "Keep one of the two.";
    /// A rule that never decides because an opposite rule always wins.
    LogicRuleShadowed = "logic.rule-shadowed", Warning, Logic,
        "a rule that never takes effect",
        "Another rule matches every URL this one matches and always wins (longest match, Allow on a tie): this rule never decides anything.",
        "Remove the rule, or make it more specific than the one that wins.";
    /// A rule made redundant by a broader rule of the same kind.
    LogicRuleRedundant = "logic.rule-redundant", Notice, Logic,
        "a rule covered by a broader rule",
        "A broader rule of the same kind already covers every URL this one matches.",
        "Remove the narrower rule.";
    /// A rule repeated in the same group.
    LogicRuleRepeated = "logic.rule-repeated", Notice, Logic,
        "a repeated rule",
        "The same rule appears twice for the same crawler; the copy has no effect.",
        "Remove the copy.";
    /// CSS or JS blocked.
    LogicResourcesBlocked = "logic.resources-blocked", Warning, Logic,
        "CSS or JavaScript is disallowed",
        "Search engines render pages; without their CSS and JavaScript they can misjudge them (mobile-friendliness, content).",
        "Allow crawlers to fetch stylesheets and scripts, e.g. Allow: /*.css and Allow: /*.js.";
    /// The analysed page disallowed.
    LogicPageDisallowed = "logic.page-disallowed", Warning, Logic,
        "the analysed page is disallowed",
        "Crawlers following these rules will not fetch the page.",
        "If the page should be crawled, remove or narrow the deciding rule.";
    /// Disallowed and noindex.
    LogicNoindexUnseen = "logic.noindex-unseen", Warning, Logic,
        "a page is both disallowed and noindex",
        "A crawler that may not fetch the page never sees its noindex, so the URL can still be indexed from links, without content.",
        "To keep the page out of results, allow crawling and keep the noindex; to save crawling, keep the Disallow and drop the noindex.";
    /// The whole site is closed to our bot.
    PolicyBotBlocked = "policy.bot-blocked", Info, Logic,
        "RobotsTxtParser may not fetch the page",
        "You have asked this analysis bot to stay away; it reports on robots.txt only.",
        "Nothing to do.";
    /// Only named crawlers may crawl.
    PolicyAllowlist = "policy.allowlist", Info, Logic,
        "only named crawlers may crawl",
        "The * group disallows everything and named groups let chosen crawlers in: a deliberate allow-list.",
        "Nothing to do if intended; remember every new crawler is shut out.";
    /// A non-major search engine blocked.
    PolicySearchEngineBlocked = "policy.search-engine-blocked", Info, Logic,
        "a search engine is disallowed",
        "Blocking a regional or minor search engine is a legitimate policy.",
        "Nothing to do if intended.";
    /// The audit skipped pairwise checks on a huge group.
    AuditLimited = "audit.limited", Info, Logic,
        "some rule comparisons were skipped",
        "A group has too many rules to compare each pair; shadowed and redundant rules were not looked for in it.",
        "Nothing to do.";
    /// The audit's comparison budget ran out before every crawler's rules were compared.
    AuditComparisonsCapped = "audit.comparisons-capped", Info, Logic,
        "the rules of some crawlers were not compared",
        "The file names so many crawlers with so many rules that comparing them all would cost more than one audit may spend; the crawlers left over were not checked for shadowed, redundant or dropped rules.",
        "Nothing to do, unless the file is larger than it needs to be: one group can name many crawlers.";
    /// The audit's CPU budget ran out: some checks were not run.
    AuditIncomplete = "audit.incomplete", Info, Logic,
        "the audit stopped before its end",
        "Auditing this file took more CPU time than one audit may use, so the checks listed were cut short or not run, and their findings may be missing from the score.",
        "Nothing to do; a smaller or simpler file is audited in full.";

    // ----- Sitemaps -----
    /// No sitemap declared.
    SitemapNone = "sitemap.none", Warning, Sitemaps,
        "no sitemap is declared",
        "A Sitemap line is the simplest way to tell every crawler where your URLs are.",
        "Add Sitemap: https://your.site/sitemap.xml (an absolute URL).";
    /// Relative or invalid sitemap URL.
    SitemapInvalidUrl = "sitemap.invalid-url", Error, Sitemaps,
        "a sitemap URL that is not an absolute http(s) URL",
        "Sitemap lines need an absolute http(s) URL; crawlers ignore others.",
        "Write the full URL, e.g. Sitemap: https://your.site/sitemap.xml.";
    /// Sitemap declared twice.
    SitemapDuplicate = "sitemap.duplicate", Notice, Sitemaps,
        "a sitemap declared twice",
        "The copy has no effect.",
        "Remove the copy.";
    /// The file disallows its own sitemap.
    SitemapDisallowed = "sitemap.disallowed", Warning, Sitemaps,
        "a sitemap is disallowed by the same file",
        "Crawlers that obey the rules cannot fetch the sitemap you point them to.",
        "Allow the sitemap's path, e.g. Allow: /sitemap.xml.";
    /// Sitemap on another host.
    SitemapOtherHost = "sitemap.other-host", Info, Sitemaps,
        "a sitemap on another host",
        "Allowed by sitemaps.org when declared in robots.txt; that host's own robots.txt decides whether it may be fetched.",
        "Nothing to do if intended.";
    /// Sitemap did not answer or answered an error.
    SitemapUnreachable = "sitemap.unreachable", Error, Sitemaps,
        "a declared sitemap cannot be fetched",
        "Crawlers that follow the Sitemap line find nothing.",
        "Fix the URL or publish the sitemap.";
    /// Sitemap answered but is not a sitemap.
    SitemapNotASitemap = "sitemap.not-a-sitemap", Error, Sitemaps,
        "a declared sitemap does not look like a sitemap",
        "The start of the response is neither <urlset>, <sitemapindex>, a feed, a list of URLs nor gzip data; often an HTML page or a soft 404.",
        "Point the Sitemap line at the real sitemap file.";
    /// No declared sitemap could be reached: every host refused or unreachable.
    SitemapHostsUnreachable = "sitemap.hosts-unreachable", Error, Sitemaps,
        "no declared sitemap can be reached",
        "Every declared sitemap is on a host that does not resolve, refuses the connection, fails or is not public: crawlers that follow the Sitemap lines find nothing.",
        "Point the Sitemap lines at the sitemaps on your live public host.";
    /// Sitemap not requested (caps, budget or rules of its host).
    SitemapNotChecked = "sitemap.not-checked", Info, Sitemaps,
        "a sitemap was not checked",
        "The bot checks only the first sitemaps, starts none once its time budget is spent, waits only so long for a crawl-delay, and requests none its rules forbid; the finding says which limit applied.",
        "Nothing to do.";

    // ----- Page -----
    /// Page asks not to be indexed.
    PageNoindex = "page.noindex", Warning, Page,
        "the page asks every crawler not to index it",
        "noindex (or none) keeps the page out of search results; on a page someone chose to analyse it is often left over from staging.",
        "Remove the noindex if the page should appear in search results.";
    /// Page asks a named crawler not to index.
    PageNoindexForBot = "page.noindex-bot", Info, Page,
        "the page asks a named crawler not to index it",
        "A directive addressed to one crawler is a deliberate choice.",
        "Nothing to do if intended.";
    /// Conflicting directives.
    PageConflict = "page.conflicting-directives", Warning, Page,
        "conflicting robots directives",
        "When directives conflict, search engines apply the most restrictive one, which may not be the one you meant.",
        "Keep one consistent set of directives in the meta tags and headers.";
    /// Invalid directive values.
    PageInvalidDirective = "page.invalid-directive", Warning, Page,
        "an invalid robots directive",
        "Search engines ignore directives and values they do not know.",
        "Use the documented directives (noindex, nofollow, none, noarchive, nosnippet, max-snippet:N, ...).";
    /// Page could not be fetched.
    PageUnreachable = "page.unreachable", Warning, Page,
        "the analysed page could not be fetched",
        "The page answered an error or could not be reached, so its headers and meta tags were not read.",
        "Check the URL.";
    /// Page not fetched because of crawl-delay or a redirect the bot may not follow.
    PageNotChecked = "page.not-checked", Info, Page,
        "the page was not checked",
        "The page was not requested (rules, a redirect off the site, or the crawl-delay budget).",
        "Nothing to do.";

    // ----- Crawlers -----
    /// Incoherent policy of one operator.
    CrawlersIncoherent = "crawlers.incoherent", Warning, Crawlers,
        "an incoherent policy towards one operator's crawlers",
        "An operator's search or user-triggered fetcher is blocked while its training crawler is allowed: the content is still taken, only the visible uses are refused.",
        "Decide per operator, and block the training crawler too if that is the intent.";
    /// AI training crawlers blocked.
    PolicyAiTrainingBlocked = "policy.ai-training-blocked", Info, Crawlers,
        "AI training crawlers are blocked",
        "A deliberate policy; it does not affect search engines.",
        "Nothing to do.";
    /// Crawler-specific policy facts.
    PolicyCrawlerBlocked = "policy.crawler-blocked", Info, Crawlers,
        "some notable crawlers are blocked",
        "A deliberate policy.",
        "Nothing to do.";
}

impl CheckId {
    /// The catalogue entry of this check; none for a check this version does not know.
    pub fn check(&self) -> Option<&'static Check> {
        CHECKS.iter().find(|check| check.id == *self)
    }

    /// The check's severity in this version's catalogue.
    pub fn severity(&self) -> Option<Severity> {
        self.check().map(|check| check.severity)
    }

    /// Whether this version knows the check.
    pub fn is_known(&self) -> bool {
        !matches!(self, CheckId::Unknown(_))
    }
}

impl fmt::Display for CheckId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl Serialize for CheckId {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.as_str())
    }
}

impl<'de> Deserialize<'de> for CheckId {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let id = String::deserialize(deserializer)?;
        Ok(CheckId::from_id(&id))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_id_is_unique_dotted_and_round_trips() {
        let mut seen = std::collections::HashSet::new();
        for check in CHECKS {
            assert!(seen.insert(check.id.as_str()), "{}", check.id);
            assert!(check.id.as_str().contains('.'));
            assert!(!check.why.is_empty() && !check.fix.is_empty());
            assert!(check.id.is_known());
            assert_eq!(CheckId::from_id(check.id.as_str()), check.id);
            assert_eq!(check.id.check(), Some(check));
        }
    }

    #[test]
    fn an_unknown_id_is_kept() {
        let id: CheckId = serde_json::from_str("\"syntax.retired-check\"").unwrap();
        assert_eq!(id, CheckId::Unknown("syntax.retired-check".into()));
        assert_eq!(id.check(), None);
        assert_eq!(
            serde_json::to_string(&id).unwrap(),
            "\"syntax.retired-check\""
        );
    }

    #[test]
    fn policies_are_info() {
        for check in CHECKS {
            if check.id.as_str().starts_with("policy.") {
                assert_eq!(check.severity, Severity::Info, "{}", check.id);
            }
        }
    }
}
