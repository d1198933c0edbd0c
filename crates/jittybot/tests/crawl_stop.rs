//! Stopping `jittybot crawl` with SIGINT or SIGTERM, as the server sees it: the requests
//! under way finish, nothing new starts, the process exits within seconds (no wait for a
//! lease or a turn to run out), and `crawl-status` counts what the server saw.

mod common;

use std::time::Duration;

use common::crawl::{crawl_args, crawl_db, spawn};
use common::{jittybot, stdout};
use testweb::{MultiWeb, Reply};
use tokio::time::Instant;

const HOSTS: [&str; 4] = ["a.stop.test", "b.stop.test", "c.stop.test", "d.stop.test"];
const PAGES: usize = 40;
/// Each page takes this long to answer: a stop lands with requests under way.
const PAGE_DELAY: Duration = Duration::from_millis(250);

/// Every host: robots.txt naming its sitemap, the sitemap listing its pages, slow pages.
fn slow_sites(web: &MultiWeb) {
    let port = web.port();
    web.generate(move |host, path| {
        if !host.ends_with(".stop.test") {
            return None;
        }
        if path == "/robots.txt" {
            return Some(Reply::robots_txt(&format!(
                "User-agent: *\nAllow: /\nSitemap: https://{host}:{port}/sitemap.xml\n"
            )));
        }
        if path == "/sitemap.xml" {
            let urls: String = (0..PAGES)
                .map(|p| format!("<url><loc>https://{host}:{port}/p{p}.html</loc></url>"))
                .collect();
            return Some(
                Reply::ok()
                    .header("Content-Type", "application/xml")
                    .body(format!("<urlset>{urls}</urlset>")),
            );
        }
        let n: usize = path
            .strip_prefix("/p")?
            .strip_suffix(".html")?
            .parse()
            .ok()?;
        (n < PAGES).then(|| Reply::html(&format!("<p>page {n}</p>")).delay(PAGE_DELAY))
    });
}

async fn stop_with(signal: &str) {
    let web = MultiWeb::start(2).await;
    slow_sites(&web);
    web.prepare_certificates(&HOSTS);
    let dir = tempfile::tempdir().unwrap();
    let pins: Vec<(&str, usize)> = HOSTS.iter().enumerate().map(|(i, h)| (*h, i / 2)).collect();
    let db = crawl_db(dir.path());
    let seeds: Vec<String> = HOSTS.iter().map(|h| web.https_url(h, "/")).collect();
    let args = crawl_args(&web, dir.path(), &pins, &["--pace", "200ms"], &seeds);
    let mut child = spawn(&args);
    // Well into the pages: every site's sitemap read, requests under way on both origins.
    tokio::time::sleep(Duration::from_millis(3_000)).await;
    let signalled = Instant::now();
    common::crawl::signal(&child, signal);
    let status = tokio::task::spawn_blocking(move || {
        common::wait_or_kill(&mut child, common::COMMAND_DEADLINE, "the stopped crawl")
    })
    .await
    .unwrap();
    let took = signalled.elapsed();
    eprintln!("{signal}: exited {took:?} after the signal");
    assert_eq!(status.code(), Some(130), "{status}");
    // A request under way takes PAGE_DELAY; the commit and exit take little.
    assert!(
        took < Duration::from_secs(5),
        "exited {took:?} after {signal}"
    );
    let log = web.requests();
    let late: Vec<String> = log
        .iter()
        .filter(|r| r.at > signalled + Duration::from_secs(1))
        .map(|r| format!("{:?} after: {}{}", r.at - signalled, r.host, r.path))
        .collect();
    assert!(
        late.is_empty(),
        "requests started after the stop: {late:#?}"
    );
    let pages = log.iter().filter(|r| r.path.starts_with("/p")).count() as u64;
    assert!(
        pages > 0 && pages < (HOSTS.len() * PAGES) as u64,
        "stopped part way: {pages}"
    );
    // One set of counts: the URLs committed as fetched are the pages the server answered (a
    // request under way at the stop finished and was committed), and the requests counted
    // are every request the server saw (robots.txt and sitemaps included).
    let report = jittybot(&["crawl-status", "--db", &db, "--json"], None);
    let report: serde_json::Value = serde_json::from_str(&stdout(&report)).unwrap();
    assert_eq!(report["urls"]["in_flight"], 0, "{report}");
    // Every URL answered counts as fetched, the seeds' `/` (404 here) as well as the pages.
    let answered = log
        .iter()
        .filter(|r| r.path != "/robots.txt" && r.path != "/sitemap.xml")
        .count() as u64;
    assert_eq!(report["urls"]["fetched"], answered, "{report}");
    assert_eq!(report["requests"], log.len() as u64, "{report}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sigint_stops_within_seconds_and_the_counts_agree_with_the_server() {
    stop_with("-INT").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sigterm_stops_within_seconds_and_the_counts_agree_with_the_server() {
    stop_with("-TERM").await;
}
