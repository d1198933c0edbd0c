//! How a [`Fetcher`](crate::Fetcher) is set up: identity, address policy, pins, trust, limits.

use std::fmt;
use std::net::IpAddr;
use std::str::FromStr;
use std::time::Duration;

/// Default connect limit (TCP and TLS handshake): [`Timeouts::connect`].
pub const DEFAULT_CONNECT_TIMEOUT: Duration = Duration::from_secs(10);
/// Default wait for the response headers after sending a request: [`Timeouts::first_byte`].
pub const DEFAULT_FIRST_BYTE_TIMEOUT: Duration = Duration::from_secs(20);
/// Default deadline of one whole fetch, every redirect hop and the body included, when the
/// caller gives none: [`Timeouts::total`].
pub const DEFAULT_TOTAL_TIMEOUT: Duration = Duration::from_secs(60);
/// Response header lines accepted over HTTP/1.1: 1,000. hyper's default of 100 made a
/// robots.txt served with 101 header lines "malformed" (so disallow-all); browsers and curl
/// bound the header *size* instead (curl: 300 KiB in all), which [`MAX_HEADER_BYTES`] does.
pub const MAX_RESPONSE_HEADERS: usize = 1000;
/// Response header bytes accepted: 256 KiB (each line's name and value, plus `: ` and CRLF),
/// over HTTP/1.1 (checked on the head hyper read) and HTTP/2 (`SETTINGS_MAX_HEADER_LIST_SIZE`,
/// where h2's default is 16 KiB). More is a malformed response.
pub const MAX_HEADER_BYTES: usize = 256 * 1024;
/// Idle connections kept open per host (scheme, name and port) for the next request: 2. The
/// bots have one request in flight per origin, so one would do, but a request started just
/// as the previous response ends can find its connection not yet back in hyper's pool and
/// open another; without a bound every host crawled kept such spares (about 1.5 connections
/// per host in the crawler benchmark, each tens of kilobytes of buffers). The task turn at
/// the end of a body (`net.rs`) makes that race rare but does not rule it out (the test
/// `back_to_back_requests_to_a_host_reuse_connections` still sees it), and at 1 every race
/// costs a closed connection and a new TLS handshake (7 per host in the benchmark without the
/// turn); the second idle connection absorbs it.
pub const IDLE_CONNECTIONS_PER_HOST: usize = 2;
/// How long an idle connection is kept: 30 s.
pub const IDLE_CONNECTION_TIMEOUT: Duration = Duration::from_secs(30);
/// Default minimum transfer rate: at least this many body bytes ...
pub const DEFAULT_MIN_TRANSFER_BYTES: u64 = 1024;
/// ... in every window of this length, or the fetch fails as a slow drip.
pub const DEFAULT_MIN_TRANSFER_WINDOW: Duration = Duration::from_secs(10);

/// A minimum transfer rate: at least `bytes` body bytes in every `window`.
///
/// Measured in windows rather than per chunk so that a server pausing briefly is fine, while a
/// server dripping a byte every few seconds cannot hold a request open until the total limit.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MinTransferRate {
    /// Bytes that must arrive in each window.
    pub bytes: u64,
    /// The window.
    pub window: Duration,
}

/// The time limits of every request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Timeouts {
    /// Connecting, TLS handshake included.
    pub connect: Duration,
    /// From sending a request (connecting included) to its response headers, per hop.
    pub first_byte: Duration,
    /// The deadline of one fetch when the caller gives none: every redirect hop and the
    /// body (a caller's [`Deadline`](crate::Deadline) replaces it when earlier).
    pub total: Duration,
    /// The slowest body transfer tolerated.
    pub min_transfer_rate: MinTransferRate,
}

impl Default for Timeouts {
    fn default() -> Timeouts {
        Timeouts {
            connect: DEFAULT_CONNECT_TIMEOUT,
            first_byte: DEFAULT_FIRST_BYTE_TIMEOUT,
            total: DEFAULT_TOTAL_TIMEOUT,
            min_transfer_rate: MinTransferRate {
                bytes: DEFAULT_MIN_TRANSFER_BYTES,
                window: DEFAULT_MIN_TRANSFER_WINDOW,
            },
        }
    }
}

/// A name pinned to addresses, as curl's `--resolve HOST:PORT:ADDR[,ADDR]...`.
///
/// Pinned addresses replace DNS for that host and port. They are still checked against the
/// address policy: a pin does not bypass `--allow-private-addresses`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ResolvePin {
    /// The host, lower case punycode.
    pub host: String,
    /// The port the pin applies to; 0 pins the host on every port (a hosts(5) file).
    pub port: u16,
    /// The addresses to connect to, in order of preference.
    pub addresses: Vec<IpAddr>,
}

/// Why a `--resolve` value was not understood.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("invalid --resolve {value:?}: {reason} (expected HOST:PORT:ADDR[,ADDR]...)")]
pub struct ResolvePinError {
    value: String,
    reason: &'static str,
}

impl FromStr for ResolvePin {
    type Err = ResolvePinError;

    /// Parses `HOST:PORT:ADDR[,ADDR]...`; IPv6 addresses may be bracketed (`[::1]`).
    fn from_str(value: &str) -> Result<ResolvePin, ResolvePinError> {
        let error = |reason| ResolvePinError {
            value: value.to_owned(),
            reason,
        };
        let mut parts = value.splitn(3, ':');
        let (Some(host), Some(port), Some(addresses)) = (parts.next(), parts.next(), parts.next())
        else {
            return Err(error("missing part"));
        };
        let host = crate::scope::normalize_host(host).map_err(|_| error("invalid host"))?;
        let port = port.parse().map_err(|_| error("invalid port"))?;
        let addresses = addresses
            .split(',')
            .map(|address| {
                let address = address
                    .strip_prefix('[')
                    .and_then(|a| a.strip_suffix(']'))
                    .unwrap_or(address);
                address.parse::<IpAddr>()
            })
            .collect::<Result<Vec<_>, _>>()
            .map_err(|_| error("invalid address"))?;
        Ok(ResolvePin {
            host,
            port,
            addresses,
        })
    }
}

impl fmt::Display for ResolvePin {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}:", self.host, self.port)?;
        for (i, address) in self.addresses.iter().enumerate() {
            let comma = if i == 0 { "" } else { "," };
            match address {
                IpAddr::V4(v4) => write!(f, "{comma}{v4}")?,
                IpAddr::V6(v6) => write!(f, "{comma}[{v6}]")?,
            }
        }
        Ok(())
    }
}

/// Everything a [`Fetcher`](crate::Fetcher) is built from.
#[derive(Debug, Clone)]
pub struct FetchConfig {
    /// The bot's product token, e.g. `JittyBot` or `RobotsTxtParser`.
    pub token: String,
    /// The bot's version, shown in the User-Agent (defaults to this crate's version).
    pub version: String,
    /// The page explaining the bot, shown in the User-Agent.
    pub info_url: String,
    /// Allow private, loopback and other non-public addresses.
    pub allow_private_addresses: bool,
    /// Addresses allowed although they are in a refused range (exact match).
    pub allowed_addresses: Vec<IpAddr>,
    /// Names pinned to addresses.
    pub resolve: Vec<ResolvePin>,
    /// Extra trusted root certificates, PEM encoded (tests trust the test web's certificate).
    pub extra_root_certificates_pem: Vec<Vec<u8>>,
    /// Time limits.
    pub timeouts: Timeouts,
    /// Offer HTTP/2 in the TLS handshake (ALPN); HTTP/1.1 only when false. The crawler turns
    /// it off: with one request in flight per origin, HTTP/2's multiplexing buys nothing,
    /// and its framing, flow control and connection task cost CPU on both sides
    /// (crates/crawl/README.md, "Benchmark").
    pub offer_http2: bool,
}

impl FetchConfig {
    /// A configuration with default limits, public addresses only, no pins.
    pub fn new(token: impl Into<String>, info_url: impl Into<String>) -> FetchConfig {
        FetchConfig {
            token: token.into(),
            version: env!("CARGO_PKG_VERSION").to_owned(),
            info_url: info_url.into(),
            allow_private_addresses: false,
            allowed_addresses: Vec::new(),
            resolve: Vec::new(),
            extra_root_certificates_pem: Vec::new(),
            timeouts: Timeouts::default(),
            offer_http2: true,
        }
    }

    /// `Mozilla/5.0 (compatible; <token>/<version>; +<info URL>)`.
    pub fn user_agent(&self) -> String {
        format!(
            "Mozilla/5.0 (compatible; {}/{}; +{})",
            self.token, self.version, self.info_url
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn user_agent_names_token_version_and_info_url() {
        let mut config = FetchConfig::new("RobotsTxtParser", "https://example.com/bot");
        config.version = "1.2.3".into();
        assert_eq!(
            config.user_agent(),
            "Mozilla/5.0 (compatible; RobotsTxtParser/1.2.3; +https://example.com/bot)"
        );
    }

    #[test]
    fn resolve_pins_parse_like_curl() {
        let pin: ResolvePin = "Example.COM:443:127.0.0.1,[::1]".parse().unwrap();
        assert_eq!(pin.host, "example.com");
        assert_eq!(pin.port, 443);
        assert_eq!(
            pin.addresses,
            vec![
                "127.0.0.1".parse::<IpAddr>().unwrap(),
                "::1".parse().unwrap()
            ]
        );
        assert_eq!(pin.to_string(), "example.com:443:127.0.0.1,[::1]");
        let idn: ResolvePin = "bücher.test:80:127.0.0.1".parse().unwrap();
        assert_eq!(idn.host, "xn--bcher-kva.test");
        let bare_v6: ResolvePin = "h.test:80:::1".parse().unwrap();
        assert_eq!(bare_v6.addresses, vec!["::1".parse::<IpAddr>().unwrap()]);
        for bad in [
            "h.test",
            "h.test:80",
            "h.test:x:127.0.0.1",
            "h.test:80:nope",
        ] {
            assert!(bad.parse::<ResolvePin>().is_err(), "{bad}");
        }
    }

    #[test]
    fn default_limits_are_sane() {
        let timeouts = Timeouts::default();
        assert!(timeouts.connect <= timeouts.first_byte);
        assert!(timeouts.first_byte <= timeouts.total);
        assert!(timeouts.min_transfer_rate.window < timeouts.total);
    }
}
