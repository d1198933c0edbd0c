//! The declared sitemaps, requested as the bot does: what answered and what looks like one.

use fetch::{Deadline, Operation};
use robots::{RobotsTxt, Sitemap};
use url::Url;

use crate::catalogue::CheckId;
use crate::collect::Findings;
use crate::error::RequestFailed;
use crate::finding::{Evidence, Finding};
use crate::report::{Purpose, SitemapKind, SitemapReport, SkipReason};
use crate::run::{Obtained, Run};

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

/// Step 3: the declared sitemaps, one at a time within the limits, each recorded and
/// reported on. The phase has its own deadline ([`crate::limits::SITEMAP_TIME_BUDGET`] from
/// its start, within the analysis's), and shares the analysis's crawl-delay budget.
pub(crate) async fn check_sitemaps(
    run: &mut Run<'_>,
    robots: &RobotsTxt,
    findings: &mut Findings,
) -> Vec<SitemapReport> {
    let phase = run
        .operation
        .narrowed(Deadline::after(run.limits.sitemap_time_budget));
    let mut reports = Vec::new();
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
            Some(url) if phase.deadline.is_expired() => {
                let reason = run.deadline_reason(&phase);
                skip(run, Some(&url), sitemap, reason)
            }
            Some(url) => read_sitemap(run, &url, sitemap, &phase).await,
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
fn skip(
    run: &mut Run<'_>,
    url: Option<&Url>,
    sitemap: &Sitemap,
    reason: SkipReason,
) -> SitemapReport {
    if let Some(url) = url {
        run.record_skip(url, Purpose::Sitemap, &reason);
    }
    SitemapReport::skipped(&sitemap.url, sitemap.line, reason)
}

/// What a sitemap answered: its status, type and first bytes (none when the body failed).
struct Answer {
    status: http::StatusCode,
    content_type: Option<String>,
    start: Option<Vec<u8>>,
}

/// Requests one sitemap and reads the start of its body.
async fn read_sitemap(
    run: &mut Run<'_>,
    url: &Url,
    sitemap: &Sitemap,
    phase: &Operation,
) -> SitemapReport {
    let cap = run.limits.sitemap_read_bytes;
    let mut obtained = run.request(url, Purpose::Sitemap, cap, phase).await;
    let Some(fetched) = obtained.response.take() else {
        return sitemap_report(sitemap, obtained, None);
    };
    let fetched = *fetched;
    let content_type = fetched
        .head
        .headers
        .get(http::header::CONTENT_TYPE)
        .map(|value| String::from_utf8_lossy(value.as_bytes()).into_owned());
    let mut answer = Answer {
        status: fetched.head.status,
        content_type,
        start: None,
    };
    if let Some(failure) = crate::run::unreadable(&fetched) {
        obtained.failure = Some(failure);
        return sitemap_report(sitemap, obtained, Some(answer));
    }
    match fetched.body.read_to_end(None).await {
        Ok(body) => answer.start = Some(body.bytes),
        Err(error) => match run.budget_cut(&error, phase) {
            Some(reason) => obtained.skipped = Some(reason),
            None => {
                obtained.failure = Some(RequestFailed {
                    url: fetched.url,
                    source: error,
                })
            }
        },
    }
    sitemap_report(sitemap, obtained, Some(answer))
}

fn sitemap_report(sitemap: &Sitemap, obtained: Obtained, answer: Option<Answer>) -> SitemapReport {
    let status = answer.as_ref().map(|answer| answer.status);
    let start = answer.as_ref().and_then(|answer| answer.start.as_deref());
    let answered = status.is_some_and(|status| status.is_success()) && start.is_some();
    let kind = start.filter(|_| answered).and_then(sniff_sitemap);
    SitemapReport {
        url: sitemap.url.clone(),
        line: sitemap.line,
        requested: obtained.requested,
        skipped: obtained.skipped,
        answered,
        status,
        content_type: answer.and_then(|answer| answer.content_type),
        looks_like_sitemap: answered.then_some(kind.is_some()),
        kind,
        final_url: obtained.final_url,
        redirects: obtained.redirects,
        error: obtained.failure.as_ref().map(RequestFailed::message),
        error_kind: obtained.failure.as_ref().map(RequestFailed::kind),
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
        // A sitemap cut by a budget says nothing about its host.
        let tried_it = host_failed || (report.requested && report.skipped.is_none());
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
