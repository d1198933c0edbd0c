//! An excluded site gets no request of any kind, not even as the target of another site's
//! robots.txt redirect. From the test web's request log. SQLite.

mod common;

use common::*;
use crawl::event::Event;
use db::testing::TestDb;
use db::Backend;
use testweb::{MultiWeb, Reply};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_robots_txt_redirecting_into_an_excluded_site_is_not_followed_there() {
    let db = TestDb::new(Backend::Sqlite).await;
    let web = MultiWeb::start(2).await;
    let (open, closed) = ("open.test", "closed.test");
    web.site(open)
        .path("/robots.txt")
        .respond(Reply::redirect(301, &web.http_url(closed, "/robots.txt")));
    web.site(open).path("/").respond(html("home"));
    web.site(closed)
        .path("/robots.txt")
        .respond(Reply::robots_txt("User-agent: *\nAllow: /\n"));
    let dir = tempfile::tempdir().unwrap();
    let control = dir.path().join("control");
    std::fs::write(&control, format!("exclude {closed}\n")).unwrap();
    let mut c = config(&dir.path().join("warc"));
    c.control_file = Some(control);
    let f = fetcher(&web, &[(open, 0), (closed, 1)]);
    let (_, events) = crawl(&db.target, f, c, &[web.http_url(open, "/")]).await;
    let log = web.requests();
    let seen: Vec<String> = log
        .iter()
        .map(|r| format!("{}{}", r.host, r.path))
        .collect();
    assert!(
        log.iter().all(|r| r.host != closed),
        "a request to the excluded site: {seen:?}"
    );
    // Its robots.txt is retried on the back-off (base 200 ms, at most 2 s), not hammered.
    let tries = web.requests_to(open, "/robots.txt").len();
    assert!((1..=10).contains(&tries), "{seen:?}");
    assert!(web.requests_to(open, "/").is_empty(), "{seen:?}");
    // Its rules could not be read: the site's URL waits, queued.
    assert!(
        events
            .iter()
            .any(|e| matches!(e, Event::RobotsWaiting { urls: 1 })),
        "{events:?}"
    );
    db.cleanup().await;
}
