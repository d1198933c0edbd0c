//! One robots.txt fetch against real servers: every row of the status table, redirect limits,
//! the 500 KiB cap, and scope by scheme, host and port.

mod common;

use common::{fetcher, url};
use fetch::{fetch_robots_txt, RobotsOutcome, RulesSource, ROBOTS_TXT_MAX_BYTES};
use robots::ProductTokens;
use std::time::Duration;
use testweb::{Reply, TestWeb};

const FILE: &str = "User-agent: JittyBot\nDisallow: /private\nCrawl-delay: 5\n\nSitemap: https://a.test/sitemap.xml\n";

async fn robots(web: &TestWeb, reply: Reply) -> fetch::RobotsFetch {
    web.site("a.test").path("/robots.txt").respond(reply);
    fetch_robots_txt(
        &fetcher(web, &["a.test", "b.test"]),
        &url(&web.http_url("a.test", "/some/page")),
    )
    .await
    .unwrap()
}

#[tokio::test]
async fn ok_parses_and_applies_the_file() {
    let web = TestWeb::start().await;
    let fetched = robots(
        &web,
        Reply::robots_txt(FILE)
            .header("X-Robots-Tag", "noindex")
            .header("X-Robots-Tag", "nofollow")
            .header("Cache-Control", "max-age=3600"),
    )
    .await;
    assert_eq!(fetched.outcome, RobotsOutcome::Rules);
    assert_eq!(fetched.status, Some(fetch::StatusCode::OK));
    assert_eq!(
        fetched.robots_url.as_str(),
        web.http_url("a.test", "/robots.txt")
    );
    assert_eq!(fetched.body, FILE.as_bytes());
    assert_eq!(fetched.bytes_read, FILE.len() as u64);
    assert!(!fetched.truncated);
    assert_eq!(fetched.x_robots_tag, vec!["noindex", "nofollow"]);
    assert_eq!(fetched.content_type.as_deref(), Some("text/plain"));
    assert_eq!(fetched.cache_lifetime, Duration::from_secs(3600));
    let robots = fetched.robots.as_ref().unwrap();
    assert_eq!(robots.sitemaps()[0].url, "https://a.test/sitemap.xml");

    let denied = fetched.verdict("/private/x", &ProductTokens::JITTYBOT_IMAGE);
    assert!(!denied.allowed);
    assert_eq!(denied.source, RulesSource::Fresh);
    assert_eq!(
        denied.reason(),
        "line 2: Disallow: /private, group JittyBot"
    );
    assert_eq!(denied.crawl_delay.unwrap().seconds, 5.0);
    assert!(fetched.verdict("/public", &ProductTokens::JITTYBOT).allowed);
}

#[tokio::test]
async fn client_errors_mean_no_file_and_no_restrictions() {
    for status in [400, 401, 403, 404, 410] {
        let web = TestWeb::start().await;
        let fetched = robots(
            &web,
            Reply::status(status).body("User-agent: *\nDisallow: /"),
        )
        .await;
        assert_eq!(fetched.outcome, RobotsOutcome::NoFile, "{status}");
        assert!(fetched.robots.is_none());
        let verdict = fetched.verdict("/anything", &ProductTokens::JITTYBOT);
        assert!(verdict.allowed);
        assert_eq!(verdict.source, RulesSource::NoFile);
    }
}

#[tokio::test]
async fn too_many_requests_means_backing_off() {
    let web = TestWeb::start().await;
    let fetched = robots(&web, Reply::status(429).header("Retry-After", "120")).await;
    assert_eq!(fetched.outcome, RobotsOutcome::BackingOff);
    assert_eq!(fetched.retry_after, Some(Duration::from_secs(120)));
    let verdict = fetched.verdict("/", &ProductTokens::JITTYBOT);
    assert!(!verdict.allowed);
    assert_eq!(verdict.source, RulesSource::BackingOff);

    let web = TestWeb::start().await;
    let without = robots(&web, Reply::status(429)).await;
    assert_eq!(without.outcome, RobotsOutcome::BackingOff);
    assert_eq!(without.retry_after, None);
}

#[tokio::test]
async fn server_errors_and_network_errors_mean_unreachable() {
    for reply in [
        Reply::status(500),
        Reply::status(503).header("Retry-After", "30"),
        Reply::status(599),
        Reply::reset(),
        Reply::raw(b"garbage\r\n\r\n"),
    ] {
        let web = TestWeb::start().await;
        let fetched = robots(&web, reply.clone()).await;
        assert_eq!(fetched.outcome, RobotsOutcome::Unreachable, "{reply:?}");
        let verdict = fetched.verdict("/", &ProductTokens::JITTYBOT);
        assert!(!verdict.allowed);
        assert_eq!(verdict.source, RulesSource::Unreachable);
    }
}

#[tokio::test]
async fn five_redirects_are_followed_and_a_sixth_is_unreachable() {
    let web = TestWeb::start().await;
    // a.test/robots.txt -> b.test/r1 -> ... -> b.test/r5 (file).
    web.site("a.test")
        .path("/robots.txt")
        .respond(Reply::redirect(301, &web.http_url("b.test", "/r1")));
    for i in 1..5 {
        web.site("b.test")
            .path(&format!("/r{i}"))
            .respond(Reply::redirect(302, &format!("/r{}", i + 1)));
    }
    web.site("b.test")
        .path("/r5")
        .respond(Reply::robots_txt(FILE));
    let fetcher = fetcher(&web, &["a.test", "b.test"]);
    let target = url(&web.http_url("a.test", "/"));
    let five = fetch_robots_txt(&fetcher, &target).await.unwrap();
    assert_eq!(five.outcome, RobotsOutcome::Rules);
    assert_eq!(five.redirects.len(), 5);
    assert_eq!(
        five.final_url.as_ref().unwrap().as_str(),
        web.http_url("b.test", "/r5")
    );
    // The rules found across hosts apply to the host asked about.
    assert!(!five.verdict("/private", &ProductTokens::JITTYBOT).allowed);

    web.site("b.test")
        .path("/r5")
        .respond(Reply::redirect(302, "/r6"));
    web.site("b.test")
        .path("/r6")
        .respond(Reply::robots_txt(FILE));
    let six = fetch_robots_txt(&fetcher, &target).await.unwrap();
    assert_eq!(six.outcome, RobotsOutcome::Unreachable);
    assert_eq!(six.redirects.len(), 6);
    assert_eq!(six.error.as_ref().unwrap().kind().as_str(), "redirect");
}

#[tokio::test]
async fn a_redirect_loop_is_unreachable() {
    let web = TestWeb::start().await;
    web.site("a.test")
        .path("/robots.txt")
        .respond(Reply::redirect(301, "/elsewhere"));
    web.site("a.test")
        .path("/elsewhere")
        .respond(Reply::redirect(301, "/robots.txt"));
    let fetched = fetch_robots_txt(
        &fetcher(&web, &["a.test"]),
        &url(&web.http_url("a.test", "/")),
    )
    .await
    .unwrap();
    assert_eq!(fetched.outcome, RobotsOutcome::Unreachable);
    assert_eq!(fetched.error.as_ref().unwrap().kind().as_str(), "redirect");
    assert_eq!(fetched.redirects.len(), 2);
}

#[tokio::test]
async fn only_the_first_500_kib_are_read() {
    let web = TestWeb::start().await;
    let mut big = String::from("User-agent: *\nDisallow: /first\n");
    while big.len() < ROBOTS_TXT_MAX_BYTES + 10_000 {
        big.push_str("# padding padding padding padding padding padding padding\n");
    }
    big.push_str("Disallow: /last\n");
    let fetched = robots(&web, Reply::robots_txt(&big)).await;
    assert_eq!(fetched.outcome, RobotsOutcome::Rules);
    assert!(fetched.truncated);
    assert_eq!(fetched.body.len(), ROBOTS_TXT_MAX_BYTES);
    assert!(!fetched.verdict("/first", &ProductTokens::JITTYBOT).allowed);
    assert!(fetched.verdict("/last", &ProductTokens::JITTYBOT).allowed);
}

#[tokio::test]
async fn compressed_robots_txt_is_read_decompressed_and_bombs_are_capped() {
    let web = TestWeb::start().await;
    let fetched = robots(&web, Reply::robots_txt(FILE).gzip()).await;
    assert_eq!(fetched.body, FILE.as_bytes());

    let web = TestWeb::start().await;
    let bomb = robots(&web, Reply::gzip_bomb(32 * 1024 * 1024)).await;
    assert!(bomb.truncated);
    assert_eq!(bomb.body.len(), ROBOTS_TXT_MAX_BYTES);
}

#[tokio::test]
async fn each_scheme_host_and_port_has_its_own_robots_txt() {
    let web = TestWeb::start().await;
    web.http_site("a.test")
        .path("/robots.txt")
        .respond(Reply::robots_txt("User-agent: *\nDisallow: /"));
    let fetcher = fetcher(&web, &["a.test", "www.example.test", "xn--bcher-kva.test"]);
    let on = |u: String| {
        let fetcher = fetcher.clone();
        async move { fetch_robots_txt(&fetcher, &url(&u)).await.unwrap() }
    };
    let http = on(web.http_url("a.test", "/x")).await;
    assert_eq!(http.outcome, RobotsOutcome::Rules);
    // Same host over HTTPS (another port here): a different file, which is not there.
    let https = on(web.https_url("a.test", "/x")).await;
    assert_eq!(
        https.robots_url.as_str(),
        web.https_url("a.test", "/robots.txt")
    );
    assert_eq!(https.outcome, RobotsOutcome::NoFile);
    let www = on(web.http_url("www.example.test", "/x")).await;
    assert_eq!(www.outcome, RobotsOutcome::NoFile);

    // An internationalised name and its punycode form are one host.
    web.site("xn--bcher-kva.test")
        .path("/robots.txt")
        .respond(Reply::robots_txt("User-agent: *\nDisallow: /b"));
    let unicode = on(web.http_url("bücher.test", "/")).await;
    let punycode = on(web.http_url("xn--bcher-kva.test", "/")).await;
    assert_eq!(unicode.robots_url, punycode.robots_url);
    assert_eq!(unicode.body, punycode.body);
    assert_eq!(unicode.outcome, RobotsOutcome::Rules);

    let hosts: Vec<String> = web
        .requests()
        .iter()
        .map(|r| format!("{}{}", r.host, if r.tls { " tls" } else { "" }))
        .collect();
    assert_eq!(
        hosts,
        [
            "a.test",
            "a.test tls",
            "www.example.test",
            "xn--bcher-kva.test",
            "xn--bcher-kva.test"
        ]
    );
}

#[tokio::test]
async fn a_refused_address_is_unreachable() {
    let web = TestWeb::start().await;
    web.site("a.test")
        .path("/robots.txt")
        .respond(Reply::robots_txt(FILE));
    let mut config = common::config(&web, &["a.test"]);
    config.allow_private_addresses = false;
    let fetcher = fetch::Fetcher::new(config).unwrap();
    let fetched = fetch_robots_txt(&fetcher, &url(&web.http_url("a.test", "/")))
        .await
        .unwrap();
    assert_eq!(fetched.outcome, RobotsOutcome::Unreachable);
    assert_eq!(
        fetched.error.as_ref().unwrap().kind().as_str(),
        "address_refused"
    );
    assert!(web.requests().is_empty());
}
