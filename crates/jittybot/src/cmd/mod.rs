//! One module per subcommand.

use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::Context;
use fetch::{FetchConfig, Fetcher, ResolvePin};

pub mod analyze;
pub mod check;
pub mod crawl;
pub mod robots;

/// Exit status when at least one URL asked about is disallowed.
pub fn exit_disallowed() -> ExitCode {
    ExitCode::from(1)
}

/// Exit status for a usage or input error.
pub fn exit_error() -> ExitCode {
    ExitCode::from(2)
}

/// Reads a robots.txt from a file, or from standard input for `-`.
pub fn read_robots_txt(path: &Path) -> anyhow::Result<Vec<u8>> {
    if path.as_os_str() == "-" {
        let mut body = Vec::new();
        std::io::stdin()
            .read_to_end(&mut body)
            .context("cannot read robots.txt from standard input")?;
        Ok(body)
    } else {
        std::fs::read(path)
            .with_context(|| format!("cannot read robots.txt file {}", path.display()))
    }
}

/// The network options shared by the commands that fetch.
#[derive(Debug, clap::Args)]
pub struct NetworkArgs {
    /// Allow private, loopback and other non-public addresses.
    #[arg(long)]
    allow_private_addresses: bool,
    /// Connect to HOST:PORT at ADDR instead of resolving it (as curl's --resolve);
    /// repeatable. Pinned addresses are still checked.
    #[arg(long = "resolve", value_name = "HOST:PORT:ADDR")]
    resolve: Vec<ResolvePin>,
    /// Also trust the root certificates in this PEM file; repeatable.
    #[arg(long = "cacert", value_name = "FILE")]
    cacerts: Vec<PathBuf>,
}

impl NetworkArgs {
    /// Add a pin (a hosts file line) to those given with `--resolve`.
    pub fn add_pin(&mut self, pin: ResolvePin) {
        self.resolve.push(pin);
    }

    /// A fetcher identifying itself as `token`, with these options.
    pub fn fetcher(&self, token: &str, info_url: &str) -> anyhow::Result<Fetcher> {
        let mut config = FetchConfig::new(token, info_url);
        config.allow_private_addresses = self.allow_private_addresses;
        config.resolve = self.resolve.clone();
        for path in &self.cacerts {
            let pem =
                std::fs::read(path).with_context(|| format!("cannot read {}", path.display()))?;
            config.extra_root_certificates_pem.push(pem);
        }
        Ok(Fetcher::new(config)?)
    }
}
