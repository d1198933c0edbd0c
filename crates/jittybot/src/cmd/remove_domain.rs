//! `jittybot remove-domain`: delete every report, summary and icon of a domain (the bot page,
//! "Removing your data").

use std::process::ExitCode;

use anyhow::{bail, Context};

use super::serve::DbArg;
use crate::terminal::escape;

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
        anyhow::Ok(store.remove_domain(&domain, args.keep_off_ranking).await?)
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
