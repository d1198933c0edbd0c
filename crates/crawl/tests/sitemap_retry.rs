//! A sitemap that fails for a reason that may pass is read again after the origin's back-off
//! (here the server's `Retry-After`), within the run, before the site falls back to links:
//! its sitemap-only pages are fetched. From the test web's request log. SQLite.

mod common;

use std::time::Duration;

use common::*;
use db::testing::TestDb;
use db::Backend;
use testweb::{MultiWeb, Reply};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_sitemap_answered_503_with_retry_after_is_read_again_within_the_run() {
    let db = TestDb::new(Backend::Sqlite).await;
    let web = MultiWeb::start(1).await;
    let host = "maps.test";
    let listed: Vec<String> = (0..3)
        .map(|i| web.https_url(host, &format!("/only{i}")))
        .collect();
    sitemap_site(
        &web,
        host,
        &web.https_url(host, "/sitemap.xml"),
        &listed,
        vec![Reply::status(503).header("Retry-After", "1")],
    );
    let warc = tempfile::tempdir().unwrap();
    crawl(
        &db.target,
        fetcher(&web, &[(host, 0)]),
        config(warc.path()),
        &[web.http_url(host, "/")],
    )
    .await;
    let reads: Vec<_> = web
        .requests_to(host, "/sitemap.xml")
        .iter()
        .map(|r| r.at)
        .collect();
    assert_eq!(reads.len(), 2, "read again after the 503");
    assert!(
        reads[1] - reads[0] >= Duration::from_millis(990),
        "after its Retry-After of 1 s: {:?}",
        reads[1] - reads[0]
    );
    for i in 0..3 {
        assert_eq!(
            web.requests_to(host, &format!("/only{i}")).len(),
            1,
            "the sitemap-only page /only{i}"
        );
    }
    db.cleanup().await;
}
