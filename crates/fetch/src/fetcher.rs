//! The fetcher: GET and HEAD over the HTTP seam, with exact request headers, one deadline,
//! the one redirect loop, capped decoded bodies and raw exchanges.

use std::net::{IpAddr, SocketAddr};
use std::sync::Arc;

use http::header::{self, HeaderMap, HeaderValue};
use http::{StatusCode, Version};
use tracing::Instrument;
use url::Url;

use crate::body::{Body, BodyReader, ContentCoding, ReadLimits, ACCEPT_ENCODING};
use crate::config::FetchConfig;
use crate::deadline::Deadline;
use crate::error::{FetchError, TimeoutPhase};
use crate::http::{CertificateDigest, HopRequest, HttpClient, Method, ResponseHead};
use crate::net::{BuildError, ReqwestClient};
use crate::observe::{Observer, RequestKind};
use crate::redirect::{without_credentials, Next, RedirectChain, RedirectHop};

/// Default body cap of [`Request::get`]: 1 MiB.
pub const DEFAULT_MAX_BODY_BYTES: usize = 1024 * 1024;
/// Largest decoded body cap a caller may choose: 64 MiB (a 50 MB sitemap fits). Larger caps
/// are lowered to this, so no caller can make the fetcher hold an unbounded body.
pub const MAX_BODY_BYTES_CEILING: usize = 64 * 1024 * 1024;
/// Default redirect hop limit of [`Request::get`] (as for robots.txt).
pub const DEFAULT_MAX_REDIRECTS: usize = 5;
/// Largest redirect hop limit a caller may choose. Larger limits are lowered to this.
pub const MAX_REDIRECTS_CEILING: usize = 20;
/// Longest stop marker accepted by [`Request::stop_at`]; longer markers are ignored.
pub const MAX_STOP_MARKER_BYTES: usize = 64;
/// The `Accept` header sent unless the caller sets another.
pub const DEFAULT_ACCEPT: &str = "*/*";

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
    /// An absolute `http` or `https` URL. Credentials in it are removed, never sent.
    pub url: Url,
    /// Body cap, counted after decoding (at most [`MAX_BODY_BYTES_CEILING`]).
    pub max_body_bytes: usize,
    /// Redirects to follow in automatic mode (at most [`MAX_REDIRECTS_CEILING`]).
    pub max_redirects: usize,
    /// Validators for a conditional request, sent on every hop (the cached validators belong
    /// to the final URL).
    pub validators: Option<Validators>,
    /// Stop reading the body once this ASCII marker has been read, case-insensitively.
    pub stop_marker: Option<Vec<u8>>,
    /// The `Accept` header.
    pub accept: HeaderValue,
    /// Also keep the body as received (content-coded), up to the same cap, for archiving.
    pub keep_raw: bool,
    /// Present this product token in the User-Agent instead of the fetcher's (JittyBot
    /// fetches media as `JittyBot-Image`): same version and info URL.
    pub agent: Option<String>,
    /// What the request is for, as the fetcher's [`Observer`] counts it.
    pub kind: RequestKind,
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
            accept: HeaderValue::from_static(DEFAULT_ACCEPT),
            keep_raw: false,
            agent: None,
            kind: RequestKind::Page,
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

    /// Sets the `Accept` header.
    pub fn accept(mut self, accept: HeaderValue) -> Request {
        self.accept = accept;
        self
    }

    /// Labels what the request is for ([`Observer`]).
    pub fn kind(mut self, kind: RequestKind) -> Request {
        self.kind = kind;
        self
    }

    /// Keeps the body as received too ([`Response::raw_body`]).
    pub fn keep_raw(mut self) -> Request {
        self.keep_raw = true;
        self
    }

    fn cap(&self) -> usize {
        self.max_body_bytes.min(MAX_BODY_BYTES_CEILING)
    }
}

/// One hop in manual mode: the request exactly as sent, the response head exactly as
/// received, and the body still to be read (or dropped).
#[derive(Debug)]
pub struct Hop {
    /// When the request was sent (wall clock; WARC-Date).
    pub sent_at: jiff::Timestamp,
    /// The request as sent (`Host` first).
    pub request: HopRequest,
    /// The response head as received.
    pub head: ResponseHead,
    /// The body, decoded under the request's cap, the deadline and the minimum rate.
    pub body: BodyReader,
}

impl Hop {
    /// The hop for the record (without its body).
    pub fn record(&self) -> HopRecord {
        HopRecord {
            sent_at: self.sent_at,
            request: self.request.clone(),
            head: self.head.clone(),
        }
    }
}

/// One hop of an exchange, for the record (WARC request/response pairs, the audit's hops).
#[derive(Debug, Clone)]
pub struct HopRecord {
    /// When the request was sent (wall clock).
    pub sent_at: jiff::Timestamp,
    /// The request as sent.
    pub request: HopRequest,
    /// The response head as received.
    pub head: ResponseHead,
}

/// A response, after redirects.
#[derive(Debug, Clone)]
pub struct Response {
    /// The final URL, after redirects.
    pub url: Url,
    /// The final status.
    pub status: StatusCode,
    /// The HTTP version.
    pub version: Version,
    /// All response headers as received; repeated headers keep every value;
    /// `Content-Encoding` and `Content-Length` describe the body as sent.
    pub headers: HeaderMap,
    /// The body, decoded (undecoded when [`Response::coding`] is unsupported), cut at the cap
    /// or after the stop marker.
    pub body: Vec<u8>,
    /// True when the body was longer than the cap and was cut.
    pub truncated: bool,
    /// True when reading stopped after the stop marker.
    pub stopped_at_marker: bool,
    /// Decoded body bytes received (at most the cap plus one).
    pub bytes_read: u64,
    /// Body bytes received on the wire.
    pub raw_bytes_read: u64,
    /// The body's content coding.
    pub coding: ContentCoding,
    /// The body as received, when [`Request::keep_raw`] asked for it.
    pub raw_body: Option<Vec<u8>>,
    /// The `Content-Type` header.
    pub content_type: Option<String>,
    /// The redirects followed to get here, in order.
    pub redirects: Vec<RedirectHop>,
    /// Every hop as sent and received, the final one last.
    pub exchanges: Vec<HopRecord>,
    /// The address the final response came from.
    pub remote_addr: Option<SocketAddr>,
    /// SHA-256 of the final response's TLS leaf certificate, over HTTPS.
    pub tls_leaf_sha256: Option<CertificateDigest>,
}

impl Response {
    /// True for `304 Not Modified`: the validators sent still match.
    pub fn is_not_modified(&self) -> bool {
        self.status == StatusCode::NOT_MODIFIED
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

    /// The request headers sent for the final hop.
    pub fn request_headers(&self) -> Option<&HeaderMap> {
        self.exchanges.last().map(|hop| &hop.request.headers)
    }
}

/// The HTTP client every bot shares. Cheap to clone: clones share connections.
#[derive(Clone)]
pub struct Fetcher {
    inner: Arc<Inner>,
}

struct Inner {
    client: Arc<dyn HttpClient>,
    config: FetchConfig,
    user_agent: HeaderValue,
    observer: Option<Arc<dyn Observer>>,
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
    /// A fetcher on the real client.
    pub fn new(config: FetchConfig) -> Result<Fetcher, BuildError> {
        let client = ReqwestClient::new(&config)?;
        Fetcher::with_client(config, Arc::new(client))
    }

    /// A fetcher on any client, e.g. the scripted web of tests.
    pub fn with_client(
        config: FetchConfig,
        client: Arc<dyn HttpClient>,
    ) -> Result<Fetcher, BuildError> {
        let user_agent = HeaderValue::from_str(&config.user_agent())
            .map_err(|e| BuildError::Client(crate::error::Cause::new(e)))?;
        Ok(Fetcher {
            inner: Arc::new(Inner {
                client,
                config,
                user_agent,
                observer: None,
            }),
        })
    }

    /// This fetcher (same client and connections) telling `observer` about every request
    /// it sends.
    pub fn with_observer(&self, observer: Arc<dyn Observer>) -> Fetcher {
        Fetcher {
            inner: Arc::new(Inner {
                client: Arc::clone(&self.inner.client),
                config: self.inner.config.clone(),
                user_agent: self.inner.user_agent.clone(),
                observer: Some(observer),
            }),
        }
    }

    /// The checked addresses of `host` for `port`, as a request would use them (empty from a
    /// client without resolution).
    pub async fn resolve(&self, host: &str, port: u16) -> Result<Vec<IpAddr>, FetchError> {
        self.inner.client.resolve(host, port).await
    }

    /// The configuration this fetcher was built from.
    pub fn config(&self) -> &FetchConfig {
        &self.inner.config
    }

    /// The deadline of one fetch started now: `deadline`, or [`Timeouts::total`] from now
    /// when that is earlier.
    ///
    /// [`Timeouts::total`]: crate::Timeouts::total
    pub fn deadline(&self, deadline: Option<Deadline>) -> Deadline {
        let total = Deadline::after(self.inner.config.timeouts.total);
        deadline.map_or(total, |d| d.min(total))
    }

    /// The exact request for `url`: `Host`, `User-Agent`, `Accept`, `Accept-Encoding`, and
    /// the validators, in that order. Credentials in `url` are removed.
    pub fn hop_request(&self, request: &Request, url: &Url) -> Result<HopRequest, FetchError> {
        let url = without_credentials(url);
        crate::scope::Scope::of(&url)?;
        let host =
            HopRequest::host_header(&url).ok_or_else(|| FetchError::invalid(&url, "no host"))?;
        let mut headers = HeaderMap::new();
        headers.insert(header::HOST, host);
        let user_agent = match &request.agent {
            None => self.inner.user_agent.clone(),
            Some(token) => {
                let config = FetchConfig {
                    token: token.clone(),
                    ..self.inner.config.clone()
                };
                HeaderValue::from_str(&config.user_agent())
                    .map_err(|_| FetchError::invalid(&url, "product token not fit for a header"))?
            }
        };
        headers.insert(header::USER_AGENT, user_agent);
        headers.insert(header::ACCEPT, request.accept.clone());
        headers.insert(
            header::ACCEPT_ENCODING,
            HeaderValue::from_static(ACCEPT_ENCODING),
        );
        if let Some(validators) = &request.validators {
            let mut put = |name, value: &Option<String>| {
                if let Some(value) = value.as_deref().and_then(|v| HeaderValue::from_str(v).ok()) {
                    headers.insert(name, value);
                }
            };
            put(header::IF_NONE_MATCH, &validators.etag);
            put(header::IF_MODIFIED_SINCE, &validators.last_modified);
        }
        Ok(HopRequest {
            method: request.method,
            url,
            headers,
        })
    }

    /// Manual mode: sends `request` to `url` (one hop, no redirect followed) under
    /// `deadline`, the first-byte limit capped by what is left. A 3xx comes back as a hop;
    /// the caller reads it with a [`RedirectChain`] and decides whether to follow.
    pub async fn send_hop(
        &self,
        request: &Request,
        url: &Url,
        deadline: Deadline,
    ) -> Result<Hop, FetchError> {
        let hop_request = self.hop_request(request, url)?;
        let span = tracing::debug_span!("hop", method = ?request.method, url = %hop_request.url);
        async {
            let sent_at = jiff::Timestamp::now();
            let first_byte = self.inner.config.timeouts.first_byte;
            let response = deadline
                .run(
                    Some((first_byte, TimeoutPhase::FirstByte)),
                    self.inner.client.send(hop_request.clone()),
                )
                .await;
            let observer = self.inner.observer.as_ref();
            let response = match response {
                Ok(response) => response,
                Err(error) => {
                    tracing::debug!(error = %error.full_message(), "hop failed");
                    if let Some(observer) = observer {
                        observer.answered(request.kind, Err(&error));
                    }
                    return Err(error);
                }
            };
            if let Some(observer) = observer {
                observer.answered(request.kind, Ok(response.head.status));
            }
            let mut response = response;
            redact_location(&mut response.head.headers, &hop_request.url);
            tracing::debug!(status = response.head.status.as_u16(), version = ?response.head.version, "response head");
            let host = hop_request.url.host_str().unwrap_or_default().to_owned();
            let mut body = match request.method {
                Method::Head => BodyReader::empty(&response.head.headers, deadline),
                Method::Get => BodyReader::new(
                    response.body,
                    &response.head.headers,
                    &host,
                    ReadLimits {
                        cap: request.cap(),
                        deadline,
                        rate: self.inner.config.timeouts.min_transfer_rate,
                        keep_raw: request.keep_raw.then(|| request.cap()),
                    },
                ),
            };
            if let Some(observer) = observer {
                body.report_to(Arc::clone(observer), request.kind);
            }
            Ok(Hop {
                sent_at,
                request: hop_request,
                head: response.head,
                body,
            })
        }
        .instrument(span)
        .await
    }

    /// Fetches `request`, following redirects through the one [`RedirectChain`], under
    /// [`Timeouts::total`](crate::Timeouts::total).
    pub async fn fetch(&self, request: Request) -> Result<Response, FetchError> {
        self.fetch_traced(request, self.deadline(None)).await.result
    }

    /// [`Fetcher::fetch`] under `deadline` (the earlier of it and the total limit).
    pub async fn fetch_within(
        &self,
        request: Request,
        deadline: Deadline,
    ) -> Result<Response, FetchError> {
        self.fetch_traced(request, self.deadline(Some(deadline)))
            .await
            .result
    }

    /// [`Fetcher::fetch`], keeping the redirect chain when the fetch fails.
    pub(crate) async fn fetch_traced(&self, request: Request, deadline: Deadline) -> Traced {
        self.fetch_traced_refusing(request, deadline, &|_| false)
            .await
    }

    /// [`Fetcher::fetch_traced`], not following a redirect to a URL `refuse` names
    /// ([`RedirectError::Held`]).
    pub(crate) async fn fetch_traced_refusing(
        &self,
        request: Request,
        deadline: Deadline,
        refuse: &(dyn Fn(&Url) -> bool + Send + Sync),
    ) -> Traced {
        let max_redirects = request.max_redirects.min(MAX_REDIRECTS_CEILING);
        let mut chain = RedirectChain::new(&request.url, max_redirects);
        let mut exchanges = Vec::new();
        let mut url = without_credentials(&request.url);
        let result = loop {
            let hop = match self.send_hop(&request, &url, deadline).await {
                Ok(hop) => hop,
                Err(error) => break Err(error),
            };
            exchanges.push(hop.record());
            match chain.next(&url, hop.head.status, &hop.head.headers) {
                Ok(Next::Follow(next)) if refuse(&next) => {
                    break Err(FetchError::Redirect {
                        error: crate::redirect::RedirectError::Held { url: next },
                        chain: chain.hops().to_vec(),
                    })
                }
                Ok(Next::Follow(next)) => url = next,
                Ok(Next::Final) => {
                    break finish(&request, url, hop, chain.hops().to_vec(), exchanges).await
                }
                Err(error) => {
                    break Err(FetchError::Redirect {
                        error,
                        chain: chain.hops().to_vec(),
                    })
                }
            }
        };
        Traced {
            redirects: chain.into_hops(),
            result,
        }
    }
}

/// Replaces a `Location` carrying credentials (`http://user:secret@host/`) by the URL it
/// points to without them: the one change made to headers as received, so that no secret
/// is shown, stored or archived.
fn redact_location(headers: &mut HeaderMap, base: &Url) {
    let Some(value) = headers.get(header::LOCATION) else {
        return;
    };
    let raw = String::from_utf8_lossy(value.as_bytes()).into_owned();
    let Ok(target) = base.join(raw.trim()) else {
        return;
    };
    if target.username().is_empty() && target.password().is_none() {
        return;
    }
    if let Ok(clean) = HeaderValue::from_str(without_credentials(&target).as_str()) {
        headers.insert(header::LOCATION, clean);
    }
}

async fn finish(
    request: &Request,
    url: Url,
    hop: Hop,
    redirects: Vec<RedirectHop>,
    exchanges: Vec<HopRecord>,
) -> Result<Response, FetchError> {
    let Hop { head, body, .. } = hop;
    let body: Body = body.read_to_end(request.stop_marker.as_deref()).await?;
    let content_type = head
        .headers
        .get(header::CONTENT_TYPE)
        .map(|v| String::from_utf8_lossy(v.as_bytes()).into_owned());
    Ok(Response {
        url,
        status: head.status,
        version: head.version,
        headers: head.headers,
        body: body.bytes,
        truncated: body.truncated,
        stopped_at_marker: body.stopped_at_marker,
        bytes_read: body.decoded_bytes,
        raw_bytes_read: body.raw_bytes,
        coding: body.coding,
        raw_body: body.raw,
        content_type,
        redirects,
        exchanges,
        remote_addr: head.remote_addr,
        tls_leaf_sha256: head.tls_leaf_sha256,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn limits_are_bounded() {
        const {
            assert!(DEFAULT_MAX_BODY_BYTES <= MAX_BODY_BYTES_CEILING);
            assert!(DEFAULT_MAX_REDIRECTS <= MAX_REDIRECTS_CEILING);
            assert!(robots::MAX_ROBOTS_TXT_BYTES <= MAX_BODY_BYTES_CEILING);
        }
        let request = Request::get(Url::parse("http://a.test/").unwrap()).stop_at(&[b'x'; 65]);
        assert_eq!(request.stop_marker, None);
        let huge = Request::get(Url::parse("http://a.test/").unwrap()).max_body_bytes(usize::MAX);
        assert_eq!(huge.cap(), MAX_BODY_BYTES_CEILING);
    }
}
