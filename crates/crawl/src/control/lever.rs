//! The operator's commands (`jittybot crawl-control ...`, one per line of `--control FILE`):
//! what they mean and how they are read.

use std::fmt;
use std::io::BufRead;
use std::path::Path;
use std::str::FromStr;
use std::time::Duration;

use crate::input::{
    format_duration, parse_duration, DurationError, HostPattern, InputError, InputErrorKind,
};

/// The slowest pace an operator may set for a site: 1 day between requests (as the longest
/// crawl-delay honoured). Slower than that is `exclude`.
pub const MAX_PACE_FLOOR: Duration = fetch::MAX_CRAWL_DELAY;

/// The longest site name accepted (a DNS name's limit).
pub const MAX_SITE_BYTES: usize = 253;

/// A site as an operator names it: a registrable domain (`example.com`: every host under it)
/// or a host (`shop.example.com`: that host and every name under it), or an IP address.
/// Lower case; international names in their punycode form, as robots.txt scopes use them.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize)]
#[serde(transparent)]
pub struct SiteName(String);

impl SiteName {
    /// The name as stored.
    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// Whether `host` (lower case, punycode, as fetch's scopes give it) is this site or under
    /// it.
    pub fn covers(&self, host: &str) -> bool {
        let host = host.trim_end_matches('.');
        HostPattern::Suffix(self.0.clone()).matches(host)
    }

    /// A `LIKE` pattern (escape character `\`) for the names under this site.
    pub(crate) fn like_under(&self) -> String {
        let escaped: String = self
            .0
            .chars()
            .flat_map(|c| match c {
                '%' | '_' | '\\' => vec!['\\', c],
                c => vec![c],
            })
            .collect();
        format!("%.{escaped}")
    }
}

impl fmt::Display for SiteName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl FromStr for SiteName {
    type Err = LeverError;

    /// A host name (international names accepted and turned to punycode) or an IP address;
    /// not a URL, not a wildcard.
    fn from_str(text: &str) -> Result<SiteName, LeverError> {
        let bad = || LeverError::Site(text.to_string());
        let trimmed = text.trim_end_matches('.');
        if trimmed.is_empty() || trimmed.len() > MAX_SITE_BYTES || trimmed.contains('/') {
            return Err(bad());
        }
        let name = match url::Host::parse(trimmed).map_err(|_| bad())? {
            url::Host::Domain(d) => d,
            url::Host::Ipv4(a) => a.to_string(),
            url::Host::Ipv6(a) => format!("[{a}]"),
        };
        let labels_ok = name.starts_with('[')
            || name.split('.').all(|l| {
                !l.is_empty()
                    && l.len() <= 63
                    && l.bytes()
                        .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
            });
        if !labels_ok {
            return Err(bad());
        }
        Ok(SiteName(name.to_ascii_lowercase()))
    }
}

/// One lever an operator pulls.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Lever {
    /// `pace SITE DURATION` / `pace SITE default`: the origins serving the site are paced at
    /// least `floor` apart (`None`: the crawl's own pace again).
    Pace {
        /// The site.
        site: SiteName,
        /// The least gap, or none.
        floor: Option<Duration>,
    },
    /// `exclude SITE`: no request of any kind to the site; its URLs stay queued.
    Exclude(SiteName),
    /// `include SITE`: undoes `exclude`.
    Include(SiteName),
    /// `refresh-robots SITE`: the cached robots.txt of the site's hosts is dropped and
    /// fetched again before their next request.
    RefreshRobots(SiteName),
}

impl Lever {
    /// The site it applies to.
    pub fn site(&self) -> &SiteName {
        match self {
            Lever::Pace { site, .. }
            | Lever::Exclude(site)
            | Lever::Include(site)
            | Lever::RefreshRobots(site) => site,
        }
    }

    /// Reads a command from its words: `pace SITE DURATION|default`, `exclude SITE`,
    /// `include SITE`, `refresh-robots SITE`.
    pub fn parse(words: &[&str]) -> Result<Lever, LeverError> {
        let fields = |expected| LeverError::Fields {
            expected,
            found: words.join(" "),
        };
        match words {
            ["pace", site, pace] => Ok(Lever::Pace {
                site: site.parse()?,
                floor: parse_floor(pace)?,
            }),
            ["pace", ..] => Err(fields("pace SITE DURATION|default")),
            ["exclude", site] => Ok(Lever::Exclude(site.parse()?)),
            ["exclude", ..] => Err(fields("exclude SITE")),
            ["include", site] => Ok(Lever::Include(site.parse()?)),
            ["include", ..] => Err(fields("include SITE")),
            ["refresh-robots", site] => Ok(Lever::RefreshRobots(site.parse()?)),
            ["refresh-robots", ..] => Err(fields("refresh-robots SITE")),
            [command, ..] => Err(LeverError::Command(command.to_string())),
            [] => Err(fields("a command")),
        }
    }
}

impl fmt::Display for Lever {
    /// The command as an operator writes it.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Lever::Pace {
                site,
                floor: Some(floor),
            } => write!(f, "pace {site} {}", format_duration(*floor)),
            Lever::Pace { site, floor: None } => write!(f, "pace {site} default"),
            Lever::Exclude(site) => write!(f, "exclude {site}"),
            Lever::Include(site) => write!(f, "include {site}"),
            Lever::RefreshRobots(site) => write!(f, "refresh-robots {site}"),
        }
    }
}

fn parse_floor(text: &str) -> Result<Option<Duration>, LeverError> {
    if text == "default" {
        return Ok(None);
    }
    let floor = parse_duration(text).map_err(LeverError::Duration)?;
    if floor.is_zero() {
        return Err(LeverError::ZeroPace);
    }
    if floor > MAX_PACE_FLOOR {
        return Err(LeverError::PaceTooSlow(text.to_string()));
    }
    Ok(Some(floor))
}

/// Why a command was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum LeverError {
    /// Not one of the commands.
    #[error("unknown command {0:?}: use pace, exclude, include or refresh-robots")]
    Command(String),
    /// The wrong words for the command.
    #[error("expected `{expected}`, found {found:?}")]
    Fields {
        /// The command's form.
        expected: &'static str,
        /// What was given.
        found: String,
    },
    /// Not a host name or address.
    #[error("{0:?} is not a site: give a domain (example.com), a host (shop.example.com) or an IP address")]
    Site(String),
    /// A bad duration.
    #[error(transparent)]
    Duration(DurationError),
    /// `pace SITE 0`.
    #[error("a pace of 0 would not slow anything: give a duration, or `default` to remove the site's pace")]
    ZeroPace,
    /// Over [`MAX_PACE_FLOOR`].
    #[error("{0:?} is slower than the slowest pace (1 day): exclude the site instead")]
    PaceTooSlow(String),
}

/// Reads a `--control` file: one command per line, as `crawl-control` takes them (`#`
/// comments, blank lines ignored; the common rules of the crawl's input files).
pub fn read_levers(file: &Path, reader: impl BufRead) -> Result<Vec<Lever>, InputError> {
    let mut levers = Vec::new();
    crate::input::each_line(file, reader, |_, words| {
        levers.push(Lever::parse(&words).map_err(InputErrorKind::Lever)?);
        Ok(())
    })?;
    Ok(levers)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lever(text: &str) -> Result<Lever, LeverError> {
        Lever::parse(&text.split_whitespace().collect::<Vec<_>>())
    }

    fn site(text: &str) -> SiteName {
        text.parse().unwrap()
    }

    #[test]
    fn commands_read_as_written_and_write_back_alike() {
        for (text, expected) in [
            (
                "pace Example.COM. 2s",
                Lever::Pace {
                    site: site("example.com"),
                    floor: Some(Duration::from_secs(2)),
                },
            ),
            (
                "pace shop.example.com default",
                Lever::Pace {
                    site: site("shop.example.com"),
                    floor: None,
                },
            ),
            (
                "exclude bücher.example",
                Lever::Exclude(site("xn--bcher-kva.example")),
            ),
            ("include 127.0.0.2", Lever::Include(site("127.0.0.2"))),
            (
                "refresh-robots a.test",
                Lever::RefreshRobots(site("a.test")),
            ),
        ] {
            let read = lever(text).unwrap();
            assert_eq!(read, expected, "{text}");
            assert_eq!(lever(&read.to_string()).unwrap(), read, "{read}");
        }
    }

    #[test]
    fn bad_commands_say_what_is_wrong() {
        for (text, wrong) in [
            ("pace example.com", "pace SITE DURATION|default"),
            ("pace example.com 0", "a pace of 0"),
            ("pace example.com 2d", "slower than the slowest pace"),
            ("pace example.com 1.5s", "is not a duration"),
            ("exclude https://example.com/", "is not a site"),
            ("exclude *.example.com", "is not a site"),
            ("exclude a b", "exclude SITE"),
            ("stop example.com", "unknown command"),
            ("list", "unknown command"),
        ] {
            let error = lever(text).unwrap_err().to_string();
            assert!(error.contains(wrong), "{text}: {error}");
        }
    }

    #[test]
    fn a_site_covers_itself_and_the_names_under_it() {
        let s = site("example.com");
        assert!(s.covers("example.com"));
        assert!(s.covers("www.example.com"));
        assert!(s.covers("a.b.example.com."));
        assert!(!s.covers("badexample.com"));
        assert!(!s.covers("example.com.evil.test"));
        assert!(!site("shop.example.com").covers("example.com"));
        assert_eq!(site("a_b.test").like_under(), "%.a\\_b.test");
    }

    #[test]
    fn a_control_file_names_the_bad_line() {
        let text =
            "# complaints\npace example.com 10s\n\nexclude other.test # asked 3 May\nbogus x\n";
        let error = read_levers(Path::new("levers"), text.as_bytes()).unwrap_err();
        assert_eq!(error.line, 5);
        assert!(error.to_string().starts_with("levers:5: "), "{error}");
        let good = read_levers(Path::new("levers"), &text.as_bytes()[..text.len() - 8]).unwrap();
        assert_eq!(
            good,
            vec![
                Lever::Pace {
                    site: site("example.com"),
                    floor: Some(Duration::from_secs(10))
                },
                Lever::Exclude(site("other.test")),
            ]
        );
    }
}
