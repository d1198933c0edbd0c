//! `jittybot remove-domain`: delete every report, summary and icon of a domain (the bot page,
//! "Removing your data").

use std::process::ExitCode;

use anyhow::{bail, Context};

use super::serve::DbArg;
use crate::terminal::escape;

/// How long removal waits for a running retention pass to end.
pub const REMOVAL_WAIT: std::time::Duration = std::time::Duration::from_secs(30 * 60);

/// Arguments of `jittybot remove-domain`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// The domain: its registrable domain is removed (`www.example.com` and `example.com`
    /// alike; an IDN as typed or in its `xn--` form).
    domain: String,
    #[command(flatten)]
    db: DbArg,
    /// Also keep the domain off the ranking for future reports.
    #[arg(long)]
    keep_off_ranking: bool,
}

/// Runs the command.
pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    let Some(domain) = service::store::domain_of_name(&args.domain) else {
        bail!("{}: not a domain name", escape(&args.domain));
    };
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .context("cannot start the async runtime")?;
    let removed = runtime.block_on(async {
        let store = args.db.open().await?;
        // Under the maintenance lease: a retention pass folding this domain's reports while
        // they are removed would write their summaries back.
        let holder = db::Holder::new();
        let removal = async { store.remove_domain(&domain, args.keep_off_ranking).await };
        let removed = service::serve::under_maintenance_lease(
            store.db(),
            &service::SystemClock,
            &holder,
            service::limits::MAINTENANCE_LEASE,
            Some(REMOVAL_WAIT),
            removal,
        )
        .await?;
        removed.context("a retention pass is still running; try again later")
    })?;
    println!(
        "{}: {}, {} and {} deleted; {} taken off the schedule{}",
        escape(&domain),
        count(removed.reports, "report"),
        count(removed.summaries, "monthly summary"),
        count(u64::from(removed.icon), "icon"),
        count(removed.scheduled, "listed URL"),
        if args.keep_off_ranking {
            "; kept off the ranking"
        } else {
            ""
        }
    );
    Ok(ExitCode::SUCCESS)
}

/// `1 report`, `2 reports`, `2 monthly summaries`.
fn count(n: u64, noun: &str) -> String {
    match (n, noun.strip_suffix('y')) {
        (1, _) => format!("1 {noun}"),
        (_, Some(stem)) => format!("{n} {stem}ies"),
        (_, None) => format!("{n} {noun}s"),
    }
}
