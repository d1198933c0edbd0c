//! The audit of one robots.txt file: syntax, logic, sitemaps and crawlers. Needs no network.

mod logic;
mod policy;
mod readings;
mod rules;
mod sets;
mod sitemaps;
mod syntax;

use robots::RobotsTxt;
use serde::{Deserialize, Serialize};
use url::Url;

use crate::catalogue::CheckId;
use crate::collect::{Findings, Omitted};
use crate::cost::{AuditCost, AuditLimits, AuditStage, Budget, LimitsReached};
use crate::crawlers::{self, CrawlerAccess};
use crate::finding::{Evidence, Finding};

pub use rules::MAX_RULES_COMPARED;
pub use syntax::LONG_LINE_BYTES;

/// At most this many related lines are listed in one finding.
pub const MAX_RELATED_LINES: usize = 10;

/// What the file audit knows besides the file.
#[derive(Debug, Clone, Default)]
pub struct FileContext<'a> {
    /// Where the file was served (`https://host/robots.txt`), when known.
    pub robots_url: Option<&'a Url>,
    /// The analysed page (absolute URL or path), to check against the rules.
    pub page: Option<&'a str>,
    /// Whether the body is only the start of the file: whoever read it stopped past the size
    /// limit, so the file's real size is unknown.
    pub cut_by_reader: bool,
}

/// Size and shape of the file.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FileSummary {
    /// Bytes in the file.
    pub bytes: usize,
    /// Bytes read (at most 500 KiB).
    pub bytes_read: usize,
    /// Lines read.
    pub lines: usize,
    /// Groups.
    pub groups: usize,
    /// Allow and disallow rules.
    pub rules: usize,
    /// Declared sitemaps (absolute URLs).
    pub sitemaps: Vec<String>,
}

/// The result of auditing one file.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FileAudit {
    /// The findings, worst first, then by line.
    pub findings: Vec<Finding>,
    /// Findings counted but not listed.
    pub omitted: Vec<Omitted>,
    /// What each notable crawler may fetch.
    pub crawlers: Vec<CrawlerAccess>,
    /// Size and shape of the file.
    pub summary: FileSummary,
    /// The audit's own limits it reached: what it left out (none when it left nothing out).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub limits_reached: Option<LimitsReached>,
    /// What the audit cost.
    #[serde(default)]
    pub cost: AuditCost,
}

/// Audits a robots.txt body within the published limits ([`AuditLimits::default`]). Never
/// fails and never panics.
pub fn audit_robots_txt(body: &[u8], context: &FileContext<'_>) -> FileAudit {
    audit_robots_txt_with(body, context, &AuditLimits::default())
}

/// Audits a robots.txt body within `limits`: the CPU budget runs from the start of parsing.
pub fn audit_robots_txt_with(
    body: &[u8],
    context: &FileContext<'_>,
    limits: &AuditLimits,
) -> FileAudit {
    let mut budget = Budget::start(limits);
    let robots = RobotsTxt::parse(body);
    let mut findings = Findings::default();
    let crawlers = crawlers::table(&robots, context.page);
    audit_parsed(
        &robots,
        body,
        context,
        &crawlers,
        &mut findings,
        &mut budget,
    );
    let cost = budget.cost();
    let limits_reached = finish_budget(budget, &mut findings);
    let (findings, omitted) = findings.finish();
    FileAudit {
        findings,
        omitted,
        crawlers,
        summary: summary_of(&robots),
        limits_reached,
        cost,
    }
}

/// Audits a parsed file into `findings`, within `budget`: each part of the audit in turn, the
/// parts left when the CPU budget runs out skipped (and recorded in the budget).
pub(crate) fn audit_parsed(
    robots: &RobotsTxt,
    body: &[u8],
    context: &FileContext<'_>,
    table: &[CrawlerAccess],
    findings: &mut Findings,
    budget: &mut Budget,
) {
    if body.iter().all(u8::is_ascii_whitespace) {
        findings.push(Finding::new(CheckId::FetchEmpty, Evidence::default()));
    } else if let Some(kind) = looks_like_html(body) {
        let id = match kind {
            HtmlKind::Challenge => CheckId::FetchChallenge,
            HtmlKind::Page => CheckId::FetchHtml,
        };
        findings.push(Finding::new(id, Evidence::line(1, line_text(robots, 1))));
        // The markup's lines are all invalid: listing them would only be noise.
        return;
    }
    budget.stage(AuditStage::Syntax, |budget| {
        syntax::syntax(robots, context, findings, budget);
    });
    budget.stage(AuditStage::LongLines, |_| {
        syntax::long_lines(robots, findings)
    });
    // Sitemaps read what the syntax check found of them.
    budget.stage(AuditStage::Sitemaps, |budget| {
        sitemaps::sitemaps(robots, context, findings, budget);
    });
    budget.stage(AuditStage::Policy, |_| {
        policy::crawler_policy(table, findings)
    });
    // Last, as the costliest: the rule comparisons at its end go as far as the budget lets.
    logic::logic(robots, context, table, findings, budget);
}

/// Reports what the audit left out to stay within its limits (the report's
/// `limits_reached`, and an `audit.incomplete` finding when the CPU budget ran out).
pub(crate) fn finish_budget(budget: Budget, findings: &mut Findings) -> Option<LimitsReached> {
    let reached = budget.reached.clone();
    if reached.rule_sets_not_compared > 0 || !reached.cut_short.is_empty() {
        let cut: Vec<&str> = reached.cut_short.iter().map(|stage| stage.name()).collect();
        findings.push(
            Finding::new(CheckId::AuditComparisonsCapped, Evidence::default())
                .with("not_compared", reached.rule_sets_not_compared)
                .with("rule_sets", budget.rule_sets)
                .with("cut_short", cut)
                .with("budget", budget.comparison_budget()),
        );
    }
    if let Some(cpu_budget_ms) = reached.cpu_budget_ms {
        let skipped: Vec<&str> = reached.skipped.iter().map(|stage| stage.name()).collect();
        findings.push(
            Finding::new(CheckId::AuditIncomplete, Evidence::default())
                .with("cpu_budget_ms", cpu_budget_ms)
                .with("skipped", skipped),
        );
    }
    reached.into_option()
}

/// Line `number` as the engine numbers it, as text (invalid UTF-8 replaced, trimmed), or an
/// empty string past the last line: the evidence of a finding quotes the line as written.
pub(crate) fn line_text(robots: &RobotsTxt, number: usize) -> String {
    robots
        .line(number)
        .map(|raw| String::from_utf8_lossy(raw).trim().to_owned())
        .unwrap_or_default()
}

/// The shape of a parsed file, as reported.
pub(crate) fn summary_of(robots: &RobotsTxt) -> FileSummary {
    FileSummary {
        bytes: robots.bytes_total(),
        bytes_read: robots.bytes_read(),
        lines: robots.line_count(),
        groups: robots.groups().len(),
        rules: robots.groups().iter().map(|group| group.rules.len()).sum(),
        sitemaps: robots.sitemaps().iter().map(|s| s.url.clone()).collect(),
    }
}

/// What an HTML body looks like.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum HtmlKind {
    /// A bot challenge (Cloudflare, captcha...).
    Challenge,
    /// Any other HTML page.
    Page,
}

/// Whether a body is HTML rather than robots.txt rules.
pub(crate) fn looks_like_html(body: &[u8]) -> Option<HtmlKind> {
    let start = body
        .iter()
        .position(|b| !b.is_ascii_whitespace())
        .unwrap_or(body.len());
    let body = body.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(&body[start..]);
    let head: Vec<u8> = body.iter().take(1024).map(u8::to_ascii_lowercase).collect();
    let html = [
        "<!doctype html",
        "<html",
        "<head",
        "<!--",
        "<body",
        "<script",
        "<meta",
    ]
    .iter()
    .any(|prefix| head.starts_with(prefix.as_bytes()));
    if !html {
        return None;
    }
    let whole: Vec<u8> = body
        .iter()
        .take(64 * 1024)
        .map(u8::to_ascii_lowercase)
        .collect();
    let challenge = [
        &b"just a moment"[..],
        b"cf-challenge",
        b"challenge-platform",
        b"captcha",
        b"attention required",
        b"checking your browser",
    ]
    .iter()
    .any(|marker| contains(&whole, marker));
    Some(if challenge {
        HtmlKind::Challenge
    } else {
        HtmlKind::Page
    })
}

fn contains(haystack: &[u8], needle: &[u8]) -> bool {
    !needle.is_empty()
        && haystack
            .windows(needle.len())
            .any(|window| window == needle)
}
