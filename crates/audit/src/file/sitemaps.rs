//! The declared sitemaps, as written: invalid, repeated, disallowed, on another host.

use std::collections::HashMap;

use robots::{AgentRules, GroupSelection, RobotsTxt};
use url::Url;

use crate::collect::Findings;
use crate::crawlers::{self, CRAWLERS};
use crate::finding::{CheckId, Evidence, Finding};
use crate::source::Source;

use super::FileContext;

/// Scheme, host and port of a URL.
pub(crate) fn origin(url: &Url) -> (String, String, Option<u16>) {
    (
        url.scheme().to_owned(),
        url.host_str().unwrap_or_default().to_ascii_lowercase(),
        url.port_or_known_default(),
    )
}

pub(super) fn sitemaps(
    robots: &RobotsTxt,
    source: &Source<'_>,
    context: &FileContext<'_>,
    findings: &mut Findings,
) {
    let declared = robots.sitemaps();
    if declared.is_empty() && !findings.has(CheckId::SitemapInvalidUrl) {
        findings.push(Finding::new(
            CheckId::SitemapNone,
            "no Sitemap line",
            Evidence::default(),
        ));
    }
    let mut seen: HashMap<String, usize> = HashMap::new();
    // Whom the sitemap is for: every crawler, unless * is shut out on purpose (an allow-list),
    // and the major search engines in any case.
    let global = robots.rules_for(&[]);
    let mut audiences: Vec<(AgentRules, &str)> = Vec::new();
    if *global.group() != GroupSelection::Global || global.check("/").allowed {
        audiences.push((global, "every crawler"));
    }
    for crawler in CRAWLERS.iter().filter(|crawler| crawler.major) {
        audiences.push((crawlers::rules_for(robots, crawler), crawler.token));
    }
    for sitemap in declared {
        let evidence = || Evidence {
            url: Some(sitemap.url.clone()),
            ..Evidence::line(sitemap.line, source.text(sitemap.line))
        };
        if let Some(first) = seen.get(&sitemap.url) {
            findings.push(Finding::new(
                CheckId::SitemapDuplicate,
                format!(
                    "line {}: sitemap already declared at line {first}",
                    sitemap.line
                ),
                evidence().with_related([*first]),
            ));
            continue;
        }
        seen.insert(sitemap.url.clone(), sitemap.line);
        let url = match Url::parse(&sitemap.url) {
            Ok(url) if url.host_str().is_some_and(|host| !host.is_empty()) => url,
            _ => {
                findings.push(Finding::new(
                    CheckId::SitemapInvalidUrl,
                    format!(
                        "line {}: \"{}\" is not a valid URL",
                        sitemap.line,
                        crate::finding::excerpt(&sitemap.url)
                    ),
                    evidence(),
                ));
                continue;
            }
        };
        let same_site = context
            .robots_url
            .is_none_or(|robots_url| origin(robots_url) == origin(&url));
        if !same_site {
            findings.push(Finding::new(
                CheckId::SitemapOtherHost,
                format!(
                    "line {}: sitemap on another host ({})",
                    sitemap.line,
                    url.host_str().unwrap_or_default()
                ),
                evidence(),
            ));
            continue;
        }
        let target = &url[url::Position::BeforePath..];
        for (rules, who) in &audiences {
            let decision = rules.check(target);
            if let (false, Some(rule)) = (decision.allowed, decision.rule) {
                findings.push(Finding::new(
                    CheckId::SitemapDisallowed,
                    format!(
                        "line {}: the sitemap {target} is disallowed for {who} by line {}: {}: {}",
                        sitemap.line, rule.line, rule.kind, rule.pattern
                    ),
                    evidence().with_related([rule.line]),
                ));
                break;
            }
        }
    }
}
