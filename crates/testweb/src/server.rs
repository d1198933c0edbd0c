//! The servers, the sites and the request log.

use std::collections::HashMap;
use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use bytes::Bytes;
use hyper::service::service_fn;
use hyper_util::rt::{TokioExecutor, TokioIo};
use hyper_util::server::conn::auto;
use tokio::net::TcpListener;
use tokio::sync::mpsc;
use tokio::task::JoinHandle;
use tokio::time::Instant;

use crate::body::Body;
use crate::conn::{Conn, Sabotage};
use crate::reply::{Action, Reply};

/// One request as the server saw it.
#[derive(Debug, Clone)]
pub struct RecordedRequest {
    /// When it arrived (tokio's clock).
    pub at: Instant,
    /// `GET`, `HEAD` ...
    pub method: String,
    /// The site asked for (Host header or HTTP/2 authority), lower case, without port.
    pub host: String,
    /// Path and query.
    pub path: String,
    /// `HTTP/1.1`, `HTTP/2.0`.
    pub version: String,
    /// True when it came over HTTPS.
    pub tls: bool,
    /// Every header, names lower case, in order.
    pub headers: Vec<(String, String)>,
    /// The server address it arrived on (which loopback address: which origin).
    pub local: Option<SocketAddr>,
    /// The client's address and port: requests with the same `peer` came over one
    /// connection.
    pub peer: Option<SocketAddr>,
    /// The status it was answered with (`0`: no HTTP answer, a reset or raw bytes).
    pub status: u16,
    /// The body bytes it was answered with, as sent (before any client decoding).
    pub body_bytes: usize,
}

impl RecordedRequest {
    /// The first value of header `name` (case-insensitive).
    pub fn header(&self, name: &str) -> Option<&str> {
        let name = name.to_ascii_lowercase();
        self.headers
            .iter()
            .find(|(n, _)| *n == name)
            .map(|(_, v)| v.as_str())
    }
}

/// A route: over TLS or not (`None`: either), host, path.
type RouteKey = (Option<bool>, String, String);

/// A route's script and how many requests it has served.
type Script = (Vec<Reply>, usize);

/// Makes replies for requests no route matches: `(host, path) -> reply`.
pub(crate) type Generator = Arc<dyn Fn(&str, &str) -> Option<Reply> + Send + Sync>;

#[derive(Default)]
pub(crate) struct State {
    /// (over TLS or not, or either; host; path) to its script and the number of requests
    /// served from it.
    routes: HashMap<RouteKey, Script>,
    pub(crate) requests: Vec<RecordedRequest>,
    /// Consulted in order when no route matches.
    pub(crate) generators: Vec<Generator>,
    /// Do not record requests (benchmarks: the log would grow without bound).
    pub(crate) no_log: bool,
    /// Connections accepted and not yet closed (by either side).
    pub(crate) open_connections: usize,
}

/// Counts a connection as open for as long as it lives.
struct OpenConnection(Arc<Mutex<State>>);

impl OpenConnection {
    fn new(state: &Arc<Mutex<State>>) -> OpenConnection {
        lock(state).open_connections += 1;
        OpenConnection(Arc::clone(state))
    }
}

impl Drop for OpenConnection {
    fn drop(&mut self) {
        lock(&self.0).open_connections -= 1;
    }
}

/// A running test web: one HTTP and one HTTPS listener on 127.0.0.1, serving every site.
/// The servers stop when it is dropped.
pub struct TestWeb {
    pub(crate) state: Arc<Mutex<State>>,
    http: SocketAddr,
    https: SocketAddr,
    certificate_pem: String,
    tasks: Vec<JoinHandle<()>>,
}

impl Drop for TestWeb {
    fn drop(&mut self) {
        for task in &self.tasks {
            task.abort();
        }
    }
}

/// Names the HTTPS certificate is valid for. A wildcard directly under a top-level domain
/// (`*.test`) is not accepted by certificate checkers, so the usual test names are listed.
pub const CERTIFICATE_NAMES: [&str; 12] = [
    "a.test",
    "b.test",
    "c.test",
    "example.test",
    "www.example.test",
    "*.example.test",
    "*.web.test",
    "xn--bcher-kva.test",
    "redirect.test",
    "site.test",
    "localhost",
    "127.0.0.1",
];

impl TestWeb {
    /// Starts the servers on free ports of 127.0.0.1.
    ///
    /// # Panics
    /// If no port can be bound or the certificate cannot be made: a test setup failure.
    pub async fn start() -> TestWeb {
        let state = Arc::new(Mutex::new(State::default()));
        let http = TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind an HTTP port on 127.0.0.1");
        let https = TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind an HTTPS port on 127.0.0.1");
        let (certificate_pem, tls) = tls_config();
        let addrs = (
            http.local_addr().expect("HTTP address"),
            https.local_addr().expect("HTTPS address"),
        );
        let tasks = vec![
            tokio::spawn(serve(http, None, Arc::clone(&state))),
            tokio::spawn(serve(
                https,
                Some(tokio_rustls::TlsAcceptor::from(Arc::new(tls))),
                Arc::clone(&state),
            )),
        ];
        TestWeb {
            state,
            http: addrs.0,
            https: addrs.1,
            certificate_pem,
            tasks,
        }
    }

    /// A web over listeners started elsewhere (the multi-address web).
    pub(crate) fn from_parts(
        state: Arc<Mutex<State>>,
        addr: SocketAddr,
        certificate_pem: String,
        tasks: Vec<JoinHandle<()>>,
    ) -> TestWeb {
        TestWeb {
            state,
            http: addr,
            https: addr,
            certificate_pem,
            tasks,
        }
    }

    /// The HTTP listener's port.
    pub fn http_port(&self) -> u16 {
        self.http.port()
    }

    /// The HTTPS listener's port.
    pub fn https_port(&self) -> u16 {
        self.https.port()
    }

    /// The certificate of the test web's own authority (self-signed, PEM), which issued the
    /// HTTPS listener's certificate for [`CERTIFICATE_NAMES`]: clients must be told to trust it.
    pub fn certificate_pem(&self) -> &str {
        &self.certificate_pem
    }

    /// `http://host:port/path` on this web.
    pub fn http_url(&self, host: &str, path: &str) -> String {
        format!("http://{host}:{}{path}", self.http_port())
    }

    /// `https://host:port/path` on this web.
    pub fn https_url(&self, host: &str, path: &str) -> String {
        format!("https://{host}:{}{path}", self.https_port())
    }

    /// curl-style `--resolve` pins sending `host` on both ports to 127.0.0.1.
    pub fn pins(&self, host: &str) -> Vec<String> {
        vec![
            format!("{host}:{}:127.0.0.1", self.http_port()),
            format!("{host}:{}:127.0.0.1", self.https_port()),
        ]
    }

    /// A site, by host name (case-insensitive; give internationalised names in punycode,
    /// as clients send them).
    ///
    /// The site answers over both HTTP and HTTPS; see [`TestWeb::http_site`] and
    /// [`TestWeb::https_site`] for one scheme only.
    pub fn site(&self, host: &str) -> Site<'_> {
        Site {
            web: self,
            host: host.to_ascii_lowercase(),
            tls: None,
        }
    }

    /// A site as served over plain HTTP only (its routes take precedence over
    /// [`TestWeb::site`]'s there).
    pub fn http_site(&self, host: &str) -> Site<'_> {
        Site {
            tls: Some(false),
            ..self.site(host)
        }
    }

    /// A site as served over HTTPS only (its routes take precedence over
    /// [`TestWeb::site`]'s there).
    pub fn https_site(&self, host: &str) -> Site<'_> {
        Site {
            tls: Some(true),
            ..self.site(host)
        }
    }

    /// Every request so far, in order of arrival.
    pub fn requests(&self) -> Vec<RecordedRequest> {
        lock(&self.state).requests.clone()
    }

    /// Connections open now (accepted, and closed by neither side yet), on both listeners.
    pub fn open_connections(&self) -> usize {
        lock(&self.state).open_connections
    }

    /// The requests for one path of one site.
    pub fn requests_to(&self, host: &str, path: &str) -> Vec<RecordedRequest> {
        let host = host.to_ascii_lowercase();
        lock(&self.state)
            .requests
            .iter()
            .filter(|r| r.host == host && r.path == path)
            .cloned()
            .collect()
    }

    /// Forgets the requests recorded so far.
    pub fn clear_requests(&self) {
        lock(&self.state).requests.clear();
    }

    /// Answer requests that no route matches with `generator(host, path)` (`None`: 404), e.g.
    /// [`crate::linked_pages`] for a big generated site.
    pub fn generate(
        &self,
        generator: impl Fn(&str, &str) -> Option<Reply> + Send + Sync + 'static,
    ) {
        lock(&self.state).generators.push(Arc::new(generator));
    }

    /// Stop (`false`) or resume recording requests: a benchmark's log would grow without bound.
    pub fn set_logging(&self, on: bool) {
        lock(&self.state).no_log = !on;
    }
}

/// One virtual site.
pub struct Site<'w> {
    web: &'w TestWeb,
    host: String,
    tls: Option<bool>,
}

impl<'w> Site<'w> {
    /// One path of the site (path and query, exactly as requested).
    pub fn path(&self, path: &str) -> Route<'w> {
        Route {
            web: self.web,
            host: self.host.clone(),
            path: path.to_owned(),
            tls: self.tls,
        }
    }
}

/// One path of one site.
pub struct Route<'w> {
    web: &'w TestWeb,
    host: String,
    path: String,
    tls: Option<bool>,
}

impl Route<'_> {
    /// Answers every request with `reply`.
    pub fn respond(&self, reply: Reply) {
        self.script([reply]);
    }

    /// Answers requests with `replies` in order; the last one repeats. Restarts the script.
    pub fn script(&self, replies: impl IntoIterator<Item = Reply>) {
        let replies: Vec<Reply> = replies.into_iter().collect();
        lock(&self.web.state).routes.insert(
            (self.tls, self.host.clone(), self.path.clone()),
            (replies, 0),
        );
    }
}

pub(crate) fn lock(state: &Mutex<State>) -> MutexGuard<'_, State> {
    state.lock().unwrap_or_else(PoisonError::into_inner)
}

pub(crate) fn tls_config() -> (String, rustls::ServerConfig) {
    use rcgen::{BasicConstraints, CertificateParams, DnType, IsCa, Issuer, KeyPair};

    let mut ca_params = CertificateParams::new(Vec::<String>::new()).expect("CA parameters");
    ca_params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    ca_params
        .distinguished_name
        .push(DnType::CommonName, "testweb CA");
    let ca_key = KeyPair::generate().expect("CA key");
    let ca_cert = ca_params.self_signed(&ca_key).expect("CA certificate");
    let issuer = Issuer::new(ca_params, ca_key);

    let names: Vec<String> = CERTIFICATE_NAMES.iter().map(|n| n.to_string()).collect();
    let leaf_params = CertificateParams::new(names).expect("certificate parameters");
    let leaf_key = KeyPair::generate().expect("key");
    let leaf = leaf_params
        .signed_by(&leaf_key, &issuer)
        .expect("certificate");

    let key =
        rustls::pki_types::PrivateKeyDer::try_from(leaf_key.serialize_der()).expect("private key");
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let mut config = rustls::ServerConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .expect("TLS versions")
        .with_no_client_auth()
        .with_single_cert(vec![leaf.der().clone(), ca_cert.der().clone()], key)
        .expect("TLS configuration");
    config.alpn_protocols = vec![b"h2".to_vec(), b"http/1.1".to_vec()];
    (ca_cert.pem(), config)
}

async fn serve(
    listener: TcpListener,
    tls: Option<tokio_rustls::TlsAcceptor>,
    state: Arc<Mutex<State>>,
) {
    loop {
        let Ok((tcp, _)) = listener.accept().await else {
            continue;
        };
        // As real servers do on keep-alive connections (nginx `tcp_nodelay on`): without it a
        // response written in two pieces waits for the client's delayed ACK, 40 ms per
        // request on a reused connection (Nagle's algorithm), which made the crawler benchmark
        // measure the stall, not the crawler.
        let _ = tcp.set_nodelay(true);
        tokio::spawn(serve_conn(tcp, tls.clone(), Arc::clone(&state)));
    }
}

/// The two ends of a connection, as the request log records them.
#[derive(Clone, Copy)]
struct Ends {
    local: Option<SocketAddr>,
    peer: Option<SocketAddr>,
}

/// Serve one accepted connection, over TLS when an acceptor is given.
pub(crate) async fn serve_conn(
    tcp: tokio::net::TcpStream,
    tls: Option<tokio_rustls::TlsAcceptor>,
    state: Arc<Mutex<State>>,
) {
    let _open = OpenConnection::new(&state);
    let ends = Ends {
        local: tcp.local_addr().ok(),
        peer: tcp.peer_addr().ok(),
    };
    let sabotage = Sabotage::default();
    let conn = Conn {
        tcp,
        sabotage: sabotage.clone(),
    };
    let is_tls = tls.is_some();
    let service = service_fn(move |request| {
        handle(request, Arc::clone(&state), sabotage.clone(), is_tls, ends)
    });
    let builder = auto::Builder::new(TokioExecutor::new());
    // Connection errors are part of the script (resets, garbage): ignore them.
    match tls {
        Some(acceptor) => {
            if let Ok(stream) = acceptor.accept(conn).await {
                let _ = builder
                    .serve_connection(TokioIo::new(stream), service)
                    .await;
            }
        }
        None => {
            let _ = builder.serve_connection(TokioIo::new(conn), service).await;
        }
    }
}

async fn handle(
    request: hyper::Request<hyper::body::Incoming>,
    state: Arc<Mutex<State>>,
    sabotage: Sabotage,
    tls: bool,
    ends: Ends,
) -> Result<hyper::Response<Body>, Infallible> {
    let mut recorded = record(&request, tls, ends);
    let (host, path) = (recorded.host.clone(), recorded.path.clone());
    let reply = choose_reply(&state, (tls, host, path))
        .unwrap_or_else(|| Reply::status(404).body("not found"));
    let reply = reply.for_request(&recorded.headers);
    recorded.status = match reply.action {
        Action::Respond => reply.status,
        Action::Reset | Action::Raw(_) => 0,
    };
    recorded.body_bytes = match &reply.drip {
        None => reply.body.len(),
        Some(drip) => drip.chunk.len() * drip.count,
    };
    {
        let mut locked = lock(&state);
        if !locked.no_log {
            locked.requests.push(recorded);
        }
    }
    if !reply.delay.is_zero() {
        tokio::time::sleep(reply.delay).await;
    }
    if reply.action != Action::Respond {
        sabotage.set(reply.action.clone());
    }
    Ok(response_of(&reply))
}

/// The request as the log keeps it: host (from the URI or the `Host` header, lower case),
/// path and query, version, every header.
fn record(
    request: &hyper::Request<hyper::body::Incoming>,
    tls: bool,
    ends: Ends,
) -> RecordedRequest {
    let host = request
        .uri()
        .host()
        .map(str::to_owned)
        .or_else(|| {
            request
                .headers()
                .get(http::header::HOST)
                .and_then(|h| h.to_str().ok())
                .map(|h| strip_port(h).to_owned())
        })
        .unwrap_or_default()
        .to_ascii_lowercase();
    let path = request
        .uri()
        .path_and_query()
        .map_or_else(|| "/".to_owned(), |p| p.as_str().to_owned());
    RecordedRequest {
        at: Instant::now(),
        method: request.method().to_string(),
        host,
        path,
        version: format!("{:?}", request.version()),
        tls,
        headers: request
            .headers()
            .iter()
            .map(|(n, v)| {
                (
                    n.as_str().to_owned(),
                    String::from_utf8_lossy(v.as_bytes()).into_owned(),
                )
            })
            .collect(),
        local: ends.local,
        peer: ends.peer,
        status: 0,
        body_bytes: 0,
    }
}

/// Picks the reply to a request (over TLS or not, host, path): the route for this scheme,
/// else for any scheme (the next of its replies, the last repeating), else the first
/// generator that answers.
fn choose_reply(
    state: &Arc<Mutex<State>>,
    (tls, host, path): (bool, String, String),
) -> Option<Reply> {
    let mut state = lock(state);
    let key = if state
        .routes
        .contains_key(&(Some(tls), host.clone(), path.clone()))
    {
        (Some(tls), host, path)
    } else {
        (None, host, path)
    };
    match state.routes.get_mut(&key) {
        Some((replies, served)) => {
            let index = (*served).min(replies.len().saturating_sub(1));
            *served += 1;
            replies.get(index).cloned()
        }
        None => {
            let generators = state.generators.clone();
            drop(state);
            let (host, path) = (&key.1, &key.2);
            generators.iter().find_map(|g| g(host, path))
        }
    }
}

/// The response a reply describes: status, headers, and the body whole or dripped.
fn response_of(reply: &Reply) -> hyper::Response<Body> {
    let body = match &reply.drip {
        None => Body::Full(Some(Bytes::from(reply.body.clone()))),
        Some(drip) => {
            let (sender, receiver) = mpsc::channel(1);
            let drip = drip.clone();
            tokio::spawn(async move {
                for _ in 0..drip.count {
                    tokio::time::sleep(drip.every).await;
                    if sender.send(Bytes::from(drip.chunk.clone())).await.is_err() {
                        break; // the client went away
                    }
                }
            });
            Body::Channel(receiver)
        }
    };
    let mut response = hyper::Response::new(body);
    *response.status_mut() =
        http::StatusCode::from_u16(reply.status).unwrap_or(http::StatusCode::OK);
    for (name, value) in &reply.headers {
        if let (Ok(name), Ok(value)) = (
            http::HeaderName::from_bytes(name.as_bytes()),
            http::HeaderValue::from_str(value),
        ) {
            response.headers_mut().append(name, value);
        }
    }
    response
}

fn strip_port(host: &str) -> &str {
    if host.starts_with('[') {
        return host
            .split_once(']')
            .map_or(host, |(h, _)| &host[..h.len() + 1]);
    }
    host.rsplit_once(':').map_or(host, |(h, _)| h)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ports_are_stripped_from_hosts() {
        assert_eq!(strip_port("a.test:8080"), "a.test");
        assert_eq!(strip_port("a.test"), "a.test");
        assert_eq!(strip_port("[::1]:80"), "[::1]");
    }
}
