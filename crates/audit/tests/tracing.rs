//! `RUST_LOG=audit=debug` (with `jittybot`, or any `tracing` subscriber) shows a span per
//! analysis and per step, an event per request and the result; `fetch=debug` adds the
//! pipeline's own spans inside them.

use audit::crawlers::BOT_TOKEN;
use fetch::testing::{capture_log, Reply, ScriptedWeb};
use fetch::FetchConfig;

#[tokio::test(start_paused = true)]
async fn an_analysis_and_its_steps_are_traced() {
    let captured = capture_log("audit=debug");

    let web = ScriptedWeb::new();
    web.route(
        "https://a.test/robots.txt",
        Reply::robots_txt("User-agent: *\nDisallow: /x\nSitemap: https://a.test/s.xml\n"),
    );
    web.route(
        "https://a.test/",
        Reply::ok()
            .header("content-type", "text/html")
            .body("<head><meta name=robots content=noindex></head>"),
    );
    let fetcher = web.fetcher_with(FetchConfig::new(BOT_TOKEN, "https://example.test/bot"));
    audit::analyze(&fetcher, &"https://a.test/".parse().unwrap())
        .await
        .unwrap();

    let log = captured.text();
    for expected in [
        "analysis{url=https://a.test/}",
        "robots_txt: audit::run: robots.txt outcome=rules",
        "page: audit::run: request url=https://a.test/ purpose=Page answered=true",
        "page head",
        "robots_meta=1",
        "sitemaps: audit::run: request url=https://a.test/s.xml purpose=Sitemap",
        "analysed",
        "grade=",
    ] {
        assert!(log.contains(expected), "{expected:?} missing from:\n{log}");
    }
}
