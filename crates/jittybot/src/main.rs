//! `jittybot`: the command line. Argument parsing and wiring only; the work is in the crates.

mod cmd;
mod terminal;

use std::process::ExitCode;

use clap::{Parser, Subcommand};

/// jemalloc instead of glibc's malloc: a crawl allocates and frees many page-sized and small
/// blocks across threads, where glibc spent ~14 % of the crawler's CPU in `malloc`, `free`
/// and `malloc_consolidate`; jemalloc took ~10 % off the CPU per page, mimalloc as much but
/// held ~50 MB more at peak (crates/crawl/README.md, "Benchmark").
#[global_allocator]
static ALLOCATOR: tikv_jemallocator::Jemalloc = tikv_jemallocator::Jemalloc;

/// JittyBot: robots.txt done properly.
#[derive(Debug, Parser)]
#[command(name = "jittybot", version, about)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Check URLs against a local robots.txt file, explaining each decision.
    Check(cmd::check::Args),
    /// Fetch the robots.txt that governs a URL and decide the URL by it.
    Robots(cmd::robots::Args),
    /// Analyse a site as RobotsTxtParser: fetch, audit and score its robots.txt.
    Analyze(cmd::analyze::Args),
    /// Crawl sites as JittyBot: politely, archived to WARC, resumable.
    Crawl(Box<cmd::crawl::Args>),
    /// Show a crawl's state: URLs by state, origins, totals.
    CrawlStatus(cmd::crawl::StatusArgs),
    /// Pull an operator's lever on running crawls: pace, exclude or include a site, refresh
    /// its robots.txt; list the levers set.
    CrawlControl(cmd::crawl_control::Args),
    /// Run RobotsTxtParser the service: the JSON API, the analysis queue, the schedule.
    Serve(Box<cmd::serve::Args>),
    /// Manage the list of sites the service checks on its schedule.
    Sites(cmd::sites::Args),
    /// Fold reports older than 6 months into monthly summaries; delete old pastes.
    Maintain(cmd::maintain::Args),
    /// Delete every report, summary and icon of a domain.
    RemoveDomain(cmd::remove_domain::Args),
}

/// Logs to standard error what `RUST_LOG` asks for (`RUST_LOG=audit=debug,fetch=debug`):
/// spans per analysis, step, request, hop and robots.txt fetch. Nothing without it.
fn init_tracing() {
    if std::env::var_os("RUST_LOG").is_none() {
        return;
    }
    let subscriber = tracing_subscriber::fmt()
        .with_env_filter(tracing_subscriber::EnvFilter::from_default_env())
        .with_writer(std::io::stderr)
        .with_ansi(false)
        .finish();
    // Only fails when a subscriber is already set, which then keeps logging.
    let _ = tracing::subscriber::set_global_default(subscriber);
}

fn main() -> ExitCode {
    // The icon sandbox's helper (`jittybot __decode-icon`, started by `serve`) limits itself
    // before anything else runs: no tracing, no argument parser, no threads.
    let mut args = std::env::args_os().skip(1);
    if args
        .next()
        .is_some_and(|first| first == icon::DECODE_SUBCOMMAND)
    {
        return icon::run_helper(args);
    }
    init_tracing();
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(error) => {
            let usage_error = error.use_stderr();
            let _ = error.print();
            return if usage_error {
                cmd::exit_error()
            } else {
                ExitCode::SUCCESS
            };
        }
    };
    let outcome = match cli.command {
        Command::Check(args) => cmd::check::run(args),
        Command::Robots(args) => cmd::robots::run(args),
        Command::Analyze(args) => cmd::analyze::run(args),
        Command::Crawl(args) => cmd::crawl::run(*args),
        Command::CrawlStatus(args) => cmd::crawl::status(args),
        Command::CrawlControl(args) => cmd::crawl_control::run(args),
        Command::Serve(args) => cmd::serve::run(*args),
        Command::Sites(args) => cmd::sites::run(args),
        Command::Maintain(args) => cmd::maintain::run(args),
        Command::RemoveDomain(args) => cmd::remove_domain::run(args),
    };
    match outcome {
        Ok(code) => code,
        Err(error) => {
            // Messages quote input (URLs, file names, server answers): escaped too.
            eprintln!("jittybot: {}", terminal::escape(&format!("{error:#}")));
            cmd::exit_error()
        }
    }
}
