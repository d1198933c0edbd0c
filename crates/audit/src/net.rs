//! The HTTP side of an analysis, behind a small trait so the scheduling logic can be tested
//! with a scripted transport on tokio's paused clock, and run for real on [`fetch::Fetcher`].

use std::future::Future;

use serde::{Deserialize, Serialize};
use url::Url;

/// One GET the analysis wants made. Redirects are never followed by the transport: the
/// analysis follows them itself, checking each hop against robots.txt.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GetRequest {
    /// The URL.
    pub url: Url,
    /// Read at most this many body bytes.
    pub max_body_bytes: usize,
    /// Stop reading once this marker has been read (e.g. `</head>`).
    pub stop_marker: Option<Vec<u8>>,
}

/// A response as the analysis sees it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct HttpResponse {
    /// The status.
    pub status: u16,
    /// Every header as `(lowercase name, value)`, in order; repeated headers repeat.
    pub headers: Vec<(String, String)>,
    /// The body read (at most the request's cap).
    pub body: Vec<u8>,
    /// True when the body was longer than the cap and was cut.
    pub truncated: bool,
}

impl HttpResponse {
    /// Every value of header `name` (case-insensitive).
    pub fn header_values(&self, name: &str) -> Vec<String> {
        self.headers
            .iter()
            .filter(|(header, _)| header.eq_ignore_ascii_case(name))
            .map(|(_, value)| value.clone())
            .collect()
    }

    /// The first value of header `name`.
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(header, _)| header.eq_ignore_ascii_case(name))
            .map(|(_, value)| value.as_str())
    }

    /// The status as a typed status code (none outside 100–999).
    pub fn status_code(&self) -> Option<http::StatusCode> {
        http::StatusCode::from_u16(self.status).ok()
    }

    /// Whether this is a redirect with a `Location`.
    pub fn redirect_location(&self) -> Option<&str> {
        matches!(self.status, 301 | 302 | 303 | 307 | 308)
            .then(|| self.header("location"))
            .flatten()
    }
}

/// Why a request failed, as the audit distinguishes it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FailureKind {
    /// The host name did not resolve.
    Dns,
    /// The connection was refused, reset or never made.
    Connect,
    /// A time limit ran out.
    Timeout,
    /// TLS failed.
    Tls,
    /// The address is private and private addresses are not allowed.
    AddressRefused,
    /// The server answered something that is not HTTP.
    Malformed,
    /// The URL cannot be fetched.
    InvalidUrl,
    /// Anything else.
    Other,
}

/// A failed request.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub struct TransportError {
    /// What kind of failure.
    pub kind: FailureKind,
    /// A human-readable message.
    pub message: String,
}

/// Makes GET requests for the analysis.
pub trait Transport: Sync {
    /// Sends one GET, without following redirects (a 3xx comes back as a response).
    fn get(
        &self,
        request: GetRequest,
    ) -> impl Future<Output = Result<HttpResponse, TransportError>> + Send;
}

impl Transport for fetch::Fetcher {
    async fn get(&self, request: GetRequest) -> Result<HttpResponse, TransportError> {
        let mut fetch_request =
            fetch::Request::get(request.url.clone()).max_body_bytes(request.max_body_bytes);
        if let Some(marker) = &request.stop_marker {
            fetch_request = fetch_request.stop_at(marker);
        }
        // One hop in the fetcher's manual mode: a 3xx comes back as a response.
        let hop = self
            .send_hop(&fetch_request, &request.url, self.deadline(None))
            .await
            .map_err(|error| transport_error(&error))?;
        let status = hop.head.status;
        let headers = hop
            .head
            .headers
            .iter()
            .map(|(name, value)| {
                (
                    name.as_str().to_ascii_lowercase(),
                    String::from_utf8_lossy(value.as_bytes()).into_owned(),
                )
            })
            .collect();
        let (body, truncated) = if fetch::is_redirect(status) {
            (Vec::new(), false)
        } else {
            let body = hop
                .body
                .read_to_end(fetch_request.stop_marker.as_deref())
                .await
                .map_err(|error| transport_error(&error))?;
            (body.bytes, body.truncated)
        };
        Ok(HttpResponse {
            status: status.as_u16(),
            headers,
            body,
            truncated,
        })
    }
}

fn transport_error(error: &fetch::FetchError) -> TransportError {
    TransportError {
        kind: failure_kind(error),
        message: error.full_message(),
    }
}

fn failure_kind(error: &fetch::FetchError) -> FailureKind {
    use fetch::FetchError as E;
    match error {
        E::Dns { .. } => FailureKind::Dns,
        E::ConnectRefused { .. } | E::ConnectionReset { .. } => FailureKind::Connect,
        E::Timeout { .. } => FailureKind::Timeout,
        E::Tls { .. } => FailureKind::Tls,
        E::AddressRefused { .. } => FailureKind::AddressRefused,
        E::MalformedResponse { .. } => FailureKind::Malformed,
        E::InvalidUrl { .. } => FailureKind::InvalidUrl,
        _ => FailureKind::Other,
    }
}
