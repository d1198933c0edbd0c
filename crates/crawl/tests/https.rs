//! HTTPS wherever available, as the server sees it: every URL of a host that serves HTTPS
//! goes over HTTPS (sitemaps declared as `http://` too), and a host whose HTTPS failed is
//! tried over HTTPS again in a later run. SQLite.

mod common;

use std::time::Duration;

use common::*;
use db::testing::TestDb;
use db::Backend;
use testweb::{MultiWeb, RecordedRequest};

fn shown(log: &[RecordedRequest]) -> Vec<String> {
    log.iter()
        .map(|r| {
            format!(
                "{} {}{}",
                if r.tls { "https" } else { "http " },
                r.host,
                r.path
            )
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sitemaps_declared_over_http_are_read_over_https_where_it_works() {
    let db = TestDb::new(Backend::Sqlite).await;
    let web = MultiWeb::start(1).await;
    let host = "secure.test";
    // Declared and listed as http://.
    let listed: Vec<String> = (0..3)
        .map(|i| web.http_url(host, &format!("/s{i}")))
        .collect();
    sitemap_site(
        &web,
        host,
        &web.http_url(host, "/sitemap.xml"),
        &listed,
        Vec::new(),
    );
    let warc = tempfile::tempdir().unwrap();
    crawl(
        &db.target,
        fetcher(&web, &[(host, 0)]),
        config(warc.path()),
        &[web.http_url(host, "/")],
    )
    .await;
    let log = web.requests();
    assert_eq!(
        web.requests_to(host, "/sitemap.xml").len(),
        1,
        "{:#?}",
        shown(&log)
    );
    assert_eq!(web.requests_to(host, "/s2").len(), 1, "{:#?}", shown(&log));
    assert!(log.iter().all(|r| r.tls), "{:#?}", shown(&log));
    db.cleanup().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_host_whose_https_failed_is_tried_over_https_again_in_a_later_run() {
    let db = TestDb::new(Backend::Sqlite).await;
    let web = MultiWeb::start(1).await;
    let host = "later.test";
    open_site(&web, host);
    web.site(host).path("/").respond(html("home"));
    web.site(host).path("/next").respond(html("next"));
    // The first run meets a failing HTTPS (handshakes refused) and falls back to HTTP.
    web.without_https(host);
    let warc = tempfile::tempdir().unwrap();
    let f = fetcher(&web, &[(host, 0)]);
    crawl(
        &db.target,
        f.clone(),
        config(warc.path()),
        &[web.http_url(host, "/")],
    )
    .await;
    let first = web.requests();
    assert_eq!(web.requests_to(host, "/").len(), 1, "{:#?}", shown(&first));
    assert!(first.iter().all(|r| !r.tls), "{:#?}", shown(&first));
    // HTTPS works again: the next run tries it first, and uses it.
    web.with_https(host);
    web.clear_requests();
    tokio::time::sleep(Duration::from_millis(10)).await;
    crawl(
        &db.target,
        f,
        config(warc.path()),
        &[web.http_url(host, "/next")],
    )
    .await;
    let second = web.requests();
    assert_eq!(
        web.requests_to(host, "/next").len(),
        1,
        "{:#?}",
        shown(&second)
    );
    assert!(second.iter().all(|r| r.tls), "{:#?}", shown(&second));
    db.cleanup().await;
}
