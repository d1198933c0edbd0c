//! The one budget of a whole analysis (`Limits::analysis_budget`), against hostile servers on
//! the test web (127.0.0.1 only): slow redirect chains and slow drips, on robots.txt and on
//! the page. Nothing of the analysis runs past the budget, and `jittybot robots` (the
//! fetcher's `fetch_robots_txt` under the same limit) reaches the same verdict.
//!
//! The budgets are scaled down to a second or so, on the real clock; the full-size budget is
//! pinned on the paused clock in `scheduling`.

mod common;

use std::time::{Duration, Instant};

use audit::report::{RobotsStatus, SkipReason};
use audit::{analyze_with, Analysis, Limits};
use common::{config_for, url};
use fetch::{Fetcher, RobotsOutcome};
use robots::ProductTokens;
use testweb::{Reply, TestWeb};
use url::Url;

/// What the server may add to the budget before the analysis sees it has run out: a
/// scheduling tick, a connection closed, the audit of what came back.
const SLACK: Duration = Duration::from_millis(500);

/// A fetcher whose one-fetch limit is `total` (as `jittybot --timeout` sets it).
fn fetcher_within(web: &TestWeb, hosts: &[&str], total: Duration) -> Fetcher {
    let mut config = config_for(web, hosts.iter().copied());
    config.timeouts.total = total;
    Fetcher::new(config).expect("fetcher")
}

/// `redirects` hops from `from`, each answered after `delay`, ending at the returned path.
fn slow_chain(web: &TestWeb, host: &str, from: &str, redirects: usize, delay: Duration) -> String {
    let mut path = from.to_owned();
    for hop in 1..=redirects {
        let next = format!("{from}-hop{hop}");
        web.site(host)
            .path(&path)
            .respond(Reply::redirect(301, &next).delay(delay));
        path = next;
    }
    path
}

/// Two redirects of 250 ms each from `from` on `host`, then a `content_type` body sent as
/// `copies` copies of `chunk`, one every 100 ms: fast enough for the minimum transfer rate,
/// so only the one deadline over hops and body can stop it. Returns the dripping path.
fn slow_drip(
    web: &TestWeb,
    host: &str,
    from: &str,
    content_type: &str,
    chunk: &[u8],
    copies: usize,
) -> String {
    let last = slow_chain(web, host, from, 2, Duration::from_millis(250));
    web.site(host)
        .path(&last)
        .respond(Reply::ok().header("Content-Type", content_type).drip(
            chunk,
            Duration::from_millis(100),
            copies,
        ));
    last
}

/// Runs the analysis of `target` under `budget`, and checks from the web's own log that
/// no request arrived past the budget and that the analysis ended within it.
async fn analyse_within(
    web: &TestWeb,
    fetcher: &Fetcher,
    target: &Url,
    budget: Duration,
) -> Analysis {
    web.clear_requests();
    let limits = Limits {
        analysis_budget: budget,
        ..Limits::default()
    };
    let started = Instant::now();
    let analysis = analyze_with(fetcher, target, &limits)
        .await
        .expect("the analysis runs");
    let took = started.elapsed();
    assert!(took < budget + SLACK, "the analysis took {took:?}");
    let log = web.requests();
    let first = log.first().map(|request| request.at).expect("requests");
    for request in &log {
        let after = request.at.duration_since(first);
        assert!(after < budget, "{} arrived {after:?} in", request.path);
    }
    analysis
}

#[tokio::test]
async fn a_slow_redirect_chain_is_cut_by_the_one_budget_and_both_commands_agree() {
    // A hostile server, scaled down: every hop answers after 300 ms, the file comes
    // after five hops (1.8 s); the budget is 1 s for `robots` and for the whole analysis.
    let budget = Duration::from_secs(1);
    let delay = Duration::from_millis(300);
    let web = TestWeb::start().await;
    let last = slow_chain(&web, "slow.test", "/robots.txt", 5, delay);
    web.site("slow.test")
        .path(&last)
        .respond(Reply::robots_txt("User-agent: *\nAllow: /\n").delay(delay));
    web.site("slow.test")
        .path("/")
        .respond(Reply::ok().body("<head></head>"));
    let fetcher = fetcher_within(&web, &["slow.test"], budget);
    let target = url(&web.http_url("slow.test", "/"));

    // What `jittybot robots` does.
    let fetched = fetch::fetch_robots_txt(&fetcher, &target).await.unwrap();
    assert_eq!(fetched.outcome, RobotsOutcome::Unreachable);

    let analysis = analyse_within(&web, &fetcher, &target, budget).await;
    assert_eq!(analysis.robots.outcome, RobotsStatus::Unreachable);
    assert!(web.requests_to("slow.test", "/").is_empty());
    assert!(web.requests().len() < 6, "{:?}", web.requests());
}

#[tokio::test]
async fn a_slow_drip_across_robots_txt_hops_is_unreachable_for_both_commands_within_the_budget() {
    // Two hops of 250 ms, then a file dripped a line every 100 ms for 3 s: fast enough for
    // the minimum transfer rate, so only the one deadline over hops and body can stop it.
    let budget = Duration::from_secs(1);
    let web = TestWeb::start().await;
    slow_drip(
        &web,
        "drip.test",
        "/robots.txt",
        "text/plain",
        b"User-agent: *\nAllow: /\n",
        30,
    );
    web.site("drip.test")
        .path("/")
        .respond(Reply::ok().body("<head></head>"));
    let fetcher = fetcher_within(&web, &["drip.test"], budget);
    let target = url(&web.http_url("drip.test", "/"));

    let fetched = fetch::fetch_robots_txt(&fetcher, &target).await.unwrap();
    assert_eq!(fetched.outcome, RobotsOutcome::Unreachable);
    assert!(!fetched.verdict("/", &ProductTokens::JITTYBOT).allowed);

    let analysis = analyse_within(&web, &fetcher, &target, budget).await;
    assert_eq!(analysis.robots.outcome, RobotsStatus::Unreachable);
    assert_eq!(analysis.robots.error_kind, Some(fetch::ErrorKind::Timeout));
    assert!(
        web.requests_to("drip.test", "/").is_empty(),
        "page asked for"
    );
    assert_eq!(analysis.grade, audit::Grade::F);
}

#[tokio::test]
async fn a_slow_page_chain_and_drip_end_with_the_analysis_budget() {
    // robots.txt answers at once; the page is two slow hops and a head that never ends,
    // dripped for 5 s. What the page leaves of the budget is nothing: the sitemap is not
    // asked for, and the page is reported as cut by the budget, not as a fault of the site.
    let budget = Duration::from_millis(1500);
    let web = TestWeb::start().await;
    let sitemap = web.http_url("page.test", "/sitemap.xml");
    web.site("page.test")
        .path("/robots.txt")
        .respond(Reply::robots_txt(&format!(
            "User-agent: *\nAllow: /\nSitemap: {sitemap}\n"
        )));
    let last = slow_drip(
        &web,
        "page.test",
        "/",
        "text/html",
        b"<!-- a head that never ends -->",
        50,
    );
    web.site("page.test")
        .path("/sitemap.xml")
        .respond(Reply::ok().body("<urlset></urlset>"));
    let fetcher = fetcher_within(&web, &["page.test"], budget);
    let target = url(&web.http_url("page.test", "/"));

    let fetched = fetch::fetch_robots_txt(&fetcher, &target).await.unwrap();
    assert_eq!(fetched.outcome, RobotsOutcome::Rules);
    assert!(fetched.verdict("/", &ProductTokens::JITTYBOT).allowed);

    let analysis = analyse_within(&web, &fetcher, &target, budget).await;
    assert_eq!(analysis.robots.outcome, RobotsStatus::Rules);
    assert_eq!(
        web.requests_to("page.test", &last).len(),
        1,
        "the page was read"
    );
    assert_eq!(
        analysis.page.skipped,
        Some(SkipReason::AnalysisBudget { budget_ms: 1500 })
    );
    assert_eq!(analysis.page.error, None);
    assert!(web.requests_to("page.test", "/sitemap.xml").is_empty());
    assert_eq!(
        analysis.sitemaps[0].skipped,
        Some(SkipReason::AnalysisBudget { budget_ms: 1500 })
    );
}

#[tokio::test]
async fn a_slow_sitemap_host_ends_with_the_analysis_budget_not_the_sitemap_budget() {
    // robots.txt and the page answer at once; the sitemap is on another host, whose own
    // robots.txt is two slow hops and a drip. The sitemap phase's 20 s would allow it; the
    // analysis's 1 s does not, and the report names the budget that ended it.
    let budget = Duration::from_secs(1);
    let web = TestWeb::start().await;
    let sitemap = web.http_url("maps.test", "/sitemap.xml");
    web.site("main.test")
        .path("/robots.txt")
        .respond(Reply::robots_txt(&format!(
            "User-agent: *\nAllow: /\nSitemap: {sitemap}\n"
        )));
    web.site("main.test").path("/").respond(
        Reply::ok()
            .header("Content-Type", "text/html")
            .body("<head></head>"),
    );
    slow_drip(
        &web,
        "maps.test",
        "/robots.txt",
        "text/plain",
        b"User-agent: *\nAllow: /\n",
        30,
    );
    web.site("maps.test")
        .path("/sitemap.xml")
        .respond(Reply::ok().body("<urlset></urlset>"));
    let fetcher = fetcher_within(&web, &["main.test", "maps.test"], budget);
    let target = url(&web.http_url("main.test", "/"));

    let analysis = analyse_within(&web, &fetcher, &target, budget).await;
    assert_eq!(analysis.page.status.map(|s| s.as_u16()), Some(200));
    assert!(web.requests_to("maps.test", "/sitemap.xml").is_empty());
    assert_eq!(
        analysis.sitemaps[0].skipped,
        Some(SkipReason::AnalysisBudget { budget_ms: 1000 })
    );
}
