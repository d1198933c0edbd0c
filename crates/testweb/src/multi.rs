//! A test web on several loopback addresses: each address stands for one origin (one server
//! infrastructure), every address serves every site (by Host), and each address listens for
//! HTTP and HTTPS on ONE port shared by all addresses, telling them apart by the first byte
//! (a TLS handshake starts with 0x16). So `http://h:PORT/` and `https://h:PORT/` are the two
//! forms of one URL, as on a real host with ports 80 and 443, and a hosts file pins any name
//! to any address without changing its URLs.
//!
//! HTTPS certificates are made on demand, one leaf per host name (signed by the web's own
//! authority, [`MultiWeb::certificate_pem`]), unless [`MultiWeb::share_certificate`] puts
//! several names on one leaf (the same certificate: evidence of one origin). A host set with
//! [`MultiWeb::without_https`] refuses TLS handshakes (a host without working HTTPS).

use std::collections::{HashMap, HashSet};
use std::fmt;
use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::sync::{Arc, Mutex, PoisonError};

use rcgen::{BasicConstraints, CertificateParams, DnType, IsCa, Issuer, KeyPair};
use rustls::server::{ClientHello, ResolvesServerCert};
use rustls::sign::CertifiedKey;
use tokio::net::TcpListener;
use tokio::task::JoinHandle;

use crate::server::{lock, serve_conn, State};
use crate::{RecordedRequest, Reply, Site, TestWeb};

/// The highest number of addresses one web binds (127.0.0.2 ... 127.0.0.201).
pub const MAX_ADDRESSES: usize = 200;

/// A running multi-address test web. The servers stop when it is dropped.
pub struct MultiWeb {
    web: TestWeb,
    addresses: Vec<Ipv4Addr>,
    port: u16,
    certs: Arc<Certs>,
}

impl MultiWeb {
    /// Listen on `count` addresses, 127.0.0.2 upwards, all on one free port.
    ///
    /// # Panics
    /// If `count` is 0 or over [`MAX_ADDRESSES`], or no common port can be bound.
    pub async fn start(count: usize) -> MultiWeb {
        assert!(
            (1..=MAX_ADDRESSES).contains(&count),
            "1..={MAX_ADDRESSES} addresses"
        );
        let addresses: Vec<Ipv4Addr> = (0..count)
            .map(|i| Ipv4Addr::new(127, 0, 0, u8::try_from(i + 2).unwrap_or(2)))
            .collect();
        let (listeners, port) = bind_common_port(&addresses).await;
        let state = Arc::new(Mutex::new(State::default()));
        let certs = Arc::new(Certs::new());
        let mut config = rustls::ServerConfig::builder_with_provider(Arc::new(
            rustls::crypto::ring::default_provider(),
        ))
        .with_safe_default_protocol_versions()
        .expect("TLS versions")
        .with_no_client_auth()
        .with_cert_resolver(Arc::clone(&certs) as Arc<dyn ResolvesServerCert>);
        config.alpn_protocols = vec![b"h2".to_vec(), b"http/1.1".to_vec()];
        let acceptor = tokio_rustls::TlsAcceptor::from(Arc::new(config));
        let tasks: Vec<JoinHandle<()>> = listeners
            .into_iter()
            .map(|l| {
                tokio::spawn(serve_sniffing(
                    l,
                    acceptor.clone(),
                    Arc::clone(&state),
                    Arc::clone(&certs),
                ))
            })
            .collect();
        let web = TestWeb::from_parts(
            state,
            SocketAddr::new(IpAddr::V4(addresses[0]), port),
            certs.ca_pem.clone(),
            tasks,
        );
        MultiWeb {
            web,
            addresses,
            port,
            certs,
        }
    }

    /// The addresses, 127.0.0.2 upwards.
    pub fn addresses(&self) -> &[Ipv4Addr] {
        &self.addresses
    }

    /// The one port every address listens on, for HTTP and HTTPS.
    pub fn port(&self) -> u16 {
        self.port
    }

    /// `http://host:port/path`.
    pub fn http_url(&self, host: &str, path: &str) -> String {
        format!("http://{host}:{}{path}", self.port)
    }

    /// `https://host:port/path`.
    pub fn https_url(&self, host: &str, path: &str) -> String {
        format!("https://{host}:{}{path}", self.port)
    }

    /// The authority that signs every certificate (PEM): clients must trust it.
    pub fn certificate_pem(&self) -> &str {
        &self.certs.ca_pem
    }

    /// A hosts(5) file pinning each `(host, address index)` to its address.
    pub fn hosts_file(&self, hosts: &[(&str, usize)]) -> String {
        hosts
            .iter()
            .map(|(h, i)| format!("{} {h}\n", self.addresses[*i % self.addresses.len()]))
            .collect()
    }

    /// `--resolve HOST:PORT:ADDR` pins for `host` on address `index`.
    pub fn pin(&self, host: &str, index: usize) -> String {
        format!(
            "{host}:{}:{}",
            self.port,
            self.addresses[index % self.addresses.len()]
        )
    }

    /// Serve these host names with ONE certificate (call before their first handshake).
    pub fn share_certificate(&self, hosts: &[&str]) {
        let group: Vec<String> = hosts.iter().map(|h| h.to_ascii_lowercase()).collect();
        let mut groups = self.certs.lock_groups();
        for h in &group {
            groups.insert(h.clone(), group.clone());
        }
    }

    /// Make the certificates of `hosts` now, so a first handshake does not pay for minting
    /// one (timing tests measure request arrivals).
    pub fn prepare_certificates(&self, hosts: &[&str]) {
        for h in hosts {
            let name = h.to_ascii_lowercase();
            let names = self
                .certs
                .lock_groups()
                .get(&name)
                .cloned()
                .unwrap_or_else(|| vec![name]);
            let _ = self.certs.certified(names);
        }
    }

    /// Refuse TLS handshakes for `host`: it has no working HTTPS.
    pub fn without_https(&self, host: &str) {
        self.certs
            .no_tls
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .insert(host.to_ascii_lowercase());
    }

    /// Accept TLS handshakes for `host` again (after [`MultiWeb::without_https`]): its HTTPS
    /// works now.
    pub fn with_https(&self, host: &str) {
        self.certs
            .no_tls
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .remove(&host.to_ascii_lowercase());
    }

    /// Reset HTTPS connections to `host` before any answer, as a host with nothing
    /// listening for HTTPS: its connections fail at once (a reset, the form a refused
    /// connection takes on this web's one port), which a client may take for a transient
    /// failure, unlike [`MultiWeb::without_https`]'s refused handshake.
    pub fn reset_https(&self, host: &str) {
        self.certs
            .reset_tls
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .insert(host.to_ascii_lowercase());
    }

    /// A site (both schemes), as on [`TestWeb::site`].
    pub fn site(&self, host: &str) -> Site<'_> {
        self.web.site(host)
    }

    /// A site over plain HTTP only.
    pub fn http_site(&self, host: &str) -> Site<'_> {
        self.web.http_site(host)
    }

    /// A site over HTTPS only.
    pub fn https_site(&self, host: &str) -> Site<'_> {
        self.web.https_site(host)
    }

    /// Every request so far, in order of arrival.
    pub fn requests(&self) -> Vec<RecordedRequest> {
        self.web.requests()
    }

    /// The requests for one path of one site.
    pub fn requests_to(&self, host: &str, path: &str) -> Vec<RecordedRequest> {
        self.web.requests_to(host, path)
    }

    /// Forget the requests recorded so far.
    pub fn clear_requests(&self) {
        self.web.clear_requests();
    }

    /// Answer unrouted requests with a generator (see [`TestWeb::generate`]).
    pub fn generate(
        &self,
        generator: impl Fn(&str, &str) -> Option<Reply> + Send + Sync + 'static,
    ) {
        self.web.generate(generator);
    }

    /// Stop or resume recording requests.
    pub fn set_logging(&self, on: bool) {
        self.web.set_logging(on);
    }

    /// How many requests each address received, by address.
    pub fn requests_per_address(&self) -> HashMap<Ipv4Addr, usize> {
        let mut counts = HashMap::new();
        for r in lock(&self.web.state).requests.iter() {
            if let Some(SocketAddr::V4(a)) = r.local {
                *counts.entry(*a.ip()).or_insert(0) += 1;
            }
        }
        counts
    }
}

async fn bind_common_port(addresses: &[Ipv4Addr]) -> (Vec<TcpListener>, u16) {
    for _ in 0..50 {
        let first = TcpListener::bind((addresses[0], 0))
            .await
            .expect("bind a loopback address");
        let port = first.local_addr().expect("local address").port();
        let mut listeners = vec![first];
        for a in &addresses[1..] {
            match TcpListener::bind((*a, port)).await {
                Ok(l) => listeners.push(l),
                Err(_) => break,
            }
        }
        if listeners.len() == addresses.len() {
            return (listeners, port);
        }
    }
    panic!(
        "no port free on all of {} loopback addresses",
        addresses.len()
    );
}

async fn serve_sniffing(
    listener: TcpListener,
    tls: tokio_rustls::TlsAcceptor,
    state: Arc<Mutex<State>>,
    certs: Arc<Certs>,
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
        let (tls, state, certs) = (tls.clone(), Arc::clone(&state), Arc::clone(&certs));
        tokio::spawn(async move {
            let mut first = [0u8; 1];
            let is_tls = matches!(tcp.peek(&mut first).await, Ok(1) if first[0] == 0x16);
            if is_tls && certs.resets(&tcp).await {
                // Dropped with a zero linger: the client sees a reset.
                let _ = tcp.set_zero_linger();
                return;
            }
            serve_conn(tcp, is_tls.then_some(tls), state).await;
        });
    }
}

/// Certificates made on demand per host name (or per shared group).
struct Certs {
    ca_pem: String,
    issuer: Issuer<'static, KeyPair>,
    groups: Mutex<HashMap<String, Vec<String>>>,
    made: Mutex<HashMap<Vec<String>, Arc<CertifiedKey>>>,
    no_tls: Mutex<HashSet<String>>,
    reset_tls: Mutex<HashSet<String>>,
}

impl Certs {
    /// Whether the TLS client hello waiting on `tcp` names a host set with
    /// [`MultiWeb::reset_https`] (its server name is read from the bytes as sent).
    async fn resets(&self, tcp: &tokio::net::TcpStream) -> bool {
        let names: Vec<String> = self
            .reset_tls
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .iter()
            .cloned()
            .collect();
        if names.is_empty() {
            return false;
        }
        let mut hello = [0u8; 2048];
        let Ok(n) = tcp.peek(&mut hello).await else {
            return false;
        };
        let hello = &hello[..n];
        // The server name extension carries the name preceded by its two-byte length.
        names.iter().any(|name| {
            let mut needle = u16::try_from(name.len())
                .unwrap_or(u16::MAX)
                .to_be_bytes()
                .to_vec();
            needle.extend_from_slice(name.as_bytes());
            hello.windows(needle.len()).any(|w| w == needle.as_slice())
        })
    }
}

impl fmt::Debug for Certs {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Certs")
    }
}

impl Certs {
    fn new() -> Certs {
        let mut params = CertificateParams::new(Vec::<String>::new()).expect("CA parameters");
        params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
        params
            .distinguished_name
            .push(DnType::CommonName, "testweb multi CA");
        let key = KeyPair::generate().expect("CA key");
        let cert = params.self_signed(&key).expect("CA certificate");
        Certs {
            ca_pem: cert.pem(),
            issuer: Issuer::new(params, key),
            groups: Mutex::new(HashMap::new()),
            made: Mutex::new(HashMap::new()),
            no_tls: Mutex::new(HashSet::new()),
            reset_tls: Mutex::new(HashSet::new()),
        }
    }

    fn lock_groups(&self) -> std::sync::MutexGuard<'_, HashMap<String, Vec<String>>> {
        self.groups.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn certified(&self, names: Vec<String>) -> Option<Arc<CertifiedKey>> {
        let mut made = self.made.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(k) = made.get(&names) {
            return Some(Arc::clone(k));
        }
        let key = KeyPair::generate().ok()?;
        let cert = CertificateParams::new(names.clone())
            .ok()?
            .signed_by(&key, &self.issuer)
            .ok()?;
        let der = rustls::pki_types::PrivateKeyDer::try_from(key.serialize_der()).ok()?;
        let signing = rustls::crypto::ring::sign::any_supported_type(&der).ok()?;
        let certified = Arc::new(CertifiedKey::new(vec![cert.der().clone()], signing));
        made.insert(names, Arc::clone(&certified));
        Some(certified)
    }
}

impl ResolvesServerCert for Certs {
    fn resolve(&self, hello: ClientHello<'_>) -> Option<Arc<CertifiedKey>> {
        let name = hello.server_name()?.to_ascii_lowercase();
        if self
            .no_tls
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .contains(&name)
        {
            return None;
        }
        let names = self
            .lock_groups()
            .get(&name)
            .cloned()
            .unwrap_or_else(|| vec![name]);
        self.certified(names)
    }
}
