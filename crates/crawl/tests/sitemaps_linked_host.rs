//! A host of a crawled site that no seed names, reached only by a link, has its own
//! robots.txt and so its own sitemaps: they are read, and a page only they list is fetched.
//! From the test web's request log, on SQLite and PostgreSQL.

mod common;

use common::*;
use db::testing::on_both_backends;
use testweb::{MultiWeb, Reply};

const SEED: &str = "www.linked.test";
const LINKED: &str = "shop.linked.test";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_host_reached_only_by_a_link_has_its_sitemaps_read() {
    on_both_backends(|target| async move {
        let web = MultiWeb::start(2).await;
        // The seed host declares no sitemap and has none: its links are followed.
        let seed = web.site(SEED);
        seed.path("/robots.txt")
            .respond(Reply::robots_txt("User-agent: *\nAllow: /\n"));
        seed.path("/sitemap.xml").respond(Reply::status(404));
        seed.path("/").respond(html(&format!(
            "<a href=\"{}\">shop</a>",
            web.https_url(LINKED, "/")
        )));
        // The linked host's sitemap lists a page no link reaches.
        let only = web.https_url(LINKED, "/only-in-sitemap");
        let sitemap = web.https_url(LINKED, "/sitemap-shop.xml");
        sitemap_site(
            &web,
            LINKED,
            &sitemap,
            std::slice::from_ref(&only),
            Vec::new(),
        );
        let warc = tempfile::tempdir().unwrap();
        crawl(
            &target,
            fetcher(&web, &[(SEED, 0), (LINKED, 1)]),
            config(warc.path()),
            &[web.https_url(SEED, "/")],
        )
        .await;
        assert_eq!(
            web.requests_to(LINKED, "/").len(),
            1,
            "the linked home page"
        );
        assert_eq!(
            web.requests_to(LINKED, "/sitemap-shop.xml").len(),
            1,
            "the linked host's sitemap, once"
        );
        assert_eq!(
            web.requests_to(LINKED, "/only-in-sitemap").len(),
            1,
            "the page only its sitemap lists"
        );
    })
    .await;
}
