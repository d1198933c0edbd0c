//! `jittybot`: the command line. Argument parsing and wiring only; the work is in the crates.

mod cmd;
mod terminal;

use std::process::ExitCode;

use clap::{Parser, Subcommand};

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
}

fn main() -> ExitCode {
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
