//! Two addresses that turn out to be one backend, as the server sees it: from the first
//! response that shows the shared backend header, requests to either address keep the
//! merged origin's pace. SQLite.

mod common;

use std::time::Duration;

use common::*;
use db::testing::TestDb;
use db::Backend;
use testweb::{MultiWeb, Reply};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn requests_to_two_addresses_of_one_backend_keep_one_pace_from_the_first_evidence() {
    let db = TestDb::new(Backend::Sqlite).await;
    let web = MultiWeb::start(2).await;
    let hosts = ["alpha.test", "beta.test"];
    const PAGES: usize = 8;
    for h in hosts {
        web.site(h)
            .path("/robots.txt")
            .respond(Reply::robots_txt("User-agent: *\nAllow: /\n"));
        // Every page listed in the sitemap: each worker claims a batch of them before the
        // first page answers with the header.
        let entries: String = (0..PAGES)
            .map(|i| {
                format!(
                    "<url><loc>{}</loc></url>",
                    web.http_url(h, &format!("/x{i}"))
                )
            })
            .collect();
        web.site(h).path("/sitemap.xml").respond(
            Reply::ok()
                .header("Content-Type", "application/xml")
                .body(format!(
                    "<?xml version=\"1.0\"?><urlset xmlns=\"http://www.sitemaps.org/schemas/sitemap/0.9\">{entries}</urlset>"
                )),
        );
        let links: String = (0..PAGES).map(|i| format!("<a href=/x{i}>x</a>")).collect();
        web.site(h)
            .path("/")
            .respond(html(&links).header("X-Served-By", "backend-7"));
        for i in 0..PAGES {
            web.site(h)
                .path(&format!("/x{i}"))
                .respond(html("leaf").header("X-Served-By", "backend-7"));
        }
    }
    let warc = tempfile::tempdir().unwrap();
    let f = fetcher(&web, &[(hosts[0], 0), (hosts[1], 1)]);
    let mut c = config(warc.path());
    c.pacer.pace = Duration::from_millis(200);
    let pace = c.pacer.pace;
    let seeds: Vec<String> = hosts.iter().map(|h| web.http_url(h, "/")).collect();
    crawl(&db.target, f, c, &seeds).await;
    let mut log = web.requests();
    log.sort_by_key(|r| r.at);
    let t0 = log[0].at;
    let shown: Vec<String> = log
        .iter()
        .map(|r| format!("{:>6?} {}{}", r.at - t0, r.host, r.path))
        .collect();
    // The evidence is complete once both hosts have answered a page with the header: the
    // later of the two first pages (robots.txt and sitemaps carry none here).
    let evidence = hosts
        .iter()
        .map(|h| {
            log.iter()
                .find(|r| r.host == *h && r.path != "/robots.txt" && r.path != "/sitemap.xml")
                .expect("a page fetched")
                .at
        })
        .max()
        .unwrap();
    // A request already under way when the evidence arrived may still be answered; from
    // shortly after, every two requests to the pair are a pace apart.
    let after: Vec<_> = log
        .iter()
        .filter(|r| r.at >= evidence + Duration::from_millis(20))
        .collect();
    assert!(after.len() >= PAGES, "{shown:#?}");
    for pair in after.windows(2) {
        let gap = pair[1].at - pair[0].at;
        assert!(
            gap >= pace - Duration::from_millis(5),
            "{gap:?} between {}{} and {}{} after the evidence at {:?}\n{shown:#?}",
            pair[0].host,
            pair[0].path,
            pair[1].host,
            pair[1].path,
            evidence - t0
        );
    }
    db.cleanup().await;
}
