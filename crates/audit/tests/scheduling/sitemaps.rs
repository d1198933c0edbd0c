//! Step 3, the sitemaps: how many, how much of each, within their own time budget, other
//! hosts' robots.txt first, and what unreachable or refused sitemaps are.

use std::time::Duration;

use audit::limits::{MAX_SITEMAPS_CHECKED, SITEMAP_READ_BYTES, SITEMAP_TIME_BUDGET};
use audit::report::{Purpose, SkipReason};
use audit::{analyze, CheckId};

use crate::fake::{has, refused, url, Fake, HTML, URLSET, XML};

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

/// A sitemap list whose hosts are all refused by the address policy (their
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
