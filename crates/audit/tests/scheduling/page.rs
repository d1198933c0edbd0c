//! Step 2, the page: requested only where the rules allow it, redirects checked hop by hop,
//! crawl-delays within their budget, directives from headers and the head, read to the end
//! of the head only.

use std::time::Duration;

use audit::limits::CRAWL_DELAY_BUDGET;
use audit::report::{RobotsStatus, SkipReason};
use audit::{analyze, CheckId, Grade};
use fetch::testing::Reply;

use crate::fake::{has, ids, url, Fake, HTML, URLSET, XML};

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
