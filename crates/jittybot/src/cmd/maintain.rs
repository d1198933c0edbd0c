//! `jittybot maintain`: the retention pass (also run hourly by `serve`): reports older than 6
//! months folded into monthly summaries, the newest report of each URL kept, old pastes
//! deleted.

use std::process::ExitCode;

use anyhow::{bail, Context};
use db::Holder;
use jiff::Timestamp;

use super::serve::DbArg;
use crate::terminal;

/// Arguments of `jittybot maintain`.
#[derive(Debug, clap::Args)]
pub struct Args {
    #[command(flatten)]
    db: DbArg,
    /// Run as of this time (RFC 3339, e.g. 2026-09-01T00:00:00Z) instead of now.
    #[arg(long, value_name = "TIME")]
    as_of: Option<Timestamp>,
    /// Report what would be done without changing anything.
    #[arg(long)]
    dry_run: bool,
    /// Print the outcome as JSON.
    #[arg(long)]
    json: bool,
}

/// Runs the command.
pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .context("cannot start the async runtime")?;
    runtime.block_on(maintain(args))
}

async fn maintain(args: Args) -> anyhow::Result<ExitCode> {
    let store = args.db.open().await?;
    let as_of = args.as_of.unwrap_or_else(Timestamp::now);
    let holder = Holder::new();
    let pass = store.retention(as_of, args.dry_run);
    let outcome = if args.dry_run {
        pass.await?
    } else {
        // The lease is renewed while the pass runs: no second pass folds the same months.
        let under_lease = service::serve::under_maintenance_lease(
            store.db(),
            &service::SystemClock,
            &holder,
            service::limits::MAINTENANCE_LEASE,
            None,
            pass,
        );
        match under_lease.await? {
            Some(outcome) => outcome,
            None => bail!("another process is running the retention pass; try again later"),
        }
    };
    let mut out = std::io::stdout().lock();
    if args.json {
        terminal::write_json(&mut out, &outcome, true)?;
    } else {
        let verb = if args.dry_run { "would fold" } else { "folded" };
        let text = format!(
            "as of {} (reports before {}):\n{verb} {} reports of {} domains into {} monthly summaries\n\
             kept {} old reports as the newest of their URL\n{} {} old pastes and {} old failed analyses\n",
            outcome.as_of,
            outcome.cutoff,
            outcome.folded,
            outcome.domains,
            outcome.summaries,
            outcome.kept_newest,
            if args.dry_run { "would delete" } else { "deleted" },
            outcome.pastes_deleted,
            outcome.failed_deleted,
        );
        terminal::write_text(&mut out, &text)?;
    }
    Ok(ExitCode::SUCCESS)
}
