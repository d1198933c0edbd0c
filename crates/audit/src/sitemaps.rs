//! The declared sitemaps, requested as the bot does: what answered and what looks like one.

use http::StatusCode;
use robots::{RobotsTxt, Sitemap};
use tokio::time::Instant;
use url::Url;

use crate::catalogue::CheckId;
use crate::collect::Findings;
use crate::finding::{Evidence, Finding};
use crate::net::Transport;
use crate::report::{Purpose, SitemapKind, SitemapReport, SkipReason};
use crate::run::{millis, Obeyed, Run};

/// Recognises a sitemap from its first bytes.
pub fn sniff_sitemap(body: &[u8]) -> Option<SitemapKind> {
    if body.starts_with(&[0x1f, 0x8b]) {
        return Some(SitemapKind::Gzip);
    }
    let body = body.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(body);
    let start = body.iter().position(|b| !b.is_ascii_whitespace())?;
    let text: Vec<u8> = body[start..].iter().map(u8::to_ascii_lowercase).collect();
    let has = |needle: &[u8]| text.windows(needle.len()).any(|window| window == needle);
    if text.starts_with(b"<") {
        if has(b"<urlset") {
            return Some(SitemapKind::Urlset);
        }
        if has(b"<sitemapindex") {
            return Some(SitemapKind::SitemapIndex);
        }
        if has(b"<rss") || has(b"<feed") {
            return Some(SitemapKind::Feed);
        }
        return None;
    }
    (text.starts_with(b"http://") || text.starts_with(b"https://")).then_some(SitemapKind::TextList)
}

/// Requests the declared sitemaps within the limits, recording each, and reports on them.
pub(crate) async fn check_sitemaps<T: Transport>(
    run: &mut Run<'_, T>,
    robots: &RobotsTxt,
    findings: &mut Findings,
) -> Vec<SitemapReport> {
    let mut reports = Vec::new();
    let deadline = Instant::now().checked_add(run.limits.sitemap_time_budget);
    for (index, sitemap) in robots.sitemaps().iter().enumerate() {
        let url = Url::parse(&sitemap.url).ok();
        let report = match url {
            _ if index >= run.limits.max_sitemaps => {
                let reason = SkipReason::TooManySitemaps {
                    max: run.limits.max_sitemaps,
                };
                skip(run, url.as_ref(), sitemap, reason)
            }
            None => SitemapReport::skipped(&sitemap.url, sitemap.line, SkipReason::InvalidUrl),
            Some(_) if deadline.is_some_and(|deadline| Instant::now() >= deadline) => {
                let reason = SkipReason::TimeBudget {
                    budget_ms: millis(run.limits.sitemap_time_budget),
                };
                skip(run, url.as_ref(), sitemap, reason)
            }
            Some(url) => {
                let limit = run.limits.sitemap_read_bytes;
                let obeyed = run.obey(url, Purpose::Sitemap, limit, None, deadline).await;
                sitemap_report(sitemap, &obeyed)
            }
        };
        if let Some(finding) = sitemap_finding(&report) {
            findings.push(finding);
        }
        reports.push(report);
    }
    if let Some(finding) = hosts_unreachable(&reports) {
        findings.push(finding);
    }
    reports
}

/// A sitemap not requested, recorded as a skipped request when it has a URL.
fn skip<T: Transport>(
    run: &mut Run<'_, T>,
    url: Option<&Url>,
    sitemap: &Sitemap,
    reason: SkipReason,
) -> SitemapReport {
    if let Some(url) = url {
        run.record_skip(url, Purpose::Sitemap, reason.clone());
    }
    SitemapReport::skipped(&sitemap.url, sitemap.line, reason)
}

fn sitemap_report(sitemap: &Sitemap, obeyed: &Obeyed) -> SitemapReport {
    let response = obeyed.response.as_ref();
    let answered = response.is_some_and(|r| (200..300).contains(&r.status));
    let kind = response
        .filter(|_| answered)
        .and_then(|r| sniff_sitemap(&r.body));
    SitemapReport {
        url: sitemap.url.clone(),
        line: sitemap.line,
        requested: response.is_some() || obeyed.error.is_some(),
        skipped: obeyed.skipped.clone(),
        answered,
        status: response.and_then(|r| StatusCode::from_u16(r.status).ok()),
        content_type: response
            .and_then(|r| r.header("content-type"))
            .map(str::to_owned),
        looks_like_sitemap: answered.then_some(kind.is_some()),
        kind,
        final_url: obeyed.final_url.clone(),
        redirects: obeyed.redirects.clone(),
        error: obeyed.error.as_ref().map(ToString::to_string),
    }
}

/// What one sitemap's report is worth saying.
fn sitemap_finding(report: &SitemapReport) -> Option<Finding> {
    let at = |id: CheckId| {
        Finding::new(
            id,
            Evidence {
                line: Some(report.line),
                ..Evidence::url(&report.url)
            },
        )
    };
    if let Some(reason) = &report.skipped {
        return (*reason != SkipReason::InvalidUrl)
            .then(|| at(CheckId::SitemapNotChecked).with("skipped", reason));
    }
    if let Some(error) = &report.error {
        return Some(at(CheckId::SitemapUnreachable).with("error", error));
    }
    if !report.answered {
        let finding = at(CheckId::SitemapUnreachable);
        return Some(match report.status {
            Some(status) => finding.with("status", status.as_u16()),
            None => finding,
        });
    }
    report.kind.is_none().then(|| {
        let finding = at(CheckId::SitemapNotASitemap);
        match &report.content_type {
            Some(content_type) => finding.with("content_type", content_type),
            None => finding,
        }
    })
}

/// Every sitemap requested failed for its host: refused, unresolvable, unreachable, or behind
/// an unreachable robots.txt. (Sitemaps skipped for the caps, the budgets or the rules say
/// nothing about their hosts.)
fn hosts_unreachable(reports: &[SitemapReport]) -> Option<Finding> {
    let mut hosts: Vec<String> = Vec::new();
    let mut tried = 0usize;
    for report in reports {
        let host_failed = report.error.is_some()
            || matches!(report.skipped, Some(SkipReason::RobotsUnreachable { .. }));
        let tried_it = host_failed || report.requested;
        if !tried_it {
            continue;
        }
        tried += 1;
        if !host_failed {
            return None;
        }
        let host = Url::parse(&report.url)
            .ok()
            .and_then(|url| url.host_str().map(str::to_owned))
            .unwrap_or_default();
        if !hosts.contains(&host) {
            hosts.push(host);
        }
    }
    (tried > 0).then(|| {
        Finding::new(CheckId::SitemapHostsUnreachable, Evidence::default())
            .with("sitemaps", tried)
            .with("hosts", hosts)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sitemaps_are_recognised() {
        assert_eq!(sniff_sitemap(b"\x1f\x8b\x08\x00"), Some(SitemapKind::Gzip));
        assert_eq!(
            sniff_sitemap(b"<?xml version=\"1.0\"?>\n<urlset xmlns=\"...\">"),
            Some(SitemapKind::Urlset)
        );
        assert_eq!(
            sniff_sitemap(b"\xEF\xBB\xBF <SitemapIndex>"),
            Some(SitemapKind::SitemapIndex)
        );
        assert_eq!(
            sniff_sitemap(b"<rss version=\"2.0\">"),
            Some(SitemapKind::Feed)
        );
        assert_eq!(
            sniff_sitemap(b"https://e.com/a\nhttps://e.com/b\n"),
            Some(SitemapKind::TextList)
        );
        assert_eq!(sniff_sitemap(b"<!doctype html><html>"), None);
        assert_eq!(sniff_sitemap(b""), None);
    }

    fn report(url: &str, error: Option<&str>, skipped: Option<SkipReason>) -> SitemapReport {
        SitemapReport {
            requested: error.is_some() || skipped.is_none(),
            error: error.map(str::to_owned),
            skipped: skipped.clone(),
            ..SitemapReport::skipped(url, 1, SkipReason::InvalidUrl)
        }
    }

    #[test]
    fn a_list_is_unreachable_only_when_every_host_tried_failed() {
        let robots_down = SkipReason::RobotsUnreachable {
            robots_url: Url::parse("https://b.test/robots.txt").unwrap(),
        };
        let refused = report("https://a.test/s.xml", Some("address refused"), None);
        let behind = report("https://b.test/s.xml", None, Some(robots_down));
        let capped = report(
            "https://c.test/s.xml",
            None,
            Some(SkipReason::TooManySitemaps { max: 10 }),
        );
        let finding = hosts_unreachable(&[refused.clone(), behind.clone(), capped.clone()])
            .expect("every host tried failed");
        assert_eq!(finding.number("sitemaps"), Some(2));
        assert_eq!(finding.list("hosts"), Some(vec!["a.test", "b.test"]));
        let answered = report("https://d.test/s.xml", None, None);
        assert!(hosts_unreachable(&[refused, behind, answered]).is_none());
        assert!(hosts_unreachable(&[capped]).is_none());
        assert!(hosts_unreachable(&[]).is_none());
    }
}
