//! Hosts of one site each declare their own sitemaps in their own robots.txt: every one is
//! read, once, and every page it lists is fetched, once, whether the hosts share an origin
//! or not. From the test web's request log. SQLite.

mod common;

use common::*;
use db::testing::TestDb;
use db::Backend;
use testweb::MultiWeb;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_host_of_a_site_has_its_own_sitemaps_read() {
    let db = TestDb::new(Backend::Sqlite).await;
    let web = MultiWeb::start(2).await;
    // a and c share an address (one origin), b has its own.
    let hosts = [
        ("a.shared.test", 0),
        ("b.shared.test", 1),
        ("c.shared.test", 0),
    ];
    let mut listed = Vec::new();
    for (host, _) in hosts {
        let pages: Vec<String> = (0..3)
            .map(|i| web.https_url(host, &format!("/only-{i}")))
            .collect();
        let sitemap = web.https_url(host, &format!("/sitemap-{host}.xml"));
        sitemap_site(&web, host, &sitemap, &pages, Vec::new());
        listed.push((host, format!("/sitemap-{host}.xml"), pages));
    }
    let warc = tempfile::tempdir().unwrap();
    let seeds: Vec<String> = hosts.iter().map(|(h, _)| web.https_url(h, "/")).collect();
    crawl(
        &db.target,
        fetcher(&web, &hosts),
        config(warc.path()),
        &seeds,
    )
    .await;
    for (host, sitemap, pages) in &listed {
        assert_eq!(
            web.requests_to(host, sitemap).len(),
            1,
            "{host}'s sitemap {sitemap}"
        );
        for page in pages {
            let path = url::Url::parse(page).unwrap().path().to_string();
            assert_eq!(
                web.requests_to(host, &path).len(),
                1,
                "the sitemap-only page {page}"
            );
        }
    }
    db.cleanup().await;
}
