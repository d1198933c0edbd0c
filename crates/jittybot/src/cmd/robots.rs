//! `jittybot robots`: fetch the robots.txt that governs a URL and decide the URL by it.

use std::fmt::Write as _;
use std::process::ExitCode;

use anyhow::Context;
use fetch::{RobotsFetch, RobotsOutcome, Verdict};
use serde_json::json;

use crate::terminal::{self, escape};

/// The page the User-Agent points site owners to.
const INFO_URL: &str = "https://jittybot.example/bot";
/// The product token the User-Agent names.
const USER_AGENT_TOKEN: &str = "JittyBot";

/// Arguments of `jittybot robots`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// The URL to decide; without a scheme, `https://` is assumed.
    #[arg(value_name = "URL")]
    url: String,
    /// Crawler to match, in order of preference; repeat for fallbacks
    /// (e.g. `--agent JittyBot-Image --agent JittyBot`). Read as `jittybot check` reads it:
    /// a product token, a name such as `MJ12bot`, a User-Agent string, or empty.
    #[arg(long = "agent", value_name = "AGENT", default_value = "JittyBot")]
    agents: Vec<String>,
    /// One JSON object instead of text.
    #[arg(long)]
    json: bool,
    #[command(flatten)]
    network: super::NetworkArgs,
}

/// Runs the command: exit 0 if the URL is allowed, 1 if it is not.
pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .context("cannot start the async runtime")?;
    runtime.block_on(run_async(args))
}

async fn run_async(args: Args) -> anyhow::Result<ExitCode> {
    let url = fetch::parse_target(&args.url)?;
    let tokens = super::check::read_agents(&args.agents)?;
    let fetcher = args.network.fetcher(USER_AGENT_TOKEN, INFO_URL)?;
    let fetched = fetch::fetch_robots_txt(&fetcher, &url).await?;
    // Refused before anything was sent: the site said nothing, so there is no verdict.
    if fetched.redirects.is_empty() {
        if let Some(refusal) = fetched.error.as_ref().and_then(super::not_contacted) {
            return Err(refusal);
        }
    }
    let verdict = fetched.verdict(url.as_str(), &tokens);

    let mut out = std::io::stdout().lock();
    if args.json {
        terminal::write_json(&mut out, &to_json(&url, &fetched, &verdict), false)?;
    } else {
        terminal::write_text(&mut out, &to_text(&url, &fetched, &verdict))?;
    }
    Ok(if verdict.allowed {
        ExitCode::SUCCESS
    } else {
        super::exit_disallowed()
    })
}

fn sitemaps(fetched: &RobotsFetch) -> Vec<&str> {
    fetched
        .robots
        .iter()
        .flat_map(|robots| robots.sitemaps())
        .map(|sitemap| sitemap.url.as_str())
        .collect()
}

/// The lifetime the answer would get in the cache; none for failures, which are retried.
fn cache_lifetime(fetched: &RobotsFetch) -> Option<u64> {
    match fetched.outcome {
        RobotsOutcome::Rules | RobotsOutcome::NoFile | RobotsOutcome::NotModified => {
            Some(fetched.cache_lifetime.as_secs())
        }
        RobotsOutcome::Unreachable | RobotsOutcome::BackingOff => None,
    }
}

fn to_json(url: &url::Url, fetched: &RobotsFetch, verdict: &Verdict) -> serde_json::Value {
    json!({
        "url": url.as_str(),
        "robots_txt": fetched.robots_url.as_str(),
        "outcome": fetched.outcome,
        "status": fetched.status.map(|s| s.as_u16()),
        "final_url": fetched.final_url.as_ref().map(|u| u.as_str()),
        "redirects": fetched.redirects,
        "bytes_read": fetched.bytes_read,
        "truncated": fetched.truncated,
        "content_type": fetched.content_type,
        "x_robots_tag": fetched.x_robots_tag,
        "cache_lifetime_seconds": cache_lifetime(fetched),
        "retry_after_seconds": fetched.retry_after.map(|d| d.as_secs()),
        "error": fetched.error.as_ref().map(|e| json!({"kind": e.kind(), "message": e.full_message()})),
        "sitemaps": sitemaps(fetched),
        "allowed": verdict.allowed,
        "source": verdict.source,
        "reason": verdict.reason(),
        "explanation": verdict.explanation,
        "crawl_delay": verdict.crawl_delay.map(|d| d.seconds),
    })
}

fn to_text(url: &url::Url, fetched: &RobotsFetch, verdict: &Verdict) -> String {
    let mut text = String::new();
    // Writing to a String cannot fail.
    let _ = writeln!(text, "robots.txt:  {}", fetched.robots_url);
    let _ = writeln!(text, "outcome:     {}", fetched.outcome);
    match fetched.status {
        Some(status) => {
            let _ = writeln!(text, "status:      {status}");
        }
        None => {
            let _ = writeln!(text, "status:      no response");
        }
    }
    if let Some(error) = &fetched.error {
        let _ = writeln!(text, "error:       {}", escape(&error.full_message()));
    }
    for hop in &fetched.redirects {
        let _ = writeln!(
            text,
            "redirect:    {} {} -> {}",
            hop.status,
            hop.url,
            escape(&hop.location)
        );
    }
    let cut = if fetched.truncated {
        format!(
            " (cut at {} bytes; the rest was not read)",
            fetch::ROBOTS_TXT_MAX_BYTES
        )
    } else {
        " (whole file)".to_owned()
    };
    let _ = writeln!(text, "bytes read:  {}{cut}", fetched.bytes_read);
    match cache_lifetime(fetched) {
        Some(seconds) => {
            let _ = writeln!(text, "cache for:   {seconds} s");
        }
        None => {
            let retry = fetched.retry_after.map_or(String::new(), |d| {
                format!(" (Retry-After {} s)", d.as_secs())
            });
            let _ = writeln!(text, "cache for:   not cached, retried{retry}");
        }
    }
    for sitemap in sitemaps(fetched) {
        let _ = writeln!(text, "sitemap:     {}", escape(sitemap));
    }
    let decision = if verdict.allowed {
        "allowed"
    } else {
        "disallowed"
    };
    let _ = writeln!(text, "{decision}:  {url}  ({})", verdict.reason());
    if let Some(delay) = verdict.crawl_delay {
        let _ = writeln!(text, "crawl-delay: {} s", delay.seconds);
    }
    text
}
