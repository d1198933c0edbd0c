//! Interactive mode: a crawl whose pages are rendered in headless Chromium
//! requests from the test web exactly what the rules allow (its request log), follows links
//! only a browser sees, and archives the rendered DOM and every sub-request.
//! Skipped, with a message, only when no Chromium is installed.

mod common;

use std::time::Duration;

use common::*;
use crawl::crawler::Interactive;
use db::testing::TestDb;
use db::Backend;
use testweb::{script_links, script_pages, MultiWeb, RecordedRequest, Reply, ScriptPages};

const PACE: Duration = Duration::from_millis(200);

/// The tests of this file count browser launches: one at a time.
static BROWSER_TESTS: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());

fn js(body: &str) -> Reply {
    Reply::ok()
        .header("Content-Type", "text/javascript")
        .body(body)
}

fn png() -> Reply {
    Reply::ok()
        .header("Content-Type", "image/png")
        .body(b"\x89PNG\r\n\x1a\nnot really")
}

/// shop.test's home builds everything by script; cdn.test serves a script of its own.
fn shop(web: &MultiWeb) {
    let port = web.port();
    web.site("shop.test")
        .path("/robots.txt")
        .respond(Reply::robots_txt(
            "User-agent: JittyBot\nDisallow: /secret/\n\n\
         User-agent: JittyBot-Image\nDisallow: /private-img/\n",
        ));
    web.site("shop.test")
        .path("/sitemap.xml")
        .respond(Reply::status(404));
    web.site("shop.test").path("/").respond(html(
        "<!doctype html><html><head><script src=\"/app.js\"></script></head>\
         <body><p>shop</p></body></html>",
    ));
    let app = format!(
        "document.addEventListener('DOMContentLoaded', function () {{
           var a = document.createElement('a'); a.href = '/js-only'; document.body.appendChild(a);
           fetch('/secret/prices.json').catch(function () {{}});
           fetch('/api/cart', {{method: 'POST', body: 'x'}}).catch(function () {{}});
           ['/img/shown.png', '/private-img/hidden.png'].forEach(function (src) {{
             var i = document.createElement('img'); i.src = src; document.body.appendChild(i);
           }});
           ['lib.js', 'blocked.js'].forEach(function (name) {{
             var s = document.createElement('script');
             s.src = 'https://cdn.test:{port}/' + name; document.head.appendChild(s);
           }});
         }});"
    );
    web.site("shop.test").path("/app.js").respond(js(&app));
    web.site("shop.test").path("/img/shown.png").respond(png());
    web.site("shop.test")
        .path("/private-img/hidden.png")
        .respond(png());
    let many: String = (0..4)
        .map(|i| format!("<script src=\"/s{i}.js\"></script>"))
        .collect();
    web.site("shop.test")
        .path("/js-only")
        .respond(html(&format!(
            "<html><head>{many}</head><body>js only</body></html>"
        )));
    for i in 0..4 {
        web.site("shop.test")
            .path(&format!("/s{i}.js"))
            .respond(js("var x = 1;"));
    }
    web.site("shop.test").path("/from-cdn").respond(html(
        "<html><body><img src=\"/img/shown.png\"></body></html>",
    ));
    web.site("cdn.test")
        .path("/robots.txt")
        .respond(Reply::robots_txt("User-agent: *\nDisallow: /blocked.js\n"));
    web.site("cdn.test").path("/lib.js").respond(js(
        "var c = document.createElement('a'); c.href = '/from-cdn'; document.body.appendChild(c);",
    ));
    web.site("cdn.test")
        .path("/blocked.js")
        .respond(js("document.title = 'leaked';"));
}

fn count(log: &[RecordedRequest], host: &str, path: &str) -> usize {
    log.iter()
        .filter(|r| r.host == host && r.path == path)
        .count()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_interactive_crawl_requests_only_what_the_rules_allow() {
    if render::find_chromium().is_none() {
        eprintln!("SKIPPED: no Chromium installed (set JITTYBOT_CHROMIUM or install chromium)");
        return;
    }
    let _one = BROWSER_TESTS.lock().await;
    let web = MultiWeb::start(2).await;
    shop(&web);
    let db = TestDb::new(Backend::Sqlite).await;
    let warc = tempfile::tempdir().unwrap();
    let mut config = config(warc.path());
    config.pacer.pace = PACE;
    config.interactive = Interactive::All;
    let fetcher = fetcher(&web, &[("shop.test", 0), ("cdn.test", 1)]);
    let seed = web.https_url("shop.test", "/");
    let _ = crawl(&db.target, fetcher, config, std::slice::from_ref(&seed)).await;
    let log = web.requests();

    assert_eq!(
        count(&log, "shop.test", "/"),
        1,
        "the page once: the browser is given it"
    );
    assert_eq!(
        count(&log, "shop.test", "/js-only"),
        1,
        "a link only the browser sees"
    );
    assert_eq!(
        count(&log, "shop.test", "/from-cdn"),
        1,
        "a link a third party's script made"
    );
    assert_eq!(count(&log, "shop.test", "/secret/prices.json"), 0);
    assert_eq!(count(&log, "shop.test", "/api/cart"), 0);
    assert!(log.iter().all(|r| r.method == "GET"), "nothing but GET");
    assert_eq!(count(&log, "shop.test", "/private-img/hidden.png"), 0);
    let shown: Vec<&RecordedRequest> = log.iter().filter(|r| r.path == "/img/shown.png").collect();
    assert_eq!(shown.len(), 1, "media fetched once");
    assert!(shown[0]
        .header("user-agent")
        .is_some_and(|ua| ua.contains("JittyBot-Image/")));
    let cdn: Vec<&str> = log
        .iter()
        .filter(|r| r.host == "cdn.test")
        .map(|r| r.path.as_str())
        .collect();
    assert_eq!(
        cdn,
        vec!["/robots.txt", "/lib.js"],
        "robots.txt first, obeyed"
    );
    for i in 0..4 {
        assert_eq!(count(&log, "shop.test", &format!("/s{i}.js")), 1);
    }
    // From the page on (the page, its sub-requests, later pages and media); the sitemap
    // reading before it is the crawler's own, tested in `politeness.rs`.
    let page_at = log
        .iter()
        .find(|r| r.host == "shop.test" && r.path == "/")
        .map(|r| r.at);
    let mut times: Vec<_> = log
        .iter()
        .filter(|r| r.host == "shop.test" && Some(r.at) >= page_at)
        .map(|r| r.at)
        .collect();
    times.sort();
    let gaps: Vec<Duration> = times.windows(2).map(|w| w[1] - w[0]).collect();
    assert!(
        gaps.iter().all(|g| *g + Duration::from_millis(30) >= PACE),
        "one pace for the crawler's and the pages' requests: {gaps:?} {:?}",
        log.iter()
            .filter(|r| r.host == "shop.test")
            .map(|r| (r.path.as_str(), r.tls, r.at))
            .collect::<Vec<_>>()
    );

    let records = warc_records(warc.path());
    assert!(
        records
            .iter()
            .any(|(kind, uri)| kind == "conversion" && uri == &seed),
        "the rendered DOM is archived: {records:?}"
    );
    for path in ["/app.js", "/s0.js"] {
        let uri = web.https_url("shop.test", path);
        for kind in ["request", "response"] {
            assert!(
                records.iter().any(|(k, u)| k == kind && u == &uri),
                "{kind} of {uri}"
            );
        }
    }
    let cdn_robots = web.https_url("cdn.test", "/robots.txt");
    assert!(
        records
            .iter()
            .any(|(k, u)| k == "response" && u == &cdn_robots),
        "the third party's robots.txt fetch is archived"
    );
}

/// Sites of script pages whose links only a running script finds: every link built by
/// script is requested once, each origin keeps its pace across the pages' sub-requests and
/// the crawler's own, and the crawl starts no more browsers than its pool has slots.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_link_built_by_script_is_followed_with_few_browsers() {
    if render::find_chromium().is_none() {
        eprintln!("SKIPPED: no Chromium installed (set JITTYBOT_CHROMIUM or install chromium)");
        return;
    }
    let _one = BROWSER_TESTS.lock().await;
    const SITES: usize = 4;
    const PAGES: u32 = 12;
    let pace = Duration::from_millis(100);
    let web = MultiWeb::start(SITES).await;
    web.generate(script_pages(ScriptPages {
        host_suffix: ".web.test".into(),
        pages: PAGES,
    }));
    let hosts: Vec<String> = (0..SITES).map(|i| format!("s{i}.web.test")).collect();
    let pins: Vec<(&str, usize)> = hosts
        .iter()
        .enumerate()
        .map(|(i, h)| (h.as_str(), i))
        .collect();
    let db = TestDb::new(Backend::Sqlite).await;
    let warc = tempfile::tempdir().unwrap();
    let mut config = config(warc.path());
    config.pacer.pace = pace;
    config.interactive = Interactive::All;
    let seeds: Vec<String> = hosts.iter().map(|h| web.https_url(h, "/p0.html")).collect();
    let launched = render::browser::launches();
    let _ = crawl(&db.target, fetcher(&web, &pins), config, &seeds).await;
    let started = render::browser::launches() - launched;
    let log = web.requests();

    for host in &hosts {
        for n in 0..PAGES {
            assert_eq!(
                count(&log, host, &format!("/data/{n}.json")),
                1,
                "{host}: page {n} rendered once"
            );
            for t in script_links(n, PAGES) {
                assert_eq!(
                    count(&log, host, &format!("/p{t}.html")),
                    1,
                    "{host}: /p{t}.html"
                );
            }
        }
        let mut times: Vec<_> = log
            .iter()
            .filter(|r| &r.host == host)
            .map(|r| r.at)
            .collect();
        times.sort();
        for w in times.windows(2) {
            assert!(
                w[1] - w[0] + Duration::from_millis(30) >= pace,
                "{host}: one pace"
            );
        }
    }
    assert!(
        (1..=render::pool_size()).contains(&started),
        "{started} browsers for {} pages (a pool of {})",
        SITES * PAGES as usize,
        render::pool_size()
    );
}
