//! A site whose robots.txt stays unreachable (5xx) or keeps answering 429: nothing
//! else of it is requested, its robots.txt is retried on the origin's exponential back-off,
//! its URLs are given up with that reason after `--max-attempts` failed robots.txt requests in
//! a row so the crawl ends, and a later run tries them again. From the test web's request log.

mod common;

use std::time::Duration;

use common::*;
use crawl::normal::NormalUrl;
use crawl::store::{Store, UrlState};
use db::testing::TestDb;
use db::Backend;
use testweb::{MultiWeb, Reply};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_unreachable_or_429_robots_txt_is_retried_on_the_back_off_then_given_up() {
    let db = TestDb::new(Backend::Sqlite).await;
    let web = MultiWeb::start(2).await;
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
    web.prepare_certificates(&[dead, busy]);
    let warc = tempfile::tempdir().unwrap();
    let f = fetcher(&web, &[(dead, 0), (busy, 1)]);
    let mut c = config(warc.path());
    c.max_attempts = 3;
    let seeds = [web.http_url(dead, "/"), web.http_url(busy, "/")];
    let started = tokio::time::Instant::now();
    crawl(&db.target, f.clone(), c.clone(), &seeds).await;
    assert!(
        started.elapsed() < Duration::from_secs(20),
        "the crawl ends"
    );
    let log = web.requests();
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
        assert_eq!(tries.len(), 3, "{h}: --max-attempts robots.txt requests");
        // The origin's back-off: base 200 ms, doubling.
        assert!(
            tries[1] - tries[0] >= Duration::from_millis(195),
            "{h}: {tries:?}"
        );
        assert!(
            tries[2] - tries[1] >= Duration::from_millis(395),
            "{h}: {tries:?}"
        );
    }
    let store = Store::open(&db.target).await.unwrap();
    for h in [dead, busy] {
        let key = NormalUrl::parse(&web.http_url(h, "/")).unwrap();
        let (state, _, reason) = store.url_state(key.key()).await.unwrap().unwrap();
        assert_eq!(state, UrlState::Failed, "{h}");
        let reason = reason.unwrap_or_default();
        assert!(
            reason.contains("robots.txt unreachable") && reason.contains("3 times"),
            "{h}: {reason}"
        );
    }
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
