//! `jittybot crawl-control`: the operator's levers for complaints, kept in the crawl's store;
//! the crawl is `crates/crawl` (`crawl::control`).

use std::io::Write;
use std::process::ExitCode;

use anyhow::Context;
use crawl::control::{self, Lever, SiteLevers};
use crawl::input::format_duration;
use crawl::store::Store;
use db::DbTarget;

/// Arguments of `jittybot crawl-control`.
#[derive(Debug, clap::Args)]
#[command(after_long_help = "\
Every process crawling the store obeys a lever within 5 seconds of it being pulled; \
levers stay in force (also for crawls started later) until undone. A SITE is a domain or \
host name: it covers that name and every name under it (example.com covers \
www.example.com). The same commands, one per line, can be kept in a file given to \
`jittybot crawl --control FILE`.")]
pub struct Args {
    /// The crawl's store: a SQLite file, or a postgres:// URL.
    #[arg(long, default_value = "crawl.sqlite", value_name = "PATH|URL")]
    db: String,
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, clap::Subcommand)]
enum Command {
    /// Pace the origins serving SITE at least DURATION apart (200ms, 10s, 5m, 1h; at most
    /// 1 day), or `default` for the crawl's own pace again.
    Pace {
        /// The site: a domain or host name, or an IP address.
        site: String,
        /// The least time between two requests, or `default`.
        duration: String,
    },
    /// Make no request of any kind to SITE (pages, robots.txt, sitemaps, media); its URLs
    /// stay queued.
    Exclude {
        /// The site.
        site: String,
    },
    /// Crawl SITE again after `exclude`.
    Include {
        /// The site.
        site: String,
    },
    /// Drop SITE's cached robots.txt: it is fetched again before the site's next request.
    RefreshRobots {
        /// The site.
        site: String,
    },
    /// The levers set, per site.
    List {
        /// Machine-readable output.
        #[arg(long)]
        json: bool,
    },
}

impl Command {
    fn lever(&self) -> Option<Result<Lever, control::LeverError>> {
        let words: Vec<&str> = match self {
            Command::Pace { site, duration } => vec!["pace", site, duration],
            Command::Exclude { site } => vec!["exclude", site],
            Command::Include { site } => vec!["include", site],
            Command::RefreshRobots { site } => vec!["refresh-robots", site],
            Command::List { .. } => return None,
        };
        Some(Lever::parse(&words))
    }
}

/// Run `jittybot crawl-control`.
pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    let lever = args.command.lever().transpose()?;
    let target: DbTarget = args.db.parse()?;
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    let (dropped, levers) = runtime.block_on(async {
        let store = Store::open(&target)
            .await
            .with_context(|| format!("cannot open the store {target}"))?;
        let dropped = match &lever {
            Some(lever) => Some(control::apply(&store, lever, jiff::Timestamp::now()).await?),
            None => None,
        };
        let levers = control::levers(&store).await;
        store.close().await;
        anyhow::Ok((dropped, levers?))
    })?;
    let mut out = std::io::stdout().lock();
    match (&lever, &args.command) {
        (Some(lever), _) => {
            writeln!(out, "{lever}: recorded; running crawls obey it within 5 s")?;
            if let (Lever::RefreshRobots(_), Some(n)) = (lever, dropped) {
                writeln!(out, "{n} stored robots.txt copies dropped")?;
            }
        }
        (None, Command::List { json: true }) => {
            writeln!(out, "{}", serde_json::to_string_pretty(&levers)?)?;
        }
        (None, _) => list(&mut out, &levers)?,
    }
    Ok(ExitCode::SUCCESS)
}

fn list(out: &mut impl Write, levers: &[SiteLevers]) -> std::io::Result<()> {
    if levers.is_empty() {
        return writeln!(
            out,
            "No levers set: every site is crawled at the crawl's own pace."
        );
    }
    writeln!(
        out,
        "{:<40} {:<9} {:<9} {:<25} changed",
        "site", "pace", "excluded", "robots.txt refresh asked"
    )?;
    for l in levers {
        let pace = l
            .pace
            .map_or_else(|| "default".to_string(), format_duration);
        let refresh = l.robots_refresh_at.map_or_else(
            || "-".to_string(),
            |t| {
                t.round(jiff::Unit::Second)
                    .map_or(t.to_string(), |t| t.to_string())
            },
        );
        let changed = l
            .updated_at
            .round(jiff::Unit::Second)
            .map_or(l.updated_at.to_string(), |t| t.to_string());
        writeln!(
            out,
            "{:<40} {:<9} {:<9} {:<25} {changed}",
            l.site.as_str(),
            pace,
            if l.excluded { "yes" } else { "no" },
            refresh,
        )?;
    }
    Ok(())
}
