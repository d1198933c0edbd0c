//! Why a fetch failed, typed so callers can tell a refused address from a dead server.

use std::fmt;
use std::net::IpAddr;

use crate::address::RefusedRange;
use crate::client::RedirectHop;

/// Which time limit ran out.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TimeoutPhase {
    /// Opening the TCP connection (and the TLS handshake) took longer than
    /// [`Timeouts::connect`](crate::Timeouts::connect).
    Connect,
    /// The response headers did not arrive within
    /// [`Timeouts::first_byte`](crate::Timeouts::first_byte) of sending the request.
    FirstByte,
    /// The whole fetch, redirects and body included, took longer than
    /// [`Timeouts::total`](crate::Timeouts::total).
    Total,
    /// The body arrived slower than [`Timeouts::min_transfer_rate`](crate::Timeouts::min_transfer_rate):
    /// a slow-drip server.
    Transfer,
}

impl fmt::Display for TimeoutPhase {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            TimeoutPhase::Connect => "connect",
            TimeoutPhase::FirstByte => "time to first byte",
            TimeoutPhase::Total => "total time",
            TimeoutPhase::Transfer => "minimum transfer rate",
        })
    }
}

/// A failed fetch. Every variant but [`FetchError::InvalidUrl`] is a network error in the
/// sense of the robots.txt status table (treated as 5xx).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum FetchError {
    /// The URL cannot be fetched at all: not absolute, not `http`/`https`, or no host.
    #[error("invalid URL {url:?}: {reason}")]
    InvalidUrl {
        /// The URL as given.
        url: String,
        /// What is wrong with it.
        reason: String,
    },
    /// The host name could not be resolved (or resolved to no address).
    #[error("DNS lookup for {host} failed: {message}")]
    Dns {
        /// The host, in punycode.
        host: String,
        /// The resolver's message.
        message: String,
    },
    /// The host resolved to (or is) an address the address policy refuses.
    #[error("refused to connect to {host} at {address}: {range} address")]
    AddressRefused {
        /// The host, in punycode (an IP literal for IP URLs).
        host: String,
        /// The refused address.
        address: IpAddr,
        /// The range it belongs to.
        range: RefusedRange,
    },
    /// The server refused the connection.
    #[error("connection to {host} refused: {message}")]
    ConnectRefused {
        /// The host, in punycode.
        host: String,
        /// The system's message.
        message: String,
    },
    /// The connection was reset or closed before the response was complete.
    #[error("connection to {host} reset: {message}")]
    ConnectionReset {
        /// The host, in punycode.
        host: String,
        /// The system's message.
        message: String,
    },
    /// A time limit ran out.
    #[error("timed out ({phase})")]
    Timeout {
        /// Which limit.
        phase: TimeoutPhase,
    },
    /// The TLS handshake failed (bad certificate, no common protocol ...).
    #[error("TLS with {host} failed: {message}")]
    Tls {
        /// The host, in punycode.
        host: String,
        /// The TLS library's message.
        message: String,
    },
    /// More redirects than the caller's hop limit.
    #[error("more than {limit} redirects")]
    TooManyRedirects {
        /// The caller's hop limit.
        limit: usize,
        /// The hops followed, in order.
        chain: Vec<RedirectHop>,
    },
    /// A redirect led back to a URL already visited.
    #[error("redirect loop back to {url}")]
    RedirectLoop {
        /// The URL visited twice.
        url: String,
        /// The hops followed, in order.
        chain: Vec<RedirectHop>,
    },
    /// The server's answer was not valid HTTP, a redirect had an unusable `Location`, or the
    /// compressed body could not be decoded.
    #[error("malformed response: {message}")]
    MalformedResponse {
        /// What was wrong.
        message: String,
    },
    /// Any other I/O or client failure.
    #[error("fetch failed: {message}")]
    Other {
        /// The underlying message.
        message: String,
    },
}

impl FetchError {
    /// A short stable name for the kind of error (`dns`, `address_refused`, `timeout` ...),
    /// for logs and JSON.
    pub fn kind(&self) -> &'static str {
        match self {
            FetchError::InvalidUrl { .. } => "invalid_url",
            FetchError::Dns { .. } => "dns",
            FetchError::AddressRefused { .. } => "address_refused",
            FetchError::ConnectRefused { .. } => "connect_refused",
            FetchError::ConnectionReset { .. } => "connection_reset",
            FetchError::Timeout { .. } => "timeout",
            FetchError::Tls { .. } => "tls",
            FetchError::TooManyRedirects { .. } => "too_many_redirects",
            FetchError::RedirectLoop { .. } => "redirect_loop",
            FetchError::MalformedResponse { .. } => "malformed_response",
            FetchError::Other { .. } => "other",
        }
    }

    pub(crate) fn invalid_url(url: impl Into<String>, reason: impl Into<String>) -> FetchError {
        FetchError::InvalidUrl {
            url: url.into(),
            reason: reason.into(),
        }
    }

    pub(crate) fn malformed(message: impl Into<String>) -> FetchError {
        FetchError::MalformedResponse {
            message: message.into(),
        }
    }
}
