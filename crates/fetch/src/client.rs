//! The fetcher: GET and HEAD with caps, limits, checked addresses and recorded redirects.

use std::collections::HashSet;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use reqwest::header::{self, HeaderMap, HeaderValue};
use tokio::time::{timeout, timeout_at, Instant};
use url::Url;

use crate::address::AddressPolicy;
use crate::config::FetchConfig;
use crate::error::{FetchError, TimeoutPhase};
use crate::resolve::{ClientResolver, Resolver};

/// Default body cap of [`Request::get`]: 1 MiB.
pub const DEFAULT_MAX_BODY_BYTES: usize = 1024 * 1024;
/// Largest body cap a caller may choose: 16 MiB. Larger caps are lowered to this, so no
/// caller can make the fetcher hold an unbounded body in memory.
pub const MAX_BODY_BYTES_CEILING: usize = 16 * 1024 * 1024;
/// Default redirect hop limit of [`Request::get`] (as for robots.txt).
pub const DEFAULT_MAX_REDIRECTS: usize = 5;
/// Largest redirect hop limit a caller may choose. Larger limits are lowered to this.
pub const MAX_REDIRECTS_CEILING: usize = 20;
/// Longest stop marker accepted by [`Request::stop_at`]; longer markers are ignored.
pub const MAX_STOP_MARKER_BYTES: usize = 64;

/// The only methods the fetcher knows: it never sends anything that could change state.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "UPPERCASE")]
pub enum Method {
    /// `GET`.
    Get,
    /// `HEAD`: no body is read.
    Head,
}

/// Validators from an earlier response, for a conditional request.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Validators {
    /// The earlier `ETag`, sent as `If-None-Match`.
    pub etag: Option<String>,
    /// The earlier `Last-Modified`, sent as `If-Modified-Since`.
    pub last_modified: Option<String>,
}

impl Validators {
    /// The validators a response carries (`ETag`, `Last-Modified`).
    pub fn from_headers(headers: &HeaderMap) -> Validators {
        let text = |name| {
            headers
                .get(name)
                .and_then(|v: &HeaderValue| v.to_str().ok())
                .map(str::to_owned)
        };
        Validators {
            etag: text(header::ETAG),
            last_modified: text(header::LAST_MODIFIED),
        }
    }

    /// True when there is nothing to validate with.
    pub fn is_empty(&self) -> bool {
        self.etag.is_none() && self.last_modified.is_none()
    }
}

/// One request: a URL and its limits.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Request {
    /// GET or HEAD.
    pub method: Method,
    /// An absolute `http` or `https` URL.
    pub url: Url,
    /// Body cap, counted after decompression (at most [`MAX_BODY_BYTES_CEILING`]).
    pub max_body_bytes: usize,
    /// Redirects to follow before failing with [`FetchError::TooManyRedirects`]
    /// (at most [`MAX_REDIRECTS_CEILING`]).
    pub max_redirects: usize,
    /// Validators for a conditional request, sent on every hop.
    pub validators: Option<Validators>,
    /// Stop reading the body once this ASCII marker (e.g. `</head>`) has been read, matched
    /// case-insensitively.
    pub stop_marker: Option<Vec<u8>>,
}

impl Request {
    /// A GET with [`DEFAULT_MAX_BODY_BYTES`] and [`DEFAULT_MAX_REDIRECTS`].
    pub fn get(url: Url) -> Request {
        Request {
            method: Method::Get,
            url,
            max_body_bytes: DEFAULT_MAX_BODY_BYTES,
            max_redirects: DEFAULT_MAX_REDIRECTS,
            validators: None,
            stop_marker: None,
        }
    }

    /// A HEAD with [`DEFAULT_MAX_REDIRECTS`].
    pub fn head(url: Url) -> Request {
        Request {
            method: Method::Head,
            ..Request::get(url)
        }
    }

    /// Sets the body cap.
    pub fn max_body_bytes(mut self, bytes: usize) -> Request {
        self.max_body_bytes = bytes;
        self
    }

    /// Sets the redirect hop limit.
    pub fn max_redirects(mut self, hops: usize) -> Request {
        self.max_redirects = hops;
        self
    }

    /// Makes the request conditional.
    pub fn validators(mut self, validators: Validators) -> Request {
        self.validators = (!validators.is_empty()).then_some(validators);
        self
    }

    /// Stops reading the body after `marker` (ASCII, case-insensitive), e.g. `b"</head>"`.
    /// Markers longer than [`MAX_STOP_MARKER_BYTES`] or empty are ignored.
    pub fn stop_at(mut self, marker: &[u8]) -> Request {
        self.stop_marker =
            (!marker.is_empty() && marker.len() <= MAX_STOP_MARKER_BYTES).then(|| marker.to_vec());
        self
    }
}

/// One redirect followed.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct RedirectHop {
    /// The URL requested.
    pub url: Url,
    /// Its redirect status (301, 302, 303, 307, 308).
    pub status: u16,
    /// The `Location` header as sent.
    pub location: String,
}

/// A response, after redirects.
#[derive(Debug, Clone)]
pub struct Response {
    /// The final URL, after redirects.
    pub url: Url,
    /// The final status.
    pub status: u16,
    /// `HTTP/1.1`, `HTTP/2.0` ...
    pub version: String,
    /// All response headers; repeated headers (several `X-Robots-Tag`) keep every value.
    /// `Content-Encoding` and `Content-Length` are gone when the body was decompressed.
    pub headers: HeaderMap,
    /// The body (decompressed), cut at the cap or after the stop marker.
    pub body: Vec<u8>,
    /// True when the body was longer than the cap and was cut.
    pub truncated: bool,
    /// True when reading stopped after the stop marker.
    pub stopped_at_marker: bool,
    /// Body bytes received (decompressed), which can exceed `body.len()` by the part of the
    /// last chunk beyond the cap or the marker.
    pub bytes_read: u64,
    /// The `Content-Type` header.
    pub content_type: Option<String>,
    /// The redirects followed to get here, in order.
    pub redirects: Vec<RedirectHop>,
    /// The address the final response came from.
    pub remote_addr: Option<SocketAddr>,
}

impl Response {
    /// True for `304 Not Modified`: the validators sent still match.
    pub fn is_not_modified(&self) -> bool {
        self.status == 304
    }

    /// Every value of header `name`, in order, as text (values that are not valid text are
    /// left out).
    pub fn header_values(&self, name: &str) -> Vec<String> {
        self.headers
            .get_all(name)
            .iter()
            .filter_map(|v| v.to_str().ok().map(str::to_owned))
            .collect()
    }

    /// The validators this response carries.
    pub fn validators(&self) -> Validators {
        Validators::from_headers(&self.headers)
    }
}

/// Why a [`Fetcher`] could not be built.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum BuildError {
    /// An extra root certificate was not valid PEM.
    #[error("invalid root certificate: {0}")]
    Certificate(String),
    /// The TLS or HTTP client could not be set up.
    #[error("cannot set up the HTTP client: {0}")]
    Client(String),
}

/// The HTTP client every bot shares. Cheap to clone: clones share connections.
#[derive(Clone)]
pub struct Fetcher {
    inner: Arc<Inner>,
}

struct Inner {
    client: reqwest::Client,
    resolver: Arc<Resolver>,
    config: FetchConfig,
}

impl std::fmt::Debug for Fetcher {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Fetcher")
            .field("config", &self.inner.config)
            .finish_non_exhaustive()
    }
}

/// The redirects followed so far and the outcome, even when the fetch failed.
pub(crate) struct Traced {
    pub(crate) redirects: Vec<RedirectHop>,
    pub(crate) result: Result<Response, FetchError>,
}

impl Fetcher {
    /// Builds a fetcher.
    pub fn new(config: FetchConfig) -> Result<Fetcher, BuildError> {
        let resolver = Arc::new(Resolver::new(
            AddressPolicy {
                allow_private_addresses: config.allow_private_addresses,
                allowed_addresses: config.allowed_addresses.clone(),
            },
            config.resolve.clone(),
        ));
        let client = reqwest::Client::builder()
            .tls_backend_preconfigured(tls_config(&config)?)
            // Redirects are followed (and checked) by the fetch loop, hop by hop.
            .redirect(reqwest::redirect::Policy::none())
            // A proxy would connect on our behalf and bypass the address checks.
            .no_proxy()
            .dns_resolver(Arc::new(ClientResolver(Arc::clone(&resolver))))
            .user_agent(config.user_agent())
            .connect_timeout(config.timeouts.connect)
            .pool_idle_timeout(Duration::from_secs(30))
            .referer(false)
            .gzip(true)
            .brotli(true)
            .deflate(true)
            .build()
            .map_err(|e| BuildError::Client(e.to_string()))?;
        Ok(Fetcher {
            inner: Arc::new(Inner {
                client,
                resolver,
                config,
            }),
        })
    }

    /// The configuration this fetcher was built from.
    pub fn config(&self) -> &FetchConfig {
        &self.inner.config
    }

    /// Fetches `request`, following redirects itself.
    pub async fn fetch(&self, request: Request) -> Result<Response, FetchError> {
        self.fetch_traced(request).await.result
    }

    /// [`Fetcher::fetch`], keeping the redirect chain when the fetch fails.
    pub(crate) async fn fetch_traced(&self, request: Request) -> Traced {
        let mut redirects = Vec::new();
        let total = self.inner.config.timeouts.total;
        let result = match timeout(total, self.run(&request, &mut redirects)).await {
            Ok(result) => result,
            Err(_) => Err(FetchError::Timeout {
                phase: TimeoutPhase::Total,
            }),
        };
        Traced { redirects, result }
    }

    async fn run(
        &self,
        request: &Request,
        redirects: &mut Vec<RedirectHop>,
    ) -> Result<Response, FetchError> {
        let max_redirects = request.max_redirects.min(MAX_REDIRECTS_CEILING);
        let mut url = request.url.clone();
        let mut visited = HashSet::from([without_fragment(&url)]);
        loop {
            let (host, port) = host_and_port(&url)?;
            // Resolved and checked on every hop: a redirect cannot lead into a private network.
            let addresses = self
                .inner
                .resolver
                .resolve_checked(&host, Some(port))
                .await?;
            let _approval = self.inner.resolver.approve(&host, addresses);

            let response = self.send(request, &url, &host).await?;
            let status = response.status().as_u16();
            let location = response
                .headers()
                .get(header::LOCATION)
                .map(|value| String::from_utf8_lossy(value.as_bytes()).into_owned());
            let location = match location {
                Some(location) if is_redirect(status) => location,
                _ => return self.finish(request, url, response, redirects).await,
            };

            let next = url.join(location.trim()).map_err(|e| {
                FetchError::malformed(format!("redirect to unusable Location {location:?}: {e}"))
            })?;
            redirects.push(RedirectHop {
                url: url.clone(),
                status,
                location,
            });
            if redirects.len() > max_redirects {
                return Err(FetchError::TooManyRedirects {
                    limit: max_redirects,
                    chain: redirects.clone(),
                });
            }
            if !matches!(next.scheme(), "http" | "https") {
                return Err(FetchError::malformed(format!(
                    "redirect to a {} URL",
                    next.scheme()
                )));
            }
            if !visited.insert(without_fragment(&next)) {
                return Err(FetchError::RedirectLoop {
                    url: next.to_string(),
                    chain: redirects.clone(),
                });
            }
            url = next;
        }
    }

    async fn send(
        &self,
        request: &Request,
        url: &Url,
        host: &str,
    ) -> Result<reqwest::Response, FetchError> {
        let method = match request.method {
            Method::Get => reqwest::Method::GET,
            Method::Head => reqwest::Method::HEAD,
        };
        let mut builder = self.inner.client.request(method, url.clone());
        if let Some(validators) = &request.validators {
            if let Some(etag) = &validators.etag {
                builder = builder.header(header::IF_NONE_MATCH, etag);
            }
            if let Some(last_modified) = &validators.last_modified {
                builder = builder.header(header::IF_MODIFIED_SINCE, last_modified);
            }
        }
        match timeout(self.inner.config.timeouts.first_byte, builder.send()).await {
            Ok(result) => result.map_err(|e| map_error(&e, host)),
            Err(_) => Err(FetchError::Timeout {
                phase: TimeoutPhase::FirstByte,
            }),
        }
    }

    async fn finish(
        &self,
        request: &Request,
        url: Url,
        mut response: reqwest::Response,
        redirects: &[RedirectHop],
    ) -> Result<Response, FetchError> {
        let host = url.host_str().unwrap_or_default().to_owned();
        let mut body = Vec::new();
        let mut bytes_read = 0u64;
        let mut truncated = false;
        let mut stopped_at_marker = false;
        let cap = request.max_body_bytes.min(MAX_BODY_BYTES_CEILING);
        if request.method == Method::Get {
            let rate = self.inner.config.timeouts.min_transfer_rate;
            let mut window_end = Instant::now() + rate.window;
            let mut window_bytes = 0u64;
            loop {
                // `None`: the window ended first; `Some(None)`: the body is complete.
                let received = match timeout_at(window_end, response.chunk()).await {
                    Ok(chunk) => Some(chunk.map_err(|e| map_error(&e, &host))?),
                    Err(_) => None,
                };
                if let Some(Some(chunk)) = &received {
                    bytes_read += chunk.len() as u64;
                    window_bytes += chunk.len() as u64;
                }
                let now = Instant::now();
                if now >= window_end {
                    if window_bytes < rate.bytes {
                        return Err(FetchError::Timeout {
                            phase: TimeoutPhase::Transfer,
                        });
                    }
                    window_end = now + rate.window;
                    window_bytes = 0;
                }
                let chunk = match received {
                    None => continue,
                    Some(None) => break,
                    Some(Some(chunk)) => chunk,
                };
                let searched_from = body.len();
                let room = cap - body.len();
                if chunk.len() > room {
                    body.extend_from_slice(&chunk[..room]);
                    truncated = true;
                } else {
                    body.extend_from_slice(&chunk);
                }
                if let Some(marker) = &request.stop_marker {
                    if let Some(end) = find_marker(&body, searched_from, marker) {
                        body.truncate(end);
                        truncated = false;
                        stopped_at_marker = true;
                        break;
                    }
                }
                if truncated {
                    break;
                }
            }
        }
        let headers = response.headers().clone();
        let content_type = headers
            .get(header::CONTENT_TYPE)
            .map(|v| String::from_utf8_lossy(v.as_bytes()).into_owned());
        Ok(Response {
            url,
            status: response.status().as_u16(),
            version: format!("{:?}", response.version()),
            headers,
            body,
            truncated,
            stopped_at_marker,
            bytes_read,
            content_type,
            redirects: redirects.to_vec(),
            remote_addr: response.remote_addr(),
        })
    }
}

fn is_redirect(status: u16) -> bool {
    matches!(status, 301 | 302 | 303 | 307 | 308)
}

fn without_fragment(url: &Url) -> String {
    let mut url = url.clone();
    url.set_fragment(None);
    url.into()
}

/// The host (lower case punycode, IPv6 in brackets) and port of a fetchable URL.
fn host_and_port(url: &Url) -> Result<(String, u16), FetchError> {
    let scope = crate::scope::Scope::of(url)?;
    Ok((scope.host().to_owned(), scope.port()))
}

/// Where `marker` ends in `body`, looking only at matches that end after `searched_from`
/// (earlier bytes were searched before).
fn find_marker(body: &[u8], searched_from: usize, marker: &[u8]) -> Option<usize> {
    let start = searched_from.saturating_sub(marker.len() - 1);
    body[start..]
        .windows(marker.len())
        .position(|window| window.eq_ignore_ascii_case(marker))
        .map(|position| start + position + marker.len())
}

/// Turns a client error into a typed [`FetchError`] by looking through its causes.
fn map_error(error: &reqwest::Error, host: &str) -> FetchError {
    let host = host.to_owned();
    let mut cause: Option<&(dyn std::error::Error + 'static)> = Some(error);
    while let Some(current) = cause {
        if let Some(fetch_error) = current.downcast_ref::<FetchError>() {
            return fetch_error.clone();
        }
        if let Some(tls) = current.downcast_ref::<rustls::Error>() {
            return FetchError::Tls {
                host,
                message: tls.to_string(),
            };
        }
        if let Some(io) = current.downcast_ref::<std::io::Error>() {
            use std::io::ErrorKind::*;
            let message = io.to_string();
            match io.kind() {
                ConnectionRefused => return FetchError::ConnectRefused { host, message },
                ConnectionReset | ConnectionAborted | BrokenPipe | UnexpectedEof => {
                    return FetchError::ConnectionReset { host, message }
                }
                TimedOut => {
                    return FetchError::Timeout {
                        phase: TimeoutPhase::Connect,
                    }
                }
                _ => {}
            }
            // An I/O error's `source()` skips the error it wraps (TLS errors arrive wrapped
            // twice), so descend explicitly.
            if let Some(inner) = io.get_ref() {
                cause = Some(inner);
                continue;
            }
        }
        if let Some(hyper_error) = current.downcast_ref::<hyper::Error>() {
            if hyper_error.is_parse() || hyper_error.is_parse_status() {
                return FetchError::malformed(hyper_error.to_string());
            }
            if hyper_error.is_incomplete_message() {
                return FetchError::ConnectionReset {
                    host,
                    message: hyper_error.to_string(),
                };
            }
        }
        cause = current.source();
    }
    if error.is_timeout() {
        let phase = if error.is_connect() {
            TimeoutPhase::Connect
        } else {
            TimeoutPhase::FirstByte
        };
        return FetchError::Timeout { phase };
    }
    if error.is_decode() {
        return FetchError::malformed(error_chain(error));
    }
    FetchError::Other {
        message: error_chain(error),
    }
}

fn error_chain(error: &dyn std::error::Error) -> String {
    let mut text = error.to_string();
    let mut cause = error.source();
    while let Some(current) = cause {
        text.push_str(": ");
        text.push_str(&current.to_string());
        cause = current.source();
    }
    text
}

fn tls_config(config: &FetchConfig) -> Result<rustls::ClientConfig, BuildError> {
    use rustls_pki_types::pem::PemObject;
    use rustls_pki_types::CertificateDer;

    let mut roots = rustls::RootCertStore::empty();
    roots.extend(webpki_roots::TLS_SERVER_ROOTS.iter().cloned());
    for pem in &config.extra_root_certificates_pem {
        for certificate in CertificateDer::pem_slice_iter(pem) {
            let certificate = certificate.map_err(|e| BuildError::Certificate(e.to_string()))?;
            roots
                .add(certificate)
                .map_err(|e| BuildError::Certificate(e.to_string()))?;
        }
    }
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let mut tls = rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(|e| BuildError::Client(e.to_string()))?
        .with_root_certificates(roots)
        .with_no_client_auth();
    // The preconfigured TLS config is used as is, so ALPN must be set here for HTTP/2.
    tls.alpn_protocols = vec![b"h2".to_vec(), b"http/1.1".to_vec()];
    Ok(tls)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn markers_are_found_across_chunks_case_insensitively() {
        let marker = b"</head>";
        let body = b"<html><HEAD><title>x</title></HeAd><body>";
        let end = find_marker(body, 0, marker).unwrap();
        assert_eq!(&body[..end], b"<html><HEAD><title>x</title></HeAd>");
        // Split inside the marker: the search resumes far enough back to see it whole.
        assert_eq!(find_marker(body, 32, marker), Some(end));
        assert_eq!(find_marker(b"<head></he", 0, marker), None);
    }

    #[test]
    fn only_real_redirect_statuses_are_followed() {
        for status in [301, 302, 303, 307, 308] {
            assert!(is_redirect(status));
        }
        for status in [300, 304, 305, 306, 200, 404] {
            assert!(!is_redirect(status));
        }
    }

    #[test]
    fn limits_are_bounded() {
        const {
            assert!(DEFAULT_MAX_BODY_BYTES <= MAX_BODY_BYTES_CEILING);
            assert!(DEFAULT_MAX_REDIRECTS <= MAX_REDIRECTS_CEILING);
            assert!(robots::MAX_ROBOTS_TXT_BYTES <= MAX_BODY_BYTES_CEILING);
        }
        assert_eq!(DEFAULT_MAX_BODY_BYTES, 1 << 20);
        assert_eq!(MAX_BODY_BYTES_CEILING, 16 << 20);
        assert_eq!((DEFAULT_MAX_REDIRECTS, MAX_REDIRECTS_CEILING), (5, 20));
        let request = Request::get(Url::parse("http://a.test/").unwrap()).stop_at(&[b'x'; 65]);
        assert_eq!(request.stop_marker, None);
        assert_eq!(MAX_STOP_MARKER_BYTES, 64);
    }
}
