//! The one HTTP seam: a request goes out, one response comes back (3xx included), its body a
//! stream of bytes as received. The real client ([`crate::net::ReqwestClient`]) and the
//! scripted web of tests (`testing::ScriptedWeb`, feature `testing`) implement it; everything
//! above it (redirects, decoding, caps, deadlines, robots.txt, pacing) is shared.

use std::fmt;
use std::future::Future;
use std::net::SocketAddr;
use std::pin::Pin;

use bytes::Bytes;
use futures_util::Stream;
use http::{HeaderMap, HeaderValue, StatusCode, Version};
use url::Url;

use crate::error::FetchError;

/// A boxed future, so the seam is a trait object (`Arc<dyn HttpClient>`) and callers need no
/// type parameters.
pub type BoxFuture<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

/// A response body as received: content-coded bytes, in the chunks they arrived in.
pub type RawBody = Pin<Box<dyn Stream<Item = Result<Bytes, FetchError>> + Send>>;

/// The only methods the fetcher knows: it never sends anything that could change state.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "UPPERCASE")]
pub enum Method {
    /// `GET`.
    Get,
    /// `HEAD`: no body is read.
    Head,
}

impl Method {
    /// The method as an [`http::Method`].
    pub fn as_http(self) -> http::Method {
        match self {
            Method::Get => http::Method::GET,
            Method::Head => http::Method::HEAD,
        }
    }
}

/// One hop as it goes out. `headers` are exactly the headers sent, in order, `Host` first
/// (sent as `Host` over HTTP/1.1 and as the `:authority` pseudo-header over HTTP/2).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HopRequest {
    /// GET or HEAD.
    pub method: Method,
    /// An absolute `http`/`https` URL without credentials.
    pub url: Url,
    /// Every header sent.
    pub headers: HeaderMap,
}

impl HopRequest {
    /// The value of the `Host` header for `url`: the host, and the port when it is not the
    /// scheme's default.
    pub fn host_header(url: &Url) -> Option<HeaderValue> {
        let host = match url.host()? {
            url::Host::Domain(domain) => domain.to_owned(),
            url::Host::Ipv4(v4) => v4.to_string(),
            url::Host::Ipv6(v6) => format!("[{v6}]"),
        };
        let value = match url.port() {
            Some(port) => format!("{host}:{port}"),
            None => host,
        };
        HeaderValue::from_str(&value).ok()
    }
}

/// SHA-256 of a TLS leaf certificate (DER), which identifies the serving infrastructure
/// (the crawler groups hosts into origins by it).
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct CertificateDigest(pub [u8; 32]);

impl CertificateDigest {
    /// The digest of a DER certificate.
    pub fn of(der: &[u8]) -> CertificateDigest {
        let digest = ring::digest::digest(&ring::digest::SHA256, der);
        let mut bytes = [0u8; 32];
        bytes.copy_from_slice(digest.as_ref());
        CertificateDigest(bytes)
    }

    /// Lower-case hex.
    pub fn to_hex(&self) -> String {
        self.0.iter().map(|byte| format!("{byte:02x}")).collect()
    }
}

impl fmt::Debug for CertificateDigest {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "CertificateDigest({})", self.to_hex())
    }
}

impl fmt::Display for CertificateDigest {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.to_hex())
    }
}

impl serde::Serialize for CertificateDigest {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(&self.to_hex())
    }
}

/// A response's head, exactly as received.
#[derive(Debug, Clone)]
pub struct ResponseHead {
    /// The status.
    pub status: StatusCode,
    /// The HTTP version.
    pub version: Version,
    /// Every header as received, repeated headers kept, `Content-Encoding` and
    /// `Content-Length` included (bodies are decoded above the seam, never by the client).
    pub headers: HeaderMap,
    /// The address the response came from.
    pub remote_addr: Option<SocketAddr>,
    /// SHA-256 of the TLS leaf certificate, over HTTPS.
    pub tls_leaf_sha256: Option<CertificateDigest>,
}

/// One hop's answer: its head now, its body as a stream.
pub struct HopResponse {
    /// The head.
    pub head: ResponseHead,
    /// The body as received (content-coded). Empty for HEAD.
    pub body: RawBody,
}

impl fmt::Debug for HopResponse {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("HopResponse")
            .field("head", &self.head)
            .finish_non_exhaustive()
    }
}

/// Sends one hop. Implementations never follow redirects, never decode bodies, never retry,
/// and send exactly `request.headers` (plus what HTTP framing needs).
pub trait HttpClient: Send + Sync {
    /// Sends `request` and returns its response head with the body still to be read.
    /// Time limits are applied by the caller around this future and around the body.
    fn send(&self, request: HopRequest) -> BoxFuture<'_, Result<HopResponse, FetchError>>;
}

impl fmt::Debug for dyn HttpClient {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("HttpClient")
    }
}
