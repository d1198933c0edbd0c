//! The real HTTP client behind the seam: reqwest/hyper with rustls (ring), HTTP/1.1 and
//! HTTP/2, every hop's addresses resolved and checked before connecting.

use std::sync::Arc;

use futures_util::stream;
use url::Url;

use crate::address::AddressPolicy;
use crate::config::{
    FetchConfig, IDLE_CONNECTIONS_PER_HOST, IDLE_CONNECTION_TIMEOUT, MAX_HEADER_BYTES,
    MAX_RESPONSE_HEADERS,
};
use crate::error::{Cause, FetchError, TimeoutPhase};
use crate::http::{
    BoxFuture, CertificateDigest, HopRequest, HopResponse, HttpClient, Method, RawBody,
    ResponseHead,
};
use crate::resolve::{ClientResolver, Resolver};

/// Why a client could not be built.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum BuildError {
    /// An extra root certificate was not valid PEM.
    #[error("invalid root certificate")]
    Certificate(#[source] Cause),
    /// The TLS or HTTP client could not be set up.
    #[error("cannot set up the HTTP client")]
    Client(#[source] Cause),
}

/// The real client: reqwest over hyper and rustls. Redirects, decompression, retries, cookies
/// and proxies are all off: this is one hop, bytes as received.
pub struct ReqwestClient {
    client: reqwest::Client,
    resolver: Arc<Resolver>,
}

impl ReqwestClient {
    /// Builds the client for `config` (address policy, pins, trusted roots, connect limit).
    pub fn new(config: &FetchConfig) -> Result<ReqwestClient, BuildError> {
        let resolver = Arc::new(Resolver::new(
            AddressPolicy {
                allow_private_addresses: config.allow_private_addresses,
                allowed_addresses: config.allowed_addresses.clone(),
            },
            config.resolve.clone(),
        ));
        let client = reqwest::Client::builder()
            .tls_backend_preconfigured(tls_config(config)?)
            .tls_info(true)
            // Redirects are followed (and checked) above the seam, hop by hop.
            .redirect(reqwest::redirect::Policy::none())
            .retry(reqwest::retry::never())
            // A proxy would connect on our behalf and bypass the address checks.
            .no_proxy()
            .dns_resolver(Arc::new(ClientResolver(Arc::clone(&resolver))))
            .connect_timeout(config.timeouts.connect)
            .pool_idle_timeout(IDLE_CONNECTION_TIMEOUT)
            .pool_max_idle_per_host(IDLE_CONNECTIONS_PER_HOST)
            .referer(false)
            .http1_max_headers(MAX_RESPONSE_HEADERS)
            .http2_max_header_list_size(MAX_HEADER_BYTES as u32)
            .build()
            .map_err(|e| BuildError::Client(Cause::new(e)))?;
        Ok(ReqwestClient { client, resolver })
    }

    async fn send_checked(&self, request: HopRequest) -> Result<HopResponse, FetchError> {
        let (host, port) = host_and_port(&request.url)?;
        // Resolved and checked on every hop: a redirect cannot lead into a private network,
        // and the connection can only use the addresses checked here.
        let addresses = self.resolver.resolve_checked(&host, Some(port)).await?;
        let _approval = self.resolver.approve(&host, addresses);
        let mut headers = request.headers.clone();
        // hyper writes Host itself (HTTP/1.1) or sends :authority (HTTP/2), from the URL,
        // exactly as `HopRequest::host_header` computes it.
        headers.remove(http::header::HOST);
        let response = self
            .client
            .request(request.method.as_http(), request.url.clone())
            .headers(headers)
            .send()
            .await
            .map_err(|e| map_error(&e, &host))?;
        // hyper bounds HTTP/1.1 heads by its read buffer (about 400 KiB), h2 by the header
        // list size we set; one documented bound for both versions is checked here.
        within_header_bytes(response.headers(), &host)?;
        let tls_leaf_sha256 = response
            .extensions()
            .get::<reqwest::tls::TlsInfo>()
            .and_then(|info| info.peer_certificate())
            .map(CertificateDigest::of);
        let head = ResponseHead {
            status: response.status(),
            version: response.version(),
            headers: response.headers().clone(),
            remote_addr: response.remote_addr(),
            tls_leaf_sha256,
        };
        let body: RawBody = match request.method {
            Method::Head => Box::pin(stream::empty()),
            Method::Get => Box::pin(stream::unfold(Some((response, host)), |state| async move {
                let (mut response, host) = state?;
                match response.chunk().await {
                    Ok(Some(bytes)) => Some((Ok(bytes), Some((response, host)))),
                    Ok(None) => {
                        // hyper hands the connection back to its pool from another task,
                        // once the connection has seen the body end; a turn for that task
                        // before the caller's next request to this host lets the request
                        // find it (the benchmark crawl opened 7 connections per host
                        // without this turn and 1.03 with it, at one idle connection per host).
                        drop(response);
                        tokio::task::yield_now().await;
                        None
                    }
                    Err(error) => Some((Err(map_error(&error, &host)), None)),
                }
            })),
        };
        Ok(HopResponse { head, body })
    }
}

impl HttpClient for ReqwestClient {
    fn resolve<'a>(
        &'a self,
        host: &'a str,
        port: u16,
    ) -> BoxFuture<'a, Result<Vec<std::net::IpAddr>, FetchError>> {
        Box::pin(self.resolver.resolve_checked(host, Some(port)))
    }

    fn send(&self, request: HopRequest) -> BoxFuture<'_, Result<HopResponse, FetchError>> {
        Box::pin(self.send_checked(request))
    }
}

/// The size of `headers` as sent over HTTP/1.1: each line's name and value, plus `: ` and
/// CRLF.
fn header_bytes(headers: &http::HeaderMap) -> usize {
    headers
        .iter()
        .map(|(name, value)| name.as_str().len() + value.len() + 4)
        .sum()
}

/// Refuses a response whose headers are larger than [`MAX_HEADER_BYTES`], as malformed.
fn within_header_bytes(headers: &http::HeaderMap, host: &str) -> Result<(), FetchError> {
    let bytes = header_bytes(headers);
    if bytes <= MAX_HEADER_BYTES {
        return Ok(());
    }
    Err(FetchError::MalformedResponse {
        host: host.to_owned(),
        source: Cause::message(format!(
            "response headers of {bytes} bytes, over the limit of {MAX_HEADER_BYTES}"
        )),
    })
}

/// The host (lower case punycode, IPv6 in brackets) and port of a fetchable URL.
fn host_and_port(url: &Url) -> Result<(String, u16), FetchError> {
    let scope = crate::scope::Scope::of(url)?;
    Ok((scope.host().to_owned(), scope.port()))
}

/// Turns a client error into a typed [`FetchError`] by looking through its causes.
fn map_error(error: &reqwest::Error, host: &str) -> FetchError {
    let cause = || Cause::message(error_chain(error));
    let mut current: Option<&(dyn std::error::Error + 'static)> = Some(error);
    while let Some(this) = current {
        if let Some(fetch_error) = this.downcast_ref::<FetchError>() {
            return fetch_error.clone();
        }
        if this.downcast_ref::<rustls::Error>().is_some() {
            return FetchError::Tls {
                host: host.to_owned(),
                source: cause(),
            };
        }
        if let Some(io) = this.downcast_ref::<std::io::Error>() {
            if let Some(mapped) = from_io(io, host, cause) {
                return mapped;
            }
            // An I/O error's `source()` skips the error it wraps (TLS errors arrive wrapped
            // twice), so descend explicitly.
            if let Some(inner) = io.get_ref() {
                current = Some(inner);
                continue;
            }
        }
        if let Some(mapped) = this
            .downcast_ref::<hyper::Error>()
            .and_then(|hyper_error| from_hyper(hyper_error, host, cause))
        {
            return mapped;
        }
        if let Some(mapped) = this
            .downcast_ref::<h2::Error>()
            .and_then(|h2_error| from_h2(h2_error, host, cause))
        {
            return mapped;
        }
        current = this.source();
    }
    if error.is_timeout() {
        return FetchError::timeout(if error.is_connect() {
            TimeoutPhase::Connect
        } else {
            TimeoutPhase::FirstByte
        });
    }
    if error.is_decode() || error.is_body() {
        return FetchError::MalformedResponse {
            host: host.to_owned(),
            source: cause(),
        };
    }
    FetchError::Other { source: cause() }
}

/// The failure an I/O error in the chain stands for, if its kind says.
fn from_io(io: &std::io::Error, host: &str, cause: impl Fn() -> Cause) -> Option<FetchError> {
    use std::io::ErrorKind::*;
    let host = host.to_owned();
    Some(match io.kind() {
        ConnectionRefused => FetchError::ConnectRefused {
            host,
            source: cause(),
        },
        ConnectionReset | ConnectionAborted | BrokenPipe | UnexpectedEof => {
            FetchError::ConnectionReset {
                host,
                source: cause(),
            }
        }
        TimedOut => FetchError::timeout(TimeoutPhase::Connect),
        _ => return None,
    })
}

/// The failure a hyper error in the chain stands for: not HTTP, or a message cut short.
fn from_hyper(error: &hyper::Error, host: &str, cause: impl Fn() -> Cause) -> Option<FetchError> {
    let host = host.to_owned();
    if error.is_parse() || error.is_parse_status() {
        return Some(FetchError::MalformedResponse {
            host,
            source: cause(),
        });
    }
    error
        .is_incomplete_message()
        .then(|| FetchError::ConnectionReset {
            host,
            source: cause(),
        })
}

/// The failure an HTTP/2 error stands for, when its reason says the server broke the
/// protocol (a header list over [`MAX_HEADER_BYTES`] among them): a malformed response, not
/// worth retrying.
fn from_h2(error: &h2::Error, host: &str, cause: impl Fn() -> Cause) -> Option<FetchError> {
    use h2::Reason;
    matches!(
        error.reason(),
        Some(Reason::PROTOCOL_ERROR | Reason::FRAME_SIZE_ERROR | Reason::COMPRESSION_ERROR)
    )
    .then(|| FetchError::MalformedResponse {
        host: host.to_owned(),
        source: cause(),
    })
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
            let certificate = certificate.map_err(|e| BuildError::Certificate(Cause::new(e)))?;
            roots
                .add(certificate)
                .map_err(|e| BuildError::Certificate(Cause::new(e)))?;
        }
    }
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let mut tls = rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(|e| BuildError::Client(Cause::new(e)))?
        .with_root_certificates(roots)
        .with_no_client_auth();
    // The preconfigured TLS config is used as is, so ALPN must be set here for HTTP/2.
    tls.alpn_protocols = if config.offer_http2 {
        vec![b"h2".to_vec(), b"http/1.1".to_vec()]
    } else {
        vec![b"http/1.1".to_vec()]
    };
    Ok(tls)
}
