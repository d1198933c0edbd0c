//! The entry points: one analysis of a URL over the network, or of a provided file offline.

use fetch::{Fetcher, RobotsFetch, ROBOTS_TXT_MAX_BYTES};
use jiff::Timestamp;
use robots::RobotsTxt;
use tracing::Instrument;
use url::Url;

use crate::collect::Findings;
use crate::cost::{AuditLimits, Budget, LimitsReached};
use crate::crawlers::{self, CrawlerAccess, BOT_TOKEN};
use crate::error::AnalysisError;
use crate::fetching::{robots_fetch_findings, robots_report};
use crate::file::{self, summary_of, FileContext};
use crate::limits::Limits;
use crate::page_checks::{page_findings, read_page, PageHead};
use crate::report::{
    Analysis, PageReport, RobotsReport, RobotsStatus, SitemapReport, SkipReason, REPORT_VERSION,
};
use crate::run::{millis, Run};
use crate::score::Score;
use crate::sitemaps::check_sitemaps;

/// A robots.txt given rather than fetched: pasted, uploaded or read from a file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ProvidedFile<'a> {
    /// The bytes read: the whole file, or only its start when `cut`.
    pub body: &'a [u8],
    /// Whether the reader stopped past the size limit ([`robots::MAX_ROBOTS_TXT_BYTES`]) without
    /// reading the rest, so the file's real size is unknown.
    pub cut: bool,
}

impl<'a> ProvidedFile<'a> {
    /// A file read whole.
    pub fn whole(body: &'a [u8]) -> ProvidedFile<'a> {
        ProvidedFile { body, cut: false }
    }
}

/// Runs one analysis of `url` with the published limits, on `fetcher` (the real network, or
/// a scripted web in tests: `fetch::testing::ScriptedWeb`).
pub async fn analyze(fetcher: &Fetcher, url: &Url) -> Result<Analysis, AnalysisError> {
    analyze_with(fetcher, url, &Limits::default()).await
}

/// Runs one analysis of `url` with the given limits. Nothing of it runs past
/// [`Limits::analysis_budget`]. Credentials in `url` are never sent nor reported.
pub async fn analyze_with(
    fetcher: &Fetcher,
    url: &Url,
    limits: &Limits,
) -> Result<Analysis, AnalysisError> {
    analyze_keeping_head(fetcher, url, limits)
        .await
        .map(|analyzed| analyzed.analysis)
}

/// An analysis and the page's head as read ([`PageHead`], when the page answered 2xx
/// HTML): what a caller needs to read more of the page without requesting it again.
#[derive(Debug, Clone)]
pub struct Analyzed {
    /// The report.
    pub analysis: Analysis,
    /// The analysed page up to the end of its head.
    pub head: Option<PageHead>,
}

/// [`analyze_with`], also handing back the page's head as read.
pub async fn analyze_keeping_head(
    fetcher: &Fetcher,
    url: &Url,
    limits: &Limits,
) -> Result<Analyzed, AnalysisError> {
    let url = fetch::without_credentials(url);
    let span = tracing::info_span!("analysis", url = %url);
    run_analysis(fetcher, &url, limits).instrument(span).await
}

async fn run_analysis(
    fetcher: &Fetcher,
    url: &Url,
    limits: &Limits,
) -> Result<Analyzed, AnalysisError> {
    let robots_url = fetch::robots_txt_url(url).map_err(|source| AnalysisError::InvalidTarget {
        url: url.clone(),
        source,
    })?;
    let mut run = Run::new(fetcher, limits);
    let mut findings = Findings::default();
    let site = read_robots(&mut run, url, &robots_url, &mut findings)
        .instrument(tracing::debug_span!("robots_txt"))
        .await?;
    let (page, head) = read_page(&mut run, url)
        .instrument(tracing::debug_span!("page"))
        .await;
    page_findings(&page, &site.robots, site.status, &mut findings);
    let sitemaps = if site.status == RobotsStatus::Rules {
        check_sitemaps(&mut run, &site.robots, &mut findings)
            .instrument(tracing::debug_span!("sitemaps"))
            .await
    } else {
        Vec::new()
    };
    let (findings, omitted_findings) = findings.finish();
    let scoring = Score::compute(&findings);
    tracing::info!(score = scoring.score, grade = ?scoring.grade, findings = findings.len(), "analysed");
    let analysis = Analysis {
        report_version: REPORT_VERSION,
        url: Some(url.clone()),
        score: scoring.score,
        grade: scoring.grade,
        findings,
        omitted_findings,
        robots: site.report,
        page,
        sitemaps,
        crawlers: site.crawlers,
        limits_reached: site.limits_reached,
        requests: run.requests,
        bot: BOT_TOKEN.to_owned(),
        analysed_at: run.analysed_at,
        duration_ms: millis(run.started.elapsed()),
        scoring_version: scoring.method_version.clone(),
        scoring,
    };
    Ok(Analyzed { analysis, head })
}

/// The site's robots.txt as read at the start of an analysis.
struct SiteRobots {
    status: RobotsStatus,
    robots: RobotsTxt,
    report: RobotsReport,
    crawlers: Vec<CrawlerAccess>,
    limits_reached: Option<LimitsReached>,
}

/// Step 1: robots.txt, fresh, audited when it holds rules.
async fn read_robots(
    run: &mut Run<'_>,
    target: &Url,
    robots_url: &Url,
    findings: &mut Findings,
) -> Result<SiteRobots, AnalysisError> {
    let fetched: RobotsFetch = run.robots(target, robots_url).await?;
    let status = RobotsStatus::from(fetched.outcome);
    robots_fetch_findings(&fetched, target, findings);
    let robots = match (status, fetched.robots.clone()) {
        (RobotsStatus::Rules, Some(robots)) => robots,
        _ => RobotsTxt::parse(b""),
    };
    let page_path = &target[url::Position::BeforePath..];
    // The audit's CPU budget counts on this thread from here: the audit runs without an
    // await, so the thread's CPU time is the audit's.
    let mut budget = Budget::start(&run.limits.audit);
    let crawlers = crawlers::table(&robots, Some(page_path));
    if status == RobotsStatus::Rules {
        let context = FileContext {
            robots_url: Some(robots_url),
            page: Some(page_path),
            cut_by_reader: false,
        };
        file::audit_parsed(
            &robots,
            &fetched.body,
            &context,
            &crawlers,
            findings,
            &mut budget,
        );
    }
    let limits_reached = file::finish_budget(budget, findings);
    let report = robots_report(&fetched, &robots);
    Ok(SiteRobots {
        status,
        robots,
        report,
        crawlers,
        limits_reached,
    })
}

/// Audits a pasted or uploaded robots.txt: only the checks that need no network. `page`,
/// when given (URL or path), is checked against the rules too. Within the published audit
/// limits ([`AuditLimits::default`]).
pub fn analyze_file(file: ProvidedFile<'_>, page: Option<&str>) -> Analysis {
    analyze_file_with(file, page, &AuditLimits::default())
}

/// [`analyze_file`] within `limits`. The CPU budget counts on the calling thread, from the
/// start of parsing: call it from a thread that does nothing else meanwhile (not an async
/// runtime's worker, whose other tasks it would hold up anyway).
pub fn analyze_file_with(
    file: ProvidedFile<'_>,
    page: Option<&str>,
    limits: &AuditLimits,
) -> Analysis {
    let mut budget = Budget::start(limits);
    let body = file.body;
    let robots = RobotsTxt::parse(body);
    let page_url = page.and_then(|page| Url::parse(page).ok());
    let robots_url = page_url
        .as_ref()
        .and_then(|url| fetch::robots_txt_url(url).ok());
    let page_path = match &page_url {
        Some(url) => Some(url[url::Position::BeforePath..].to_owned()),
        None => page.map(str::to_owned),
    };
    let mut findings = Findings::default();
    let crawler_table = crawlers::table(&robots, page_path.as_deref());
    let context = FileContext {
        robots_url: robots_url.as_ref(),
        page: page_path.as_deref(),
        cut_by_reader: file.cut,
    };
    file::audit_parsed(
        &robots,
        body,
        &context,
        &crawler_table,
        &mut findings,
        &mut budget,
    );
    let limits_reached = file::finish_budget(budget, &mut findings);
    let (findings, omitted_findings) = findings.finish();
    let scoring = Score::compute(&findings);
    let sitemaps = robots
        .sitemaps()
        .iter()
        .map(|sitemap| SitemapReport::skipped(&sitemap.url, sitemap.line, SkipReason::OfflineAudit))
        .collect();
    Analysis {
        report_version: REPORT_VERSION,
        url: page_url.clone(),
        score: scoring.score,
        grade: scoring.grade,
        findings,
        omitted_findings,
        robots: provided_report(file, &robots, robots_url),
        page: PageReport::skipped(page_url, page_path, SkipReason::OfflineAudit),
        sitemaps,
        crawlers: crawler_table,
        limits_reached,
        requests: Vec::new(),
        bot: BOT_TOKEN.to_owned(),
        analysed_at: Timestamp::now(),
        duration_ms: 0,
        scoring_version: scoring.method_version.clone(),
        scoring,
    }
}

/// The robots.txt part of the report of a provided file.
fn provided_report(file: ProvidedFile<'_>, robots: &RobotsTxt, url: Option<Url>) -> RobotsReport {
    let kept = &file.body[..file.body.len().min(ROBOTS_TXT_MAX_BYTES)];
    let (body, body_is_utf8, raw_body) = crate::report::body_fields(kept);
    RobotsReport {
        url,
        requested: false,
        outcome: RobotsStatus::Provided,
        status: None,
        final_url: None,
        redirects: Vec::new(),
        content_type: None,
        size: kept.len(),
        truncated: file.cut || file.body.len() > ROBOTS_TXT_MAX_BYTES,
        body,
        body_is_utf8,
        raw_body,
        x_robots_tag: Vec::new(),
        error: None,
        error_kind: None,
        retry_after_s: None,
        retry_after_sent_s: None,
        summary: Some(summary_of(robots)),
        crawl_delay: robots
            .rules_for(&crate::crawlers::BOT_TOKENS)
            .crawl_delay()
            .map(|d| d.seconds),
    }
}
