//! A sitemap index that answers `304 Not Modified` lists what it listed before: its own
//! children, not every deeper sitemap of its site. Two hosts of one site each declare an
//! index with one child; on the second crawl every index and every child is requested once,
//! and each child only from its own host's reading (with its validators: a 304). From the
//! test web's request log, on SQLite and PostgreSQL.

mod common;

use common::*;
use db::testing::on_both_backends;
use testweb::{MultiWeb, Reply};

const HOSTS: [&str; 2] = ["a.indexed.test", "b.indexed.test"];

/// `host`'s robots.txt declares `/index.xml`, an index of `/child.xml`, which lists
/// `/listed`: every sitemap with an `ETag`, answered 304 when it matches.
fn indexed_host(web: &MultiWeb, host: &str) {
    let site = web.site(host);
    site.path("/robots.txt").respond(Reply::robots_txt(&format!(
        "User-agent: *\nAllow: /\nSitemap: {}\n",
        web.https_url(host, "/index.xml")
    )));
    let xml = |etag: &str, body: String| {
        Reply::ok()
            .header("Content-Type", "application/xml")
            .header("ETag", etag)
            .body(body)
            .conditional()
    };
    let index = format!(
        "<sitemapindex><sitemap><loc>{}</loc></sitemap></sitemapindex>",
        web.https_url(host, "/child.xml")
    );
    site.path("/index.xml").respond(xml("\"index\"", index));
    let child = format!(
        "<urlset><url><loc>{}</loc></url></urlset>",
        web.https_url(host, "/listed")
    );
    site.path("/child.xml").respond(xml("\"child\"", child));
    site.path("/").respond(html("home"));
    site.path("/listed").respond(html("listed"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_unchanged_index_gives_only_its_own_children() {
    on_both_backends(|target| async move {
        let web = MultiWeb::start(2).await;
        HOSTS.iter().for_each(|h| indexed_host(&web, h));
        let warc = tempfile::tempdir().unwrap();
        let f = fetcher(&web, &[(HOSTS[0], 0), (HOSTS[1], 1)]);
        let seeds: Vec<String> = HOSTS.iter().map(|h| web.https_url(h, "/")).collect();
        crawl(&target, f.clone(), config(warc.path()), &seeds).await;
        for host in HOSTS {
            assert_eq!(web.requests_to(host, "/listed").len(), 1, "{host}/listed");
        }
        web.clear_requests();
        crawl(&target, f, config(warc.path()), &seeds).await;
        for host in HOSTS {
            for path in ["/index.xml", "/child.xml"] {
                let got = web.requests_to(host, path);
                let statuses: Vec<u16> = got.iter().map(|r| r.status).collect();
                assert_eq!(statuses, [304], "{host}{path} once, unchanged");
            }
        }
    })
    .await;
}
