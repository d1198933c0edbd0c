//! `jittybot check`: answer URLs against a local robots.txt, with reasons.

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::{bail, Context};
use robots::{AgentRules, Decision, DiagnosticKind, GroupSelection, ProductTokens, RobotsTxt};
use serde_json::json;

use crate::terminal;

/// Arguments of `jittybot check`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// The robots.txt file to read (`-` for standard input).
    #[arg(long, value_name = "FILE")]
    robots: PathBuf,
    /// Crawler to match, in order of preference; repeat for fallbacks
    /// (e.g. `--agent JittyBot-Image --agent JittyBot`). A product token, or what you have: a
    /// name such as `MJ12bot`, a whole User-Agent string (its product token is used), or an
    /// empty string (the `*` groups); a warning says how anything but a token was read.
    #[arg(long = "agent", value_name = "AGENT", default_value = "JittyBot")]
    agents: Vec<String>,
    /// One JSON object per line instead of text.
    #[arg(long)]
    json: bool,
    /// List what the parser ignored or found suspicious, with line numbers.
    #[arg(long)]
    diagnostics: bool,
    /// URLs to check: absolute (`https://example.com/a?b`, any scheme with a host:
    /// `ftp://example.net/a`) or paths starting with `/`.
    #[arg(value_name = "URL", required_unless_present = "diagnostics")]
    urls: Vec<String>,
}

/// Runs the command: exit 0 if every URL is allowed, 1 if any is disallowed.
pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    let input = super::read_robots_txt(&args.robots)?;
    let body = &input.body;
    let tokens = read_agents(&args.agents)?;
    for url in &args.urls {
        validate_url(url)?;
    }
    let mut out = std::io::stdout().lock();
    // With diagnostics the whole file is parsed anyway: take the rules from that one parse.
    let robots = args.diagnostics.then(|| RobotsTxt::parse(body));
    let rules = match &robots {
        Some(robots) => robots.rules_for(&tokens),
        None => AgentRules::parse(body, &tokens),
    };
    // Every URL is decided before anything is printed: one the engine refuses is an input
    // error, reported alone.
    let decisions = args
        .urls
        .iter()
        .map(|url| {
            let decision = rules.try_check(url).with_context(|| {
                format!("{url:?}: give a URL with a host (scheme://host/path) or a path starting with /")
            })?;
            Ok((url, decision))
        })
        .collect::<anyhow::Result<Vec<(&String, Decision<'_>)>>>()?;
    if let Some(robots) = &robots {
        print_diagnostics(robots, input.cut, args.json, &mut out)?;
    }
    let crawl_delay = rules.crawl_delay().map(|delay| delay.seconds);
    let mut any_disallowed = false;
    for (url, decision) in decisions {
        any_disallowed |= !decision.allowed;
        print_decision(url, &decision, crawl_delay, args.json, &mut out)?;
    }
    Ok(if any_disallowed {
        super::exit_disallowed()
    } else {
        ExitCode::SUCCESS
    })
}

/// One URL's answer: a JSON object, or a line of text.
fn print_decision(
    url: &str,
    decision: &Decision<'_>,
    crawl_delay: Option<f64>,
    json: bool,
    out: &mut impl Write,
) -> anyhow::Result<()> {
    if json {
        let group = match decision.group {
            GroupSelection::Named(token) => json!(token),
            GroupSelection::Global => json!("*"),
            GroupSelection::None => json!(null),
        };
        let rule = decision
            .rule
            .map(|rule| json!({"line": rule.line, "kind": rule.kind, "pattern": rule.pattern}));
        let line = json!({
            "url": url,
            "allowed": decision.allowed,
            "rule": rule,
            "group": group,
            "crawl_delay": crawl_delay,
            "reason": decision.to_string(),
        });
        terminal::write_json(out, &line, false)?;
    } else {
        let verdict = if decision.allowed {
            "allowed"
        } else {
            "disallowed"
        };
        let line = format!("{verdict} {}  ({decision})\n", terminal::escape(url));
        terminal::write_text(out, &line)?;
    }
    Ok(())
}

/// The crawler's tokens from the `--agent` values, each read as the engine reads what callers
/// have ([`ProductTokens::read`]): a warning on stderr for each value that is not an RFC 9309
/// product token, saying how it was read. Only too many tokens is an error.
pub(super) fn read_agents(agents: &[String]) -> anyhow::Result<ProductTokens> {
    let (tokens, notes) = ProductTokens::read(agents).context("--agent")?;
    for note in notes {
        eprintln!(
            "jittybot: warning: --agent {}",
            terminal::escape(&note.to_string())
        );
    }
    Ok(tokens)
}

/// Refuses what is neither a path nor a URL; which URLs a robots.txt governs is the engine's
/// call ([`AgentRules::try_check`]).
fn validate_url(url: &str) -> anyhow::Result<()> {
    if url.starts_with('/') {
        return Ok(());
    }
    if let Err(error) = url::Url::parse(url) {
        bail!("{url:?} is not a URL ({error}); give an absolute URL or a path starting with /")
    }
    Ok(())
}

/// Lists the diagnostics. When the input was cut at the size limit, its real size is
/// unknown: the size diagnostic says the rest was not read instead of counting it.
fn print_diagnostics(
    robots: &RobotsTxt,
    cut: bool,
    json: bool,
    out: &mut impl Write,
) -> anyhow::Result<()> {
    for diagnostic in robots.diagnostics() {
        let truncated = matches!(diagnostic.kind, DiagnosticKind::TruncatedAtLimit { .. });
        if json {
            let mut value = serde_json::to_value(diagnostic)?;
            if cut && truncated {
                value["ignored_bytes"] = serde_json::Value::Null;
            }
            terminal::write_json(out, &value, false)?;
        } else if cut && truncated {
            let line = format!(
                "line {}: file exceeds {} bytes; the rest was not read\n",
                diagnostic.line,
                robots::MAX_ROBOTS_TXT_BYTES
            );
            terminal::write_text(out, &line)?;
        } else {
            terminal::write_text(out, &format!("{diagnostic}\n"))?;
        }
    }
    if !json {
        writeln!(
            out,
            "{} diagnostics, {} lines, {} groups, {} sitemaps",
            robots.diagnostics().len(),
            robots.line_count(),
            robots.groups().len(),
            robots.sitemaps().len()
        )?;
    }
    Ok(())
}
