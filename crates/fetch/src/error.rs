//! Why a fetch failed, typed so callers can tell a refused address from a dead server, and
//! whether trying again later can help.

use std::fmt;
use std::net::IpAddr;
use std::sync::Arc;

use url::Url;

use crate::address::RefusedRange;
use crate::redirect::{RedirectError, RedirectHop};

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
    /// The operation's [`Deadline`](crate::Deadline) passed: every hop, the body and the
    /// robots.txt fetches made on the way count against it.
    Deadline,
    /// The body arrived slower than [`Timeouts::min_transfer_rate`](crate::Timeouts::min_transfer_rate):
    /// a slow-drip server.
    Transfer,
}

impl fmt::Display for TimeoutPhase {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            TimeoutPhase::Connect => "connect",
            TimeoutPhase::FirstByte => "time to first byte",
            TimeoutPhase::Deadline => "deadline of the whole operation",
            TimeoutPhase::Transfer => "minimum transfer rate",
        })
    }
}

/// The kind of a [`FetchError`]: a stable name for logs, JSON and stores.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum ErrorKind {
    /// Not an absolute `http`/`https` URL with a host.
    InvalidUrl,
    /// The host name did not resolve.
    Dns,
    /// The address policy refused the host's address.
    AddressRefused,
    /// The server refused the connection.
    ConnectRefused,
    /// The connection was reset or closed early.
    ConnectionReset,
    /// A time limit ran out.
    Timeout,
    /// TLS failed.
    Tls,
    /// A redirect could not be followed (loop, hop limit, no or unusable `Location`).
    Redirect,
    /// The answer was not valid HTTP, or its body could not be decoded.
    MalformedResponse,
    /// The body uses a content coding that was not asked for (`zstd`, unknown).
    UnsupportedEncoding,
    /// Anything else.
    Other,
}

impl ErrorKind {
    /// The stable name (`dns`, `address_refused`, ...).
    pub fn as_str(self) -> &'static str {
        match self {
            ErrorKind::InvalidUrl => "invalid_url",
            ErrorKind::Dns => "dns",
            ErrorKind::AddressRefused => "address_refused",
            ErrorKind::ConnectRefused => "connect_refused",
            ErrorKind::ConnectionReset => "connection_reset",
            ErrorKind::Timeout => "timeout",
            ErrorKind::Tls => "tls",
            ErrorKind::Redirect => "redirect",
            ErrorKind::MalformedResponse => "malformed_response",
            ErrorKind::UnsupportedEncoding => "unsupported_encoding",
            ErrorKind::Other => "other",
        }
    }
}

impl fmt::Display for ErrorKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The underlying error (I/O, TLS, HTTP, resolver), shared so errors stay cheap to clone.
#[derive(Clone)]
pub struct Cause(Arc<dyn std::error::Error + Send + Sync>);

impl Cause {
    /// Wraps an error.
    pub fn new(error: impl std::error::Error + Send + Sync + 'static) -> Cause {
        Cause(Arc::new(error))
    }

    /// A cause that is only a message (scripted failures in tests, resolver texts).
    pub fn message(text: impl Into<String>) -> Cause {
        Cause::new(Message(text.into()))
    }
}

#[derive(Debug)]
struct Message(String);

impl fmt::Display for Message {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for Message {}

impl fmt::Debug for Cause {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&self.0, f)
    }
}

impl fmt::Display for Cause {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // The whole chain: resolver and TLS messages are only useful with their causes.
        write!(f, "{}", self.0)?;
        let mut source = self.0.source();
        while let Some(current) = source {
            write!(f, ": {current}")?;
            source = current.source();
        }
        Ok(())
    }
}

impl std::error::Error for Cause {}

/// A failed fetch. Every kind but [`ErrorKind::InvalidUrl`] is a network error in the sense
/// of the robots.txt status table (treated as 5xx).
#[derive(Debug, Clone, thiserror::Error)]
#[non_exhaustive]
pub enum FetchError {
    /// The URL cannot be fetched at all: not absolute, not `http`/`https`, or no host.
    #[error("invalid URL {url:?}: {reason}")]
    InvalidUrl {
        /// The URL as given (credentials removed when it parsed).
        url: String,
        /// What is wrong with it.
        reason: String,
    },
    /// The host name could not be resolved (or resolved to no address).
    #[error("DNS lookup for {host} failed")]
    Dns {
        /// The host, in punycode.
        host: String,
        /// The resolver's error.
        #[source]
        source: Cause,
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
    #[error("connection to {host} refused")]
    ConnectRefused {
        /// The host, in punycode.
        host: String,
        /// The system's error.
        #[source]
        source: Cause,
    },
    /// The connection was reset or closed before the response was complete.
    #[error("connection to {host} reset")]
    ConnectionReset {
        /// The host, in punycode.
        host: String,
        /// The system's error.
        #[source]
        source: Cause,
    },
    /// A time limit ran out.
    #[error("timed out ({phase})")]
    Timeout {
        /// Which limit.
        phase: TimeoutPhase,
    },
    /// The TLS handshake failed (bad certificate, no common protocol ...).
    #[error("TLS with {host} failed")]
    Tls {
        /// The host, in punycode.
        host: String,
        /// The TLS library's error.
        #[source]
        source: Cause,
    },
    /// A redirect could not be followed.
    #[error("redirect not followed after {} hop(s)", chain.len())]
    Redirect {
        /// Why.
        #[source]
        error: RedirectError,
        /// The hops followed, in order (the last one is the redirect that failed).
        chain: Vec<RedirectHop>,
    },
    /// The server's answer was not valid HTTP, or the body could not be decoded.
    #[error("malformed response from {host}")]
    MalformedResponse {
        /// The host, in punycode.
        host: String,
        /// What was wrong.
        #[source]
        source: Cause,
    },
    /// The body is encoded with a content coding that was not asked for.
    #[error("unsupported Content-Encoding {encoding:?}")]
    UnsupportedEncoding {
        /// The `Content-Encoding` as sent.
        encoding: String,
    },
    /// Any other I/O or client failure.
    #[error("fetch failed")]
    Other {
        /// The underlying error.
        #[source]
        source: Cause,
    },
}

impl FetchError {
    /// The kind of error, for logs, JSON and stores.
    pub fn kind(&self) -> ErrorKind {
        match self {
            FetchError::InvalidUrl { .. } => ErrorKind::InvalidUrl,
            FetchError::Dns { .. } => ErrorKind::Dns,
            FetchError::AddressRefused { .. } => ErrorKind::AddressRefused,
            FetchError::ConnectRefused { .. } => ErrorKind::ConnectRefused,
            FetchError::ConnectionReset { .. } => ErrorKind::ConnectionReset,
            FetchError::Timeout { .. } => ErrorKind::Timeout,
            FetchError::Tls { .. } => ErrorKind::Tls,
            FetchError::Redirect { .. } => ErrorKind::Redirect,
            FetchError::MalformedResponse { .. } => ErrorKind::MalformedResponse,
            FetchError::UnsupportedEncoding { .. } => ErrorKind::UnsupportedEncoding,
            FetchError::Other { .. } => ErrorKind::Other,
        }
    }

    /// True when the same request may succeed later, and a crawler should back off and
    /// retry: DNS failures, refused or reset connections, timeouts and other I/O failures
    /// (JittyBot's documentation: "timeouts, connection resets and DNS failures are treated the same way as
    /// server errors"). Invalid URLs, refused addresses, TLS failures, redirect failures,
    /// malformed answers and unsupported encodings are properties of the site or the
    /// request, not of its load.
    pub fn is_retryable(&self) -> bool {
        matches!(
            self.kind(),
            ErrorKind::Dns
                | ErrorKind::ConnectRefused
                | ErrorKind::ConnectionReset
                | ErrorKind::Timeout
                | ErrorKind::Other
        )
    }

    /// The redirect hops followed before the failure, when it was a redirect failure.
    pub fn redirect_chain(&self) -> &[RedirectHop] {
        match self {
            FetchError::Redirect { chain, .. } => chain,
            _ => &[],
        }
    }

    /// The error text with every cause, on one line.
    pub fn full_message(&self) -> String {
        let mut text = self.to_string();
        let mut source = std::error::Error::source(self);
        while let Some(current) = source {
            text.push_str(": ");
            text.push_str(&current.to_string());
            // `Cause` already prints its own chain.
            if current.is::<Cause>() {
                break;
            }
            source = current.source();
        }
        text
    }

    pub(crate) fn invalid_url(url: impl Into<String>, reason: impl Into<String>) -> FetchError {
        FetchError::InvalidUrl {
            url: url.into(),
            reason: reason.into(),
        }
    }

    pub(crate) fn invalid(url: &Url, reason: impl Into<String>) -> FetchError {
        FetchError::invalid_url(crate::redirect::without_credentials(url).as_str(), reason)
    }

    pub(crate) fn timeout(phase: TimeoutPhase) -> FetchError {
        FetchError::Timeout { phase }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn retryable_errors_are_the_ones_that_back_off() {
        let cause = || Cause::message("x");
        let retryable = [
            FetchError::Dns {
                host: "h".into(),
                source: cause(),
            },
            FetchError::ConnectionReset {
                host: "h".into(),
                source: cause(),
            },
            FetchError::timeout(TimeoutPhase::FirstByte),
        ];
        for error in retryable {
            assert!(error.is_retryable(), "{error:?}");
        }
        let final_errors = [
            FetchError::invalid_url("x", "y"),
            FetchError::Tls {
                host: "h".into(),
                source: cause(),
            },
            FetchError::UnsupportedEncoding {
                encoding: "zstd".into(),
            },
        ];
        for error in final_errors {
            assert!(!error.is_retryable(), "{error:?}");
        }
    }

    #[test]
    fn the_full_message_names_every_cause() {
        let io = std::io::Error::new(std::io::ErrorKind::ConnectionReset, "peer said bye");
        let error = FetchError::ConnectionReset {
            host: "a.test".into(),
            source: Cause::new(io),
        };
        assert_eq!(error.kind().as_str(), "connection_reset");
        assert_eq!(
            error.full_message(),
            "connection to a.test reset: peer said bye"
        );
    }
}
