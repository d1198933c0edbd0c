//! The words of a finding: its title rendered from its parameters, and the catalogue's
//! explanation and fix. Nothing here is stored: a report read years later renders with the
//! wording of the day.
//!
//! Titles do not repeat the finding's line: whoever shows a finding shows its line beside it.

use std::fmt;

use crate::catalogue::{Category, CheckId};
use crate::crawlers;
use crate::finding::Finding;
use crate::report::SkipReason;

impl Finding {
    /// One line saying what was found, specific to this occurrence when its parameters allow,
    /// else the catalogue's generic title, else (a check this version does not know) its id.
    pub fn title(&self) -> String {
        self.specific_title()
            .unwrap_or_else(|| match self.id.check() {
                Some(check) => check.title.to_owned(),
                None => self.id.to_string(),
            })
    }

    /// The title rendered from the parameters; none when a parameter it needs is missing.
    pub fn specific_title(&self) -> Option<String> {
        if !self.id.is_known() {
            return None;
        }
        match self.category {
            Category::Fetching => fetching_title(self),
            Category::Syntax => syntax_title(self),
            Category::Logic => logic_title(self),
            Category::Sitemaps => sitemap_title(self),
            Category::Page => page_title(self),
            Category::Crawlers => crawler_title(self),
        }
    }

    /// Why it matters.
    pub fn why(&self) -> String {
        if self.id == CheckId::SyntaxFieldTypo && !self.flag("google_reads_it") {
            if let Some(meant) = self.text("meant") {
                return format!(
                    "Crawlers, Google included, ignore a field they do not know: this line has \
                     no effect, though it was probably meant as {meant}."
                );
            }
        }
        self.id
            .check()
            .map_or_else(String::new, |check| check.why.to_owned())
    }

    /// How to fix it.
    pub fn fix(&self) -> &'static str {
        self.id.check().map_or("", |check| check.fix)
    }
}

impl fmt::Display for Finding {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "[{}] ", self.severity)?;
        if let Some(line) = self.evidence.line {
            write!(f, "line {line}: ")?;
        }
        write!(f, "{} ({})", self.title(), self.id)
    }
}

/// How a failed request is described, by its failure kind: `fetch::ErrorKind`'s stable names,
/// and the names reports stored before (`connect`, `malformed`).
fn failure(kind: &str) -> &'static str {
    match kind {
        "dns" => "the host name does not resolve",
        "timeout" => "the request timed out",
        "connect" => "the connection failed",
        "connect_refused" => "the connection was refused",
        "connection_reset" => "the connection was reset",
        "tls" => "TLS failed",
        "address_refused" => "the address is not public and was not contacted",
        "malformed" | "malformed_response" => "the answer is not valid HTTP",
        "unsupported_encoding" => "the answer uses a content coding that was not asked for",
        "redirect" => "a redirect could not be followed",
        _ => "the request failed",
    }
}

/// `User-agent: X` for the group a crawler follows (`*`; empty: no group).
fn group(finding: &Finding) -> Option<String> {
    finding.text("group").map(|group| match group {
        "" => "no group".to_owned(),
        group => format!("User-agent: {group}"),
    })
}

/// `Disallow: /x` from the `kind` and `pattern` parameters (with a prefix for another rule).
fn rule(finding: &Finding, prefix: &str) -> Option<String> {
    let kind = finding.text(&format!("{prefix}kind"))?;
    let pattern = finding.text(&format!("{prefix}pattern"))?;
    Some(format!("{kind}: {pattern}"))
}

fn skipped(finding: &Finding) -> Option<SkipReason> {
    serde_json::from_value(finding.params.get("skipped")?.clone()).ok()
}

fn fetching_title(finding: &Finding) -> Option<String> {
    Some(match finding.id {
        CheckId::FetchUnreachable => format!(
            "robots.txt could not be fetched: {}",
            failure(finding.text("failure")?)
        ),
        CheckId::FetchTooManyRedirects => too_many_redirects(finding)?,
        CheckId::FetchRedirected => {
            format!("robots.txt redirects ({} hop(s))", finding.number("hops")?)
        }
        CheckId::FetchRedirectOtherHost => format!(
            "robots.txt of {} redirects to {}",
            finding.text("from_host")?,
            finding.text("to_host")?
        ),
        CheckId::FetchHtml => "robots.txt is an HTML page, not rules".to_owned(),
        CheckId::FetchContentType => {
            format!("robots.txt is served as {}", finding.text("content_type")?)
        }
        CheckId::FetchNoContentType => "robots.txt is served without a Content-Type".to_owned(),
        CheckId::FetchTooLarge => too_large(finding)?,
        CheckId::FetchEmpty => "robots.txt is empty: no rules".to_owned(),
        CheckId::FetchRobotsNoindex => "robots.txt is sent with an X-Robots-Tag header".to_owned(),
        _ => return status_title(finding),
    })
}

/// The titles of the checks that name the status robots.txt answered.
fn status_title(finding: &Finding) -> Option<String> {
    let status = finding.number("status");
    let meaning = match finding.id {
        CheckId::FetchServerError | CheckId::FetchRateLimited => {
            "every path is treated as disallowed"
        }
        CheckId::FetchForbidden => "major crawlers read that as no rules at all",
        CheckId::FetchNotFound => "no rules, every path may be crawled",
        CheckId::FetchOtherClientError => "crawlers read that as no rules",
        CheckId::FetchUnexpectedStatus if finding.flag("no_location") => {
            return Some(format!(
                "robots.txt answers {} without a Location: it is treated as a server error, \
                 every path disallowed",
                status?
            ));
        }
        CheckId::FetchUnexpectedStatus => "it is treated as a server error, every path disallowed",
        CheckId::FetchChallenge => {
            return Some(match status {
                Some(status @ (401 | 403)) => format!(
                    "robots.txt answers {status} with a bot challenge; crawlers get no rules"
                ),
                Some(_) => "robots.txt is answered with a bot challenge".to_owned(),
                None => "robots.txt is a bot challenge page, not rules".to_owned(),
            });
        }
        _ => return None,
    };
    Some(format!("robots.txt answers {}: {meaning}", status?))
}

fn too_many_redirects(finding: &Finding) -> Option<String> {
    let max = finding.number("max_redirects")?;
    Some(if finding.flag("looped") {
        "robots.txt redirects in a loop: it is treated as a server error, every path disallowed"
            .to_owned()
    } else {
        format!(
            "robots.txt redirects more than {max} times: it is treated as a server error, \
             every path disallowed"
        )
    })
}

fn too_large(finding: &Finding) -> Option<String> {
    let limit = finding.number("limit")?;
    Some(match (finding.number("bytes"), finding.number("ignored")) {
        (Some(bytes), Some(ignored)) => {
            format!("robots.txt is {bytes} bytes; the {ignored} bytes past {limit} are ignored")
        }
        _ => format!("robots.txt is larger than {limit} bytes; the rest is ignored"),
    })
}

fn syntax_title(finding: &Finding) -> Option<String> {
    Some(match finding.id {
        CheckId::SyntaxBom if finding.flag("partial") => {
            "the file starts with an incomplete UTF-8 byte order mark".to_owned()
        }
        CheckId::SyntaxBom => "the file starts with a UTF-8 byte order mark".to_owned(),
        CheckId::SyntaxInvalidUtf8 => "the line is not valid UTF-8".to_owned(),
        CheckId::SyntaxLongLine => format!(
            "the line is {} bytes long; Google cuts it at {}",
            finding.number("bytes")?,
            finding.number("limit")?
        ),
        CheckId::SyntaxFieldTypo => {
            let (field, meant) = (finding.text("field")?, finding.text("meant")?);
            if finding.flag("google_reads_it") {
                format!(
                    "\"{field}\" is ignored by RFC 9309 parsers, but Google reads it as {meant}"
                )
            } else {
                format!("\"{field}\" looks like a misspelt {meant}; crawlers ignore it")
            }
        }
        CheckId::SyntaxNoindex => "Noindex in robots.txt is ignored by search engines".to_owned(),
        CheckId::SyntaxExtensionField => {
            format!("non-standard field \"{}\"", finding.text("field")?)
        }
        CheckId::SyntaxUnknownField => {
            format!("unknown field \"{}\" is ignored", finding.text("field")?)
        }
        CheckId::SyntaxMissingColon => "the line has no colon and is ignored".to_owned(),
        CheckId::SyntaxRuleOutsideGroup => {
            "a rule before any User-agent applies to no crawler".to_owned()
        }
        CheckId::SyntaxCrawlDelayOutsideGroup => {
            "Crawl-delay before any User-agent applies to no crawler".to_owned()
        }
        CheckId::SyntaxEmptyUserAgent => "empty User-agent names no crawler".to_owned(),
        CheckId::SyntaxInvalidUserAgent => {
            "the User-agent value has no product token and matches no crawler".to_owned()
        }
        CheckId::SyntaxUserAgentFullString => format!(
            "a full User-Agent string, read as \"{}\"",
            finding.text("token")?
        ),
        CheckId::SyntaxUserAgentNotAToken => format!(
            "User-agent \"{}\" is read as \"{}\"",
            finding.text("value")?,
            finding.text("token")?
        ),
        CheckId::SyntaxStarredUserAgent => starred_user_agent(finding)?,
        CheckId::SyntaxAgentListSplit => agent_list_split(finding)?,
        _ => return rule_syntax_title(finding),
    })
}

/// Both readings of a `User-agent: *name*` line.
fn starred_user_agent(finding: &Finding) -> Option<String> {
    let value = finding.text("value")?;
    let rules = finding.number("rules")?;
    let effect = if finding.flag("disallows_all") {
        ", shutting every crawler out of the whole site".to_owned()
    } else {
        format!(" ({rules} rule(s))")
    };
    Some(format!(
        "User-agent: {value} names no crawler for RFC 9309 parsers, Google and JittyBot; \
         parsers that read only its leading * apply its rules to every crawler{effect}"
    ))
}

/// Both readings of a `User-agent` line after a `Crawl-delay`.
fn agent_list_split(finding: &Finding) -> Option<String> {
    Some(format!(
        "JittyBot reads User-agent: {} as a group of its own (the Crawl-delay on line {} \
         ends the list above), so its {} rule(s) apply to it alone; RFC 9309 parsers and \
         Google add it to the group of line {} (User-agent: {}), which then gets them too",
        finding.text("agent")?,
        finding.number("crawl_delay_line")?,
        finding.number("rules")?,
        finding.number("group_line")?,
        agent_list(finding)?
    ))
}

/// The agents of the group of an agent-list split, with how many more it has.
fn agent_list(finding: &Finding) -> Option<String> {
    let listed = finding.list("group_agents")?;
    let joined = listed.join(", ");
    Some(match finding.number("group_agents_total") {
        Some(total) if total > listed.len() as u64 => {
            format!("{joined} and {} more", total - listed.len() as u64)
        }
        _ => joined,
    })
}

fn rule_syntax_title(finding: &Finding) -> Option<String> {
    Some(match finding.id {
        CheckId::SyntaxPatternNotAPath if finding.flag("full_url") => {
            "the rule is a full URL; rules take a path starting with /".to_owned()
        }
        CheckId::SyntaxPatternNotAPath => {
            "the path starts with neither / nor * and never matches".to_owned()
        }
        CheckId::SyntaxDollarInPattern => {
            "$ before the end of the path is a literal dollar sign".to_owned()
        }
        CheckId::SyntaxRegex => {
            let what = match finding.text("regex")? {
                "caret" => "a leading ^",
                "backslash" => "a backslash escape",
                "dot-star" => "\".*\"",
                "dot-plus" => "\".+\"",
                "alternation" => "an alternation (a|b)",
                "class" => "a character class [...]",
                _ => "regular-expression syntax",
            };
            format!(
                "{what} in \"{}\" is not a wildcard",
                finding.text("pattern")?
            )
        }
        CheckId::SyntaxNonAscii => "unencoded non-ASCII path".to_owned(),
        CheckId::SyntaxInvalidCrawlDelay => {
            "Crawl-delay is not a number of seconds and is ignored".to_owned()
        }
        CheckId::SyntaxDuplicateCrawlDelay => "a second Crawl-delay in the same group".to_owned(),
        CheckId::SyntaxEmptyAllow => "Allow with no path adds no rule".to_owned(),
        CheckId::SyntaxEmptyDisallow => "empty Disallow allows everything".to_owned(),
        _ => return None,
    })
}

fn logic_title(finding: &Finding) -> Option<String> {
    Some(match finding.id {
        CheckId::LogicBlocksAll => {
            "Disallow: / applies to every crawler, Googlebot and Bingbot included".to_owned()
        }
        CheckId::PolicyAllowlist => {
            "* may not crawl; only crawlers with a group of their own may".to_owned()
        }
        CheckId::LogicSearchEngineBlocked => format!(
            "{} may not crawl the site ({})",
            finding.text("crawler")?,
            group(finding)?
        ),
        CheckId::PolicySearchEngineBlocked => format!(
            "search engines blocked by name: {}",
            finding.list("crawlers")?.join(", ")
        ),
        CheckId::LogicDropsGlobalRules => format!(
            "User-agent: {} does not repeat {} rule(s) of the * group, such as line {}: \
             Disallow: {}",
            finding.text("token")?,
            finding.number("dropped")?,
            finding.number("example_line")?,
            finding.text("example_pattern")?
        ),
        CheckId::LogicDuplicateGroup => format!(
            "{} already has a group at line {}",
            finding.text("token")?,
            finding.number("first_line")?
        ),
        CheckId::LogicResourcesBlocked => {
            format!("Googlebot may not fetch {}", finding.text("url")?)
        }
        CheckId::LogicPageDisallowed => format!(
            "{} is disallowed for {} by {}",
            finding.text("page")?,
            finding.list("crawlers")?.join(", "),
            rule(finding, "")?
        ),
        CheckId::PolicyBotBlocked => format!(
            "{} is disallowed for {} by {}",
            finding.text("page")?,
            crawlers::BOT_TOKEN,
            rule(finding, "")?
        ),
        CheckId::LogicNoindexUnseen => format!(
            "{} may not fetch the page ({}), so it never sees its noindex",
            finding.text("crawler")?,
            rule(finding, "")?
        ),
        _ => return rule_logic_title(finding),
    })
}

fn rule_logic_title(finding: &Finding) -> Option<String> {
    Some(match finding.id {
        CheckId::LogicRuleRepeated => format!(
            "repeats line {} for {}",
            finding.number("other_line")?,
            group(finding)?
        ),
        CheckId::LogicAllowDisallowSame => format!(
            "{} and line {}: {} name the same path for {}",
            finding.text("kind")?,
            finding.number("other_line")?,
            finding.text("other_kind")?,
            group(finding)?
        ),
        CheckId::LogicRuleShadowed | CheckId::LogicRuleRedundant if finding.flag("always_wins") => {
            format!(
                "{} never decides; line {}: {} always wins",
                rule(finding, "")?,
                finding.number("other_line")?,
                rule(finding, "other_")?
            )
        }
        CheckId::LogicRuleRedundant => format!(
            "{} is already covered by line {}: {}",
            rule(finding, "")?,
            finding.number("other_line")?,
            rule(finding, "other_")?
        ),
        CheckId::AuditLimited => format!(
            "{} has {} rules; shadowed and redundant rules were not looked for",
            group(finding)?,
            finding.number("rules")?
        ),
        CheckId::AuditComparisonsCapped => {
            let mut left_out = Vec::new();
            let not_compared = finding.number("not_compared")?;
            if not_compared > 0 {
                left_out.push(format!(
                    "the rules of {not_compared} of {} crawler groupings were not compared",
                    finding.number("rule_sets")?
                ));
            }
            let cut_short = finding.list("cut_short").unwrap_or_default();
            if !cut_short.is_empty() {
                left_out.push(format!("cut short: {}", cut_short.join(", ")));
            }
            format!(
                "the audit's comparison budget ({} units) ran out; {}",
                finding.number("budget")?,
                left_out.join("; ")
            )
        }
        CheckId::AuditIncomplete => format!(
            "the audit used its {} ms of CPU time; not run or cut short: {}",
            finding.number("cpu_budget_ms")?,
            finding.list("skipped")?.join(", ")
        ),
        _ => return None,
    })
}

fn sitemap_title(finding: &Finding) -> Option<String> {
    Some(match finding.id {
        CheckId::SitemapNone => "no Sitemap line".to_owned(),
        CheckId::SitemapInvalidUrl => invalid_sitemap(finding)?,
        CheckId::SitemapDuplicate => format!(
            "the sitemap is already declared at line {}",
            finding.number("first_line")?
        ),
        CheckId::SitemapDisallowed => format!(
            "the sitemap {} is disallowed for {} by line {}: {}",
            finding.text("path")?,
            match finding.text("crawler")? {
                "*" => "every crawler",
                crawler => crawler,
            },
            finding.number("rule_line")?,
            rule(finding, "")?
        ),
        CheckId::SitemapOtherHost => {
            format!("the sitemap is on another host ({})", finding.text("host")?)
        }
        CheckId::SitemapUnreachable => match (finding.text("error"), finding.number("status")) {
            (Some(error), _) => format!("the sitemap could not be fetched ({error})"),
            (None, Some(status)) => format!("the sitemap answers HTTP {status}"),
            (None, None) => "the sitemap gave no answer".to_owned(),
        },
        CheckId::SitemapNotASitemap => format!(
            "the sitemap does not look like one ({})",
            finding.text("content_type").unwrap_or("no content type")
        ),
        CheckId::SitemapHostsUnreachable => format!(
            "none of the {} declared sitemaps can be reached: {}",
            finding.number("sitemaps")?,
            finding.list("hosts")?.join(", ")
        ),
        CheckId::SitemapNotChecked => format!("the sitemap was not checked: {}", skipped(finding)?),
        _ => return None,
    })
}

/// What is wrong with a sitemap URL, from the `problem` parameter.
fn invalid_sitemap(finding: &Finding) -> Option<String> {
    let url = finding.text("url")?;
    Some(match finding.text("problem")? {
        "empty" => "the Sitemap line has no URL".to_owned(),
        "relative" => format!("\"{url}\" is relative; a sitemap needs an absolute URL"),
        "scheme" => format!(
            "\"{url}\" uses {}:, and crawlers read only http and https sitemaps",
            finding.text("scheme")?
        ),
        "whitespace" => {
            format!("\"{url}\" contains a space or tab; write it percent-encoded (%20)")
        }
        "no-host" => format!("\"{url}\" has no host"),
        _ => format!(
            "\"{url}\" is not a valid URL ({})",
            finding.text("reason").unwrap_or("unparsable")
        ),
    })
}

fn page_title(finding: &Finding) -> Option<String> {
    Some(match finding.id {
        CheckId::PageUnreachable => match (finding.number("status"), finding.text("failure")) {
            (Some(status), _) => format!("the page answers {status}"),
            (None, Some(kind)) => format!("the page could not be fetched: {}", failure(kind)),
            (None, None) => "the page could not be fetched".to_owned(),
        },
        CheckId::PageNotChecked => {
            let reason = skipped(finding)?;
            match (&reason, finding.flag("redirected")) {
                (SkipReason::Disallowed { .. }, true) => {
                    format!("the page redirects to a URL that is {reason}")
                }
                (_, true) => format!("a redirect of the page was not followed: {reason}"),
                (_, false) => format!("the page was not requested: {reason}"),
            }
        }
        CheckId::PageNoindex => "the page asks every crawler not to index it (noindex)".to_owned(),
        CheckId::PageNoindexForBot => format!(
            "the page asks {} not to index it",
            finding.list("crawlers")?.join(", ")
        ),
        CheckId::PageConflict => {
            let restrictive = finding.text("restrictive")?;
            format!(
                "{} and {restrictive} both address {}; search engines apply {restrictive}",
                finding.text("permissive")?,
                finding.text("scope").unwrap_or("every crawler")
            )
        }
        CheckId::PageInvalidDirective => format!(
            "\"{}\": {}",
            finding.text("directive")?,
            finding.text("reason")?
        ),
        _ => return None,
    })
}

/// `GPTBot (AI training)`, the purpose taken from the crawler directory.
fn with_purpose(token: &str) -> String {
    match crawlers::find(token) {
        Some(crawler) => format!("{token} ({})", crawler.purpose.label()),
        None => token.to_owned(),
    }
}

fn crawler_title(finding: &Finding) -> Option<String> {
    Some(match finding.id {
        CheckId::PolicyAiTrainingBlocked => format!(
            "AI training crawlers blocked: {}",
            finding.list("crawlers")?.join(", ")
        ),
        CheckId::PolicyCrawlerBlocked => format!(
            "notable crawlers blocked by name: {}",
            finding
                .list("crawlers")?
                .into_iter()
                .map(with_purpose)
                .collect::<Vec<_>>()
                .join(", ")
        ),
        CheckId::CrawlersIncoherent => format!(
            "{}: {} is blocked but {} may crawl",
            finding.text("operator")?,
            with_purpose(finding.text("crawler")?),
            with_purpose(finding.text("training_crawler")?)
        ),
        _ => return None,
    })
}
