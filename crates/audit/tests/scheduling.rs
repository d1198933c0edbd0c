//! The fetch rules of one analysis, on tokio's paused clock with the fetcher's scripted web
//! (`fetch::testing`, the one seam both bots' tests script): which requests are made, in
//! which order, when, and which are skipped, read from the web's request log.

use std::ops::Deref;
use std::sync::Arc;
use std::time::Duration;

use audit::crawlers::BOT_TOKEN;
use audit::limits::{
    ANALYSIS_BUDGET, CRAWL_DELAY_BUDGET, MAX_SITEMAPS_CHECKED, SITEMAP_READ_BYTES,
    SITEMAP_TIME_BUDGET,
};
use audit::report::{Purpose, RobotsStatus, SkipReason};
use audit::{analyze, Analysis, CheckId, Grade};
use fetch::testing::{Reply, ScriptedWeb};
use fetch::{Cause, FetchConfig, FetchError, Fetcher};
use tokio::time::Instant;
use url::Url;

fn url(text: &str) -> Url {
    Url::parse(text).expect("a test URL")
}

/// A scripted web and a fetcher on it as RobotsTxtParser; derefs to the fetcher, so
/// `analyze(&fake, ..)` runs on it.
struct Fake {
    started: Instant,
    web: Arc<ScriptedWeb>,
    fetcher: Fetcher,
}

impl Deref for Fake {
    type Target = Fetcher;

    fn deref(&self) -> &Fetcher {
        &self.fetcher
    }
}

impl Fake {
    fn new() -> Fake {
        let web = ScriptedWeb::new();
        let fetcher = web.fetcher_with(FetchConfig::new(
            BOT_TOKEN,
            "https://robotstxtparser.example/bot",
        ));
        Fake {
            started: Instant::now(),
            web,
            fetcher,
        }
    }

    fn reply(self, url: &str, reply: Reply) -> Fake {
        self.web.route(url, reply);
        self
    }

    fn route(
        self,
        url: &str,
        status: u16,
        headers: &[(&str, &str)],
        body: impl AsRef<[u8]>,
    ) -> Fake {
        let mut reply = Reply::status(status).body(body);
        for (name, value) in headers {
            reply = reply.header(name, value);
        }
        self.reply(url, reply)
    }

    fn robots(self, url: &str, body: &str) -> Fake {
        self.reply(url, Reply::robots_txt(body))
    }

    fn slow(
        self,
        url: &str,
        status: u16,
        headers: &[(&str, &str)],
        body: &str,
        delay: Duration,
    ) -> Fake {
        let mut reply = Reply::status(status).body(body).delay(delay);
        for (name, value) in headers {
            reply = reply.header(name, value);
        }
        self.reply(url, reply)
    }

    fn fail(self, url: &str, error: FetchError) -> Fake {
        self.reply(url, Reply::fail(error))
    }

    fn requested(&self) -> Vec<String> {
        self.web
            .requests()
            .iter()
            .map(|logged| logged.url.to_string())
            .collect()
    }

    fn when(&self, url: &str) -> Option<Duration> {
        self.web
            .requests_to(url)
            .first()
            .map(|logged| logged.at.duration_since(self.started))
    }
}

const HTML: &[(&str, &str)] = &[("Content-Type", "text/html")];
const XML: &[(&str, &str)] = &[("Content-Type", "application/xml")];
const URLSET: &str = "<?xml version=\"1.0\"?><urlset></urlset>";

fn ids(analysis: &Analysis) -> Vec<&str> {
    analysis.findings.iter().map(|f| f.id.as_str()).collect()
}

fn has(analysis: &Analysis, id: CheckId) -> bool {
    analysis.findings.iter().any(|f| f.id == id)
}

#[tokio::test(start_paused = true)]
async fn a_sensible_site_scores_100() {
    let fake = Fake::new()
        .robots(
            "https://example.test/robots.txt",
            "User-agent: *\nDisallow: /admin/\n\nSitemap: https://example.test/sitemap.xml\n",
        )
        .route(
            "https://example.test/",
            200,
            HTML,
            "<html><head><title>x</title></head>",
        )
        .route("https://example.test/sitemap.xml", 200, XML, URLSET);
    let analysis = analyze(&fake, &url("https://example.test/")).await.unwrap();
    assert_eq!(analysis.score, 100, "{:?}", ids(&analysis));
    assert_eq!(analysis.grade, Grade::A);
    assert_eq!(
        fake.requested(),
        [
            "https://example.test/robots.txt",
            "https://example.test/",
            "https://example.test/sitemap.xml"
        ]
    );
    assert_eq!(analysis.robots.outcome, RobotsStatus::Rules);
    assert_eq!(analysis.page.status.map(|s| s.as_u16()), Some(200));
    assert_eq!(analysis.sitemaps[0].looks_like_sitemap, Some(true));
    let json = serde_json::to_value(&analysis).unwrap();
    for field in [
        "score", "grade", "findings", "robots", "page", "sitemaps", "crawlers",
    ] {
        assert!(json.get(field).is_some(), "{field}");
    }
}

#[tokio::test(start_paused = true)]
async fn server_error_stops_page_and_sitemaps() {
    for status in [500, 503, 429] {
        let fake = Fake::new()
            .route("https://example.test/robots.txt", status, &[], "")
            .route("https://example.test/", 200, HTML, "<head></head>");
        let analysis = analyze(&fake, &url("https://example.test/")).await.unwrap();
        assert_eq!(fake.requested(), ["https://example.test/robots.txt"]);
        assert!(!analysis.page.requested);
        assert!(matches!(
            analysis.page.skipped,
            Some(SkipReason::RobotsUnreachable { .. })
        ));
        let expected = if status == 429 {
            CheckId::FetchRateLimited
        } else {
            CheckId::FetchServerError
        };
        assert!(has(&analysis, expected), "{:?}", ids(&analysis));
        assert!(analysis.score <= audit::score::CRITICAL_CAP);
    }
}

#[tokio::test(start_paused = true)]
async fn network_failure_is_unreachable() {
    let fake = Fake::new().fail(
        "https://example.test/robots.txt",
        FetchError::Dns {
            host: "example.test".into(),
            source: Cause::message("scripted failure"),
        },
    );
    let analysis = analyze(&fake, &url("https://example.test/")).await.unwrap();
    assert!(has(&analysis, CheckId::FetchUnreachable));
    assert_eq!(analysis.robots.outcome, RobotsStatus::Unreachable);
    assert_eq!(fake.requested().len(), 1);
}

#[tokio::test(start_paused = true)]
async fn not_found_means_no_rules_and_the_page_is_read() {
    let fake = Fake::new().route(
        "https://example.test/p",
        200,
        &[("Content-Type", "text/html"), ("X-Robots-Tag", "noindex")],
        "<head></head>",
    );
    let analysis = analyze(&fake, &url("https://example.test/p"))
        .await
        .unwrap();
    assert_eq!(analysis.robots.outcome, RobotsStatus::NoFile);
    assert!(has(&analysis, CheckId::FetchNotFound));
    assert!(has(&analysis, CheckId::PageNoindex));
    assert_eq!(fake.requested().len(), 2);
}

#[tokio::test(start_paused = true)]
async fn a_disallowed_page_is_not_requested() {
    let fake = Fake::new()
        .robots(
            "https://example.test/robots.txt",
            "User-agent: RobotsTxtParser\nDisallow: /\n\nUser-agent: *\nDisallow: /private\n",
        )
        .route("https://example.test/private/x", 200, HTML, "<head></head>");
    let analysis = analyze(&fake, &url("https://example.test/private/x"))
        .await
        .unwrap();
    assert_eq!(fake.requested(), ["https://example.test/robots.txt"]);
    assert!(!analysis.page.requested);
    assert_eq!(
        analysis.page.skipped,
        Some(SkipReason::Disallowed {
            robots_url: url("https://example.test/robots.txt"),
            line: 2,
            rule: "Disallow: /".into()
        })
    );
    let finding = analysis
        .findings
        .iter()
        .find(|f| f.id == CheckId::LogicPageDisallowed)
        .expect("page-disallowed finding");
    assert_eq!(finding.evidence.line, Some(5));
}

#[tokio::test(start_paused = true)]
async fn a_redirect_into_a_disallowed_path_is_not_followed() {
    let fake = Fake::new()
        .robots(
            "https://example.test/robots.txt",
            "User-agent: *\nDisallow: /secret\n",
        )
        .route(
            "https://example.test/",
            302,
            &[("Location", "/secret/home")],
            "",
        );
    let analysis = analyze(&fake, &url("https://example.test/")).await.unwrap();
    assert_eq!(
        fake.requested(),
        ["https://example.test/robots.txt", "https://example.test/"]
    );
    assert_eq!(analysis.page.redirects.len(), 1);
    assert!(matches!(
        analysis.page.skipped,
        Some(SkipReason::Disallowed { .. })
    ));
    assert!(has(&analysis, CheckId::PageNotChecked));
}

#[tokio::test(start_paused = true)]
async fn at_most_ten_sitemaps_read_two_kilobytes_each() {
    let mut robots = String::from("User-agent: *\nDisallow:\n");
    // A sitemap whose <urlset> starts after the first 2 KiB is not recognised: only they
    // are read.
    let late_urlset = format!("<!--{}--><urlset></urlset>", "x".repeat(SITEMAP_READ_BYTES));
    let mut fake = Fake::new().route("https://example.test/", 200, HTML, "<head></head>");
    for i in 0..12 {
        robots.push_str(&format!("Sitemap: https://example.test/s{i}.xml\n"));
        let body = if i == 0 { late_urlset.as_str() } else { URLSET };
        fake = fake.route(&format!("https://example.test/s{i}.xml"), 200, XML, body);
    }
    let fake = fake.robots("https://example.test/robots.txt", &robots);
    let analysis = analyze(&fake, &url("https://example.test/")).await.unwrap();
    let sitemap_requests = fake
        .requested()
        .into_iter()
        .filter(|url| url.contains("/s"))
        .count();
    assert_eq!(sitemap_requests, MAX_SITEMAPS_CHECKED);
    assert_eq!(analysis.sitemaps.len(), 12);
    assert_eq!(
        analysis.sitemaps[10].skipped,
        Some(SkipReason::TooManySitemaps { max: 10 })
    );
    assert_eq!(
        analysis.sitemaps[11].skipped,
        Some(SkipReason::TooManySitemaps { max: 10 })
    );
    assert_eq!(analysis.sitemaps[0].looks_like_sitemap, Some(false));
    assert_eq!(analysis.sitemaps[1].looks_like_sitemap, Some(true));
    assert!(has(&analysis, CheckId::SitemapNotASitemap));
    assert!(has(&analysis, CheckId::SitemapNotChecked));
}

#[tokio::test(start_paused = true)]
async fn no_sitemap_runs_past_twenty_seconds() {
    let mut robots = String::from("User-agent: *\nDisallow:\n");
    let mut fake = Fake::new().route("https://example.test/", 200, HTML, "<head></head>");
    for i in 0..5 {
        let url = format!("https://example.test/s{i}.xml");
        robots.push_str(&format!("Sitemap: {url}\n"));
        fake = fake.slow(&url, 200, XML, URLSET, Duration::from_secs(7));
    }
    let fake = fake.robots("https://example.test/robots.txt", &robots);
    let analysis = analyze(&fake, &url("https://example.test/")).await.unwrap();
    // Started at 0, 7 and 14 s into the sitemap phase; the third is cut at 20 s, and no
    // other starts.
    let first = fake.when("https://example.test/s0.xml").unwrap();
    assert_eq!(
        fake.when("https://example.test/s2.xml").unwrap() - first,
        Duration::from_secs(14)
    );
    assert!(fake.when("https://example.test/s3.xml").is_none());
    let budget = Some(SkipReason::TimeBudget { budget_ms: 20_000 });
    assert_eq!(analysis.sitemaps[0].looks_like_sitemap, Some(true));
    assert!(analysis.sitemaps[2].requested);
    assert_eq!(analysis.sitemaps[2].skipped, budget);
    assert_eq!(analysis.sitemaps[2].error, None);
    assert_eq!(analysis.sitemaps[3].skipped, budget);
    assert_eq!(analysis.sitemaps[4].skipped, budget);
    assert!(!has(&analysis, CheckId::SitemapUnreachable));
    assert!(Duration::from_millis(analysis.duration_ms) <= first + SITEMAP_TIME_BUDGET);
    let skipped = analysis
        .requests
        .iter()
        .filter(|r| r.skipped == budget)
        .count();
    assert_eq!(skipped, 2);
}

#[tokio::test(start_paused = true)]
async fn a_sitemap_on_another_host_reads_that_hosts_robots_first() {
    let fake = Fake::new()
        .robots(
            "https://example.test/robots.txt",
            "User-agent: *\nDisallow:\nSitemap: https://www.example.test/a.xml\nSitemap: https://www.example.test/private/b.xml\n",
        )
        .robots("https://www.example.test/robots.txt", "User-agent: *\nDisallow: /private/\n")
        .route("https://example.test/", 200, HTML, "<head></head>")
        .route("https://www.example.test/a.xml", 200, XML, URLSET)
        .route("https://www.example.test/private/b.xml", 200, XML, URLSET);
    let analysis = analyze(&fake, &url("https://example.test/")).await.unwrap();
    assert_eq!(
        fake.requested(),
        [
            "https://example.test/robots.txt",
            "https://example.test/",
            "https://www.example.test/robots.txt",
            "https://www.example.test/a.xml",
        ]
    );
    assert!(analysis
        .requests
        .iter()
        .any(|r| r.purpose == Purpose::HostRobots));
    assert!(matches!(
        analysis.sitemaps[1].skipped,
        Some(SkipReason::Disallowed { line: 2, .. })
    ));
    assert!(has(&analysis, CheckId::SitemapOtherHost));
}

#[tokio::test(start_paused = true)]
async fn crawl_delay_spaces_requests_within_ten_seconds() {
    let fake = Fake::new()
        .robots(
            "https://example.test/robots.txt",
            "User-agent: RobotsTxtParser\nCrawl-delay: 4\nDisallow: /x\n\nSitemap: https://example.test/a.xml\nSitemap: https://example.test/b.xml\n",
        )
        .route("https://example.test/", 200, HTML, "<head></head>")
        .route("https://example.test/a.xml", 200, XML, URLSET)
        .route("https://example.test/b.xml", 200, XML, URLSET);
    let analysis = analyze(&fake, &url("https://example.test/")).await.unwrap();
    assert_eq!(
        fake.when("https://example.test/").unwrap(),
        Duration::from_secs(4)
    );
    assert_eq!(
        fake.when("https://example.test/a.xml").unwrap(),
        Duration::from_secs(8)
    );
    // A third wait of 4 s would make 12 s in all: skipped and reported.
    assert!(fake.when("https://example.test/b.xml").is_none());
    assert_eq!(
        analysis.sitemaps[1].skipped,
        Some(SkipReason::CrawlDelayBudget {
            wait_ms: 4_000,
            budget_ms: 10_000
        })
    );
    let waited: u64 = analysis.requests.iter().map(|r| r.waited_ms).sum();
    assert_eq!(waited, 8_000);
    assert!(u128::from(waited) <= CRAWL_DELAY_BUDGET.as_millis());
    assert_eq!(analysis.robots.crawl_delay, Some(4.0));
    assert!(has(&analysis, CheckId::SitemapNotChecked));
}

#[tokio::test(start_paused = true)]
async fn a_crawl_delay_over_the_budget_skips_the_page() {
    let fake = Fake::new()
        .robots(
            "https://example.test/robots.txt",
            "User-agent: *\nCrawl-delay: 30\nDisallow: /x\n",
        )
        .route("https://example.test/", 200, HTML, "<head></head>");
    let analysis = analyze(&fake, &url("https://example.test/")).await.unwrap();
    assert_eq!(fake.requested(), ["https://example.test/robots.txt"]);
    assert!(matches!(
        analysis.page.skipped,
        Some(SkipReason::CrawlDelayBudget { .. })
    ));
    assert!(has(&analysis, CheckId::PageNotChecked));
}

#[tokio::test(start_paused = true)]
async fn page_directives_are_collected_from_headers_and_meta() {
    let head = r#"<html><head>
        <meta name="robots" content="index, noindex">
        <meta name="googlebot" content="max-snippet:lots">
        <meta name="description" content="no page content is kept">
        </head><body>secret</body></html>"#;
    let fake = Fake::new()
        .robots(
            "https://example.test/robots.txt",
            "User-agent: *\nDisallow:\n",
        )
        .route(
            "https://example.test/",
            200,
            &[
                ("Content-Type", "text/html"),
                ("X-Robots-Tag", "googlebot: noarchive"),
                ("X-Robots-Tag", "bingbot: noindex"),
            ],
            head,
        );
    let analysis = analyze(&fake, &url("https://example.test/")).await.unwrap();
    assert_eq!(analysis.page.x_robots_tag.len(), 2);
    assert_eq!(analysis.page.meta.len(), 2, "{:?}", analysis.page.meta);
    for id in [
        CheckId::PageNoindex,
        CheckId::PageConflict,
        CheckId::PageInvalidDirective,
        CheckId::PageNoindexForBot,
    ] {
        assert!(has(&analysis, id.clone()), "{id}: {:?}", ids(&analysis));
    }
    let json = serde_json::to_string(&analysis).unwrap();
    assert!(!json.contains("secret"));
    assert!(!json.contains("no page content is kept"));
}

#[tokio::test(start_paused = true)]
async fn disallowed_and_noindex_is_flagged() {
    let fake = Fake::new()
        .robots(
            "https://example.test/robots.txt",
            "User-agent: Googlebot\nDisallow: /p\n\nUser-agent: *\nDisallow:\n",
        )
        .route(
            "https://example.test/p",
            200,
            HTML,
            "<head><meta name=robots content=noindex></head>",
        );
    let analysis = analyze(&fake, &url("https://example.test/p"))
        .await
        .unwrap();
    let finding = analysis
        .findings
        .iter()
        .find(|f| f.id == CheckId::LogicNoindexUnseen)
        .expect("noindex-unseen");
    assert_eq!(finding.evidence.line, Some(2));
}

#[tokio::test(start_paused = true)]
async fn robots_fetch_problems() {
    // HTML served as robots.txt.
    let fake = Fake::new().route(
        "https://a.test/robots.txt",
        200,
        HTML,
        "<!DOCTYPE html><html><body>Shop</body></html>",
    );
    let analysis = analyze(&fake, &url("https://a.test/")).await.unwrap();
    assert!(has(&analysis, CheckId::FetchHtml), "{:?}", ids(&analysis));
    assert!(!has(&analysis, CheckId::SyntaxMissingColon));

    // A challenge.
    let fake = Fake::new().route(
        "https://a.test/robots.txt",
        403,
        &[("Content-Type", "text/html"), ("cf-mitigated", "challenge")],
        "<html><title>Just a moment...</title></html>",
    );
    let analysis = analyze(&fake, &url("https://a.test/")).await.unwrap();
    assert!(has(&analysis, CheckId::FetchChallenge));

    // 403 without challenge.
    let fake = Fake::new().route("https://a.test/robots.txt", 403, &[], "");
    assert!(has(
        &analyze(&fake, &url("https://a.test/")).await.unwrap(),
        CheckId::FetchForbidden
    ));

    // Wrong content type, empty file.
    let fake = Fake::new().route(
        "https://a.test/robots.txt",
        200,
        &[("Content-Type", "application/octet-stream")],
        "",
    );
    let analysis = analyze(&fake, &url("https://a.test/")).await.unwrap();
    assert!(has(&analysis, CheckId::FetchContentType));
    assert!(has(&analysis, CheckId::FetchEmpty));

    // Too many redirects.
    let mut fake = Fake::new();
    for i in 0..7 {
        let from = if i == 0 {
            "https://a.test/robots.txt".to_owned()
        } else {
            format!("https://a.test/r{i}")
        };
        let to = format!("/r{}", i + 1);
        fake = fake.route(&from, 301, &[("Location", &to)], "");
    }
    let analysis = analyze(&fake, &url("https://a.test/")).await.unwrap();
    assert!(has(&analysis, CheckId::FetchTooManyRedirects));
    assert_eq!(analysis.robots.outcome, RobotsStatus::Unreachable);
    assert_eq!(
        fake.requested().len(),
        6,
        "5 redirects followed, the 6th hop refused"
    );

    // A redirect to another host.
    let fake = Fake::new()
        .route(
            "https://a.test/robots.txt",
            301,
            &[("Location", "https://cdn.test/robots.txt")],
            "",
        )
        .robots("https://cdn.test/robots.txt", "User-agent: *\nDisallow:\n");
    let analysis = analyze(&fake, &url("https://a.test/")).await.unwrap();
    assert!(has(&analysis, CheckId::FetchRedirectOtherHost));
    assert!(has(&analysis, CheckId::FetchRedirected));
    assert_eq!(analysis.robots.redirects.len(), 1);
    assert_eq!(
        analysis.robots.final_url.as_ref().map(Url::as_str),
        Some("https://cdn.test/robots.txt")
    );

    // Truncated at 500 KiB.
    let mut fake = Fake::new();
    let big = format!(
        "User-agent: *\n{}",
        "Disallow: /aaaaaaaaaaaaaaaaaaaa\n".repeat(20_000)
    );
    fake = fake.robots("https://a.test/robots.txt", &big);
    let analysis = analyze(&fake, &url("https://a.test/")).await.unwrap();
    assert!(analysis.robots.truncated);
    assert_eq!(analysis.robots.size, fetch::ROBOTS_TXT_MAX_BYTES);
    assert!(has(&analysis, CheckId::FetchTooLarge));
}

#[tokio::test(start_paused = true)]
async fn unreachable_and_non_sitemaps_are_errors() {
    let fake = Fake::new()
        .robots(
            "https://example.test/robots.txt",
            "User-agent: *\nDisallow:\nSitemap: https://example.test/gone.xml\nSitemap: https://example.test/page.xml\nSitemap: https://example.test/s.xml.gz\n",
        )
        .route("https://example.test/page.xml", 200, HTML, "<!doctype html><html>")
        .route("https://example.test/s.xml.gz", 200, &[("Content-Type", "application/gzip")], [0x1f_u8, 0x8b, 0x08]);
    let analysis = analyze(&fake, &url("https://example.test/")).await.unwrap();
    assert!(has(&analysis, CheckId::SitemapUnreachable));
    assert!(has(&analysis, CheckId::SitemapNotASitemap));
    assert_eq!(analysis.sitemaps[0].status.map(|s| s.as_u16()), Some(404));
    assert!(!analysis.sitemaps[0].answered);
    assert_eq!(analysis.sitemaps[2].looks_like_sitemap, Some(true));
    assert_eq!(
        analysis.sitemaps[2].content_type.as_deref(),
        Some("application/gzip")
    );
}

#[tokio::test(start_paused = true)]
async fn invalid_targets_are_refused() {
    let fake = Fake::new();
    assert!(analyze(&fake, &url("ftp://example.test/")).await.is_err());
    assert!(fake.requested().is_empty());
}

/// The hostile server of issue 7: robots.txt behind a chain of redirects, each answered just
/// under the per-hop limit (20 s to the first byte), the file at the end of it after 76 s.
fn slow_redirect_chain() -> Fake {
    let mut fake = Fake::new();
    for hop in 0..4 {
        let from = match hop {
            0 => "https://slow.test/robots.txt".to_owned(),
            n => format!("https://slow.test/r{n}"),
        };
        let to = format!("/r{}", hop + 1);
        fake = fake.reply(
            &from,
            Reply::redirect(301, &to).delay(Duration::from_secs(19)),
        );
    }
    fake.reply(
        "https://slow.test/r4",
        Reply::robots_txt("User-agent: *\nAllow: /\n").delay(Duration::from_secs(19)),
    )
    .route("https://slow.test/", 200, HTML, "<head></head>")
}

#[tokio::test(start_paused = true)]
async fn a_slow_redirect_chain_gets_the_verdict_of_jittybot_robots_within_the_budget() {
    let target = url("https://slow.test/");
    // `jittybot robots` fetches with fetch::fetch_robots_txt.
    let alone = slow_redirect_chain();
    let fetched = fetch::fetch_robots_txt(&alone, &target).await.unwrap();
    let tokens = robots::ProductTokens::new([BOT_TOKEN]).unwrap();
    let verdict = fetched.verdict(target.as_str(), &tokens);
    assert_eq!(fetched.outcome, fetch::RobotsOutcome::Unreachable);
    assert!(!verdict.allowed);

    let fake = slow_redirect_chain();
    let analysis = analyze(&fake, &target).await.unwrap();
    assert_eq!(analysis.robots.outcome, RobotsStatus::Unreachable);
    assert_eq!(analysis.grade, Grade::F);
    assert!(!analysis.page.requested);
    assert!(
        fake.when("https://slow.test/").is_none(),
        "the page is never asked for"
    );
    // From the web's log: nothing was asked after the budget; four hops went out, the fifth
    // (at 76 s) never did.
    let log = fake.web.requests();
    assert_eq!(log.len(), 4, "{:?}", fake.requested());
    let last = log
        .last()
        .map(|logged| logged.at.duration_since(fake.started));
    assert!(last.is_some_and(|at| at < ANALYSIS_BUDGET));
    assert!(Duration::from_millis(analysis.duration_ms) <= ANALYSIS_BUDGET);
}

#[tokio::test(start_paused = true)]
async fn the_page_download_stops_at_the_end_of_the_head() {
    // The head ends in the first chunk; a thousand more follow, one a second.
    let chunk = "<html><head><meta name=\"robots\" content=\"noindex\"></head><body>";
    let fake = Fake::new()
        .robots(
            "https://drip.test/robots.txt",
            "User-agent: *\nDisallow: /x\n",
        )
        .reply(
            "https://drip.test/",
            Reply::ok().header("content-type", "text/html").drip(
                chunk.as_bytes(),
                Duration::from_secs(1),
                1000,
            ),
        );
    let analysis = analyze(&fake, &url("https://drip.test/")).await.unwrap();
    assert_eq!(analysis.page.meta.len(), 1);
    assert!(has(&analysis, CheckId::PageNoindex));
    assert_eq!(analysis.page.error, None);
    assert_eq!(analysis.page.bytes_read, Some(chunk.len() as u64));
    assert!(
        analysis.duration_ms <= 2_000,
        "read one chunk, not a thousand: {} ms",
        analysis.duration_ms
    );
}

fn refused(host: &str) -> FetchError {
    FetchError::AddressRefused {
        host: host.into(),
        address: std::net::IpAddr::from([127, 0, 0, 1]),
        range: fetch::RefusedRange::Loopback,
    }
}

#[tokio::test(start_paused = true)]
async fn a_site_whose_address_is_refused_is_not_graded() {
    let fake = Fake::new().fail("https://inside.test/robots.txt", refused("inside.test"));
    let error = analyze(&fake, &url("https://inside.test/"))
        .await
        .expect_err("no report for a site never contacted");
    assert_eq!(error.kind(), audit::AnalysisErrorKind::NotContacted);
    assert!(!error.is_retryable());
    let source = std::error::Error::source(&error).map(ToString::to_string);
    assert!(source.is_some_and(|s| s.contains("loopback")));

    // A site that answers and sends robots.txt to a refused address was contacted: graded.
    let fake = Fake::new()
        .reply(
            "https://outside.test/robots.txt",
            Reply::redirect(301, "https://inside.test/robots.txt"),
        )
        .fail("https://inside.test/robots.txt", refused("inside.test"));
    let analysis = analyze(&fake, &url("https://outside.test/")).await.unwrap();
    assert_eq!(analysis.robots.outcome, RobotsStatus::Unreachable);
    assert_eq!(
        analysis.robots.error_kind,
        Some(fetch::ErrorKind::AddressRefused)
    );
    assert!(has(&analysis, CheckId::FetchUnreachable));
}

#[tokio::test(start_paused = true)]
async fn retry_after_is_reported_as_honoured() {
    let fake = Fake::new().reply(
        "https://busy.test/robots.txt",
        Reply::status(429).header("retry-after", "99999999999999999999999"),
    );
    let analysis = analyze(&fake, &url("https://busy.test/")).await.unwrap();
    assert_eq!(analysis.robots.outcome, RobotsStatus::RateLimited);
    assert_eq!(
        analysis.robots.retry_after_s,
        Some(fetch::MAX_RETRY_AFTER.as_secs())
    );
}

#[tokio::test(start_paused = true)]
async fn credentials_in_the_url_are_neither_sent_nor_reported() {
    let fake = Fake::new()
        .robots("https://a.test/robots.txt", "User-agent: *\nDisallow: /x\n")
        .route("https://a.test/", 200, HTML, "<head></head>");
    let analysis = analyze(&fake, &url("https://user:secret@a.test/"))
        .await
        .unwrap();
    assert_eq!(analysis.page.status.map(|s| s.as_u16()), Some(200));
    let json = serde_json::to_string(&analysis).unwrap();
    assert!(!json.contains("secret"), "{json}");
    assert!(fake
        .web
        .requests()
        .iter()
        .all(|logged| !logged.headers.contains_key("authorization")));
}

/// Issue 7: a sitemap list whose hosts are all refused by the address policy (their
/// robots.txt, or the sitemap itself) is a finding naming the hosts, like unreachable ones.
#[tokio::test(start_paused = true)]
async fn sitemaps_whose_hosts_are_all_refused_are_a_finding() {
    let robots = "User-agent: *\nAllow: /\nSitemap: https://inside.test/s.xml\n\
                  Sitemap: https://intranet.test/s.xml\n";
    let fake = Fake::new()
        .robots("https://a.test/robots.txt", robots)
        .route("https://a.test/", 200, HTML, "<head></head>")
        // One host refused at its robots.txt, the other at the sitemap itself.
        .fail("https://inside.test/robots.txt", refused("inside.test"))
        .route("https://intranet.test/robots.txt", 404, &[], "")
        .fail("https://intranet.test/s.xml", refused("intranet.test"));
    let analysis = analyze(&fake, &url("https://a.test/")).await.unwrap();
    let finding = analysis
        .findings
        .iter()
        .find(|finding| finding.id == CheckId::SitemapHostsUnreachable)
        .unwrap_or_else(|| panic!("no finding: {:#?}", analysis.findings));
    assert_eq!(finding.number("sitemaps"), Some(2));
    assert_eq!(
        finding.list("hosts"),
        Some(vec!["inside.test", "intranet.test"])
    );
    // One reachable sitemap host: no such finding.
    let fake = Fake::new()
        .robots("https://a.test/robots.txt", robots)
        .route("https://a.test/", 200, HTML, "<head></head>")
        .fail("https://inside.test/robots.txt", refused("inside.test"))
        .route("https://intranet.test/robots.txt", 404, &[], "")
        .route("https://intranet.test/s.xml", 200, &[], "<urlset></urlset>");
    let analysis = analyze(&fake, &url("https://a.test/")).await.unwrap();
    assert!(!has(&analysis, CheckId::SitemapHostsUnreachable));
}
