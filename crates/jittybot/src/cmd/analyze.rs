//! `jittybot analyze`: one RobotsTxtParser analysis of a URL (or an offline audit of a file),
//! printed as a summary or as the full JSON report.

use std::fmt::Write as _;
use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::{bail, Context};
use audit::crawlers::BOT_TOKEN;
use audit::report::RobotsStatus;
use audit::{Analysis, Severity};

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
            let body = super::read_robots_txt(path)?;
            audit::analyze_file(&body, args.url.as_deref())
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
        serde_json::to_writer_pretty(&mut out, &analysis)?;
        writeln!(out)?;
    } else {
        out.write_all(summary(&analysis).as_bytes())?;
    }
    Ok(ExitCode::SUCCESS)
}

async fn analyze_url(args: &Args) -> anyhow::Result<Analysis> {
    let Some(url) = &args.url else {
        bail!("give a URL to analyse, or --file PATH");
    };
    let url = if url.contains("://") {
        url.clone()
    } else {
        format!("https://{url}")
    };
    let fetcher = args.network.fetcher(BOT_TOKEN, INFO_URL)?;
    Ok(audit::analyze(&fetcher, &url).await?)
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

fn summary(analysis: &Analysis) -> String {
    let mut text = String::new();
    let target = if analysis.robots.requested {
        analysis.url.clone()
    } else {
        "provided robots.txt (offline audit)".to_owned()
    };
    let _ = writeln!(
        text,
        "{target}\nGrade {}  Score {}/100  (scoring method v{})\n",
        analysis.grade, analysis.score, analysis.scoring_version
    );
    let robots = &analysis.robots;
    if robots.requested {
        let status = robots
            .status
            .map_or("no answer".to_owned(), |s| s.to_string());
        let _ = writeln!(
            text,
            "robots.txt  {}  {status}  {}  {} bytes{}",
            robots.url,
            outcome(robots.outcome),
            robots.size,
            if robots.redirects.is_empty() {
                String::new()
            } else {
                format!(", {} redirect(s)", robots.redirects.len())
            }
        );
        let page = &analysis.page;
        match (&page.status, &page.skipped) {
            (Some(status), _) => {
                let _ = writeln!(text, "page        {}  {status}", page.url);
            }
            (None, Some(reason)) => {
                let _ = writeln!(text, "page        {}  not requested: {reason}", page.url);
            }
            (None, None) => {
                let error = page.error.clone().unwrap_or_default();
                let _ = writeln!(text, "page        {}  failed: {error}", page.url);
            }
        }
        for sitemap in &analysis.sitemaps {
            let state = match (
                &sitemap.status,
                &sitemap.skipped,
                sitemap.looks_like_sitemap,
            ) {
                (_, Some(reason), _) => format!("not requested: {reason}"),
                (Some(status), _, Some(true)) => format!("{status}, looks like a sitemap"),
                (Some(status), _, Some(false)) => format!("{status}, not a sitemap"),
                (Some(status), _, None) => status.to_string(),
                (None, _, _) => format!("failed: {}", sitemap.error.clone().unwrap_or_default()),
            };
            let _ = writeln!(text, "sitemap     {}  {state}", sitemap.url);
        }
        text.push('\n');
    } else if let Some(summary) = &robots.summary {
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

    let shown: Vec<_> = analysis
        .findings
        .iter()
        .filter(|finding| finding.severity != Severity::Info)
        .take(SUMMARY_FINDINGS)
        .collect();
    let problems = analysis
        .findings
        .iter()
        .filter(|finding| finding.severity != Severity::Info)
        .count();
    let _ = writeln!(text, "Findings ({problems} to look at):");
    if shown.is_empty() {
        let _ = writeln!(text, "  none");
    }
    for finding in shown {
        let line = match finding.evidence.line {
            Some(line) if !finding.title.starts_with("line ") => format!("line {line}: "),
            _ => String::new(),
        };
        let _ = writeln!(
            text,
            "  {:<8} {line}{}  [{}]",
            finding.severity.as_str(),
            finding.title,
            finding.id
        );
    }
    if problems > SUMMARY_FINDINGS {
        let _ = writeln!(
            text,
            "  ... {} more (see --json)",
            problems - SUMMARY_FINDINGS
        );
    }
    let infos: Vec<_> = analysis
        .findings
        .iter()
        .filter(|finding| finding.severity == Severity::Info)
        .collect();
    if !infos.is_empty() {
        let _ = writeln!(text, "Notes:");
        for finding in infos.iter().take(SUMMARY_FINDINGS) {
            let _ = writeln!(text, "  {}  [{}]", finding.title, finding.id);
        }
    }
    if !analysis.scoring.deductions.is_empty() || analysis.scoring.cap.is_some() {
        let _ = writeln!(text, "\nPoints deducted:");
        for deduction in &analysis.scoring.deductions {
            let _ = writeln!(
                text,
                "  -{:<3} {} ({} of {} finding(s) counted)",
                deduction.points, deduction.id, deduction.counted, deduction.findings
            );
        }
        if let Some(cap) = &analysis.scoring.cap {
            let _ = writeln!(text, "  score capped at {} by {}", cap.max_score, cap.id);
        }
    }

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
    for row in &analysis.crawlers {
        let verdict = |explanation: &robots::Explanation| {
            let word = if explanation.allowed { "allow" } else { "DENY" };
            match &explanation.rule {
                Some(rule) => format!("{word} (line {})", rule.line),
                None => word.to_owned(),
            }
        };
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
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn summary_leads_with_grade_findings_and_crawlers() {
        let analysis = audit::analyze_file(
            b"User-agent: *\nDisallow /admin\nDisallow: /\n\nUser-agent: GPTBot\nDisallow: /\n",
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
        assert!(text.contains("line 2 has no colon"), "{text}");
        assert!(text.contains("[syntax.missing-colon]"));
        assert!(text.contains("-40  logic.blocks-all"), "{text}");
        let gpt = lines
            .iter()
            .find(|l| l.trim_start().starts_with("GPTBot"))
            .unwrap();
        assert!(gpt.contains("DENY (line 6)"), "{gpt}");
    }
}
