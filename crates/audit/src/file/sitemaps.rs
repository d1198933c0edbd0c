//! The declared sitemaps, as written: invalid, repeated, disallowed, on another host.

use std::collections::HashMap;

use robots::{AgentRules, GroupSelection, RobotsTxt};
use url::Url;

use crate::catalogue::CheckId;
use crate::collect::Findings;
use crate::cost::units::CheckCost;
use crate::cost::{AuditStage, Budget};
use crate::crawlers::{self, CRAWLERS};
use crate::finding::{Evidence, Finding};

use super::{line_text, FileContext};

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
    context: &FileContext<'_>,
    findings: &mut Findings,
    budget: &mut Budget,
) {
    let declared = robots.sitemaps();
    if declared.is_empty() && !findings.has(&CheckId::SitemapInvalidUrl) {
        findings.push(Finding::new(CheckId::SitemapNone, Evidence::default()));
    }
    let audiences = audiences(robots);
    let mut seen: HashMap<&str, usize> = HashMap::new();
    for sitemap in declared {
        let at_line = |id: CheckId| {
            Finding::new(
                id,
                Evidence::line(sitemap.line, line_text(robots, sitemap.line)).at_url(&sitemap.url),
            )
        };
        if let Some(first) = seen.get(sitemap.url.as_str()) {
            let mut finding = at_line(CheckId::SitemapDuplicate).with("first_line", first);
            finding.evidence.related_lines.push(*first);
            findings.push(finding);
            continue;
        }
        seen.insert(&sitemap.url, sitemap.line);
        let url = match Url::parse(&sitemap.url) {
            Ok(url) if url.host_str().is_some_and(|host| !host.is_empty()) => url,
            _ => {
                findings.push(invalid_sitemap(
                    at_line(CheckId::SitemapInvalidUrl),
                    &sitemap.url,
                ));
                continue;
            }
        };
        let same_site = context
            .robots_url
            .is_none_or(|robots_url| origin(robots_url) == origin(&url));
        if !same_site {
            findings.push(
                at_line(CheckId::SitemapOtherHost).with("host", url.host_str().unwrap_or_default()),
            );
            continue;
        }
        let target = &url[url::Position::BeforePath..];
        let cost = audiences
            .iter()
            .map(|(_, _, rules_cost)| rules_cost.of_path(target))
            .fold(0, u64::saturating_add);
        if !budget.spend(cost) {
            budget.cut_short(AuditStage::Sitemaps);
            return;
        }
        if let Some(finding) = disallowed(&audiences, target, at_line(CheckId::SitemapDisallowed)) {
            findings.push(finding);
        }
    }
}

/// `finding`, completed, if the first audience that may not fetch the sitemap at `target`.
fn disallowed(
    audiences: &[(AgentRules, &'static str, CheckCost)],
    target: &str,
    finding: Finding,
) -> Option<Finding> {
    let (who, rule) = audiences.iter().find_map(|(rules, who, _)| {
        let decision = rules.check(target);
        match (decision.allowed, decision.rule) {
            (false, Some(rule)) => Some((*who, (rule.line, rule.kind, rule.pattern.to_owned()))),
            _ => None,
        }
    })?;
    let (line, kind, pattern) = rule;
    let mut finding = finding
        .with("path", target)
        .with("crawler", who)
        .with("rule_line", line)
        .with("kind", kind.to_string())
        .with("pattern", pattern);
    finding.evidence.related_lines.push(line);
    Some(finding)
}

/// Whom a sitemap is for: every crawler (`*`), unless `*` is shut out on purpose (an
/// allow-list), and the major search engines in any case; with what checking a URL against
/// their rules may cost.
fn audiences(robots: &RobotsTxt) -> Vec<(AgentRules, &'static str, CheckCost)> {
    let global = robots.global_rules();
    let mut audiences = Vec::new();
    if *global.group() != GroupSelection::Global || global.check("/").allowed {
        audiences.push((global, "*"));
    }
    for crawler in CRAWLERS.iter().filter(|crawler| crawler.major) {
        audiences.push((crawlers::rules_for(robots, crawler), crawler.token));
    }
    audiences
        .into_iter()
        .map(|(rules, who)| {
            let cost = CheckCost::of(&rules);
            (rules, who, cost)
        })
        .collect()
}

/// Says what is wrong with a sitemap URL that is not an absolute http(s) URL with a host.
pub(super) fn invalid_sitemap(finding: Finding, value: &str) -> Finding {
    let finding = finding.with("url", value);
    if value.is_empty() {
        return finding.with("problem", "empty");
    }
    if value.contains(char::is_whitespace) {
        return finding.with("problem", "whitespace");
    }
    // `http:///x` has no host, though URL parsers skip the extra slash and find one.
    let after_scheme = value.split_once("://").map(|(_, rest)| rest);
    if after_scheme.is_some_and(|rest| rest.is_empty() || rest.starts_with(['/', '?', '#'])) {
        return finding.with("problem", "no-host");
    }
    match Url::parse(value) {
        Err(url::ParseError::RelativeUrlWithoutBase) => finding.with("problem", "relative"),
        Err(url::ParseError::EmptyHost) => finding.with("problem", "no-host"),
        Err(error) => finding
            .with("problem", "invalid")
            .with("reason", error.to_string()),
        Ok(url) if !matches!(url.scheme(), "http" | "https") => finding
            .with("problem", "scheme")
            .with("scheme", url.scheme()),
        Ok(url) if url.host_str().is_none_or(str::is_empty) => finding.with("problem", "no-host"),
        Ok(_) => finding
            .with("problem", "invalid")
            .with("reason", "not an absolute http(s) URL"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn problem(value: &str) -> (String, Option<String>) {
        let finding = invalid_sitemap(
            Finding::new(CheckId::SitemapInvalidUrl, Evidence::default()),
            value,
        );
        (
            finding.text("problem").unwrap_or_default().to_owned(),
            finding.specific_title(),
        )
    }

    #[test]
    fn what_is_wrong_with_a_sitemap_url_is_said() {
        let (kind, title) = problem("ftp://h/x.xml");
        assert_eq!(kind, "scheme");
        assert_eq!(
            title.unwrap(),
            "\"ftp://h/x.xml\" uses ftp:, and crawlers read only http and https sitemaps"
        );
        let (kind, title) = problem("http://h/a b.xml");
        assert_eq!(kind, "whitespace");
        assert!(title.unwrap().contains("contains a space"));
        assert_eq!(problem("/sitemap.xml").0, "relative");
        assert_eq!(problem("sitemap.xml").0, "relative");
        assert_eq!(problem("http:///x.xml").0, "no-host");
        assert_eq!(problem("").0, "empty");
        let (kind, title) = problem("https://h:99999/x.xml");
        assert_eq!(kind, "invalid");
        assert!(title.unwrap().contains("invalid port"));
    }
}
