//! Politeness as the server sees it: pacing per origin, one request in flight per
//! origin, grouping by address, certificate, backend header and the operator's file,
//! crawl-delay, back-off and Retry-After, pause and probe, retries and giving up, robots.txt
//! for redirect targets, and resume after a clean stop. SQLite; the store's behaviour on both
//! backends is tested in `store.rs` and end to end in `crawl_basic.rs`.

mod common;

use std::sync::atomic::Ordering;
use std::time::Duration;

use common::*;
use crawl::crawler::Crawler;
use crawl::event::Event;
use crawl::input::{HostPattern, OriginRule};
use crawl::normal::NormalUrl;
use crawl::store::Store;
use db::testing::TestDb;
use db::Backend;
use testweb::{MultiWeb, RecordedRequest, Reply};
use tokio::time::Instant;

/// A site whose home links to `n` pages.
fn fan(web: &MultiWeb, host: &str, n: usize, delay: Duration) {
    open_site(web, host);
    let links: String = (0..n).map(|i| format!("<a href=/x{i}>x</a>")).collect();
    web.site(host).path("/").respond(html(&links));
    for i in 0..n {
        web.site(host)
            .path(&format!("/x{i}"))
            .respond(html("leaf").delay(delay));
    }
}

fn starts(log: &[RecordedRequest], pred: impl Fn(&RecordedRequest) -> bool) -> Vec<Instant> {
    let mut t: Vec<Instant> = log.iter().filter(|r| pred(r)).map(|r| r.at).collect();
    t.sort();
    t
}

fn min_gap(times: &[Instant]) -> Duration {
    times
        .windows(2)
        .map(|w| w[1] - w[0])
        .min()
        .unwrap_or(Duration::MAX)
}

fn seeds(web: &MultiWeb, hosts: &[&str]) -> Vec<String> {
    hosts.iter().map(|h| web.http_url(h, "/")).collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn many_hosts_on_one_address_are_one_origin_paced_together() {
    let db = TestDb::new(Backend::Sqlite).await;
    let web = MultiWeb::start(2).await;
    let hosts = ["a.one.test", "b.one.test", "c.one.test", "solo.test"];
    for h in hosts {
        fan(&web, h, 3, Duration::ZERO);
    }
    web.prepare_certificates(&hosts);
    let warc = tempfile::tempdir().unwrap();
    let f = fetcher(
        &web,
        &[(hosts[0], 0), (hosts[1], 0), (hosts[2], 0), (hosts[3], 1)],
    );
    let mut c = config(warc.path());
    c.pacer.pace = Duration::from_millis(150);
    let c_pace = c.pacer.pace;
    let (_, events) = crawl(&db.target, f, c, &seeds(&web, &hosts)).await;
    let log = web.requests();
    let shared = starts(&log, |r| r.local.unwrap().ip() == web.addresses()[0]);
    assert_eq!(
        shared.len(),
        3 * (1 + 1 + 1 + 3),
        "robots.txt, /sitemap.xml (each host has its own robots.txt, so its own sitemaps), home and 3 pages per host"
    );
    // Server-side arrival times: the pace counts from each answer, which comes after the
    // server saw the request, so however long a new connection's TLS handshake delayed an
    // arrival, the next one is at least the pace later (a few ms of slack for the wall-clock
    // round trip of the stored pacing). Without pacing these requests come a few ms apart.
    let t0 = shared[0];
    let show: Vec<String> = log
        .iter()
        .filter(|r| r.local.unwrap().ip() == web.addresses()[0])
        .map(|r| format!("{:?} {}{}", r.at - t0, r.host, r.path))
        .collect();
    eprintln!(
        "smallest gap between two requests to the shared address: {:?}",
        min_gap(&shared)
    );
    assert!(
        min_gap(&shared) >= c_pace - Duration::from_millis(5),
        "{:?} {show:#?}",
        min_gap(&shared)
    );
    let merges = events
        .iter()
        .filter(|e| matches!(e, Event::Merge { .. }))
        .count();
    assert_eq!(merges, 2, "two hosts joined the first one's origin");
    let store = Store::open(&db.target).await.unwrap();
    let status = store.status(jiff::Timestamp::now()).await.unwrap();
    let one = status
        .origins
        .iter()
        .find(|o| o.hosts.len() == 3)
        .expect("one origin of three hosts");
    assert_eq!(one.hosts, ["a.one.test", "b.one.test", "c.one.test"]);
    assert_eq!(status.origins.len(), 2);
    db.cleanup().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_request_in_flight_per_origin() {
    let db = TestDb::new(Backend::Sqlite).await;
    let web = MultiWeb::start(1).await;
    fan(&web, "slow.test", 5, Duration::from_millis(80));
    fan(&web, "www.slow.test", 5, Duration::from_millis(80));
    let warc = tempfile::tempdir().unwrap();
    let f = fetcher(&web, &[("slow.test", 0), ("www.slow.test", 0)]);
    let mut c = config(warc.path());
    c.pacer.pace = Duration::ZERO;
    crawl(
        &db.target,
        f,
        c,
        &seeds(&web, &["slow.test", "www.slow.test"]),
    )
    .await;
    // Each slow page takes 80 ms to answer: with one request in flight at a time, the next
    // request to the origin arrives only after it.
    let slow = starts(&web.requests(), |r| r.path.starts_with("/x"));
    assert_eq!(slow.len(), 10);
    assert!(
        min_gap(&slow) >= Duration::from_millis(75),
        "{:?}",
        min_gap(&slow)
    );
    db.cleanup().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_shared_certificate_or_backend_header_merges_origins() {
    let db = TestDb::new(Backend::Sqlite).await;
    let web = MultiWeb::start(4).await;
    for h in ["c1.test", "c2.test", "h1.test", "h2.test"] {
        fan(&web, h, 1, Duration::ZERO);
    }
    web.share_certificate(&["c1.test", "c2.test"]);
    for h in ["h1.test", "h2.test"] {
        web.site(h)
            .path("/")
            .respond(html("<a href=/x0>x</a>").header("X-Served-By", "backend-7"));
    }
    let warc = tempfile::tempdir().unwrap();
    let f = fetcher(
        &web,
        &[
            ("c1.test", 0),
            ("c2.test", 1),
            ("h1.test", 2),
            ("h2.test", 3),
        ],
    );
    let (_, events) = crawl(
        &db.target,
        f,
        config(warc.path()),
        &seeds(&web, &["c1.test", "c2.test", "h1.test", "h2.test"]),
    )
    .await;
    let evidence: Vec<String> = events
        .iter()
        .filter_map(|e| match e {
            Event::Merge { evidence, .. } => Some(evidence.to_string()),
            _ => None,
        })
        .collect();
    assert!(
        evidence.contains(&"certificate".to_string()),
        "{evidence:?}"
    );
    assert!(evidence.contains(&"backend".to_string()), "{evidence:?}");
    let store = Store::open(&db.target).await.unwrap();
    let status = store.status(jiff::Timestamp::now()).await.unwrap();
    let groups: Vec<Vec<String>> = status.origins.iter().map(|o| o.hosts.clone()).collect();
    assert!(
        groups.contains(&vec!["c1.test".to_string(), "c2.test".to_string()]),
        "{groups:?}"
    );
    assert!(
        groups.contains(&vec!["h1.test".to_string(), "h2.test".to_string()]),
        "{groups:?}"
    );
    db.cleanup().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_operator_file_merges_and_splits() {
    let db = TestDb::new(Backend::Sqlite).await;
    let web = MultiWeb::start(3).await;
    for h in ["m1.test", "m2.test", "s1.cdn.test", "s2.cdn.test"] {
        fan(&web, h, 1, Duration::ZERO);
    }
    let warc = tempfile::tempdir().unwrap();
    // m1 and m2 have nothing in common but the operator says one origin; s1 and s2 share a
    // CDN address but are two backends.
    let f = fetcher(
        &web,
        &[
            ("m1.test", 0),
            ("m2.test", 1),
            ("s1.cdn.test", 2),
            ("s2.cdn.test", 2),
        ],
    );
    let mut c = config(warc.path());
    c.origin_rules = vec![
        OriginRule {
            pattern: HostPattern::Exact("m1.test".into()),
            origin: "shop".into(),
        },
        OriginRule {
            pattern: HostPattern::Exact("m2.test".into()),
            origin: "shop".into(),
        },
        OriginRule {
            pattern: HostPattern::Exact("s1.cdn.test".into()),
            origin: "one".into(),
        },
        OriginRule {
            pattern: HostPattern::Exact("s2.cdn.test".into()),
            origin: "two".into(),
        },
    ];
    crawl(
        &db.target,
        f,
        c,
        &seeds(&web, &["m1.test", "m2.test", "s1.cdn.test", "s2.cdn.test"]),
    )
    .await;
    let store = Store::open(&db.target).await.unwrap();
    let status = store.status(jiff::Timestamp::now()).await.unwrap();
    let groups: Vec<(String, Vec<String>)> = status
        .origins
        .iter()
        .map(|o| (o.name.clone(), o.hosts.clone()))
        .collect();
    assert!(
        groups.contains(&("=shop".into(), vec!["m1.test".into(), "m2.test".into()])),
        "{groups:?}"
    );
    assert!(
        groups.contains(&("=one".into(), vec!["s1.cdn.test".into()])),
        "{groups:?}"
    );
    assert!(
        groups.contains(&("=two".into(), vec!["s2.cdn.test".into()])),
        "{groups:?}"
    );
    db.cleanup().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn crawl_delay_raises_the_gap_for_its_host() {
    let db = TestDb::new(Backend::Sqlite).await;
    let web = MultiWeb::start(1).await;
    fan(&web, "delay.test", 3, Duration::ZERO);
    web.site("delay.test")
        .path("/robots.txt")
        .respond(Reply::robots_txt(
            "User-agent: JittyBot\nCrawl-delay: 0.4\nAllow: /\n",
        ));
    let warc = tempfile::tempdir().unwrap();
    crawl(
        &db.target,
        fetcher(&web, &[("delay.test", 0)]),
        config(warc.path()),
        &seeds(&web, &["delay.test"]),
    )
    .await;
    let pages = starts(&web.requests(), |r| r.path != "/robots.txt");
    assert_eq!(pages.len(), 5, "the sitemap, the home page, 3 pages");
    assert!(
        min_gap(&pages) >= Duration::from_millis(390),
        "{:?}",
        min_gap(&pages)
    );
    db.cleanup().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn failures_back_off_exponentially_and_retry_after_is_honoured() {
    let db = TestDb::new(Backend::Sqlite).await;
    let web = MultiWeb::start(2).await;
    open_site(&web, "flaky.test");
    web.site("flaky.test")
        .path("/")
        .script([Reply::status(503), Reply::status(503), html("ok")]);
    open_site(&web, "busy.test");
    web.site("busy.test")
        .path("/")
        .script([Reply::status(429).header("Retry-After", "1"), html("ok")]);
    let warc = tempfile::tempdir().unwrap();
    let f = fetcher(&web, &[("flaky.test", 0), ("busy.test", 1)]);
    let (_, events) = crawl(
        &db.target,
        f,
        config(warc.path()),
        &seeds(&web, &["flaky.test", "busy.test"]),
    )
    .await;
    // base 200 ms: after the first 503 wait 200 ms, after the second 400 ms.
    let flaky = starts(&web.requests_to("flaky.test", "/"), |_| true);
    assert_eq!(flaky.len(), 3);
    assert!(
        flaky[1] - flaky[0] >= Duration::from_millis(195),
        "{:?}",
        flaky[1] - flaky[0]
    );
    assert!(
        flaky[2] - flaky[1] >= Duration::from_millis(395),
        "{:?}",
        flaky[2] - flaky[1]
    );
    let busy = starts(&web.requests_to("busy.test", "/"), |_| true);
    assert_eq!(busy.len(), 2);
    assert!(
        busy[1] - busy[0] >= Duration::from_millis(990),
        "Retry-After: 1 s, {:?}",
        busy[1] - busy[0]
    );
    assert!(events.iter().any(|e| matches!(e, Event::Backoff { .. })));
    db.cleanup().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_origin_is_paused_then_probed_and_a_url_given_up_after_its_attempts() {
    let db = TestDb::new(Backend::Sqlite).await;
    let web = MultiWeb::start(1).await;
    open_site(&web, "down.test");
    web.site("down.test").path("/").respond(Reply::status(500));
    let warc = tempfile::tempdir().unwrap();
    let mut c = config(warc.path());
    c.pacer.pause_after = 2;
    c.max_attempts = 3;
    let (_, events) = crawl(
        &db.target,
        fetcher(&web, &[("down.test", 0)]),
        c,
        &seeds(&web, &["down.test"]),
    )
    .await;
    let paths: Vec<String> = web.requests().iter().map(|r| r.path.clone()).collect();
    // robots.txt and the sitemap, two failures, then the pause: robots.txt is the probe
    // before the third try.
    assert_eq!(
        paths,
        ["/robots.txt", "/sitemap.xml", "/", "/", "/robots.txt", "/"],
        "{paths:?}"
    );
    assert!(
        events.iter().any(|e| matches!(e, Event::Pause { .. })),
        "{events:?}"
    );
    assert!(
        events.iter().any(|e| matches!(e, Event::Resume { .. })),
        "{events:?}"
    );
    let store = Store::open(&db.target).await.unwrap();
    let key = NormalUrl::parse(&web.http_url("down.test", "/")).unwrap();
    let (state, attempts, _) = store.url_state(key.key()).await.unwrap().unwrap();
    assert_eq!((state, attempts), (crawl::store::UrlState::Failed, 3));
    db.cleanup().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_redirect_target_is_checked_against_its_own_robots_txt() {
    let db = TestDb::new(Backend::Sqlite).await;
    let web = MultiWeb::start(2).await;
    open_site(&web, "from.test");
    web.site("www.from.test")
        .path("/robots.txt")
        .respond(Reply::robots_txt("User-agent: *\nDisallow: /secret\n"));
    web.site("from.test")
        .path("/")
        .respond(html("<a href=/go>go</a>"));
    web.site("from.test").path("/go").respond(Reply::redirect(
        302,
        &web.http_url("www.from.test", "/secret"),
    ));
    let warc = tempfile::tempdir().unwrap();
    let f = fetcher(&web, &[("from.test", 0), ("www.from.test", 1)]);
    crawl(
        &db.target,
        f,
        config(warc.path()),
        &seeds(&web, &["from.test"]),
    )
    .await;
    assert_eq!(web.requests_to("from.test", "/go").len(), 1);
    assert_eq!(web.requests_to("www.from.test", "/robots.txt").len(), 1);
    assert!(web.requests_to("www.from.test", "/secret").is_empty());
    db.cleanup().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_clean_stop_resumes_without_fetching_anything_twice() {
    let db = TestDb::new(Backend::Sqlite).await;
    let web = MultiWeb::start(1).await;
    fan(&web, "resume.test", 12, Duration::from_millis(20));
    let warc = tempfile::tempdir().unwrap();
    let f = fetcher(&web, &[("resume.test", 0)]);
    let store = Store::open(&db.target).await.unwrap();
    let crawler = Crawler::new(store.clone(), f.clone(), config(warc.path()));
    let stop = crawler.stop_flag();
    let (tx, _rx) = tokio::sync::mpsc::unbounded_channel();
    let seeds_n: Vec<NormalUrl> = seeds(&web, &["resume.test"])
        .iter()
        .map(|s| NormalUrl::parse(s).unwrap())
        .collect();
    let run = tokio::spawn(async move { crawler.run(&seeds_n, tx).await });
    tokio::time::sleep(Duration::from_millis(350)).await;
    stop.store(true, Ordering::SeqCst);
    let first = run.await.unwrap().unwrap();
    assert_eq!(first.reason, crawl::crawler::EndReason::Interrupted);
    let status = store.status(jiff::Timestamp::now()).await.unwrap();
    assert_eq!(
        status.urls["in_flight"], 0,
        "claimed URLs went back to the queue"
    );
    assert!(status.urls["queued"] > 0, "stopped mid-crawl: {status:?}");
    store.close().await;
    crawl(
        &db.target,
        f,
        config(warc.path()),
        &seeds(&web, &["resume.test"]),
    )
    .await;
    let pages = web
        .requests()
        .iter()
        .filter(|r| r.path.starts_with("/x"))
        .count();
    assert_eq!(pages, 12, "each page exactly once across the two runs");
    let records = warc_records(warc.path());
    assert_eq!(
        records
            .iter()
            .filter(|(t, u)| t == "response" && u.contains("/x"))
            .count(),
        12
    );
    db.cleanup().await;
}
