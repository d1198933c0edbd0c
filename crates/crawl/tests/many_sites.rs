//! Many sites behind each origin, every one with a robots.txt naming its sitemap, on hosts
//! without HTTPS: as the server sees it, no origin sits idle while it has work that is due,
//! and the crawl ends in the time its requests take. Finding out that a host has no HTTPS
//! (its first HTTPS connection fails) must not hold its origin, and its other sites, for a
//! back-off.

mod common;

use std::collections::BTreeMap;
use std::time::Duration;

use common::*;
use db::testing::TestDb;
use db::Backend;
use testweb::{MultiWeb, Reply};
use tokio::time::Instant;

const ADDRESSES: usize = 4;
const HOSTS_PER_ADDRESS: usize = 5;
const PAGES_PER_HOST: usize = 10;

fn host(i: usize) -> String {
    format!("site{i}.test")
}

/// Every host: robots.txt naming `/sitemap.xml`, which lists its pages; pages without links.
fn sitemapped_sites(web: &MultiWeb) {
    let port = web.port();
    web.generate(move |host, path| {
        if !host.starts_with("site") {
            return None;
        }
        if path == "/robots.txt" {
            return Some(Reply::robots_txt(&format!(
                "User-agent: *\nAllow: /\nSitemap: http://{host}:{port}/sitemap.xml\n"
            )));
        }
        if path == "/sitemap.xml" {
            let urls: String = (0..PAGES_PER_HOST)
                .map(|p| format!("<url><loc>http://{host}:{port}/p{p}.html</loc></url>"))
                .collect();
            return Some(
                Reply::ok()
                    .header("Content-Type", "application/xml")
                    .body(format!(
                        "<?xml version=\"1.0\"?><urlset xmlns=\"http://www.sitemaps.org/schemas/sitemap/0.9\">{urls}</urlset>"
                    )),
            );
        }
        let n: usize = path.strip_prefix("/p")?.strip_suffix(".html")?.parse().ok()?;
        (n < PAGES_PER_HOST).then(|| html(&format!("<p>page {n}</p>")))
    });
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn finding_hosts_without_https_never_holds_an_origin_with_due_work() {
    let db = TestDb::new(Backend::Sqlite).await;
    let web = MultiWeb::start(ADDRESSES).await;
    sitemapped_sites(&web);
    let names: Vec<String> = (0..ADDRESSES * HOSTS_PER_ADDRESS).map(host).collect();
    for name in &names {
        // Nothing listens for HTTPS: the crawler's first HTTPS connection to each host fails.
        web.reset_https(name);
    }
    let pins: Vec<(&str, usize)> = names
        .iter()
        .enumerate()
        .map(|(i, h)| (h.as_str(), i / HOSTS_PER_ADDRESS))
        .collect();
    let warc = tempfile::tempdir().unwrap();
    // As `jittybot crawl --pace 0s` runs: the default back-off (30 s) and lease.
    let mut c = crawl::crawler::CrawlConfig::new(warc.path());
    c.pacer.pace = Duration::ZERO;
    let seeds: Vec<String> = names.iter().map(|h| web.http_url(h, "/p0.html")).collect();
    let started = Instant::now();
    let (summary, _) = crawl(&db.target, fetcher(&web, &pins), c, &seeds).await;
    let took = started.elapsed();
    let log = web.requests();
    let pages = log.iter().filter(|r| r.path.starts_with("/p")).count();
    assert_eq!(pages, ADDRESSES * HOSTS_PER_ADDRESS * PAGES_PER_HOST);
    assert!(summary.fetched as usize >= pages);
    // Per address: the longest silence between two requests while that address still had
    // requests to come (its work was due all along: the pace is 0).
    let mut by_address: BTreeMap<String, Vec<Instant>> = BTreeMap::new();
    for r in &log {
        by_address
            .entry(r.local.unwrap().ip().to_string())
            .or_default()
            .push(r.at);
    }
    for (address, mut times) in by_address {
        times.sort();
        let gap = times
            .windows(2)
            .map(|w| w[1] - w[0])
            .max()
            .unwrap_or_default();
        eprintln!("{address}: {} requests, longest gap {gap:?}", times.len());
        assert!(
            gap < Duration::from_secs(2),
            "{address} sat idle for {gap:?} with work due"
        );
    }
    eprintln!("crawl took {took:?}");
    assert!(took < Duration::from_secs(10), "the crawl took {took:?}");
    db.cleanup().await;
}
