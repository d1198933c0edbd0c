//! The entry points: one analysis of a URL over the network, or of a provided file offline.

use std::collections::HashMap;
use std::time::{SystemTime, UNIX_EPOCH};

use robots::RobotsTxt;
use tokio::time::Instant;
use url::Url;

use crate::collect::Findings;
use crate::crawlers::{self, BOT_TOKEN};
use crate::error::{parse_target, AnalysisError};
use crate::fetching::{robots_fetch_findings, robots_report};
use crate::file::{self, summary_of, FileContext};
use crate::limits::{Limits, ROBOTS_MAX_BYTES};
use crate::net::Transport;
use crate::page_checks::{page_findings, page_report};
use crate::report::{
    Analysis, PageReport, Purpose, RobotsReport, RobotsStatus, SitemapReport, SkipReason,
};
use crate::run::{millis, origin_key, robots_url_of, HostRules, Pacer, Run};
use crate::score::Score;
use crate::sitemaps::check_sitemaps;

/// Formats a time as RFC 3339 UTC (`2026-11-30T06:40:00Z`).
pub fn rfc3339(time: SystemTime) -> String {
    let seconds = time.duration_since(UNIX_EPOCH).map_or(0, |d| d.as_secs());
    let days = i64::try_from(seconds / 86_400).unwrap_or(0);
    let rest = seconds % 86_400;
    // Civil date from days since 1970-01-01 (Howard Hinnant's algorithm).
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1_460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!(
        "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}Z",
        rest / 3_600,
        rest % 3_600 / 60,
        rest % 60
    )
}

/// Runs one analysis of `url` with the published limits.
pub async fn analyze<T: Transport>(transport: &T, url: &str) -> Result<Analysis, AnalysisError> {
    analyze_with(transport, url, &Limits::default()).await
}

/// Runs one analysis of `url` with the given limits.
pub async fn analyze_with<T: Transport>(
    transport: &T,
    url: &str,
    limits: &Limits,
) -> Result<Analysis, AnalysisError> {
    let target = parse_target(url)?;
    let analysed_at = rfc3339(SystemTime::now());
    let robots_url = robots_url_of(&target).ok_or_else(|| AnalysisError::InvalidUrl {
        url: url.to_owned(),
        reason: "no host".to_owned(),
    })?;
    let mut run = Run {
        transport,
        limits,
        started: Instant::now(),
        pacer: Pacer::new(limits.crawl_delay_budget),
        requests: Vec::new(),
        hosts: HashMap::new(),
    };
    let mut findings = Findings::default();

    // 1. robots.txt, fresh.
    let fetched = run.fetch_robots(robots_url.clone(), Purpose::Robots).await;
    let status = fetched.status();
    robots_fetch_findings(&fetched, &target, &mut findings);
    let body: &[u8] = match (&fetched.response, status) {
        (Some(response), RobotsStatus::Rules) => &response.body,
        _ => &[],
    };
    let robots = RobotsTxt::parse(body);
    let host_rules = match status {
        RobotsStatus::Rules => HostRules::Rules(Box::new(robots.clone())),
        RobotsStatus::NoFile => HostRules::NoFile,
        _ => HostRules::Unreachable,
    };
    run.hosts.insert(origin_key(&target), host_rules.clone());
    let page_path = &target[url::Position::BeforePath..];
    let crawler_table = match status {
        RobotsStatus::Rules => crawlers::table(&robots, Some(page_path)),
        _ => crawlers::table(&RobotsTxt::parse(b""), Some(page_path)),
    };
    if status == RobotsStatus::Rules {
        file::audit_parsed(
            &robots,
            body,
            &FileContext {
                robots_url: Some(&robots_url),
                page: Some(page_path),
            },
            &crawler_table,
            &mut findings,
        );
    }
    let robots_report = robots_report(&fetched, status, &robots, &host_rules);

    // 2. The page, if the rules allow it.
    let page = if matches!(
        status,
        RobotsStatus::Unreachable | RobotsStatus::RateLimited
    ) {
        let reason = SkipReason::RobotsUnreachable {
            robots_url: robots_url.to_string(),
        };
        run.record_skip(target.as_str(), Purpose::Page, reason.clone());
        PageReport::skipped(&target, reason)
    } else {
        let obeyed = run
            .obey(
                target.clone(),
                Purpose::Page,
                limits.page_max_bytes,
                None,
                None,
            )
            .await;
        page_report(&target, obeyed)
    };
    page_findings(&page, &robots, status, &mut findings);

    // 3. The declared sitemaps.
    let sitemaps = if status == RobotsStatus::Rules {
        check_sitemaps(&mut run, &robots, &mut findings).await
    } else {
        Vec::new()
    };

    let (findings, omitted_findings) = findings.finish();
    let scoring = Score::compute(&findings);
    let duration_ms = millis(run.started.elapsed());
    Ok(Analysis {
        url: target.to_string(),
        score: scoring.score,
        grade: scoring.grade,
        findings,
        omitted_findings,
        robots: robots_report,
        page,
        sitemaps,
        crawlers: crawler_table,
        requests: run.requests,
        bot: BOT_TOKEN.to_owned(),
        analysed_at,
        duration_ms,
        scoring_version: scoring.method_version.clone(),
        scoring,
    })
}

/// Audits a pasted or uploaded robots.txt: only the checks that need no network. `page`,
/// when given (URL or path), is checked against the rules too.
pub fn analyze_file(body: &[u8], page: Option<&str>) -> Analysis {
    let robots = RobotsTxt::parse(body);
    let page_url = page.and_then(|page| Url::parse(page).ok());
    let robots_url = page_url.as_ref().and_then(robots_url_of);
    let page_path = match &page_url {
        Some(url) => Some(url[url::Position::BeforePath..].to_owned()),
        None => page.map(str::to_owned),
    };
    let mut findings = Findings::default();
    let crawler_table = crawlers::table(&robots, page_path.as_deref());
    file::audit_parsed(
        &robots,
        body,
        &FileContext {
            robots_url: robots_url.as_ref(),
            page: page_path.as_deref(),
        },
        &crawler_table,
        &mut findings,
    );
    let (findings, omitted_findings) = findings.finish();
    let scoring = Score::compute(&findings);
    let summary = summary_of(&robots);
    let sitemaps = robots
        .sitemaps()
        .iter()
        .map(|sitemap| SitemapReport::skipped(&sitemap.url, sitemap.line, SkipReason::OfflineAudit))
        .collect();
    let bot_delay = robots
        .rules_for(&[BOT_TOKEN])
        .crawl_delay()
        .map(|d| d.seconds);
    Analysis {
        url: page.unwrap_or_default().to_owned(),
        score: scoring.score,
        grade: scoring.grade,
        findings,
        omitted_findings,
        robots: RobotsReport {
            url: robots_url.map(|url| url.to_string()).unwrap_or_default(),
            requested: false,
            outcome: RobotsStatus::Provided,
            status: None,
            final_url: None,
            redirects: Vec::new(),
            content_type: None,
            size: body.len().min(ROBOTS_MAX_BYTES),
            truncated: body.len() > ROBOTS_MAX_BYTES,
            body: String::from_utf8_lossy(&body[..body.len().min(ROBOTS_MAX_BYTES)]).into_owned(),
            body_is_utf8: std::str::from_utf8(body).is_ok(),
            x_robots_tag: Vec::new(),
            error: None,
            summary: Some(summary),
            crawl_delay: bot_delay,
        },
        page: PageReport::skipped_text(page.unwrap_or_default(), SkipReason::OfflineAudit),
        sitemaps,
        crawlers: crawler_table,
        requests: Vec::new(),
        bot: BOT_TOKEN.to_owned(),
        analysed_at: rfc3339(SystemTime::now()),
        duration_ms: 0,
        scoring_version: scoring.method_version.clone(),
        scoring,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn rfc3339_formats_utc() {
        assert_eq!(rfc3339(UNIX_EPOCH), "1970-01-01T00:00:00Z");
        assert_eq!(
            rfc3339(UNIX_EPOCH + Duration::from_secs(1_709_210_096)),
            "2024-02-29T12:34:56Z"
        );
    }
}
