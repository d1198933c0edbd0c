//! The polite pipeline's own cost per request, on the scripted web (no network, no server):
//! robots.txt decision from the cache, pacer turn, exact headers, redirect chain, decoding a
//! 30 KB gzip body. Run: `cargo run --release -p fetch --features testing --example overhead`.

use robots::ProductTokens;
use std::io::Write;
use std::sync::Arc;
use std::time::{Duration, Instant};

use fetch::testing::{Reply, ScriptedWeb};
use fetch::{
    Operation, Outcome, Pacer, PacerConfig, Policy, Polite, PoliteRequest, Request, RobotsCache,
    ScopeOrigins,
};

const REQUESTS: usize = 20_000;
const HOSTS: usize = 100;

fn gzip(body: &[u8]) -> Vec<u8> {
    let mut encoder = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    encoder.write_all(body).expect("writing to a Vec");
    encoder.finish().expect("writing to a Vec")
}

/// The web: `HOSTS` hosts with a robots.txt each and `REQUESTS` pages of 30 KB, gzipped.
fn scripted_web() -> Arc<ScriptedWeb> {
    let web = ScriptedWeb::new();
    let page: Vec<u8> = (0..30_000)
        .map(|i| b"<a href=/x>link</a> "[i % 20])
        .collect();
    let compressed = gzip(&page);
    for host in 0..HOSTS {
        web.route(
            &format!("https://h{host}.test/robots.txt"),
            Reply::robots_txt("User-agent: *\nDisallow: /private\n"),
        );
        for path in 0..REQUESTS / HOSTS {
            web.route(
                &format!("https://h{host}.test/p{path}"),
                Reply::ok()
                    .header("Content-Encoding", "gzip")
                    .body(&compressed),
            );
        }
    }
    web
}

fn main() {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("a runtime");
    let web = scripted_web();
    let polite = Polite::new(
        RobotsCache::new(web.fetcher(), Policy::Cached),
        Pacer::new(PacerConfig {
            pace: Duration::ZERO,
            ..PacerConfig::default()
        }),
        Arc::new(ScopeOrigins),
    );
    let operation = Operation::within(Duration::from_secs(3600));
    let started = Instant::now();
    let bytes = runtime.block_on(async {
        let mut bytes = 0usize;
        let tokens = ProductTokens::JITTYBOT;
        for i in 0..REQUESTS {
            let url = format!("https://h{}.test/p{}", i % HOSTS, i / HOSTS)
                .parse()
                .expect("a URL");
            let request = PoliteRequest::new(Request::get(url), &tokens);
            if let Outcome::Fetched(fetched) = polite.fetch(request, &operation).await.outcome {
                bytes += fetched
                    .body
                    .read_to_end(None)
                    .await
                    .expect("a body")
                    .bytes
                    .len();
            }
        }
        bytes
    });
    let elapsed = started.elapsed();
    println!(
        "{REQUESTS} polite requests over {HOSTS} hosts, {} MB decoded: {:.1} µs per request ({:.0} requests/s, one core)",
        bytes / 1_000_000,
        elapsed.as_secs_f64() * 1e6 / REQUESTS as f64,
        REQUESTS as f64 / elapsed.as_secs_f64()
    );
}
