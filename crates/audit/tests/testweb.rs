//! Analyses of crafted sites on the test web (127.0.0.1 only), through the real fetcher.
//!
//! Timing budgets are scaled down here with [`Limits`] so the tests run on the real clock in
//! about a second; the full-size budgets are pinned on the paused clock in `scheduling.rs`.

mod common;

use std::time::Duration;

use audit::crawlers::BOT_TOKEN;
use audit::report::{RobotsStatus, SkipReason};
use audit::{analyze, analyze_with, CheckId, Limits};
use common::{config_for, make_fetcher, url, URLSET};
use fetch::Fetcher;
use testweb::{Reply, TestWeb};

fn too_many_redirects_title(analysis: &audit::Analysis) -> String {
    analysis
        .findings
        .iter()
        .find(|f| f.id == CheckId::FetchTooManyRedirects)
        .map(|f| f.title())
        .unwrap_or_default()
}

/// A site whose robots.txt declares its own sitemap and two on another host, one of them
/// disallowed there; its page says noindex in a meta tag and noarchive to Googlebot in a header.
fn cross_host_site(web: &TestWeb) {
    let www_sitemap = web.http_url("www.example.test", "/sitemap.xml");
    let www_private = web.http_url("www.example.test", "/private/s.xml");
    let own_sitemap = web.http_url("example.test", "/sitemap.xml");
    web.site("example.test").path("/robots.txt").respond(Reply::robots_txt(&format!(
        "User-agent: *\nDisallow: /admin/\n\nSitemap: {own_sitemap}\nSitemap: {www_sitemap}\nSitemap: {www_private}\n"
    )));
    web.site("example.test").path("/").respond(
        Reply::ok()
            .header("Content-Type", "text/html; charset=utf-8")
            .header("X-Robots-Tag", "googlebot: noarchive")
            .body("<html><head><meta name=\"robots\" content=\"noindex\"></head><body>secret body</body></html>"),
    );
    web.site("example.test").path("/sitemap.xml").respond(
        Reply::ok()
            .header("Content-Type", "application/xml")
            .body(URLSET),
    );
    web.site("www.example.test")
        .path("/robots.txt")
        .respond(Reply::robots_txt("User-agent: *\nDisallow: /private/\n"));
    web.site("www.example.test").path("/sitemap.xml").respond(
        Reply::ok()
            .header("Content-Type", "application/xml")
            .body(URLSET),
    );
    web.site("www.example.test")
        .path("/private/s.xml")
        .respond(Reply::ok().body(URLSET));
}

#[tokio::test]
async fn a_whole_site_with_a_cross_host_sitemap() {
    let web = TestWeb::start().await;
    cross_host_site(&web);

    let fetcher = make_fetcher(&web, &["example.test", "www.example.test"]);
    let analysis = analyze(&fetcher, &url(&web.http_url("example.test", "/")))
        .await
        .unwrap();

    assert_eq!(analysis.robots.outcome, RobotsStatus::Rules);
    assert_eq!(analysis.robots.status.map(|s| s.as_u16()), Some(200));
    assert_eq!(analysis.page.status.map(|s| s.as_u16()), Some(200));
    assert_eq!(
        analysis.page.x_robots_tag,
        vec!["googlebot: noarchive".to_owned()]
    );
    assert_eq!(analysis.page.meta.len(), 1);
    assert!(analysis
        .findings
        .iter()
        .any(|f| f.id == CheckId::PageNoindex));
    assert_eq!(analysis.sitemaps[0].looks_like_sitemap, Some(true));
    assert_eq!(analysis.sitemaps[1].looks_like_sitemap, Some(true));
    assert!(matches!(
        analysis.sitemaps[2].skipped,
        Some(SkipReason::Disallowed { .. })
    ));

    // The other host's robots.txt was read before its sitemap; the forbidden one never asked.
    let www_robots = web.requests_to("www.example.test", "/robots.txt");
    let www_map = web.requests_to("www.example.test", "/sitemap.xml");
    assert_eq!(www_robots.len(), 1);
    assert_eq!(www_map.len(), 1);
    assert!(www_robots[0].at <= www_map[0].at);
    assert!(web
        .requests_to("www.example.test", "/private/s.xml")
        .is_empty());
    // Every request names the bot, and only GET is used.
    for request in web.requests() {
        assert_eq!(request.method, "GET");
        assert!(request
            .header("user-agent")
            .unwrap_or_default()
            .contains(BOT_TOKEN));
    }
    let json = serde_json::to_string(&analysis).unwrap();
    assert!(!json.contains("secret body"));
}

#[tokio::test]
async fn a_server_error_stops_everything_else() {
    let web = TestWeb::start().await;
    web.site("down.test")
        .path("/robots.txt")
        .respond(Reply::status(503));
    web.site("down.test")
        .path("/")
        .respond(Reply::ok().body("<head></head>"));
    let fetcher = make_fetcher(&web, &["down.test"]);
    let analysis = analyze(&fetcher, &url(&web.http_url("down.test", "/")))
        .await
        .unwrap();
    assert!(analysis
        .findings
        .iter()
        .any(|f| f.id == CheckId::FetchServerError));
    assert_eq!(web.requests().len(), 1);
    assert!(!analysis.page.requested);
}

#[tokio::test]
async fn a_disallowed_page_is_never_requested() {
    let web = TestWeb::start().await;
    web.site("shy.test")
        .path("/robots.txt")
        .respond(Reply::robots_txt(
            "User-agent: RobotsTxtParser\nDisallow: /\n",
        ));
    let fetcher = make_fetcher(&web, &["shy.test"]);
    let analysis = analyze(&fetcher, &url(&web.http_url("shy.test", "/page")))
        .await
        .unwrap();
    assert!(web.requests_to("shy.test", "/page").is_empty());
    assert!(matches!(
        analysis.page.skipped,
        Some(SkipReason::Disallowed { line: 2, .. })
    ));
    assert!(analysis
        .findings
        .iter()
        .any(|f| f.id == CheckId::PolicyBotBlocked));
}

#[tokio::test]
async fn sitemaps_are_read_two_kilobytes_at_most() {
    let web = TestWeb::start().await;
    let big = format!("{URLSET}{}", " ".repeat(200_000));
    let sitemap = web.http_url("big.test", "/sitemap.xml");
    web.site("big.test")
        .path("/robots.txt")
        .respond(Reply::robots_txt(&format!(
            "User-agent: *\nDisallow:\nSitemap: {sitemap}\n"
        )));
    web.site("big.test")
        .path("/sitemap.xml")
        .respond(Reply::ok().body(big));
    let fetcher = make_fetcher(&web, &["big.test"]);
    let analysis = analyze(&fetcher, &url(&web.http_url("big.test", "/")))
        .await
        .unwrap();
    assert_eq!(analysis.sitemaps[0].looks_like_sitemap, Some(true));
    assert_eq!(analysis.sitemaps[0].status.map(|s| s.as_u16()), Some(200));
}

#[tokio::test]
async fn robots_redirect_limit_and_cross_host_redirects() {
    let web = TestWeb::start().await;
    for i in 0..7 {
        let from = if i == 0 {
            "/robots.txt".to_owned()
        } else {
            format!("/r{i}")
        };
        web.site("loop.test")
            .path(&from)
            .respond(Reply::redirect(301, &format!("/r{}", i + 1)));
    }
    let fetcher = make_fetcher(&web, &["loop.test"]);
    let analysis = analyze(&fetcher, &url(&web.http_url("loop.test", "/")))
        .await
        .unwrap();
    assert!(analysis
        .findings
        .iter()
        .any(|f| f.id == CheckId::FetchTooManyRedirects));
    assert_eq!(analysis.robots.redirects.len(), 6);
    assert_eq!(web.requests().len(), 6);
    assert!(
        too_many_redirects_title(&analysis).contains("more than 5 times"),
        "{}",
        too_many_redirects_title(&analysis)
    );

    let web = TestWeb::start().await;
    let target = web.http_url("cdn.test", "/robots.txt");
    web.site("moved.test")
        .path("/robots.txt")
        .respond(Reply::redirect(301, &target));
    web.site("cdn.test")
        .path("/robots.txt")
        .respond(Reply::robots_txt("User-agent: *\nDisallow: /x\n"));
    let fetcher = make_fetcher(&web, &["moved.test", "cdn.test"]);
    let analysis = analyze(&fetcher, &url(&web.http_url("moved.test", "/")))
        .await
        .unwrap();
    assert!(analysis
        .findings
        .iter()
        .any(|f| f.id == CheckId::FetchRedirectOtherHost));
    assert_eq!(analysis.robots.outcome, RobotsStatus::Rules);
}

#[tokio::test]
async fn crawl_delay_budget_skips_and_reports() {
    let web = TestWeb::start().await;
    let a = web.http_url("slow.test", "/a.xml");
    let b = web.http_url("slow.test", "/b.xml");
    web.site("slow.test").path("/robots.txt").respond(Reply::robots_txt(&format!(
        "User-agent: RobotsTxtParser\nCrawl-delay: 0.3\nDisallow: /x\n\nSitemap: {a}\nSitemap: {b}\n"
    )));
    web.site("slow.test")
        .path("/a.xml")
        .respond(Reply::ok().body(URLSET));
    web.site("slow.test")
        .path("/b.xml")
        .respond(Reply::ok().body(URLSET));
    let limits = Limits {
        crawl_delay_budget: Duration::from_millis(500),
        ..Limits::default()
    };
    let fetcher = make_fetcher(&web, &["slow.test"]);
    let analysis = analyze_with(&fetcher, &url(&web.http_url("slow.test", "/")), &limits)
        .await
        .unwrap();
    // robots.txt, then the page 0.3 s later; the first sitemap would need 0.3 s more.
    assert_eq!(web.requests_to("slow.test", "/").len(), 1);
    assert!(web.requests_to("slow.test", "/a.xml").is_empty());
    assert!(matches!(
        analysis.sitemaps[0].skipped,
        Some(SkipReason::CrawlDelayBudget { .. })
    ));
    // The messages name the budget in effect, not the published one.
    let titles: Vec<String> = analysis.findings.iter().map(|f| f.title()).collect();
    assert!(
        titles.iter().any(|t| t.contains("past the 0.5 s budget")),
        "{titles:#?}"
    );
    let robots_at = web.requests_to("slow.test", "/robots.txt")[0].at;
    let page_at = web.requests_to("slow.test", "/")[0].at;
    assert!(page_at.duration_since(robots_at) >= Duration::from_millis(290));
}

#[tokio::test]
async fn sitemap_time_budget_ends_the_sitemap_phase() {
    let web = TestWeb::start().await;
    let mut robots = String::from("User-agent: *\nDisallow:\n");
    for i in 0..4 {
        let url = web.http_url("late.test", &format!("/s{i}.xml"));
        robots.push_str(&format!("Sitemap: {url}\n"));
        web.site("late.test")
            .path(&format!("/s{i}.xml"))
            .respond(Reply::ok().body(URLSET).delay(Duration::from_millis(400)));
    }
    web.site("late.test")
        .path("/robots.txt")
        .respond(Reply::robots_txt(&robots));
    let limits = Limits {
        sitemap_time_budget: Duration::from_millis(700),
        ..Limits::default()
    };
    let fetcher = make_fetcher(&web, &["late.test"]);
    let analysis = analyze_with(&fetcher, &url(&web.http_url("late.test", "/")), &limits)
        .await
        .unwrap();
    // Started at about 0 and 0.4 s; the second is cut at 0.7 s, and none starts after.
    assert_eq!(web.requests_to("late.test", "/s0.xml").len(), 1);
    assert_eq!(web.requests_to("late.test", "/s1.xml").len(), 1);
    assert_eq!(analysis.sitemaps[0].looks_like_sitemap, Some(true));
    assert_eq!(
        analysis.sitemaps[1].skipped,
        Some(SkipReason::TimeBudget { budget_ms: 700 })
    );
    assert!(web.requests_to("late.test", "/s2.xml").is_empty());
    assert_eq!(
        analysis.sitemaps[2].skipped,
        Some(SkipReason::TimeBudget { budget_ms: 700 })
    );
    assert_eq!(
        analysis.sitemaps[3].skipped,
        Some(SkipReason::TimeBudget { budget_ms: 700 })
    );
    let titles: Vec<String> = analysis.findings.iter().map(|f| f.title()).collect();
    assert!(
        titles
            .iter()
            .any(|t| t.contains("within the 0.7 s sitemap budget")),
        "{titles:#?}"
    );
}

#[tokio::test]
async fn a_head_end_inside_a_script_or_comment_does_not_hide_a_later_noindex() {
    let web = TestWeb::start().await;
    web.site("tricky.test")
        .path("/robots.txt")
        .respond(Reply::robots_txt("User-agent: *\nDisallow: /admin/\n"));
    web.site("tricky.test").path("/").respond(
        Reply::ok().header("Content-Type", "text/html").body(
            "<!doctype html><html><head><title>t</title>\
             <script>document.write('</head><body>');</script>\
             <!-- </head> -->\
             <meta name=\"robots\" content=\"noindex\">\
             </head><body><meta name=\"robots\" content=\"index\"></body></html>",
        ),
    );
    let fetcher = make_fetcher(&web, &["tricky.test"]);
    let analysis = analyze(&fetcher, &url(&web.http_url("tricky.test", "/")))
        .await
        .unwrap();
    let metas: Vec<(&str, &str)> = analysis
        .page
        .meta
        .iter()
        .map(|meta| (meta.name.as_str(), meta.content.as_str()))
        .collect();
    assert_eq!(metas, [("robots", "noindex")]);
    assert!(analysis
        .findings
        .iter()
        .any(|f| f.id == CheckId::PageNoindex));
    assert_eq!(web.requests_to("tricky.test", "/").len(), 1);
}

#[tokio::test]
async fn the_page_is_read_to_the_end_of_its_head_only() {
    let web = TestWeb::start().await;
    web.site("drip.test")
        .path("/robots.txt")
        .respond(Reply::robots_txt("User-agent: *\nDisallow: /x\n"));
    // The head ends in the first piece; a hundred more would take 10 s.
    let piece = "<html><head><meta name=\"robots\" content=\"noindex\"></head><body>";
    web.site("drip.test")
        .path("/")
        .respond(Reply::ok().header("Content-Type", "text/html").drip(
            piece.as_bytes(),
            Duration::from_millis(100),
            100,
        ));
    let fetcher = make_fetcher(&web, &["drip.test"]);
    let started = std::time::Instant::now();
    let analysis = analyze(&fetcher, &url(&web.http_url("drip.test", "/")))
        .await
        .unwrap();
    assert!(started.elapsed() < Duration::from_secs(3));
    assert_eq!(analysis.page.meta.len(), 1);
    assert!(analysis.page.bytes_read.is_some_and(|bytes| bytes < 1_000));
    assert!(analysis
        .findings
        .iter()
        .any(|f| f.id == CheckId::PageNoindex));
}

#[tokio::test]
async fn a_refused_address_is_never_contacted_nor_graded() {
    let web = TestWeb::start().await;
    web.site("inside.test")
        .path("/robots.txt")
        .respond(Reply::robots_txt("User-agent: *\nAllow: /\n"));
    let mut config = config_for(&web, ["inside.test"]);
    config.allow_private_addresses = false;
    let fetcher = Fetcher::new(config).expect("fetcher");
    let error = analyze(&fetcher, &url(&web.http_url("inside.test", "/")))
        .await
        .expect_err("not graded");
    assert_eq!(error.kind(), audit::AnalysisErrorKind::NotContacted);
    assert!(web.requests().is_empty());
}
