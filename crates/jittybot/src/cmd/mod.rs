//! One module per subcommand.

use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::Context;
use fetch::{FetchConfig, Fetcher, ResolvePin};

use crate::terminal;

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

#[cfg(test)]
mod tests {
    use super::*;

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
