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
    /// The registrable domain (example.com).
    domain: String,
    #[command(flatten)]
    db: DbArg,
    /// Also keep the domain off the ranking for future reports.
    #[arg(long)]
    keep_off_ranking: bool,
}

/// Runs the command.
pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    let domain = service::ids::normalize_domain(&args.domain);
    if domain.is_empty() || domain.contains('/') || domain.chars().any(char::is_control) {
        bail!("{}: not a domain name", escape(&args.domain));
    }
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
        "{}: {} reports, {} monthly summaries{} deleted{}",
        escape(&domain),
        removed.reports,
        removed.summaries,
        if removed.icon { " and the icon" } else { "" },
        if args.keep_off_ranking {
            "; kept off the ranking"
        } else {
            ""
        }
    );
    Ok(ExitCode::SUCCESS)
}
