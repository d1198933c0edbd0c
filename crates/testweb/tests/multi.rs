//! The multi-address web: one port, HTTP and HTTPS by sniffing, origins by address,
//! certificates per host or shared, hosts without HTTPS, generated sites.

use std::net::SocketAddr;
use std::sync::Arc;

use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, ServerName};
use testweb::{linked_pages, LinkedPages, MultiWeb, Reply};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

async fn plain_get(addr: SocketAddr, host: &str, path: &str) -> String {
    let mut s = TcpStream::connect(addr).await.unwrap();
    s.write_all(
        format!("GET {path} HTTP/1.1\r\nHost: {host}\r\nConnection: close\r\n\r\n").as_bytes(),
    )
    .await
    .unwrap();
    let mut out = String::new();
    s.read_to_string(&mut out).await.unwrap();
    out
}

/// A TLS handshake trusting the web's authority; returns the leaf certificate and a response.
async fn tls_get(
    web: &MultiWeb,
    addr: SocketAddr,
    host: &str,
) -> Result<(Vec<u8>, String), std::io::Error> {
    let mut roots = rustls::RootCertStore::empty();
    roots
        .add(CertificateDer::from_pem_slice(web.certificate_pem().as_bytes()).unwrap())
        .unwrap();
    let config = rustls::ClientConfig::builder_with_provider(Arc::new(
        rustls::crypto::ring::default_provider(),
    ))
    .with_safe_default_protocol_versions()
    .unwrap()
    .with_root_certificates(roots)
    .with_no_client_auth();
    let connector = tokio_rustls::TlsConnector::from(Arc::new(config));
    let tcp = TcpStream::connect(addr).await?;
    let mut tls = connector
        .connect(ServerName::try_from(host.to_string()).unwrap(), tcp)
        .await?;
    let leaf = tls.get_ref().1.peer_certificates().unwrap()[0].to_vec();
    tls.write_all(
        format!("GET / HTTP/1.1\r\nHost: {host}\r\nConnection: close\r\n\r\n").as_bytes(),
    )
    .await?;
    let mut out = String::new();
    let _ = tls.read_to_string(&mut out).await;
    Ok((leaf, out))
}

#[tokio::test]
async fn addresses_share_a_port_and_record_where_requests_arrive() {
    let web = MultiWeb::start(3).await;
    web.site("a.test").path("/").respond(Reply::ok().body("A"));
    let addrs: Vec<SocketAddr> = web
        .addresses()
        .iter()
        .map(|a| SocketAddr::from((*a, web.port())))
        .collect();
    assert!(plain_get(addrs[0], "a.test", "/").await.ends_with("A"));
    assert!(plain_get(addrs[2], "a.test", "/").await.ends_with("A"));
    let seen: Vec<_> = web.requests().iter().map(|r| r.local.unwrap()).collect();
    assert_eq!(seen, [addrs[0], addrs[2]]);
    assert_eq!(web.requests_per_address()[&web.addresses()[2]], 1);
    assert_eq!(web.hosts_file(&[("a.test", 1)]), "127.0.0.3 a.test\n");
    assert_eq!(
        web.pin("a.test", 0),
        format!("a.test:{}:127.0.0.2", web.port())
    );
}

#[tokio::test]
async fn https_on_the_same_port_with_per_host_or_shared_certificates() {
    let web = MultiWeb::start(2).await;
    web.site("x.test").path("/").respond(Reply::ok().body("X"));
    web.share_certificate(&["s1.test", "s2.test"]);
    web.without_https("plain.test");
    let addr = SocketAddr::from((web.addresses()[1], web.port()));
    let (x, body) = tls_get(&web, addr, "x.test").await.unwrap();
    assert!(body.ends_with("X"));
    assert!(web.requests()[0].tls);
    let (y, _) = tls_get(&web, addr, "y.test").await.unwrap();
    let (s1, _) = tls_get(&web, addr, "s1.test").await.unwrap();
    let (s2, _) = tls_get(&web, addr, "s2.test").await.unwrap();
    assert_ne!(x, y, "one leaf per host");
    assert_eq!(s1, s2, "a shared certificate");
    assert!(tls_get(&web, addr, "plain.test").await.is_err());
    assert!(
        plain_get(addr, "x.test", "/").await.ends_with("X"),
        "HTTP on the same port"
    );
}

#[tokio::test]
async fn generated_linked_pages() {
    let web = MultiWeb::start(1).await;
    web.generate(linked_pages(LinkedPages {
        host_suffix: ".bench.test".into(),
        pages: 10,
        page_bytes: 2000,
        size_spread: 0,
        links_per_page: 4,
    }));
    web.set_logging(false);
    let addr = SocketAddr::from((web.addresses()[0], web.port()));
    let page = plain_get(addr, "h1.bench.test", "/p3.html").await;
    assert!(page.contains("href=\"/p4.html\""), "{page}");
    assert_eq!(page.matches("<a href").count(), 4);
    let body = page.split("\r\n\r\n").nth(1).unwrap();
    assert!((1900..=2100).contains(&body.len()), "{}", body.len());
    assert!(plain_get(addr, "h1.bench.test", "/robots.txt")
        .await
        .contains("Allow: /"));
    assert!(plain_get(addr, "h1.bench.test", "/p10.html")
        .await
        .starts_with("HTTP/1.1 404"));
    assert!(plain_get(addr, "other.test", "/p1.html")
        .await
        .starts_with("HTTP/1.1 404"));
    assert!(web.requests().is_empty(), "logging off");
}
