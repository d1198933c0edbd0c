//! One module per subcommand.

use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Duration;

use anyhow::Context;
use fetch::{ErrorKind, FetchConfig, FetchError, Fetcher, ResolvePin};

use crate::terminal;

pub mod analyze;
pub mod check;
pub mod crawl;
pub mod crawl_control;
pub mod maintain;
pub mod metrics;
pub mod remove_domain;
pub mod robots;
pub mod serve;
pub mod sites;

/// Exit status when at least one URL asked about is disallowed.
pub fn exit_disallowed() -> ExitCode {
    ExitCode::from(1)
}

/// Exit status for a usage or input error.
pub fn exit_error() -> ExitCode {
    ExitCode::from(2)
}

/// The most of a robots.txt read from a file or standard input: what the engine reads (RFC
/// 9309's 500 KiB), plus one byte to know there was more.
pub const MAX_INPUT_BYTES: usize = ::robots::MAX_ROBOTS_TXT_BYTES;

/// A robots.txt read from a file or standard input.
#[derive(Debug)]
pub struct Input {
    /// The bytes read: at most [`MAX_INPUT_BYTES`] + 1.
    pub body: Vec<u8>,
    /// Whether the input is longer than [`MAX_INPUT_BYTES`]: the rest was not read.
    pub cut: bool,
}

/// Reads a robots.txt from a file, or from standard input for `-`: at most
/// [`MAX_INPUT_BYTES`] + 1 bytes, so an endless input (`/dev/zero`) costs no more memory than
/// a large file. Says on stderr when the rest was ignored.
pub fn read_robots_txt(path: &Path) -> anyhow::Result<Input> {
    let input = if path.as_os_str() == "-" {
        read_capped(std::io::stdin().lock())
            .context("cannot read robots.txt from standard input")?
    } else {
        let file = std::fs::File::open(path)
            .with_context(|| format!("cannot read robots.txt file {}", path.display()))?;
        read_capped(file)
            .with_context(|| format!("cannot read robots.txt file {}", path.display()))?
    };
    if input.cut {
        let name = if path.as_os_str() == "-" {
            "standard input".to_owned()
        } else {
            path.display().to_string()
        };
        eprintln!(
            "jittybot: {} is longer than {MAX_INPUT_BYTES} bytes; only the first \
             {MAX_INPUT_BYTES} are read, the rest is ignored",
            terminal::escape(&name)
        );
    }
    Ok(input)
}

/// Reads at most [`MAX_INPUT_BYTES`] + 1 bytes of `reader`.
fn read_capped(reader: impl Read) -> std::io::Result<Input> {
    let limit = u64::try_from(MAX_INPUT_BYTES).map_or(u64::MAX, |max| max.saturating_add(1));
    let mut body = Vec::new();
    reader.take(limit).read_to_end(&mut body)?;
    let cut = body.len() > MAX_INPUT_BYTES;
    Ok(Input { body, cut })
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
    /// The time limit, in seconds (decimals allowed, at most 3600): of the robots.txt fetch
    /// (every redirect hop and the body) for `robots`, of the whole analysis for `analyze`,
    /// whose robots.txt fetch gets the same limit, so both commands reach the same verdict.
    #[arg(long, value_name = "SECONDS", value_parser = parse_timeout, default_value = "60")]
    timeout: Duration,
}

/// The longest `--timeout` accepted.
pub const MAX_TIMEOUT: Duration = Duration::from_secs(3600);

/// Parses `--timeout`: a positive number of seconds up to [`MAX_TIMEOUT`].
fn parse_timeout(text: &str) -> Result<Duration, String> {
    let seconds: f64 = text
        .trim()
        .parse()
        .map_err(|_| format!("{text:?} is not a number of seconds"))?;
    if !(seconds > 0.0 && seconds <= MAX_TIMEOUT.as_secs_f64()) {
        return Err(format!(
            "give more than 0 and at most {} seconds",
            MAX_TIMEOUT.as_secs()
        ));
    }
    Ok(Duration::from_secs_f64(seconds))
}

/// The refusal of the address policy, when it kept a command from contacting the site at all,
/// with what to do about it.
pub fn not_contacted(error: &FetchError) -> Option<anyhow::Error> {
    (error.kind() == ErrorKind::AddressRefused).then(|| {
        anyhow::anyhow!(
            "the site was not contacted: {}; --allow-private-addresses allows non-public \
             addresses",
            error.full_message()
        )
    })
}

impl NetworkArgs {
    /// Add a pin (a hosts file line) to those given with `--resolve`.
    pub fn add_pin(&mut self, pin: ResolvePin) {
        self.resolve.push(pin);
    }

    /// The `--timeout` given (60 s, [`fetch::DEFAULT_TOTAL_TIMEOUT`], by default).
    pub fn timeout(&self) -> Duration {
        self.timeout
    }

    /// A fetcher identifying itself as `token`, with these options; `--timeout` is the limit
    /// of one fetch (`Timeouts::total`).
    pub fn fetcher(&self, token: &str, info_url: &str) -> anyhow::Result<Fetcher> {
        Ok(Fetcher::new(self.fetch_config(token, info_url)?)?)
    }

    /// The configuration [`NetworkArgs::fetcher`] builds its fetcher from, for a command
    /// that sets more of it.
    pub fn fetch_config(&self, token: &str, info_url: &str) -> anyhow::Result<FetchConfig> {
        let mut config = FetchConfig::new(token, info_url);
        config.timeouts.total = self.timeout;
        config.allow_private_addresses = self.allow_private_addresses;
        config.resolve = self.resolve.clone();
        for path in &self.cacerts {
            let pem =
                std::fs::read(path).with_context(|| format!("cannot read {}", path.display()))?;
            config.extra_root_certificates_pem.push(pem);
        }
        Ok(config)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn timeouts_are_positive_and_bounded() {
        assert_eq!(parse_timeout("1.5"), Ok(Duration::from_millis(1500)));
        assert_eq!(parse_timeout("60"), Ok(fetch::DEFAULT_TOTAL_TIMEOUT));
        for bad in ["0", "-1", "NaN", "inf", "3601", "1e400", "soon", ""] {
            assert!(parse_timeout(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn an_endless_input_is_read_to_the_cap_only() {
        let input = read_capped(std::io::repeat(b'a')).unwrap();
        assert_eq!(input.body.len(), MAX_INPUT_BYTES + 1);
        assert!(input.cut);
        let input = read_capped(&b"User-agent: *\nDisallow: /\n"[..]).unwrap();
        assert!(!input.cut);
        let exact = vec![b'#'; MAX_INPUT_BYTES];
        let input = read_capped(exact.as_slice()).unwrap();
        assert_eq!(input.body.len(), MAX_INPUT_BYTES);
        assert!(!input.cut);
    }
}
