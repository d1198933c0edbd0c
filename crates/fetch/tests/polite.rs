//! The polite pipeline on tokio's paused clock, on the scripted web: robots.txt before every
//! hop (each hop against its own host's rules), the origin's turn, one deadline for the whole
//! operation (robots.txt fetches included), the wait budget, and typed skips.

use robots::ProductTokens;
use std::sync::Arc;
use std::time::Duration;

use fetch::testing::{Reply, ScriptedWeb};
use fetch::{
    FetchError, Operation, Outcome, PaceSkip, Pacer, PacerConfig, Policy, Polite, PoliteRequest,
    PoliteResponse, Request, RobotsCache, RulesSource, ScopeOrigins, SkipReason, TimeoutPhase, Url,
    WaitReason,
};
use tokio::time::Instant;

const BOT: &ProductTokens = &ProductTokens::from_static(&["RobotsTxtParser"]);

fn polite(web: &Arc<ScriptedWeb>, config: PacerConfig, policy: Policy) -> Polite {
    Polite::new(
        RobotsCache::new(web.fetcher(), policy),
        Pacer::new(config),
        Arc::new(ScopeOrigins),
    )
}

fn analysis(web: &Arc<ScriptedWeb>) -> Polite {
    polite(web, PacerConfig::analysis(), Policy::FreshPerOperation)
}

fn url(text: &str) -> Url {
    Url::parse(text).unwrap()
}

async fn get(polite: &Polite, target: &str, operation: &Operation) -> PoliteResponse {
    polite
        .fetch(
            PoliteRequest::new(Request::get(url(target)), BOT),
            operation,
        )
        .await
}

fn minute() -> Operation {
    Operation::within(Duration::from_secs(60)).with_wait_budget(Duration::from_secs(10))
}

#[tokio::test(start_paused = true)]
async fn a_disallowed_url_is_skipped_with_its_deciding_line() {
    let web = ScriptedWeb::new();
    web.route(
        "https://a.test/robots.txt",
        Reply::robots_txt("User-agent: RobotsTxtParser\nAllow: /ok\nDisallow: /\n"),
    );
    let response = get(&analysis(&web), "https://a.test/private", &minute()).await;
    match response.outcome {
        Outcome::Skipped {
            url,
            reason:
                SkipReason::Disallowed {
                    robots_url,
                    line,
                    rule,
                },
        } => {
            assert_eq!(url.as_str(), "https://a.test/private");
            assert_eq!(robots_url.as_str(), "https://a.test/robots.txt");
            assert_eq!((line, rule.as_str()), (3, "Disallow: /"));
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(response.trail.robots_fetches.len(), 1);
    assert!(web.requests_to("https://a.test/private").is_empty());
}

#[tokio::test(start_paused = true)]
async fn nothing_is_fetched_from_a_scope_whose_robots_txt_is_unreachable() {
    for reply in [Reply::status(503), Reply::status(302), Reply::status(429)] {
        let web = ScriptedWeb::new();
        web.route("https://a.test/robots.txt", reply.clone());
        let response = get(&analysis(&web), "https://a.test/", &minute()).await;
        match response.outcome {
            Outcome::Skipped {
                reason: SkipReason::RobotsUnreachable { source, .. },
                ..
            } => assert!(
                matches!(source, RulesSource::Unreachable | RulesSource::BackingOff),
                "{reply:?}"
            ),
            other => panic!("{reply:?}: {other:?}"),
        }
        assert_eq!(web.requests().len(), 1, "{reply:?}");
    }
}

#[tokio::test(start_paused = true)]
async fn every_redirect_hop_is_checked_against_its_own_hosts_rules() {
    let web = ScriptedWeb::new();
    web.route(
        "https://a.test/robots.txt",
        Reply::robots_txt("User-agent: *\nAllow: /\n"),
    );
    web.route(
        "https://a.test/",
        Reply::redirect(301, "https://b.test/landing"),
    );
    web.route(
        "https://b.test/robots.txt",
        Reply::robots_txt("User-agent: *\nDisallow: /landing\n"),
    );
    let response = get(&analysis(&web), "https://a.test/", &minute()).await;
    assert!(matches!(
        response.outcome,
        Outcome::Skipped { ref url, reason: SkipReason::Disallowed { .. } }
            if url.as_str() == "https://b.test/landing"
    ));
    assert_eq!(response.trail.redirects.len(), 1);
    assert_eq!(response.trail.exchanges.len(), 1);
    let asked: Vec<String> = web.requests().iter().map(|r| r.url.to_string()).collect();
    assert_eq!(
        asked,
        [
            "https://a.test/robots.txt",
            "https://a.test/",
            "https://b.test/robots.txt"
        ]
    );
}

#[tokio::test(start_paused = true)]
async fn crawl_delays_are_waited_within_the_budget_and_the_rest_is_skipped() {
    let web = ScriptedWeb::new();
    web.route(
        "https://a.test/robots.txt",
        Reply::robots_txt("User-agent: *\nCrawl-delay: 6\n"),
    );
    web.route("https://a.test/", Reply::ok().body("page"));
    web.route("https://a.test/sitemap.xml", Reply::ok().body("<urlset/>"));
    let polite = analysis(&web);
    let operation = minute();
    let start = Instant::now();
    let page = get(&polite, "https://a.test/", &operation).await;
    let Outcome::Fetched(fetched) = page.outcome else {
        panic!("{:?}", page.outcome)
    };
    assert_eq!(fetched.body.read_to_end(None).await.unwrap().bytes, b"page");
    assert_eq!(page.trail.waited, Duration::from_secs(6));
    assert_eq!(
        web.requests_to("https://a.test/")[0].at - start,
        Duration::from_secs(6),
        "robots.txt at 0 s, the page one crawl-delay later"
    );
    // Another 6 s would make 12 > 10: skipped, and said why. The sitemap phase has its own
    // deadline but shares the analysis's budget.
    let sitemaps = operation.narrowed(fetch::Deadline::after(Duration::from_secs(20)));
    let sitemap = get(&polite, "https://a.test/sitemap.xml", &sitemaps).await;
    assert!(
        matches!(
            sitemap.outcome,
            Outcome::Skipped {
                reason: SkipReason::Pacing(PaceSkip::WaitBudget {
                    reason: WaitReason::CrawlDelay,
                    ..
                }),
                ..
            }
        ),
        "{:?}",
        sitemap.outcome
    );
    assert!(web.requests_to("https://a.test/sitemap.xml").is_empty());
}

#[tokio::test(start_paused = true)]
async fn robots_txt_fetches_count_against_the_operations_deadline() {
    let web = ScriptedWeb::new();
    web.route(
        "https://a.test/robots.txt",
        Reply::robots_txt("User-agent: *\nAllow: /\n").delay(Duration::from_secs(8)),
    );
    web.route(
        "https://a.test/",
        Reply::ok().body("late").delay(Duration::from_secs(5)),
    );
    let start = Instant::now();
    let operation = Operation::within(Duration::from_secs(10));
    let response = get(&analysis(&web), "https://a.test/", &operation).await;
    assert!(
        matches!(
            response.outcome,
            Outcome::Failed(FetchError::Timeout {
                phase: TimeoutPhase::Deadline
            })
        ),
        "{:?}",
        response.outcome
    );
    assert_eq!(Instant::now() - start, Duration::from_secs(10));
}

#[tokio::test(start_paused = true)]
async fn a_redirect_out_of_the_callers_scope_is_not_followed() {
    let web = ScriptedWeb::new();
    web.route(
        "https://a.test/",
        Reply::redirect(302, "https://elsewhere.test/"),
    );
    let polite = polite(&web, PacerConfig::default(), Policy::Cached);
    let same_site = |target: &Url| target.host_str() == Some("a.test");
    let tokens = ProductTokens::JITTYBOT;
    let mut request = PoliteRequest::new(Request::get(url("https://a.test/")), &tokens);
    request.follow = Some(&same_site);
    let response = polite.fetch(request, &minute()).await;
    assert!(matches!(
        response.outcome,
        Outcome::Skipped { reason: SkipReason::OutOfScope, ref url } if url.host_str() == Some("elsewhere.test")
    ));
    assert!(web
        .requests()
        .iter()
        .all(|r| r.url.host_str() == Some("a.test")));
}

#[tokio::test(start_paused = true)]
async fn what_the_pacer_learns_slows_the_next_request_and_the_body_holds_the_turn() {
    let web = ScriptedWeb::new();
    web.script(
        "https://a.test/busy",
        [Reply::status(503).header("Retry-After", "120"), Reply::ok()],
    );
    web.route("https://a.test/big", Reply::ok().body("x"));
    let polite = Arc::new(polite(&web, PacerConfig::default(), Policy::Cached));
    let operation = Operation::within(Duration::from_secs(3600));
    let first = get(&polite, "https://a.test/busy", &operation).await;
    let Outcome::Fetched(fetched) = first.outcome else {
        panic!()
    };
    assert_eq!(fetched.head.status.as_u16(), 503);
    assert_eq!(
        first.trail.learned,
        Some(fetch::Learned::Failure {
            retry_after: Some(Duration::from_secs(120))
        })
    );
    drop(fetched);
    let start = Instant::now();
    let second = get(&polite, "https://a.test/busy", &operation).await;
    assert!(matches!(second.outcome, Outcome::Fetched(_)));
    assert_eq!(Instant::now() - start, Duration::from_secs(120));
    drop(second);

    // While a body is unread, the origin's turn is held: the next request waits for it.
    let held = get(&polite, "https://a.test/big", &operation).await;
    let Outcome::Fetched(held) = held.outcome else {
        panic!()
    };
    let waiting = {
        let polite = Arc::clone(&polite);
        tokio::spawn(async move {
            let operation = Operation::within(Duration::from_secs(3600));
            get(&polite, "https://a.test/big", &operation).await;
            Instant::now()
        })
    };
    tokio::time::sleep(Duration::from_secs(30)).await;
    let released = Instant::now();
    drop(held);
    assert!(waiting.await.unwrap() >= released);
}

#[tokio::test(start_paused = true)]
async fn an_analysis_reads_robots_txt_first_and_its_page_fetch_reuses_the_answer() {
    let web = ScriptedWeb::new();
    web.route(
        "https://a.test/robots.txt",
        Reply::robots_txt("User-agent: *\nCrawl-delay: 3\n"),
    );
    web.route("https://a.test/page", Reply::ok().body("<head></head>"));
    let polite = analysis(&web);
    let operation = minute();
    let check = polite
        .check_robots(&url("https://a.test/page"), BOT, &operation)
        .await
        .unwrap();
    assert!(check.verdict.allowed);
    let fetched = check.fetched.unwrap();
    assert_eq!(fetched.status.map(|s| s.as_u16()), Some(200));
    assert_eq!(fetched.exchanges.len(), 1);
    let page = get(&polite, "https://a.test/page", &operation).await;
    assert!(matches!(page.outcome, Outcome::Fetched(_)));
    assert!(
        page.trail.robots_fetches.is_empty(),
        "memoised for the analysis"
    );
    assert_eq!(page.trail.waited, Duration::from_secs(3));
    assert_eq!(web.requests_to("https://a.test/robots.txt").len(), 1);
    assert_eq!(
        operation.budget.as_ref().unwrap().left(),
        Duration::from_secs(7)
    );
}

#[tokio::test(start_paused = true)]
async fn a_request_may_present_another_product_token_and_refuse_long_waits() {
    let web = ScriptedWeb::new();
    web.route(
        "https://a.test/robots.txt",
        Reply::robots_txt("User-agent: *\nAllow: /\n"),
    );
    web.route("https://a.test/img.png", Reply::ok().body("png"));
    let crawler = polite(&web, PacerConfig::default(), Policy::Cached);
    // The image waits its 1 s turn after robots.txt (a wait within 5 s is allowed)...
    let patient = Operation::within(Duration::from_secs(60)).with_max_wait(Duration::from_secs(5));
    let mut request = Request::get(url("https://a.test/img.png"));
    request.agent = Some("JittyBot-Image".into());
    let response = crawler
        .fetch(
            PoliteRequest::new(
                request,
                &robots::ProductTokens::from_static(&["JittyBot-Image", "JittyBot"]),
            ),
            &patient,
        )
        .await;
    assert!(
        matches!(response.outcome, Outcome::Fetched(_)),
        "{:?}",
        response.outcome
    );
    drop(response);
    let agent = web.requests_to("https://a.test/img.png")[0].headers["user-agent"]
        .to_str()
        .unwrap()
        .to_string();
    assert!(agent.contains("(compatible; JittyBot-Image/"), "{agent}");
    // ...the next one would wait for the 1 s pace again: with max_wait 0 it is not made.
    let operation = Operation::within(Duration::from_secs(60)).with_max_wait(Duration::ZERO);
    let response = crawler
        .fetch(
            PoliteRequest::new(Request::get(url("https://a.test/img.png")), BOT),
            &operation,
        )
        .await;
    match response.outcome {
        Outcome::Skipped {
            reason: SkipReason::Pacing(PaceSkip::NotBefore { .. }),
            ..
        } => {}
        other => panic!("{other:?}"),
    }
    assert_eq!(web.requests_to("https://a.test/img.png").len(), 1);
}
