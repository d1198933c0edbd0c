//! A site whose robots.txt stays unreachable (5xx) or keeps answering 429: nothing
//! else of it is requested, its robots.txt is retried on the origin's exponential back-off
//! (at most `--backoff-max` apart) while other work remains, whatever `--max-attempts`; a run
//! left with only such sites ends with their URLs queued and says so, and a later run tries
//! them again. From the test web's request log.

mod common;

use std::time::Duration;

use common::*;
use crawl::event::Event;
use crawl::normal::NormalUrl;
use crawl::store::{Store, UrlState};
use db::testing::TestDb;
use db::Backend;
use testweb::{MultiWeb, Reply};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_unreachable_or_429_robots_txt_is_retried_while_other_work_remains_and_its_urls_stay_queued(
) {
    let db = TestDb::new(Backend::Sqlite).await;
    let web = MultiWeb::start(3).await;
    let (dead, busy) = ("dead.test", "busy.test");
    web.site(dead)
        .path("/robots.txt")
        .respond(Reply::status(503));
    web.site(busy)
        .path("/robots.txt")
        .respond(Reply::status(429));
    for h in [dead, busy] {
        web.site(h).path("/").respond(html("<a href=/next>n</a>"));
        web.site(h).path("/next").respond(html("next"));
    }
    // Other work for a while: 16 slow pages of a good site on an address of its own.
    let good = "good.test";
    fan_slow(&web, good, 16, Duration::from_millis(200));
    web.prepare_certificates(&[dead, busy, good]);
    let warc = tempfile::tempdir().unwrap();
    let f = fetcher(&web, &[(dead, 0), (busy, 1), (good, 2)]);
    let mut c = config(warc.path());
    c.max_attempts = 2;
    c.pacer.backoff_max = Duration::from_millis(800);
    let (base, max) = (c.pacer.backoff_base, c.pacer.backoff_max);
    let seeds = [
        web.http_url(dead, "/"),
        web.http_url(busy, "/"),
        web.http_url(good, "/"),
    ];
    let started = tokio::time::Instant::now();
    let (_, events) = crawl(&db.target, f.clone(), c.clone(), &seeds).await;
    assert!(
        started.elapsed() < Duration::from_secs(20),
        "the crawl ends"
    );
    assert_eq!(web.requests_to(good, "/x15").len(), 1, "the good site done");
    let log: Vec<_> = web
        .requests()
        .into_iter()
        .filter(|r| r.host != good)
        .collect();
    assert!(
        log.iter().all(|r| r.path == "/robots.txt"),
        "nothing but robots.txt: {:?}",
        log.iter()
            .map(|r| format!("{}{}", r.host, r.path))
            .collect::<Vec<_>>()
    );
    for h in [dead, busy] {
        let tries: Vec<_> = web
            .requests_to(h, "/robots.txt")
            .iter()
            .map(|r| r.at)
            .collect();
        // Retried past --max-attempts while the good site kept the run going, on the
        // origin's back-off: base 200 ms, doubling, at most 800 ms.
        assert!(tries.len() > 3, "{h}: {tries:?}");
        for (i, pair) in tries.windows(2).enumerate() {
            let want = (base * 2u32.pow(i as u32)).min(max);
            assert!(
                pair[1] - pair[0] >= want - Duration::from_millis(5),
                "{h}: try {} after {:?}, not {want:?}",
                i + 2,
                pair[1] - pair[0]
            );
        }
    }
    let store = Store::open(&db.target).await.unwrap();
    for h in [dead, busy] {
        let key = NormalUrl::parse(&web.http_url(h, "/")).unwrap();
        let (state, attempts, _) = store.url_state(key.key()).await.unwrap().unwrap();
        assert_eq!((state, attempts), (UrlState::Queued, 0), "{h}");
    }
    assert!(
        events
            .iter()
            .any(|e| matches!(e, Event::RobotsWaiting { urls: 2 })),
        "the run says what it left queued: {events:?}"
    );
    store.close().await;

    // A later run tries again: the robots.txt answers now, and the site is crawled.
    web.clear_requests();
    for h in [dead, busy] {
        web.site(h)
            .path("/robots.txt")
            .respond(Reply::robots_txt("User-agent: *\nAllow: /\n"));
    }
    crawl(&db.target, f, c, &seeds).await;
    for h in [dead, busy] {
        assert_eq!(web.requests_to(h, "/").len(), 1, "{h}");
        assert_eq!(web.requests_to(h, "/next").len(), 1, "{h}");
    }
    db.cleanup().await;
}

/// A site whose home links to `n` pages that each take `delay` to answer.
fn fan_slow(web: &MultiWeb, host: &str, n: usize, delay: Duration) {
    open_site(web, host);
    let links: String = (0..n).map(|i| format!("<a href=/x{i}>x</a>")).collect();
    web.site(host).path("/").respond(html(&links));
    for i in 0..n {
        web.site(host)
            .path(&format!("/x{i}"))
            .respond(html("leaf").delay(delay));
    }
}
