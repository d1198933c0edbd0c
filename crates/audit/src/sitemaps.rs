//! The declared sitemaps, requested as the bot does: what answered and what looks like one.

use robots::RobotsTxt;
use tokio::time::Instant;
use url::Url;

use crate::collect::Findings;
use crate::finding::{CheckId, Evidence, Finding};
use crate::net::Transport;
use crate::report::{Purpose, SitemapKind, SitemapReport, SkipReason};
use crate::run::Run;

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
    let mut checked = 0usize;
    for sitemap in robots.sitemaps() {
        let evidence = || Evidence {
            url: Some(sitemap.url.clone()),
            line: Some(sitemap.line),
            ..Evidence::default()
        };
        if checked >= run.limits.max_sitemaps {
            run.record_skip(&sitemap.url, Purpose::Sitemap, SkipReason::TooManySitemaps);
            findings.push(Finding::new(
                CheckId::SitemapNotChecked,
                format!("line {}: {}", sitemap.line, SkipReason::TooManySitemaps),
                evidence(),
            ));
            reports.push(SitemapReport::skipped(
                &sitemap.url,
                sitemap.line,
                SkipReason::TooManySitemaps,
            ));
            continue;
        }
        checked += 1;
        let Ok(url) = Url::parse(&sitemap.url) else {
            reports.push(SitemapReport::skipped(
                &sitemap.url,
                sitemap.line,
                SkipReason::InvalidUrl,
            ));
            continue;
        };
        if deadline.is_some_and(|deadline| Instant::now() >= deadline) {
            run.record_skip(&sitemap.url, Purpose::Sitemap, SkipReason::TimeBudget);
            findings.push(Finding::new(
                CheckId::SitemapNotChecked,
                format!("line {}: {}", sitemap.line, SkipReason::TimeBudget),
                evidence(),
            ));
            reports.push(SitemapReport::skipped(
                &sitemap.url,
                sitemap.line,
                SkipReason::TimeBudget,
            ));
            continue;
        }
        let obeyed = run
            .obey(
                url,
                Purpose::Sitemap,
                run.limits.sitemap_read_bytes,
                None,
                deadline,
            )
            .await;
        let response = obeyed.response.as_ref();
        let kind = response
            .filter(|r| (200..300).contains(&r.status))
            .and_then(|r| sniff_sitemap(&r.body));
        let answered = response.is_some_and(|r| (200..300).contains(&r.status));
        let report = SitemapReport {
            url: sitemap.url.clone(),
            line: sitemap.line,
            requested: response.is_some() || obeyed.error.is_some(),
            skipped: obeyed.skipped.clone(),
            answered,
            status: response.map(|r| r.status),
            content_type: response
                .and_then(|r| r.header("content-type"))
                .map(str::to_owned),
            looks_like_sitemap: answered.then_some(kind.is_some()),
            kind,
            final_url: obeyed.final_url.as_ref().map(ToString::to_string),
            redirects: obeyed.redirects.clone(),
            error: obeyed.error.as_ref().map(ToString::to_string),
        };
        if let Some(reason) = &report.skipped {
            findings.push(Finding::new(
                CheckId::SitemapNotChecked,
                format!("line {}: {reason}", sitemap.line),
                evidence(),
            ));
        } else if let Some(error) = &report.error {
            findings.push(Finding::new(
                CheckId::SitemapUnreachable,
                format!(
                    "line {}: the sitemap could not be fetched ({error})",
                    sitemap.line
                ),
                evidence(),
            ));
        } else if !answered {
            let status = report
                .status
                .map_or_else(|| "no answer".to_owned(), |s| format!("HTTP {s}"));
            findings.push(Finding::new(
                CheckId::SitemapUnreachable,
                format!("line {}: the sitemap answers {status}", sitemap.line),
                evidence(),
            ));
        } else if kind.is_none() {
            let content_type = report
                .content_type
                .clone()
                .unwrap_or_else(|| "no content type".to_owned());
            findings.push(Finding::new(
                CheckId::SitemapNotASitemap,
                format!(
                    "line {}: the sitemap does not look like one ({content_type})",
                    sitemap.line
                ),
                evidence(),
            ));
        }
        reports.push(report);
    }
    reports
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
}
