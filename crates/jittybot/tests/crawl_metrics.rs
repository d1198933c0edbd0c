//! `jittybot crawl --metrics-listen`: the metrics a running crawl serves, checked against the
//! servers' side. The request counter, by kind and status class, equals what the test web's
//! log saw.

mod common;

use std::collections::BTreeMap;
use std::io::{Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::time::Duration;

use common::crawl::{crawl_args, interrupt, spawn};
use testweb::{MultiWeb, RecordedRequest, Reply};
use tokio::time::Instant;

const SITE: &str = "www.metrics.test";
/// A site whose robots.txt always answers 503: the crawl keeps probing it on its back-off
/// while other work remains (a run with only such sites left ends, its URLs kept queued).
const DOWN: &str = "down.test";
/// A site whose page always answers 503: other work that remains, retried on the back-off,
/// so the crawl is still running, quiet between tries, when the test reads its metrics.
const BUSY: &str = "busy.test";

fn serve(web: &MultiWeb) {
    let site = web.site(SITE);
    site.path("/robots.txt").respond(Reply::robots_txt(&format!(
        "User-agent: *\nAllow: /\nSitemap: {}\n",
        web.http_url(SITE, "/sitemap.xml")
    )));
    let urlset: String = ["/", "/a", "/b"]
        .iter()
        .map(|p| format!("<url><loc>{}</loc></url>", web.http_url(SITE, p)))
        .collect();
    site.path("/sitemap.xml")
        .respond(
            Reply::ok()
                .header("Content-Type", "application/xml")
                .body(format!(
                "<urlset xmlns=\"http://www.sitemaps.org/schemas/sitemap/0.9\">{urlset}</urlset>"
            )),
        );
    site.path("/").respond(Reply::html(
        "<a href=/a>a</a><a href=/moved>m</a><img src=/i1.png>",
    ));
    site.path("/a").respond(Reply::html(
        "<a href=/missing>x</a><img src=/i2.png><img src=/i1.png>",
    ));
    site.path("/b").respond(Reply::html("<p>b</p>"));
    site.path("/moved").respond(Reply::redirect(301, "/b"));
    for image in ["/i1.png", "/i2.png"] {
        site.path(image).respond(
            Reply::ok()
                .header("Content-Type", "image/png")
                .body(format!("not really a png: {image}")),
        );
    }
    web.site(DOWN)
        .path("/robots.txt")
        .respond(Reply::status(503));
    let busy = web.site(BUSY);
    busy.path("/robots.txt")
        .respond(Reply::robots_txt("User-agent: *\nAllow: /\n"));
    busy.path("/").respond(Reply::status(503));
}

fn kind(r: &RecordedRequest) -> &'static str {
    match r.path.as_str() {
        "/robots.txt" => "robots",
        "/sitemap.xml" => "sitemap",
        p if p.ends_with(".png") => "media",
        _ => "page",
    }
}

/// The test web's log as the metric's series: (kind, status class) -> requests.
fn seen_by_servers(log: &[RecordedRequest]) -> BTreeMap<(String, String), u64> {
    let mut seen = BTreeMap::new();
    for r in log {
        let class = format!("{}xx", r.status / 100);
        *seen.entry((kind(r).to_string(), class)).or_default() += 1;
    }
    seen
}

/// `GET /metrics`, the body.
fn scrape(addr: SocketAddr) -> String {
    let mut stream = TcpStream::connect(addr).unwrap();
    stream
        .set_read_timeout(Some(Duration::from_secs(10)))
        .unwrap();
    write!(
        stream,
        "GET /metrics HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n\r\n"
    )
    .unwrap();
    let mut response = String::new();
    stream.read_to_string(&mut response).unwrap();
    let (head, body) = response.split_once("\r\n\r\n").unwrap();
    assert!(head.starts_with("HTTP/1.1 200"), "{head}");
    assert!(head.contains("openmetrics-text"), "{head}");
    body.to_string()
}

/// The requests counter's non-zero series: (kind, status) -> value.
fn requests_metric(text: &str) -> BTreeMap<(String, String), u64> {
    let mut series = BTreeMap::new();
    for line in text.lines() {
        let Some(rest) = line.strip_prefix("jittybot_crawl_requests_total{") else {
            continue;
        };
        let (labels, value) = rest.split_once("} ").unwrap();
        let label = |name: &str| {
            labels
                .split(',')
                .find_map(|l| l.strip_prefix(&format!("{name}=\"")))
                .and_then(|v| v.strip_suffix('"'))
                .unwrap()
                .to_string()
        };
        let value: u64 = value.trim().parse().unwrap();
        if value > 0 {
            series.insert((label("kind"), label("status")), value);
        }
    }
    series
}

fn free_port() -> SocketAddr {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    listener.local_addr().unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_request_counter_equals_what_the_servers_saw_per_kind() {
    let web = MultiWeb::start(2).await;
    serve(&web);
    let dir = tempfile::tempdir().unwrap();
    let metrics = free_port();
    let mut crawl = spawn(&crawl_args(
        &web,
        dir.path(),
        &[(SITE, 0), (DOWN, 1), (BUSY, 1)],
        &[
            "--pace",
            "50ms",
            "--backoff-base",
            "3s",
            "--max-attempts",
            "100",
            "--follow-links",
            "always",
            "--metrics-listen",
            &metrics.to_string(),
        ],
        &[
            web.http_url(SITE, "/"),
            web.http_url(DOWN, "/"),
            web.http_url(BUSY, "/"),
        ],
    ));
    // Every page and image of the site fetched, then a quiet moment (the other site waits
    // for its next probe): the counter must then equal the log.
    let started = Instant::now();
    let (counted, seen, text) = loop {
        assert!(
            started.elapsed() < Duration::from_secs(60),
            "the crawl did not settle: {:?}",
            seen_by_servers(&web.requests())
        );
        assert!(crawl.try_wait().unwrap().is_none(), "the crawl ended early");
        tokio::time::sleep(Duration::from_millis(300)).await;
        let before = web.requests();
        let done = ["/b", "/i2.png", "/missing"]
            .iter()
            .all(|p| before.iter().any(|r| r.path == *p));
        if !done {
            continue;
        }
        let text = tokio::task::spawn_blocking(move || scrape(metrics))
            .await
            .unwrap();
        let after = web.requests();
        if after.len() == before.len()
            && before.last().map(|r| r.at.elapsed()) > Some(Duration::from_millis(250))
        {
            break (requests_metric(&text), seen_by_servers(&after), text);
        }
    };
    interrupt(&crawl);
    let status = tokio::task::spawn_blocking(move || {
        common::wait_or_kill(&mut crawl, common::COMMAND_DEADLINE, "the crawl")
    })
    .await
    .unwrap();
    assert_eq!(status.code(), Some(130));
    eprintln!("requests by kind and status: {counted:?}");
    assert_eq!(
        counted, seen,
        "the request counter against the servers' log\n{text}"
    );
    for kind in ["page", "robots", "sitemap", "media"] {
        assert!(
            seen.keys().any(|(k, _)| k == kind),
            "the test web saw no {kind} request"
        );
    }
    for class in ["2xx", "3xx", "4xx", "5xx"] {
        assert!(seen.keys().any(|(_, c)| c == class), "no {class} answer");
    }
    for series in [
        "jittybot_crawl_response_bytes_total{kind=\"media\"}",
        "jittybot_crawl_urls{state=\"fetched\"}",
        "jittybot_crawl_urls{state=\"queued\"}",
        "jittybot_crawl_origins{state=\"active\"}",
        "jittybot_crawl_origins{state=\"paused\"}",
        "jittybot_crawl_warc_bytes_total",
        "jittybot_crawl_store_commit_seconds_count",
        "jittybot_crawl_pages_total",
    ] {
        let value = text
            .lines()
            .find_map(|l| l.strip_prefix(series)?.trim().parse::<f64>().ok())
            .unwrap_or_else(|| panic!("{series} missing\n{text}"));
        // Queued URLs, active and paused origins may be none at that moment.
        if !["queued", "active", "paused"]
            .iter()
            .any(|s| series.contains(s))
        {
            assert!(value > 0.0, "{series} is {value}\n{text}");
        }
    }
}
