//! Line-based input files: hosts(5) pins, the `--origins` override file, seeds.
//!
//! Common rules: UTF-8 (invalid bytes are an error naming the line), `#` starts a comment
//! (whole line or after the fields), blank lines are ignored, fields are separated by spaces or
//! tabs, a line longer than [`MAX_LINE_BYTES`] is an error. Control characters in errors are
//! escaped by `Debug` formatting.

use std::io::{BufRead, Read};
use std::net::IpAddr;
use std::path::{Path, PathBuf};

use crate::normal::{NormalUrl, UrlError};

/// The longest line accepted in these files.
pub const MAX_LINE_BYTES: usize = 8 * 1024;

/// A bad input file: which file, which line, what is wrong.
#[derive(Debug, thiserror::Error)]
#[error("{}:{line}: {kind}", file.display())]
pub struct InputError {
    /// The file (or `-`).
    pub file: PathBuf,
    /// The line number, from 1 (0 when the file could not be read at all).
    pub line: usize,
    /// What is wrong.
    #[source]
    pub kind: InputErrorKind,
}

/// What is wrong with a line.
#[derive(Debug, thiserror::Error)]
pub enum InputErrorKind {
    /// The file could not be read.
    #[error("cannot read: {0}")]
    Io(#[from] std::io::Error),
    /// Not UTF-8.
    #[error("not UTF-8")]
    Utf8,
    /// Longer than [`MAX_LINE_BYTES`].
    #[error("line longer than {MAX_LINE_BYTES} bytes")]
    LineTooLong,
    /// The first field of a hosts line is not an IP address.
    #[error("{0:?} is not an IP address")]
    Address(String),
    /// A line with the wrong number of fields.
    #[error("expected {expected}, found {found:?}")]
    Fields {
        /// What the line should hold.
        expected: &'static str,
        /// What it holds.
        found: String,
    },
    /// A host name that is not one.
    #[error("{0:?} is not a host name")]
    Host(String),
    /// A `--control` line that is not a lever (`crate::control`).
    #[error(transparent)]
    Lever(crate::control::LeverError),
    /// A seed that is not a crawlable URL.
    #[error("{url:?}: {source}")]
    Url {
        /// The text.
        url: String,
        /// Why.
        #[source]
        source: UrlError,
    },
}

/// A pinned resolution from a hosts file: `name` resolves to `addr` (every port).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HostsPin {
    /// The host name, lower case.
    pub name: String,
    /// Its address.
    pub addr: IpAddr,
}

/// The hosts a line of the `--origins` file applies to.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum HostPattern {
    /// Exactly this host.
    Exact(String),
    /// `*.DOMAIN`: the domain itself and every name under it.
    Suffix(String),
}

impl HostPattern {
    /// Whether `host` (lower case) matches.
    pub fn matches(&self, host: &str) -> bool {
        match self {
            HostPattern::Exact(h) => h == host,
            HostPattern::Suffix(d) => {
                host == d
                    || (host.len() > d.len()
                        && host.ends_with(d.as_str())
                        && host.as_bytes()[host.len() - d.len() - 1] == b'.')
            }
        }
    }
}

/// One line of the `--origins` file: these hosts are served by the origin called `origin`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct OriginRule {
    /// The hosts.
    pub pattern: HostPattern,
    /// The operator's name for the origin.
    pub origin: String,
}

/// Read `reader` line by line, calling `each(line_number, fields)` for every non-empty line.
pub(crate) fn each_line(
    file: &Path,
    mut reader: impl BufRead,
    mut each: impl FnMut(usize, Vec<&str>) -> Result<(), InputErrorKind>,
) -> Result<(), InputError> {
    let err = |line, kind| InputError {
        file: file.to_path_buf(),
        line,
        kind,
    };
    let mut buf = Vec::new();
    let mut number = 0;
    loop {
        buf.clear();
        number += 1;
        // Read at most one byte past the cap, so a huge line cannot exhaust memory.
        let limit = (MAX_LINE_BYTES + 2) as u64;
        let n = (&mut reader)
            .take(limit)
            .read_until(b'\n', &mut buf)
            .map_err(|e| err(number, e.into()))?;
        if n == 0 {
            return Ok(());
        }
        if buf.last() != Some(&b'\n') && n as u64 == limit {
            return Err(err(number, InputErrorKind::LineTooLong));
        }
        let text = std::str::from_utf8(&buf).map_err(|_| err(number, InputErrorKind::Utf8))?;
        let text = text.split('#').next().unwrap_or_default();
        if text.trim_end_matches(['\r', '\n']).len() > MAX_LINE_BYTES {
            return Err(err(number, InputErrorKind::LineTooLong));
        }
        let fields: Vec<&str> = text.split_ascii_whitespace().collect();
        if !fields.is_empty() {
            each(number, fields).map_err(|kind| err(number, kind))?;
        }
    }
}

fn host_name(text: &str) -> Result<String, InputErrorKind> {
    let lower = text.trim_end_matches('.').to_ascii_lowercase();
    let ok = !lower.is_empty()
        && lower.len() <= 253
        && lower.split('.').all(|l| {
            !l.is_empty()
                && l.len() <= 63
                && l.bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
        });
    if ok {
        Ok(lower)
    } else {
        Err(InputErrorKind::Host(text.to_string()))
    }
}

/// Read a hosts(5) file: `ADDR NAME [ALIAS...]` per line.
pub fn parse_hosts(file: &Path, reader: impl BufRead) -> Result<Vec<HostsPin>, InputError> {
    let mut pins = Vec::new();
    each_line(file, reader, |_, fields| {
        if fields.len() < 2 {
            return Err(InputErrorKind::Fields {
                expected: "ADDRESS NAME...",
                found: fields.join(" "),
            });
        }
        let addr: IpAddr = fields[0]
            .parse()
            .map_err(|_| InputErrorKind::Address(fields[0].to_string()))?;
        for name in &fields[1..] {
            pins.push(HostsPin {
                name: host_name(name)?,
                addr,
            });
        }
        Ok(())
    })?;
    Ok(pins)
}

/// Read the `--origins` file: `HOST-OR-*.DOMAIN ORIGIN-NAME` per line.
pub fn parse_origins(file: &Path, reader: impl BufRead) -> Result<Vec<OriginRule>, InputError> {
    let mut rules = Vec::new();
    each_line(file, reader, |_, fields| {
        let [host, origin] = fields[..] else {
            return Err(InputErrorKind::Fields {
                expected: "HOST-OR-*.DOMAIN ORIGIN-NAME",
                found: fields.join(" "),
            });
        };
        let pattern = match host.strip_prefix("*.") {
            Some(domain) => HostPattern::Suffix(host_name(domain)?),
            None => HostPattern::Exact(host_name(host)?),
        };
        rules.push(OriginRule {
            pattern,
            origin: origin.to_string(),
        });
        Ok(())
    })?;
    Ok(rules)
}

/// Read a seeds file: one absolute `http`/`https` URL per line, normalised.
pub fn read_seeds(file: &Path, reader: impl BufRead) -> Result<Vec<NormalUrl>, InputError> {
    let mut seeds = Vec::new();
    each_line(file, reader, |_, fields| {
        let [url] = fields[..] else {
            return Err(InputErrorKind::Fields {
                expected: "one URL",
                found: fields.join(" "),
            });
        };
        let seed = NormalUrl::parse(url).map_err(|source| InputErrorKind::Url {
            url: url.to_string(),
            source,
        })?;
        seeds.push(seed);
        Ok(())
    })?;
    Ok(seeds)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p() -> &'static Path {
        Path::new("f")
    }

    #[test]
    fn hosts_file() {
        let text = "# comment\n127.0.0.2 a.test www.a.test  # trailing\n\n::1\tv6.test\n";
        let pins = parse_hosts(p(), text.as_bytes()).unwrap();
        assert_eq!(pins.len(), 3);
        assert_eq!(
            pins[1],
            HostsPin {
                name: "www.a.test".into(),
                addr: "127.0.0.2".parse().unwrap()
            }
        );
        assert_eq!(pins[2].addr, "::1".parse::<IpAddr>().unwrap());
        let e = parse_hosts(p(), "127.0.0.1 ok.test\nnot-an-ip x.test\n".as_bytes()).unwrap_err();
        assert_eq!(e.line, 2);
        assert!(matches!(e.kind, InputErrorKind::Address(_)), "{e}");
        assert_eq!(e.to_string(), "f:2: \"not-an-ip\" is not an IP address");
        let e = parse_hosts(p(), "127.0.0.1\n".as_bytes()).unwrap_err();
        assert!(matches!(e.kind, InputErrorKind::Fields { .. }));
        let e = parse_hosts(p(), "127.0.0.1 bad/name\n".as_bytes()).unwrap_err();
        assert!(matches!(e.kind, InputErrorKind::Host(_)));
        let e = parse_hosts(p(), b"127.0.0.1 a\xff\n".as_slice()).unwrap_err();
        assert!(matches!(e.kind, InputErrorKind::Utf8));
        let long = format!("127.0.0.1 {}\n", "a".repeat(MAX_LINE_BYTES * 4));
        let e = parse_hosts(p(), long.as_bytes()).unwrap_err();
        assert!(matches!(e.kind, InputErrorKind::LineTooLong));
    }

    #[test]
    fn origins_file() {
        let text = "*.cdn.test shared\nA.test   backend-1\n";
        let rules = parse_origins(p(), text.as_bytes()).unwrap();
        assert_eq!(rules[0].pattern, HostPattern::Suffix("cdn.test".into()));
        assert_eq!(
            rules[1],
            OriginRule {
                pattern: HostPattern::Exact("a.test".into()),
                origin: "backend-1".into()
            }
        );
        assert!(rules[0].pattern.matches("x.cdn.test"));
        assert!(rules[0].pattern.matches("cdn.test"));
        assert!(!rules[0].pattern.matches("xcdn.test"));
        let e = parse_origins(p(), "a.test\n".as_bytes()).unwrap_err();
        assert_eq!(e.line, 1);
        let e = parse_origins(p(), "ok.test o\na.test b c\n".as_bytes()).unwrap_err();
        assert_eq!(e.line, 2);
    }

    #[test]
    fn seeds_file() {
        let seeds =
            read_seeds(p(), "https://A.test/x#f\n\n# c\nhttp://b.test\n".as_bytes()).unwrap();
        assert_eq!(seeds[0].as_str(), "https://a.test/x");
        assert_eq!(seeds[1].as_str(), "http://b.test/");
        let e = read_seeds(p(), "https://a.test/\nftp://b.test/\n".as_bytes()).unwrap_err();
        assert_eq!(e.line, 2);
        assert!(matches!(e.kind, InputErrorKind::Url { .. }), "{e}");
    }
}
