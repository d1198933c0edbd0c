//! The analysed page: its report and what its headers and meta tags tell crawlers.

use page::directives::PageDirectives;
use page::head::{self, MetaTag};
use robots::RobotsTxt;
use url::Url;

use crate::collect::Findings;
use crate::crawlers::{self, CRAWLERS};
use crate::finding::{CheckId, Evidence, Finding};
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
