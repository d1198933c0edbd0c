//! The analysed page: its report and what its headers and meta tags tell crawlers.

use http::StatusCode;
use page::directives::PageDirectives;
use page::head::{self, MetaTag};
use robots::RobotsTxt;
use url::Url;

use crate::catalogue::CheckId;
use crate::collect::Findings;
use crate::crawlers::{self, CRAWLERS};
use crate::finding::{Evidence, Finding};
use crate::report::{PageReport, RobotsStatus, SkipReason};
use crate::run::Obeyed;

pub(crate) fn page_report(target: &Url, obeyed: Obeyed) -> PageReport {
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
    // The whole body read (up to the page cap) goes to the tokenizer, which decides where the
    // head ends: a byte search for `</head>` would stop inside a script or a comment.
    let meta: Vec<MetaTag> = match response {
        Some(response) if is_html => head::meta_tags(&response.body)
            .into_iter()
            .filter(|meta| PageDirectives::is_robots_meta(&meta.name, is_crawler))
            .collect(),
        _ => Vec::new(),
    };
    let directives = PageDirectives::read(
        x_robots_tag.iter().map(String::as_str),
        meta.iter()
            .map(|meta| (meta.name.as_str(), meta.content.as_str())),
        is_crawler,
    );
    PageReport {
        url: Some(target.clone()),
        path: Some(target[url::Position::BeforePath..].to_owned()),
        requested: response.is_some() || obeyed.error.is_some() || !obeyed.redirects.is_empty(),
        skipped: obeyed.skipped,
        status: response.and_then(|response| StatusCode::from_u16(response.status).ok()),
        final_url: obeyed.final_url,
        redirects: obeyed.redirects,
        content_type,
        x_robots_tag,
        meta,
        directives,
        error: obeyed.error.map(|error| error.to_string()),
    }
}

/// Whether a meta name addresses a crawler of the directory.
fn is_crawler(name: &str) -> bool {
    crawlers::find(name).is_some()
}

pub(crate) fn page_findings(
    page: &PageReport,
    robots: &RobotsTxt,
    status: RobotsStatus,
    findings: &mut Findings,
) {
    let Some(url) = page.url.as_ref() else {
        return;
    };
    let url = url.as_str();
    if let Some(error) = &page.error {
        findings.push(Finding::new(
            CheckId::PageUnreachable,
            Evidence::text(error).at_url(url),
        ));
    } else if let Some(code) = page.status.filter(|code| code.as_u16() >= 400) {
        findings.push(
            Finding::new(CheckId::PageUnreachable, Evidence::url(url))
                .with("status", code.as_u16()),
        );
    }
    if let Some(finding) = not_checked(page, url) {
        findings.push(finding);
    }
    directive_findings(&page.directives, url, findings);
    if status == RobotsStatus::Rules {
        noindex_unseen(page, robots, url, findings);
    }
}

/// Why the page, or a redirect of it, was not requested, when that is worth a finding.
fn not_checked(page: &PageReport, url: &str) -> Option<Finding> {
    let reason = page.skipped.as_ref()?;
    let redirected = page.requested;
    let worth_it = match reason {
        SkipReason::CrawlDelayBudget { .. } => true,
        SkipReason::RobotsUnreachable { .. } | SkipReason::Disallowed { .. } => redirected,
        _ => false,
    };
    if !worth_it {
        return None;
    }
    let at = match (&page.final_url, redirected) {
        (Some(final_url), true) => final_url.as_str(),
        _ => url,
    };
    Some(
        Finding::new(CheckId::PageNotChecked, Evidence::url(at))
            .with("skipped", reason)
            .with("redirected", redirected),
    )
}

/// Noindex for all or for some, conflicts and invalid directives.
fn directive_findings(directives: &PageDirectives, url: &str, findings: &mut Findings) {
    let evidence_for = |name: &str| {
        directives
            .directives
            .iter()
            .find(|d| d.name == name || (d.name == "none" && name == "noindex"))
            .map_or_else(
                || Evidence::url(url),
                |d| Evidence::text(d.source.to_string()).at_url(url),
            )
    };
    if directives.noindex_for_all() {
        findings.push(Finding::new(CheckId::PageNoindex, evidence_for("noindex")));
    }
    let scoped = directives.scoped("noindex");
    if !scoped.is_empty() {
        findings.push(
            Finding::new(CheckId::PageNoindexForBot, evidence_for("noindex"))
                .with("crawlers", scoped),
        );
    }
    for conflict in directives.conflicts() {
        findings.push(
            Finding::new(CheckId::PageConflict, evidence_for(&conflict.restrictive))
                .with("permissive", &conflict.permissive)
                .with("restrictive", &conflict.restrictive)
                .with("scope", &conflict.scope),
        );
    }
    for invalid in &directives.invalid {
        findings.push(
            Finding::new(
                CheckId::PageInvalidDirective,
                Evidence::text(invalid.source.to_string()).at_url(url),
            )
            .with("directive", &invalid.text)
            .with("reason", &invalid.reason),
        );
    }
}

/// Disallowed and noindex: the search engines that may not fetch the page never see its
/// noindex.
fn noindex_unseen(page: &PageReport, robots: &RobotsTxt, url: &str, findings: &mut Findings) {
    let path = page.path.as_deref().unwrap_or("/");
    for crawler in CRAWLERS.iter().filter(|crawler| crawler.major) {
        if !page.directives.noindex_for(crawler.token) {
            continue;
        }
        let rules = crawlers::rules_for(robots, crawler);
        let decision = rules.check(path);
        if let (false, Some(rule)) = (decision.allowed, decision.rule) {
            findings.push(
                Finding::new(
                    CheckId::LogicNoindexUnseen,
                    Evidence::line(rule.line, format!("{}: {}", rule.kind, rule.pattern))
                        .at_url(url),
                )
                .with("crawler", crawler.token)
                .with("kind", rule.kind.to_string())
                .with("pattern", rule.pattern),
            );
        }
    }
}
