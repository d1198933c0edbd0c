//! `jittybot analyze`: one RobotsTxtParser analysis of a URL (or an offline audit of a file),
//! printed as a summary or as the full JSON report.

use std::fmt::Write as _;
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::{bail, Context};
use audit::crawlers::BOT_TOKEN;
use audit::report::RobotsStatus;
use audit::{Analysis, AnalysisError, Limits, ProvidedFile, Severity};

use crate::terminal::{self, escape};

/// The page the User-Agent points site owners to.
const INFO_URL: &str = "https://robotstxtparser.example/bot";
/// How many findings the summary lists.
const SUMMARY_FINDINGS: usize = 10;

/// Arguments of `jittybot analyze`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// The URL to analyse; without a scheme, `https://` is assumed. With --file, an optional
    /// page URL or path to check against the file's rules.
    #[arg(value_name = "URL", required_unless_present = "file")]
    url: Option<String>,
    /// Audit this robots.txt (`-` for standard input) without fetching anything.
    #[arg(long, value_name = "PATH")]
    file: Option<PathBuf>,
    /// Print the full report as JSON.
    #[arg(long)]
    json: bool,
    #[command(flatten)]
    network: super::NetworkArgs,
}

/// Runs the command: exit 0 when the analysis ran, whatever the grade.
pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    let analysis = match &args.file {
        Some(path) => {
            let input = super::read_robots_txt(path)?;
            let file = ProvidedFile {
                body: &input.body,
                cut: input.cut,
            };
            audit::analyze_file(file, args.url.as_deref())
        }
        None => {
            let runtime = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .context("cannot start the async runtime")?;
            runtime.block_on(analyze_url(&args))?
        }
    };
    let mut out = std::io::stdout().lock();
    if args.json {
        terminal::write_json(&mut out, &analysis, true)?;
    } else {
        terminal::write_text(&mut out, &summary(&analysis))?;
    }
    Ok(ExitCode::SUCCESS)
}

async fn analyze_url(args: &Args) -> anyhow::Result<Analysis> {
    let Some(url) = &args.url else {
        bail!("give a URL to analyse, or --file PATH");
    };
    let url = fetch::parse_target(url)?;
    let fetcher = args.network.fetcher(BOT_TOKEN, INFO_URL)?;
    let limits = Limits {
        analysis_budget: args.network.timeout(),
        ..Limits::default()
    };
    match audit::analyze_with(&fetcher, &url, &limits).await {
        Ok(analysis) => Ok(analysis),
        // No grade for a site never contacted: the refusal is the answer.
        Err(AnalysisError::NotContacted { source, .. }) => {
            Err(super::not_contacted(&source).unwrap_or_else(|| anyhow::Error::new(source)))
        }
        Err(error) => Err(error.into()),
    }
}

fn outcome(outcome: RobotsStatus) -> &'static str {
    match outcome {
        RobotsStatus::Rules => "rules apply",
        RobotsStatus::NoFile => "no file: no rules",
        RobotsStatus::Unreachable => "unreachable: everything disallowed",
        RobotsStatus::RateLimited => "rate-limited: everything disallowed",
        RobotsStatus::Provided => "provided",
    }
}

/// The readable summary. Every value from outside (URLs, errors, titles quoting the file)
/// is escaped where it is quoted; [`terminal::write_text`] escapes whatever else is left.
fn summary(analysis: &Analysis) -> String {
    let mut text = String::new();
    let target = match (&analysis.url, analysis.robots.requested) {
        (Some(url), true) => url.to_string(),
        _ => "provided robots.txt (offline audit)".to_owned(),
    };
    let _ = writeln!(
        text,
        "{}\nGrade {}  Score {}/100  (scoring method v{})\n",
        escape(&target),
        analysis.grade,
        analysis.score,
        analysis.scoring_version
    );
    if analysis.robots.requested {
        requests(analysis, &mut text);
    } else if let Some(summary) = &analysis.robots.summary {
        let _ = writeln!(
            text,
            "{} bytes, {} lines, {} groups, {} rules, {} sitemaps\n",
            summary.bytes,
            summary.lines,
            summary.groups,
            summary.rules,
            summary.sitemaps.len()
        );
    }
    findings(analysis, &mut text);
    deductions(analysis, &mut text);
    crawlers(analysis, &mut text);
    text
}

/// What was requested: robots.txt, the page, the sitemaps.
fn requests(analysis: &Analysis, text: &mut String) {
    let robots = &analysis.robots;
    let status = robots
        .status
        .map_or("no answer".to_owned(), |s| s.as_u16().to_string());
    let url = robots.url.as_ref().map_or("", |url| url.as_str());
    let redirects = match robots.redirects.len() {
        0 => String::new(),
        hops => format!(", {hops} redirect(s)"),
    };
    let retry = robots.retry_after_s.map_or(String::new(), |seconds| {
        format!(", retry after {seconds} s")
    });
    let _ = writeln!(
        text,
        "robots.txt  {url}  {status}  {}  {} bytes{redirects}{retry}",
        outcome(robots.outcome),
        robots.size
    );
    let page = &analysis.page;
    let page_url = page.url.as_ref().map_or("", |url| url.as_str());
    let state = match (&page.status, &page.skipped) {
        (Some(status), _) => status.as_u16().to_string(),
        (None, Some(reason)) => format!("not requested: {}", escape(&reason.to_string())),
        (None, None) => format!("failed: {}", escape(page.error.as_deref().unwrap_or(""))),
    };
    let _ = writeln!(text, "page        {page_url}  {state}");
    for sitemap in &analysis.sitemaps {
        let state = match (
            &sitemap.status,
            &sitemap.skipped,
            sitemap.looks_like_sitemap,
        ) {
            (_, Some(reason), _) => format!("not requested: {}", escape(&reason.to_string())),
            (Some(status), _, Some(true)) => format!("{}, looks like a sitemap", status.as_u16()),
            (Some(status), _, Some(false)) => format!("{}, not a sitemap", status.as_u16()),
            (Some(status), _, None) => status.as_u16().to_string(),
            (None, _, _) => format!("failed: {}", escape(sitemap.error.as_deref().unwrap_or(""))),
        };
        let _ = writeln!(text, "sitemap     {}  {state}", escape(&sitemap.url));
    }
    text.push('\n');
}

/// The findings to look at (worst first), then the notes (info).
fn findings(analysis: &Analysis, text: &mut String) {
    let (notes, problems): (Vec<_>, Vec<_>) = analysis
        .findings
        .iter()
        .partition(|finding| finding.severity == Severity::Info);
    let _ = writeln!(text, "Findings ({} to look at):", problems.len());
    if problems.is_empty() {
        let _ = writeln!(text, "  none");
    }
    for finding in problems.iter().take(SUMMARY_FINDINGS) {
        let line = finding
            .line()
            .map_or(String::new(), |line| format!("line {line}: "));
        let _ = writeln!(
            text,
            "  {:<8} {line}{}  [{}]",
            finding.severity.as_str(),
            escape(&finding.title()),
            escape(finding.id.as_str())
        );
    }
    if problems.len() > SUMMARY_FINDINGS {
        let more = problems.len() - SUMMARY_FINDINGS;
        let _ = writeln!(text, "  ... {more} more (see --json)");
    }
    if !notes.is_empty() {
        let _ = writeln!(text, "Notes:");
        for finding in notes.iter().take(SUMMARY_FINDINGS) {
            let _ = writeln!(
                text,
                "  {}  [{}]",
                escape(&finding.title()),
                escape(finding.id.as_str())
            );
        }
    }
}

/// How the score was reached.
fn deductions(analysis: &Analysis, text: &mut String) {
    let scoring = &analysis.scoring;
    if scoring.deductions.is_empty() && scoring.cap.is_none() {
        return;
    }
    let _ = writeln!(text, "\nPoints deducted:");
    for deduction in &scoring.deductions {
        let _ = writeln!(
            text,
            "  -{:<3} {} ({} of {} finding(s) counted)",
            deduction.points,
            escape(deduction.id.as_str()),
            deduction.counted,
            deduction.findings
        );
    }
    if let Some(cap) = &scoring.cap {
        let _ = writeln!(
            text,
            "  score capped at {} by {}",
            cap.max_score,
            escape(cap.id.as_str())
        );
    }
}

/// What each notable crawler may fetch.
fn crawlers(analysis: &Analysis, text: &mut String) {
    let _ = writeln!(text, "\nCrawlers:");
    let page_column = analysis.crawlers.iter().any(|row| row.page.is_some());
    let _ = writeln!(
        text,
        "  {:<28} {:<15} {:<15} {:<17} {}",
        "token",
        "operator",
        "purpose",
        "/",
        if page_column { "page" } else { "" }
    );
    let verdict = |explanation: &robots::Explanation| {
        let word = if explanation.allowed { "allow" } else { "DENY" };
        match &explanation.rule {
            Some(rule) => format!("{word} (line {})", rule.line),
            None => word.to_owned(),
        }
    };
    for row in &analysis.crawlers {
        let page = row.page.as_ref().map(verdict).unwrap_or_default();
        let _ = writeln!(
            text,
            "  {:<28} {:<15} {:<15} {:<17} {page}",
            row.token,
            row.operator,
            row.purpose.label(),
            verdict(&row.root)
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn summary_leads_with_grade_findings_and_crawlers() {
        let analysis = audit::analyze_file(
            ProvidedFile::whole(
                b"User-agent: *\nDisallow /admin\nDisallow: /\n\nUser-agent: GPTBot\nDisallow: /\n",
            ),
            Some("/page"),
        );
        let text = summary(&analysis);
        let lines: Vec<&str> = text.lines().collect();
        // 100 - 40 (blocks all) - 12 (no colon) - 5 (page disallowed) - 5 (no sitemap).
        assert!(lines[1].starts_with("Grade F  Score 38/100"), "{text}");
        assert!(
            text.contains("critical line 3: Disallow: / applies to every crawler"),
            "{text}"
        );
        assert!(
            text.contains("line 2: the line has no colon and is ignored"),
            "{text}"
        );
        assert!(text.contains("[syntax.missing-colon]"));
        assert!(text.contains("-40  logic.blocks-all"), "{text}");
        let gpt = lines
            .iter()
            .find(|l| l.trim_start().starts_with("GPTBot"))
            .unwrap();
        assert!(gpt.contains("DENY (line 6)"), "{gpt}");
    }
}
