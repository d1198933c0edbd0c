//! A second crawl of an unchanged web costs only robots.txt, sitemaps
//! and 304s. The test web's servers answer conditional requests as real servers do
//! (`Reply::conditional`), and every assertion is read from their request log: what was
//! requested, with which validators, how it was answered and how many body bytes it cost.

mod common;

use std::time::Duration;

use common::*;
use db::testing::on_both_backends;
use testweb::{MultiWeb, RecordedRequest, Reply};

const MAP: &str = "map.test";
const LINKS: &str = "links.test";
/// A `Last-Modified` in the past (a Tuesday).
const LM_1: &str = "Tue, 01 Dec 2026 10:00:00 GMT";
/// Another one (a Monday).
const LM_2: &str = "Mon, 02 Nov 2026 08:30:00 GMT";

/// A site with sitemaps (an index, a plain child with `Last-Modified` only and a gzip child
/// with both validators), listed pages with and without `lastmod`, an image, and a seed page
/// that is not listed.
fn sitemap_site(web: &MultiWeb) {
    let site = web.site(MAP);
    site.path("/robots.txt").respond(
        Reply::robots_txt(&format!(
            "User-agent: *\nAllow: /\nSitemap: {}\n",
            web.https_url(MAP, "/index.xml")
        ))
        .header("ETag", "\"robots-map\"")
        .conditional(),
    );
    let index = format!(
        "<sitemapindex><sitemap><loc>{}</loc></sitemap><sitemap><loc>{}</loc></sitemap></sitemapindex>",
        web.https_url(MAP, "/pages.xml"),
        web.https_url(MAP, "/more.xml.gz")
    );
    site.path("/index.xml").respond(
        Reply::ok()
            .header("Content-Type", "application/xml")
            .header("ETag", "\"index\"")
            .body(index)
            .conditional(),
    );
    let pages = format!(
        "<urlset><url><loc>{}</loc><lastmod>2026-01-01</lastmod></url>\
         <url><loc>{}</loc><lastmod>2026-02-01T10:00:00Z</lastmod></url></urlset>",
        web.https_url(MAP, "/a"),
        web.https_url(MAP, "/b")
    );
    site.path("/pages.xml").respond(
        Reply::ok()
            .header("Content-Type", "application/xml")
            .header("Last-Modified", LM_1)
            .body(pages)
            .conditional(),
    );
    let more = format!(
        "<urlset><url><loc>{}</loc></url></urlset>",
        web.https_url(MAP, "/c")
    );
    site.path("/more.xml.gz").respond(
        Reply::ok()
            .header("Content-Type", "application/gzip")
            .header("ETag", "\"more\"")
            .header("Last-Modified", LM_2)
            .body(gzip(more.as_bytes()))
            .conditional(),
    );
    // The seed links to /d, not followed: the site has a usable sitemap.
    site.path("/").respond(
        html("<a href=/d>d</a>")
            .header("ETag", "\"map-home\"")
            .conditional(),
    );
    site.path("/a").respond(
        html("<img src=/img/a.png>a")
            .header("ETag", "W/\"a\"")
            .conditional(),
    );
    site.path("/b")
        .respond(html("b").header("Last-Modified", LM_1).conditional());
    site.path("/c").respond(
        html("c")
            .header("ETag", "\"c\"")
            .header("Last-Modified", LM_2)
            .conditional(),
    );
    site.path("/d").respond(html("d"));
    site.path("/img/a.png").respond(
        Reply::ok()
            .header("Content-Type", "image/png")
            .header("ETag", "\"png\"")
            .body(b"\x89PNG a")
            .conditional(),
    );
}

/// A site without sitemaps, crawled link by link: pages with an `ETag` only, a
/// `Last-Modified` only, both, and a redirect to a page with an `ETag`.
fn link_site(web: &MultiWeb) {
    let site = web.site(LINKS);
    site.path("/robots.txt").respond(
        Reply::robots_txt("User-agent: *\nAllow: /\n")
            .header("Last-Modified", LM_2)
            .conditional(),
    );
    site.path("/sitemap.xml").respond(Reply::status(404));
    site.path("/").respond(
        html("<a href=/p1>1</a><a href=/p2>2</a><a href=/old>old</a>")
            .header("ETag", "\"links-home\"")
            .conditional(),
    );
    site.path("/p1").respond(
        html("<a href=/>home</a><a href=/p2>2</a>")
            .header("Last-Modified", LM_1)
            .conditional(),
    );
    site.path("/p2").respond(
        html("<a href=/p1>1</a>")
            .header("ETag", "\"p2\"")
            .header("Last-Modified", LM_2)
            .conditional(),
    );
    site.path("/old")
        .respond(Reply::redirect(301, &web.https_url(LINKS, "/new")));
    site.path("/new")
        .respond(html("new").header("ETag", "\"new\"").conditional());
}

fn paths(log: &[RecordedRequest]) -> Vec<String> {
    log.iter()
        .map(|r| format!("{} {}{} -> {}", r.method, r.host, r.path, r.status))
        .collect()
}

/// Every request of `log` to `host` `path`.
fn to<'a>(log: &'a [RecordedRequest], host: &str, path: &str) -> Vec<&'a RecordedRequest> {
    log.iter()
        .filter(|r| r.host == host && r.path == path)
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_second_crawl_of_an_unchanged_web_costs_only_robots_txt_sitemaps_and_304s() {
    on_both_backends(|target| async move {
        let web = MultiWeb::start(2).await;
        sitemap_site(&web);
        link_site(&web);
        let warc = tempfile::tempdir().unwrap();
        let f = fetcher(&web, &[(MAP, 0), (LINKS, 1)]);
        let seeds = [web.http_url(MAP, "/"), web.http_url(LINKS, "/")];
        // The first crawl, with the default revisit interval (7 days).
        crawl(&target, f.clone(), config(warc.path()), &seeds).await;
        let first = web.requests();
        for (host, path) in [
            (MAP, "/"),
            (MAP, "/a"),
            (MAP, "/b"),
            (MAP, "/c"),
            (MAP, "/img/a.png"),
            (LINKS, "/"),
            (LINKS, "/p1"),
            (LINKS, "/p2"),
            (LINKS, "/old"),
            (LINKS, "/new"),
        ] {
            let got = to(&first, host, path);
            assert_eq!(got.len(), 1, "{host}{path} once: {:?}", paths(&first));
            assert_eq!(got[0].status, if path == "/old" { 301 } else { 200 });
        }
        assert!(
            to(&first, MAP, "/d").is_empty(),
            "no links on a sitemap site"
        );

        // The second crawl: every page not governed by a sitemap lastmod is due at once.
        web.clear_requests();
        let mut c = config(warc.path());
        c.revisit_after = Duration::ZERO;
        let (summary, _) = crawl(&target, f, c, &seeds).await;
        assert_eq!(summary.reason, crawl::crawler::EndReason::Finished);
        let second = web.requests();
        let shown = paths(&second);
        let sitemaps = ["/index.xml", "/pages.xml", "/more.xml.gz"];
        for r in &second {
            let what = format!("{} {}{} -> {}", r.method, r.host, r.path, r.status);
            assert_eq!(r.method, "GET", "{what}");
            if r.path == "/sitemap.xml" {
                // The link-only site has no sitemap: the one try per run is a 404.
                assert_eq!((r.host.as_str(), r.status), (LINKS, 404), "{what}");
                continue;
            }
            // robots.txt (if its cached copy needed revalidation), sitemaps and pages:
            // conditional, answered 304, no body sent again.
            assert!(
                r.header("if-none-match").is_some() || r.header("if-modified-since").is_some(),
                "unconditional: {what} in {shown:?}"
            );
            assert_eq!(r.status, 304, "{what} in {shown:?}");
            assert_eq!(r.body_bytes, 0, "{what}");
        }
        // Each sitemap once, with the validators its last answer carried.
        let one = |host: &str, path: &str| {
            let got = to(&second, host, path);
            assert_eq!(got.len(), 1, "{host}{path} once: {shown:?}");
            got[0].clone()
        };
        assert_eq!(
            one(MAP, "/index.xml").header("if-none-match"),
            Some("\"index\"")
        );
        let pages_xml = one(MAP, "/pages.xml");
        assert_eq!(pages_xml.header("if-modified-since"), Some(LM_1));
        assert_eq!(pages_xml.header("if-none-match"), None);
        let more = one(MAP, "/more.xml.gz");
        assert_eq!(more.header("if-none-match"), Some("\"more\""));
        assert_eq!(more.header("if-modified-since"), Some(LM_2));
        for s in sitemaps {
            assert!(to(&second, LINKS, s).is_empty());
        }
        // Listed pages whose lastmod is not newer than their fetch are not requested; the
        // image is never fetched again; a link of a sitemap site is still not followed.
        for p in ["/a", "/b", "/img/a.png", "/d"] {
            assert!(to(&second, MAP, p).is_empty(), "{p} requested: {shown:?}");
        }
        // Pages due by --revisit-after: If-None-Match (stored ETag) and If-Modified-Since
        // (stored Last-Modified), each exactly as the server sent it.
        let map_home = one(MAP, "/");
        assert_eq!(map_home.header("if-none-match"), Some("\"map-home\""));
        assert_eq!(map_home.header("if-modified-since"), None);
        let c_page = one(MAP, "/c");
        assert_eq!(c_page.header("if-none-match"), Some("\"c\""));
        assert_eq!(c_page.header("if-modified-since"), Some(LM_2));
        assert_eq!(
            one(LINKS, "/").header("if-none-match"),
            Some("\"links-home\"")
        );
        let p1 = one(LINKS, "/p1");
        assert_eq!(p1.header("if-modified-since"), Some(LM_1));
        assert_eq!(p1.header("if-none-match"), None);
        let p2 = one(LINKS, "/p2");
        assert_eq!(p2.header("if-none-match"), Some("\"p2\""));
        assert_eq!(p2.header("if-modified-since"), Some(LM_2));
        // A redirect is revisited at its end, not through the hop again.
        assert!(to(&second, LINKS, "/old").is_empty(), "{shown:?}");
        assert_eq!(one(LINKS, "/new").header("if-none-match"), Some("\"new\""));
        let bytes: usize = second.iter().map(|r| r.body_bytes).sum();
        assert_eq!(
            bytes,
            to(&second, LINKS, "/sitemap.xml")
                .iter()
                .map(|r| r.body_bytes)
                .sum::<usize>(),
            "no body but the 404 of the missing sitemap: {shown:?}"
        );
        // The 304s are WARC revisit records (server-not-modified).
        let records = warc_records(warc.path());
        for (host, path) in [(MAP, "/c"), (LINKS, "/p1"), (LINKS, "/new")] {
            let uri = web.https_url(host, path);
            assert!(
                records.iter().any(|(t, u)| t == "revisit" && *u == uri),
                "no revisit record for {uri}"
            );
        }
    })
    .await;
}
