//! The audit of one robots.txt file: syntax, logic, sitemaps and crawlers. Needs no network.

mod logic;
mod policy;
mod readings;
mod rules;
mod sitemaps;
mod syntax;

use robots::RobotsTxt;
use serde::{Deserialize, Serialize};
use url::Url;

use crate::catalogue::CheckId;
use crate::collect::{Findings, Omitted};
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
}

/// Audits a robots.txt body. Never fails and never panics.
pub fn audit_robots_txt(body: &[u8], context: &FileContext<'_>) -> FileAudit {
    let robots = RobotsTxt::parse(body);
    let mut findings = Findings::default();
    let crawlers = crawlers::table(&robots, context.page);
    audit_parsed(&robots, body, context, &crawlers, &mut findings);
    let (findings, omitted) = findings.finish();
    FileAudit {
        findings,
        omitted,
        crawlers,
        summary: summary_of(&robots),
    }
}

pub(crate) fn audit_parsed(
    robots: &RobotsTxt,
    body: &[u8],
    context: &FileContext<'_>,
    table: &[CrawlerAccess],
    findings: &mut Findings,
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
    syntax::syntax(robots, context, findings);
    syntax::long_lines(robots, findings);
    logic::logic(robots, context, table, findings);
    sitemaps::sitemaps(robots, context, findings);
    policy::crawler_policy(table, findings);
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
