//! The attacks the service must hold against, together, against a running server, for a
//! minute, while a normal visitor loads the home page and the ranking: prints that visitor's
//! latency (p50, p99, max). The server (`jittybot serve`'s service and pages) runs in this
//! process on threads and a runtime of its own, on a real socket, on a fresh SQLite store,
//! fetching from loopback test sites that answer only after 40 s.
//!
//! ```sh
//! cargo run --release -p jittybot --example abuse [SECONDS]
//! ```
//!
//! The attacks, all at once:
//! - four clients pasting the costliest 500 KiB file to audit, again and again;
//! - 1,500 connections that never finish their request head, reopened when closed, from 30
//!   addresses;
//! - twenty clients each queueing analyses of slow sites as fast as they are allowed;
//! - cross-site posts.

use std::net::{Ipv4Addr, SocketAddr};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use service::{ServeOptions, Service, ServiceConfig, Store, SystemClock};
use testweb::{Reply, TestWeb};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpSocket;

#[path = "../../audit/tests/cost/shapes.rs"]
#[allow(dead_code)]
mod shapes;

/// One request from the loopback address `source`: the status, `None` without an answer in
/// `deadline`.
async fn request(
    source: Ipv4Addr,
    addr: SocketAddr,
    head: &str,
    body: &[u8],
    deadline: Duration,
) -> Option<u16> {
    let exchange = async {
        let socket = TcpSocket::new_v4().ok()?;
        socket.bind(SocketAddr::from((source, 0))).ok()?;
        let mut stream = socket.connect(addr).await.ok()?;
        stream.write_all(head.as_bytes()).await.ok()?;
        stream.write_all(body).await.ok()?;
        let mut answer = Vec::new();
        stream.read_to_end(&mut answer).await.ok()?;
        String::from_utf8_lossy(&answer)
            .split(' ')
            .nth(1)?
            .parse()
            .ok()
    };
    tokio::time::timeout(deadline, exchange)
        .await
        .ok()
        .flatten()
}

fn post(addr: SocketAddr, path: &str, extra: &str, len: usize) -> String {
    format!(
        "POST {path} HTTP/1.1\r\nHost: {addr}\r\n{extra}Content-Length: {len}\r\n\
         Connection: close\r\n\r\n"
    )
}

async fn pastes(addr: SocketAddr, client: Ipv4Addr, stop: Arc<AtomicBool>, sent: Arc<AtomicU64>) {
    let Some(shape) = shapes::SHAPES
        .iter()
        .find(|s| s.name == "distinct-group-sets")
    else {
        return;
    };
    let body = (shape.build)(shapes::SIZE);
    while !stop.load(Ordering::Relaxed) {
        let head = post(
            addr,
            "/api/paste",
            "Content-Type: text/plain\r\n",
            body.len(),
        );
        let _ = request(client, addr, &head, &body, Duration::from_secs(30)).await;
        sent.fetch_add(1, Ordering::Relaxed);
    }
}

async fn slow_connections(addr: SocketAddr, stop: Arc<AtomicBool>, opened: Arc<AtomicU64>) {
    let mut tasks = tokio::task::JoinSet::new();
    for n in 0..1_500u32 {
        let source = Ipv4Addr::new(127, 0, 1, 2 + (n % 30) as u8);
        let (stop, opened) = (stop.clone(), opened.clone());
        tasks.spawn(async move {
            while !stop.load(Ordering::Relaxed) {
                let Ok(socket) = TcpSocket::new_v4() else {
                    return;
                };
                if socket.bind(SocketAddr::from((source, 0))).is_err() {
                    return;
                }
                let Ok(mut stream) = socket.connect(addr).await else {
                    tokio::time::sleep(Duration::from_millis(100)).await;
                    continue;
                };
                opened.fetch_add(1, Ordering::Relaxed);
                let _ = stream.write_all(b"GET / HTTP/1.1\r\nHost: x\r\n").await;
                let mut sink = Vec::new();
                let _ =
                    tokio::time::timeout(Duration::from_secs(60), stream.read_to_end(&mut sink))
                        .await;
            }
        });
    }
    while tasks.join_next().await.is_some() {}
}

async fn analyses(
    addr: SocketAddr,
    web: Arc<TestWeb>,
    client: Ipv4Addr,
    stop: Arc<AtomicBool>,
    sent: Arc<AtomicU64>,
) {
    let mut n = 0u64;
    while !stop.load(Ordering::Relaxed) {
        n += 1;
        let url = web.http_url(&format!("slow{}.test", n % 20), &format!("/{client}/{n}"));
        let body = format!(r#"{{"url": "{url}"}}"#);
        let head = post(
            addr,
            "/api/analyze",
            "Content-Type: application/json\r\n",
            body.len(),
        );
        let _ = request(
            client,
            addr,
            &head,
            body.as_bytes(),
            Duration::from_secs(30),
        )
        .await;
        sent.fetch_add(1, Ordering::Relaxed);
        // Also a cross-site post, refused.
        let head = post(
            addr,
            "/api/analyze",
            "Content-Type: application/json\r\nSec-Fetch-Site: cross-site\r\n",
            body.len(),
        );
        let _ = request(
            client,
            addr,
            &head,
            body.as_bytes(),
            Duration::from_secs(30),
        )
        .await;
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

fn percentile(sorted: &[Duration], p: f64) -> Duration {
    let index = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted.get(index).copied().unwrap_or_default()
}

/// The service (API and pages) on its own runtime and threads, as a separate server would be.
fn serve_apart(web: &TestWeb, dir: &std::path::Path) -> Result<SocketAddr, String> {
    let pins: Vec<String> = (0..20)
        .flat_map(|n| web.pins(&format!("slow{n}.test")))
        .collect();
    let dir = dir.to_owned();
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let runtime = match tokio::runtime::Builder::new_multi_thread()
            .enable_all()
            .build()
        {
            Ok(runtime) => runtime,
            Err(error) => {
                let _ = tx.send(Err(error.to_string()));
                return;
            }
        };
        runtime.block_on(async move {
            match serve(&pins, &dir).await {
                Ok((addr, server)) => {
                    let _ = tx.send(Ok(addr));
                    let _ = server.await;
                }
                Err(error) => {
                    let _ = tx.send(Err(error));
                }
            }
        });
    });
    rx.recv().map_err(|e| e.to_string())?
}

async fn serve(
    pins: &[String],
    dir: &std::path::Path,
) -> Result<(SocketAddr, tokio::task::JoinHandle<std::io::Result<()>>), String> {
    let target: db::DbTarget = dir
        .join("abuse.sqlite")
        .to_str()
        .ok_or("path")?
        .parse()
        .map_err(|e| format!("{e}"))?;
    let store = Store::open(&target).await.map_err(|e| e.to_string())?;
    let mut config = fetch::FetchConfig::new("RobotsTxtParser", "http://service.test/bot");
    config.allow_private_addresses = true;
    for pin in pins {
        config
            .resolve
            .push(pin.parse().map_err(|e| format!("{e}"))?);
    }
    let fetcher = fetch::Fetcher::new(config).map_err(|e| e.to_string())?;
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .map_err(|e| e.to_string())?;
    let addr = listener.local_addr().map_err(|e| e.to_string())?;
    let public = format!("http://{addr}/")
        .parse()
        .map_err(|e| format!("{e}"))?;
    let service = Service::new(
        store,
        fetcher,
        ServiceConfig::new(public),
        Arc::new(SystemClock),
    );
    let app = service::router(service.clone()).merge(site::router(service.clone()));
    let options = ServeOptions {
        scheduler: false,
        maintenance: false,
    };
    let server = tokio::spawn(service::serve(
        service,
        app,
        listener,
        options,
        std::future::pending(),
    ));
    Ok((addr, server))
}

#[tokio::main]
async fn main() -> Result<(), String> {
    let seconds: u64 = std::env::args()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(60);
    let limit = service::connections::raise_fd_limit().map_err(|e| e.to_string())?;
    println!("file limit {limit:?}");
    let web = Arc::new(TestWeb::start().await);
    for n in 0..20 {
        let host = format!("slow{n}.test");
        web.site(&host)
            .path("/robots.txt")
            .respond(Reply::robots_txt("User-agent: *\nAllow: /\n").delay(Duration::from_secs(40)));
    }
    let dir = std::env::temp_dir().join(format!("abuse-{}", std::process::id()));
    std::fs::create_dir_all(&dir).map_err(|e| e.to_string())?;
    let addr = serve_apart(&web, &dir)?;
    let stop = Arc::new(AtomicBool::new(false));
    let (pasted, opened, queued) = (
        Arc::new(AtomicU64::new(0)),
        Arc::new(AtomicU64::new(0)),
        Arc::new(AtomicU64::new(0)),
    );
    for n in 0..4u8 {
        tokio::spawn(pastes(
            addr,
            Ipv4Addr::new(127, 0, 2, 2 + n),
            stop.clone(),
            pasted.clone(),
        ));
    }
    tokio::spawn(slow_connections(addr, stop.clone(), opened.clone()));
    for n in 0..20u8 {
        tokio::spawn(analyses(
            addr,
            web.clone(),
            Ipv4Addr::new(127, 0, 3, 2 + n),
            stop.clone(),
            queued.clone(),
        ));
    }
    let visitor = Ipv4Addr::new(127, 0, 0, 1);
    let started = Instant::now();
    let (mut latencies, mut failed) = (Vec::new(), 0);
    while started.elapsed() < Duration::from_secs(seconds) {
        for path in ["/", "/api/ranking"] {
            let head = format!("GET {path} HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n\r\n");
            let asked = Instant::now();
            match request(visitor, addr, &head, b"", Duration::from_secs(30)).await {
                Some(200) => latencies.push(asked.elapsed()),
                _ => failed += 1,
            }
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    stop.store(true, Ordering::Relaxed);
    latencies.sort();
    println!(
        "{} s of attacks: {} pastes, {} slow connections opened, {} analyses asked for",
        seconds,
        pasted.load(Ordering::Relaxed),
        opened.load(Ordering::Relaxed),
        queued.load(Ordering::Relaxed)
    );
    println!(
        "normal requests (GET / and /api/ranking): {} answered, {failed} failed; p50 {:?}, p99 {:?}, max {:?}",
        latencies.len(),
        percentile(&latencies, 0.5),
        percentile(&latencies, 0.99),
        latencies.last().copied().unwrap_or_default()
    );
    let _ = std::fs::remove_dir_all(&dir);
    std::process::exit(0);
}
