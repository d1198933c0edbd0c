//! An in-memory scripted web behind the HTTP seam, for tests on tokio's paused clock
//! (feature `testing`): script replies per URL once, and the fetcher, the robots.txt
//! lifecycle, the pacer and the polite pipeline run on it exactly as on the network.
//!
//! ```
//! # #[tokio::main(flavor = "current_thread", start_paused = true)]
//! # async fn main() {
//! use fetch::testing::{Reply, ScriptedWeb};
//!
//! let web = ScriptedWeb::new();
//! web.route("https://a.test/robots.txt", Reply::robots_txt("User-agent: *\nDisallow: /x\n"));
//! let fetcher = web.fetcher();
//! let robots = fetch::fetch_robots_txt(&fetcher, &"https://a.test/".parse().unwrap()).await.unwrap();
//! assert!(!robots.verdict("https://a.test/x", &robots::ProductTokens::JITTYBOT).allowed);
//! assert_eq!(web.requests().len(), 1);
//! # }
//! ```

use std::collections::HashMap;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::Duration;

use bytes::Bytes;
use futures_util::stream;
use http::{HeaderMap, HeaderName, HeaderValue, StatusCode, Version};
use tokio::time::Instant;
use url::Url;

use crate::config::FetchConfig;
use crate::error::FetchError;
use crate::fetcher::Fetcher;
use crate::http::{
    BoxFuture, CertificateDigest, HopRequest, HopResponse, HttpClient, Method, RawBody,
    ResponseHead,
};

/// One scripted reply.
#[derive(Debug, Clone)]
pub struct Reply {
    status: StatusCode,
    headers: HeaderMap,
    body: Bytes,
    delay: Duration,
    drip: Option<(Bytes, Duration, usize)>,
    error: Option<FetchError>,
    body_error: Option<FetchError>,
    remote_addr: Option<SocketAddr>,
    tls_leaf_sha256: Option<CertificateDigest>,
}

impl Reply {
    /// An empty reply with `status` (any number 100–999).
    ///
    /// # Panics
    /// If `status` is not a valid status code: a test bug.
    pub fn status(status: u16) -> Reply {
        Reply {
            status: StatusCode::from_u16(status).expect("a status code 100-999"),
            headers: HeaderMap::new(),
            body: Bytes::new(),
            delay: Duration::ZERO,
            drip: None,
            error: None,
            body_error: None,
            remote_addr: None,
            tls_leaf_sha256: None,
        }
    }

    /// `200` with an empty body.
    pub fn ok() -> Reply {
        Reply::status(200)
    }

    /// A `text/plain` robots.txt.
    pub fn robots_txt(text: &str) -> Reply {
        Reply::ok().header("content-type", "text/plain").body(text)
    }

    /// A redirect with `status` to `location`.
    pub fn redirect(status: u16, location: &str) -> Reply {
        Reply::status(status).header("location", location)
    }

    /// A failure instead of a response (DNS, reset, timeout ...).
    pub fn fail(error: FetchError) -> Reply {
        Reply {
            error: Some(error),
            ..Reply::ok()
        }
    }

    /// Adds a header; repeated names are all sent.
    ///
    /// # Panics
    /// If the name or value is not valid in HTTP: a test bug.
    pub fn header(mut self, name: &str, value: &str) -> Reply {
        self.headers.append(
            HeaderName::from_bytes(name.as_bytes()).expect("a header name"),
            HeaderValue::from_str(value).expect("a header value"),
        );
        self
    }

    /// Sets the body.
    pub fn body(mut self, body: impl AsRef<[u8]>) -> Reply {
        self.body = Bytes::copy_from_slice(body.as_ref());
        self
    }

    /// Waits this long before the response head.
    pub fn delay(mut self, delay: Duration) -> Reply {
        self.delay = delay;
        self
    }

    /// Sends the body as `count` copies of `chunk`, one every `every`.
    pub fn drip(mut self, chunk: &[u8], every: Duration, count: usize) -> Reply {
        self.drip = Some((Bytes::copy_from_slice(chunk), every, count));
        self
    }

    /// Answers from this address (default: 192.0.2.1 on the URL's port).
    pub fn remote_addr(mut self, address: SocketAddr) -> Reply {
        self.remote_addr = Some(address);
        self
    }

    /// Presents a TLS leaf certificate with this digest (origin grouping tests).
    pub fn tls_leaf_sha256(mut self, digest: CertificateDigest) -> Reply {
        self.tls_leaf_sha256 = Some(digest);
        self
    }

    /// Fails the body with `error` after what was sent.
    pub fn body_error(mut self, error: FetchError) -> Reply {
        self.body_error = Some(error);
        self
    }
}

/// One request the scripted web received.
#[derive(Debug, Clone)]
pub struct Logged {
    /// When (tokio's clock).
    pub at: Instant,
    /// GET or HEAD.
    pub method: Method,
    /// The URL.
    pub url: Url,
    /// Every header as sent.
    pub headers: HeaderMap,
}

#[derive(Default)]
struct State {
    routes: HashMap<String, (Vec<Reply>, usize)>,
    log: Vec<Logged>,
}

/// A scripted web: routes by URL (without fragment), replies played in order (the last
/// repeats), unknown URLs answer `404`, every request logged.
#[derive(Default)]
pub struct ScriptedWeb {
    state: Mutex<State>,
}

impl std::fmt::Debug for ScriptedWeb {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ScriptedWeb").finish_non_exhaustive()
    }
}

fn key(url: &str) -> String {
    match Url::parse(url) {
        Ok(mut url) => {
            url.set_fragment(None);
            url.into()
        }
        Err(_) => url.to_owned(),
    }
}

impl ScriptedWeb {
    /// An empty web.
    pub fn new() -> Arc<ScriptedWeb> {
        Arc::new(ScriptedWeb::default())
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Answers every request for `url` with `reply`.
    pub fn route(&self, url: &str, reply: Reply) {
        self.script(url, [reply]);
    }

    /// Answers requests for `url` with `replies` in order; the last repeats.
    pub fn script(&self, url: &str, replies: impl IntoIterator<Item = Reply>) {
        self.lock()
            .routes
            .insert(key(url), (replies.into_iter().collect(), 0));
    }

    /// Every request so far.
    pub fn requests(&self) -> Vec<Logged> {
        self.lock().log.clone()
    }

    /// The requests for `url`.
    pub fn requests_to(&self, url: &str) -> Vec<Logged> {
        let key = key(url);
        self.lock()
            .log
            .iter()
            .filter(|logged| logged.url.as_str() == key)
            .cloned()
            .collect()
    }

    /// A fetcher on this web as `JittyBot` (default limits).
    pub fn fetcher(self: &Arc<Self>) -> Fetcher {
        self.fetcher_with(FetchConfig::new("JittyBot", "https://jittybot.test/bot"))
    }

    /// A fetcher on this web with `config`.
    ///
    /// # Panics
    /// If the configuration's User-Agent is not a valid header: a test bug.
    pub fn fetcher_with(self: &Arc<Self>, config: FetchConfig) -> Fetcher {
        let client: Arc<dyn HttpClient> = Arc::clone(self) as Arc<dyn HttpClient>;
        Fetcher::with_client(config, client).expect("a valid configuration")
    }

    /// Logs `request` and picks its scripted reply (the last one repeats).
    fn reply_to(&self, request: &HopRequest) -> Option<Reply> {
        let mut state = self.lock();
        let mut url = request.url.clone();
        url.set_fragment(None);
        state.log.push(Logged {
            at: Instant::now(),
            method: request.method,
            url: url.clone(),
            headers: request.headers.clone(),
        });
        let (replies, served) = state.routes.get_mut(url.as_str())?;
        let index = (*served).min(replies.len().saturating_sub(1));
        *served += 1;
        replies.get(index).cloned()
    }

    async fn answer(&self, request: HopRequest) -> Result<HopResponse, FetchError> {
        let reply = self.reply_to(&request);
        let reply = reply.unwrap_or_else(|| Reply::status(404).body("not found"));
        if !reply.delay.is_zero() {
            tokio::time::sleep(reply.delay).await;
        }
        if let Some(error) = reply.error {
            return Err(error);
        }
        let tail = reply.body_error.map(Err);
        let body: RawBody = match (request.method, reply.drip) {
            (Method::Head, _) => Box::pin(stream::empty()),
            (Method::Get, None) => {
                Box::pin(stream::iter(std::iter::once(Ok(reply.body)).chain(tail)))
            }
            (Method::Get, Some((chunk, every, count))) => {
                let drip = stream::unfold(0usize, move |sent| {
                    let chunk = chunk.clone();
                    async move {
                        if sent >= count {
                            return None;
                        }
                        tokio::time::sleep(every).await;
                        Some((Ok(chunk), sent + 1))
                    }
                });
                Box::pin(futures_util::StreamExt::chain(drip, stream::iter(tail)))
            }
        };
        let port = request.url.port_or_known_default().unwrap_or(80);
        Ok(HopResponse {
            head: ResponseHead {
                status: reply.status,
                version: Version::HTTP_11,
                headers: reply.headers,
                remote_addr: reply
                    .remote_addr
                    .or(Some(SocketAddr::from(([192, 0, 2, 1], port)))),
                tls_leaf_sha256: reply.tls_leaf_sha256,
            },
            body,
        })
    }
}

impl HttpClient for ScriptedWeb {
    fn send(&self, request: HopRequest) -> BoxFuture<'_, Result<HopResponse, FetchError>> {
        Box::pin(self.answer(request))
    }
}

/// What a test's code logged through `tracing` while it held a [`CapturedLog`]: the text
/// `RUST_LOG=<filter>` would print (no colours), for asserting on spans and events. The
/// subscriber is this thread's default only, so tests running side by side do not mix logs.
pub struct CapturedLog {
    buffer: Arc<Mutex<Vec<u8>>>,
    _guard: tracing::subscriber::DefaultGuard,
}

impl std::fmt::Debug for CapturedLog {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CapturedLog").finish_non_exhaustive()
    }
}

/// Starts capturing what `filter` (an `EnvFilter` directive such as `fetch=debug`) lets
/// through, on this thread, until the returned log is dropped.
pub fn capture_log(filter: &str) -> CapturedLog {
    let buffer = Arc::new(Mutex::new(Vec::new()));
    let writer = LogWriter(Arc::clone(&buffer));
    let subscriber = tracing_subscriber::fmt()
        .with_env_filter(tracing_subscriber::EnvFilter::new(filter))
        .with_writer(move || writer.clone())
        .with_ansi(false)
        .finish();
    CapturedLog {
        buffer,
        _guard: tracing::subscriber::set_default(subscriber),
    }
}

impl CapturedLog {
    /// Everything logged so far.
    pub fn text(&self) -> String {
        String::from_utf8_lossy(&lock(&self.buffer)).into_owned()
    }
}

/// The writer the captured log's subscriber writes each line to.
#[derive(Clone)]
struct LogWriter(Arc<Mutex<Vec<u8>>>);

impl std::io::Write for LogWriter {
    fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
        lock(&self.0).extend_from_slice(bytes);
        Ok(bytes.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// The buffer, also after a test thread panicked while holding it.
fn lock(buffer: &Mutex<Vec<u8>>) -> MutexGuard<'_, Vec<u8>> {
    buffer.lock().unwrap_or_else(PoisonError::into_inner)
}
