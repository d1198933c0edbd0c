//! Step 1, robots.txt: the status table, the problems of the file's answer, the one budget
//! against a slow chain, refused sites, Retry-After and credentials.

use std::time::Duration;

use audit::crawlers::BOT_TOKEN;
use audit::limits::ANALYSIS_BUDGET;
use audit::report::{RobotsStatus, SkipReason};
use audit::{analyze, CheckId, Grade};
use fetch::testing::Reply;
use fetch::{Cause, FetchError};
use url::Url;

use crate::fake::{has, ids, refused, url, Fake, HTML};

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
async fn html_a_challenge_or_a_refusal_instead_of_robots_txt() {
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
}

#[tokio::test(start_paused = true)]
async fn a_wrong_content_type_and_an_empty_file() {
    let fake = Fake::new().route(
        "https://a.test/robots.txt",
        200,
        &[("Content-Type", "application/octet-stream")],
        "",
    );
    let analysis = analyze(&fake, &url("https://a.test/")).await.unwrap();
    assert!(has(&analysis, CheckId::FetchContentType));
    assert!(has(&analysis, CheckId::FetchEmpty));
}

#[tokio::test(start_paused = true)]
async fn too_many_redirects_or_another_host_behind_robots_txt() {
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
}

#[tokio::test(start_paused = true)]
async fn a_file_over_500_kib_is_cut() {
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
async fn invalid_targets_are_refused() {
    let fake = Fake::new();
    assert!(analyze(&fake, &url("ftp://example.test/")).await.is_err());
    assert!(fake.requested().is_empty());
}

/// A hostile server: robots.txt behind a chain of redirects, each answered just
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
