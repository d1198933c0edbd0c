//! What the crawler fetches, from the test web's request log: sitemaps first
//! (index, gzip child), lastmod between two crawls, conditional revisits answered 304,
//! noindex / nofollow (meta and header, ours and other bots'), rel=nofollow, media once by
//! URL and by content, JittyBot-Image rules, HTTPS where it works.

mod common;

use std::time::Duration;

use common::*;
use db::testing::TestDb;
use db::Backend;
use testweb::{MultiWeb, Reply};

fn urlset(web: &MultiWeb, host: &str, entries: &[(&str, &str)]) -> String {
    let items: String = entries
        .iter()
        .map(|(p, lastmod)| {
            format!(
                "<url><loc>{}</loc><lastmod>{lastmod}</lastmod></url>",
                web.https_url(host, p)
            )
        })
        .collect();
    format!("<urlset xmlns=\"http://www.sitemaps.org/schemas/sitemap/0.9\">{items}</urlset>")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sitemaps_first_lastmod_and_conditional_revisits() {
    let db = TestDb::new(Backend::Sqlite).await;
    let web = MultiWeb::start(1).await;
    let h = "map.test";
    let index = format!(
        "<sitemapindex><sitemap><loc>{}</loc></sitemap></sitemapindex>",
        web.https_url(h, "/child.xml.gz")
    );
    web.site(h)
        .path("/robots.txt")
        .respond(Reply::robots_txt(&format!(
            "User-agent: *\nAllow: /\nSitemap: {}\n",
            web.https_url(h, "/index.xml")
        )));
    web.site(h).path("/index.xml").respond(
        Reply::ok()
            .header("Content-Type", "application/xml")
            .body(index),
    );
    let first = urlset(&web, h, &[("/a", "2026-01-01"), ("/b", "2026-01-01")]);
    let second = urlset(&web, h, &[("/a", "2026-01-01"), ("/b", "2099-01-01")]);
    web.site(h).path("/child.xml.gz").script([
        Reply::ok()
            .header("Content-Type", "application/gzip")
            .body(gzip(first.as_bytes())),
        Reply::ok()
            .header("Content-Type", "application/gzip")
            .body(gzip(second.as_bytes())),
    ]);
    // The home links to /c, which is not followed: the site has a usable sitemap.
    web.site(h)
        .path("/")
        .respond(html("<a href=/c>c</a>").header("ETag", "\"home\""));
    web.site(h).path("/a").respond(html("a"));
    web.site(h).path("/b").respond(html("b"));
    web.site(h).path("/c").respond(html("c"));
    let warc = tempfile::tempdir().unwrap();
    let f = fetcher(&web, &[(h, 0)]);
    let seeds = [web.http_url(h, "/")];
    // Pages not governed by a lastmod are due again at once, for the second crawl.
    let mut c = config(warc.path());
    c.revisit_after = Duration::ZERO;
    crawl(&db.target, f.clone(), c, &seeds).await;
    let paths: Vec<String> = web.requests().iter().map(|r| r.path.clone()).collect();
    assert_eq!(
        &paths[..3],
        ["/robots.txt", "/index.xml", "/child.xml.gz"],
        "sitemaps first: {paths:?}"
    );
    let pos = |p: &str| paths.iter().position(|x| x == p).unwrap();
    assert!(
        pos("/a") < pos("/") && pos("/b") < pos("/"),
        "listed URLs before the seed: {paths:?}"
    );
    assert!(
        web.requests_to(h, "/c").is_empty(),
        "no link discovery on a sitemap site"
    );
    // Second crawl, everything due again: /a unchanged (lastmod not newer) is not requested,
    // /b's newer lastmod is; the home page is revisited conditionally and answered 304.
    web.clear_requests();
    web.site(h)
        .path("/")
        .script([Reply::status(304).header("ETag", "\"home\"")]);
    let mut c = config(warc.path());
    c.revisit_after = Duration::ZERO;
    crawl(&db.target, f, c, &seeds).await;
    assert!(web.requests_to(h, "/a").is_empty());
    assert_eq!(web.requests_to(h, "/b").len(), 1);
    let home = web.requests_to(h, "/");
    assert_eq!(home.len(), 1);
    assert_eq!(home[0].header("if-none-match"), Some("\"home\""));
    let records = warc_records(warc.path());
    assert!(
        records
            .iter()
            .any(|(t, u)| t == "revisit" && u.ends_with(&format!("{h}:{}/", web.port()))),
        "{records:?}"
    );
    db.cleanup().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn directives_nofollow_media_and_https() {
    let db = TestDb::new(Backend::Sqlite).await;
    let web = MultiWeb::start(2).await;
    let h = "www.pages.test";
    web.site(h).path("/robots.txt").respond(Reply::robots_txt(
        "User-agent: JittyBot-Image\nDisallow: /private-img/\n\nUser-agent: *\nAllow: /\n",
    ));
    web.site(h).path("/sitemap.xml").respond(Reply::status(404));
    web.site(h).path("/").respond(html(
        "<a href=/noindex>1</a><a href=/hdr>2</a><a href=/nofollow>3</a><a href=/other-bot>4</a>\
         <a href=/skip rel=nofollow>5</a><img src=/img/a.png><img src=/private-img/x.png>",
    ));
    web.site(h).path("/noindex").respond(html(
        "<meta name=robots content=noindex><a href=/n1>n</a><img src=/img/n.png>",
    ));
    web.site(h)
        .path("/hdr")
        .respond(html("<a href=/h1>h</a>").header("X-Robots-Tag", "jittybot: nofollow"));
    web.site(h).path("/nofollow").respond(html(
        "<meta name=jittybot content=nofollow><a href=/f1>f</a><img src=/img/b.png>",
    ));
    web.site(h).path("/other-bot").respond(html(
        "<meta name=googlebot content=noindex,nofollow><a href=/o1>o</a><img src=/img/a.png>",
    ));
    web.site(h).path("/n1").respond(html("n1"));
    web.site(h).path("/o1").respond(html("o1"));
    let png = Reply::ok()
        .header("Content-Type", "image/png")
        .body(b"\x89PNG same bytes");
    web.site(h).path("/img/a.png").respond(png.clone());
    web.site(h).path("/img/b.png").respond(png);
    // A host without HTTPS, linked over http.
    let plain = "plain.pages.test";
    web.without_https(plain);
    web.site(plain)
        .path("/robots.txt")
        .respond(Reply::robots_txt("User-agent: *\nAllow: /\n"));
    web.site(plain).path("/x").respond(html("x"));
    web.site(h).path("/o1").respond(html(&format!(
        "<a href={}>plain</a>",
        web.http_url(plain, "/x")
    )));
    let warc = tempfile::tempdir().unwrap();
    let f = fetcher(&web, &[(h, 0), (plain, 1)]);
    crawl(&db.target, f, config(warc.path()), &[web.http_url(h, "/")]).await;
    let got = |p: &str| web.requests_to(h, p).len();
    assert_eq!(got("/noindex"), 1);
    assert_eq!(got("/n1"), 1, "noindex alone still follows links");
    assert_eq!(got("/img/n.png"), 0, "no media of a noindex page");
    assert_eq!(got("/h1"), 0, "X-Robots-Tag jittybot: nofollow");
    assert_eq!(got("/f1"), 0, "meta jittybot nofollow");
    assert_eq!(
        got("/img/b.png"),
        1,
        "media of a nofollow page that was kept"
    );
    assert_eq!(got("/o1"), 1, "another bot's directives do not apply");
    assert_eq!(got("/skip"), 0, "rel=nofollow");
    assert_eq!(got("/img/a.png"), 1, "a media URL is fetched once");
    assert_eq!(got("/private-img/x.png"), 0, "JittyBot-Image rules");
    let img = &web.requests_to(h, "/img/a.png")[0];
    assert!(img
        .header("user-agent")
        .unwrap()
        .contains("JittyBot-Image/"));
    // Every request of the crawl: GET, identified (JittyBot, or JittyBot-Image for media),
    // offering the codings the fetcher decodes.
    for r in web.requests() {
        let agent = r.header("user-agent").unwrap_or_default();
        let media = r.path.contains("img");
        assert_eq!(r.method, "GET", "{}{}", r.host, r.path);
        assert!(
            agent.starts_with("Mozilla/5.0 (compatible; JittyBot")
                && agent.contains(if media {
                    "JittyBot-Image/"
                } else {
                    "JittyBot/"
                })
                && agent.contains("+https://jittybot.test/bot"),
            "{}{}: {agent}",
            r.host,
            r.path
        );
        assert_eq!(
            r.header("accept-encoding"),
            Some("gzip, deflate, br"),
            "{}{}",
            r.host,
            r.path
        );
    }
    assert!(
        web.requests().iter().filter(|r| r.host == h).all(|r| r.tls),
        "HTTPS where it works"
    );
    let x = web.requests_to(plain, "/x");
    assert_eq!(x.len(), 1);
    assert!(!x[0].tls, "HTTP where HTTPS does not work");
    let records = warc_records(warc.path());
    let of = |p: &str| {
        records
            .iter()
            .filter(|(_, u)| u.ends_with(p))
            .map(|(t, _)| t.as_str())
            .collect::<Vec<_>>()
    };
    assert_eq!(
        of("/noindex"),
        ["metadata"],
        "a noindex page keeps a metadata record only"
    );
    assert!(
        of("/img/b.png").contains(&"revisit"),
        "same bytes stored once: {:?}",
        of("/img/b.png")
    );
    db.cleanup().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn redirects_are_revisited_at_their_end_and_media_fetched_once_across_runs() {
    let db = TestDb::new(Backend::Sqlite).await;
    let web = MultiWeb::start(1).await;
    let h = "moved.test";
    web.site(h)
        .path("/robots.txt")
        .respond(Reply::robots_txt("User-agent: *\nAllow: /\n"));
    web.site(h).path("/sitemap.xml").respond(Reply::status(404));
    web.site(h).path("/").script([
        html("<a href=/old>old</a><img src=/img/a.png>"),
        // The second time the page shows the same image bytes under another name too.
        html("<a href=/old>old</a><img src=/img/a.png><img src=/img/copy.png>"),
    ]);
    web.site(h)
        .path("/old")
        .respond(Reply::redirect(301, &web.https_url(h, "/new")));
    web.site(h)
        .path("/new")
        .respond(html("new").header("ETag", "\"n1\""));
    let png = Reply::ok()
        .header("Content-Type", "image/png")
        .body(b"\x89PNG once");
    web.site(h).path("/img/a.png").respond(png.clone());
    web.site(h).path("/img/copy.png").respond(png);
    let warc = tempfile::tempdir().unwrap();
    let f = fetcher(&web, &[(h, 0)]);
    let seeds = [web.http_url(h, "/")];
    let mut c = config(warc.path());
    c.revisit_after = Duration::ZERO;
    crawl(&db.target, f.clone(), c.clone(), &seeds).await;
    assert_eq!(web.requests_to(h, "/old").len(), 1);
    assert_eq!(web.requests_to(h, "/new").len(), 1);
    let store = crawl::store::Store::open(&db.target).await.unwrap();
    let old = crawl::normal::NormalUrl::parse(&web.https_url(h, "/old")).unwrap();
    let chain = store.url_redirects(old.key()).await.unwrap().unwrap();
    let chain: serde_json::Value = serde_json::from_str(&chain).unwrap();
    assert_eq!(chain["hops"][0]["status"], 301, "{chain}");
    assert_eq!(chain["final_url"], web.https_url(h, "/new"), "{chain}");
    store.close().await;

    // Everything is due again: /old is revisited at /new, conditionally, without the hop;
    // the image is not fetched again; the same bytes under a new name are stored once.
    web.clear_requests();
    web.site(h)
        .path("/new")
        .respond(Reply::status(304).header("ETag", "\"n1\""));
    crawl(&db.target, f, c, &seeds).await;
    assert!(web.requests_to(h, "/old").is_empty(), "no hop again");
    let new = web.requests_to(h, "/new");
    assert_eq!(new.len(), 1);
    assert_eq!(new[0].header("if-none-match"), Some("\"n1\""));
    assert!(web.requests_to(h, "/img/a.png").is_empty(), "media once");
    assert_eq!(web.requests_to(h, "/img/copy.png").len(), 1);
    let records = warc_records(warc.path());
    let of = |p: &str| {
        records
            .iter()
            .filter(|(_, u)| u.ends_with(p))
            .map(|(t, _)| t.as_str())
            .collect::<Vec<_>>()
    };
    assert_eq!(of("/img/a.png"), ["request", "response"]);
    assert_eq!(of("/img/copy.png"), ["revisit"], "stored once");
    db.cleanup().await;
}
