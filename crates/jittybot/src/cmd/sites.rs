//! `jittybot sites`: the list of sites the service checks on its schedule.

use std::io::{BufRead, BufReader, Read};
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::{bail, Context};
use jiff::Timestamp;
use url::Url;

use service::schedule::UrlSchedule;
use service::store::LastOutcome;

use super::serve::DbArg;
use crate::terminal::{self, escape};

/// The largest file `sites import` reads.
pub const MAX_SITES_FILE_BYTES: u64 = 16 * 1024 * 1024;

/// Arguments of `jittybot sites`.
#[derive(Debug, clap::Args)]
pub struct Args {
    #[command(subcommand)]
    action: Action,
}

#[derive(Debug, clap::Subcommand)]
enum Action {
    /// Add URLs to the list (without a scheme, https:// is assumed).
    Add {
        /// The URLs.
        #[arg(required = true, value_name = "URL")]
        urls: Vec<String>,
        #[command(flatten)]
        db: DbArg,
    },
    /// Add the URLs of a file: one per line; blank lines and `#` comments are ignored.
    Import {
        /// The file (`-` for standard input).
        file: PathBuf,
        #[command(flatten)]
        db: DbArg,
    },
    /// List the sites: per URL its last check and what came of it, its next check and any
    /// back-off in force with its reason.
    List {
        /// As JSON.
        #[arg(long)]
        json: bool,
        #[command(flatten)]
        db: DbArg,
    },
    /// Remove URLs from the list.
    Remove {
        /// The URLs.
        #[arg(required = true, value_name = "URL")]
        urls: Vec<String>,
        #[command(flatten)]
        db: DbArg,
    },
}

fn parse(input: &str) -> anyhow::Result<Url> {
    fetch::parse_target(input).with_context(|| format!("{}: not a site address", escape(input)))
}

/// The URLs of a sites file, each checked; an error names the line.
fn read_file(file: &PathBuf) -> anyhow::Result<Vec<Url>> {
    let reader: Box<dyn Read> = if file.as_os_str() == "-" {
        Box::new(std::io::stdin())
    } else {
        Box::new(
            std::fs::File::open(file).with_context(|| format!("cannot read {}", file.display()))?,
        )
    };
    let mut urls = Vec::new();
    let reader = BufReader::new(reader.take(MAX_SITES_FILE_BYTES));
    for (n, line) in reader.lines().enumerate() {
        let line = line.with_context(|| format!("cannot read {}", file.display()))?;
        let text = line.split('#').next().unwrap_or("").trim();
        if text.is_empty() {
            continue;
        }
        urls.push(parse(text).with_context(|| format!("{} line {}", file.display(), n + 1))?);
    }
    Ok(urls)
}

/// One URL of the list, in words: its last check and outcome, its next check, any back-off.
fn describe(site: &UrlSchedule) -> String {
    let last = match (&site.last_check, &site.outcome) {
        (Some(at), Some(outcome)) => {
            let detail = match (site.score, &site.error) {
                (Some(score), _) => format!(", score {score}"),
                (None, Some(error)) => format!(": {error}"),
                (None, None) => String::new(),
            };
            format!("last check {at} ({}{detail})", outcome.as_str())
        }
        _ => "never checked".to_owned(),
    };
    let mut line = format!("{}  {last}  next check {}", site.url, site.next_check);
    if let Some(backoff) = &site.backoff {
        let why = match backoff.reason {
            LastOutcome::Refusal => "refused the bot or showed a challenge",
            _ => "unreachable or asked for fewer requests",
        };
        line.push_str(&format!(
            "  backing off until {} ({why}, {} in a row)",
            backoff.until, backoff.in_a_row
        ));
    }
    line.push('\n');
    line
}

/// Runs the command.
pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .context("cannot start the async runtime")?;
    runtime.block_on(act(args.action))
}

async fn act(action: Action) -> anyhow::Result<ExitCode> {
    match action {
        Action::Add { urls, db } => {
            let urls = urls
                .iter()
                .map(|u| parse(u))
                .collect::<anyhow::Result<Vec<_>>>()?;
            let added = db.open().await?.add_sites(&urls, Timestamp::now()).await?;
            println!(
                "{added} added, {} already listed",
                urls.len() as u64 - added
            );
        }
        Action::Import { file, db } => {
            let urls = read_file(&file)?;
            let added = db.open().await?.add_sites(&urls, Timestamp::now()).await?;
            println!(
                "{added} added, {} already listed",
                urls.len() as u64 - added
            );
        }
        Action::List { json, db } => {
            let rows = db.open().await?.listed_schedule().await?;
            let now = Timestamp::now();
            let sites: Vec<UrlSchedule> = rows.iter().map(|r| UrlSchedule::of(r, now)).collect();
            let mut out = std::io::stdout().lock();
            if json {
                terminal::write_json(&mut out, &sites, true)?;
            } else {
                let text: String = sites.iter().map(describe).collect();
                terminal::write_text(&mut out, &text)?;
            }
        }
        Action::Remove { urls, db } => {
            let urls = urls
                .iter()
                .map(|u| parse(u))
                .collect::<anyhow::Result<Vec<_>>>()?;
            let removed = db.open().await?.remove_sites(&urls).await?;
            if removed == 0 {
                bail!("none of these URLs is listed");
            }
            println!("{removed} removed");
        }
    }
    Ok(ExitCode::SUCCESS)
}
