//! The polite gate on tokio's paused clock (no browser): a request waits for its origin's
//! turn only until the page's deadline; media use JittyBot-Image's rules and User-Agent; the
//! caller's pre-check comes first.

use std::sync::Arc;
use std::time::Duration;

use fetch::testing::{Reply, ScriptedWeb};
use fetch::{Pacer, PacerConfig, Policy, Polite, RobotsCache, ScopeOrigins};
use render::{
    Decision, DenyReason, PoliteGate, PoliteSource, RequestGate, ResourceKind, SubMethod,
    SubRequest,
};
use robots::ProductTokens;
use tokio::time::Instant;
use url::Url;

fn gate(web: &Arc<ScriptedWeb>, pace: Duration) -> PoliteGate {
    let pacer = PacerConfig {
        pace,
        ..PacerConfig::default()
    };
    let polite = Polite::new(
        RobotsCache::new(web.fetcher(), Policy::Cached),
        Pacer::new(pacer),
        Arc::new(ScopeOrigins),
    );
    PoliteGate::new(
        Arc::new(polite) as Arc<dyn PoliteSource>,
        ProductTokens::from_static(&["JittyBot"]),
        ProductTokens::from_static(&["JittyBot-Image", "JittyBot"]),
        Some("JittyBot-Image".into()),
    )
}

fn sub(url: &str, kind: ResourceKind, within: Duration) -> SubRequest {
    SubRequest {
        url: Url::parse(url).unwrap(),
        method: SubMethod::Get,
        kind,
        deadline: Instant::now() + within,
    }
}

#[tokio::test(start_paused = true)]
async fn a_request_whose_turn_comes_after_the_pages_deadline_is_denied() {
    let web = ScriptedWeb::new();
    web.route(
        "https://a.test/robots.txt",
        Reply::robots_txt("User-agent: *\nAllow: /\n"),
    );
    web.route("https://a.test/x.js", Reply::ok().body("1"));
    let gate = gate(&web, Duration::from_secs(10));
    // robots.txt takes the origin's turn; the script's comes 10 s later, after the deadline.
    let started = Instant::now();
    let decision = gate
        .decide(sub(
            "https://a.test/x.js",
            ResourceKind::Script,
            Duration::from_secs(3),
        ))
        .await;
    assert!(matches!(decision, Decision::Deny(_)), "{decision:?}");
    assert!(started.elapsed() <= Duration::from_secs(3));
    assert!(web.requests_to("https://a.test/x.js").is_empty());
    // With time enough, it waits its turn and is made.
    let decision = gate
        .decide(sub(
            "https://a.test/x.js",
            ResourceKind::Script,
            Duration::from_secs(30),
        ))
        .await;
    assert!(matches!(decision, Decision::Allow(_)), "{decision:?}");
    assert_eq!(web.requests_to("https://a.test/x.js").len(), 1);
}

#[tokio::test(start_paused = true)]
async fn media_follow_jittybot_image_rules_and_the_pre_check_comes_first() {
    let web = ScriptedWeb::new();
    web.route(
        "https://a.test/robots.txt",
        Reply::robots_txt("User-agent: JittyBot-Image\nDisallow: /pics/\n"),
    );
    web.route("https://a.test/pics/a.png", Reply::ok().body("png"));
    web.route("https://a.test/pics/page.json", Reply::ok().body("{}"));
    web.route("https://a.test/other.png", Reply::ok().body("png"));
    let gate = gate(&web, Duration::ZERO).with_pre_check(Box::new(|r| {
        (r.url.path() == "/other.png").then_some(DenyReason::OutOfScope)
    }));
    let within = Duration::from_secs(30);
    let image = gate
        .decide(sub(
            "https://a.test/pics/a.png",
            ResourceKind::Image,
            within,
        ))
        .await;
    assert!(matches!(image, Decision::Deny(_)), "{image:?}");
    let data = gate
        .decide(sub(
            "https://a.test/pics/page.json",
            ResourceKind::Data,
            within,
        ))
        .await;
    assert!(
        matches!(data, Decision::Allow(_)),
        "JittyBot's own group allows it: {data:?}"
    );
    let other = gate
        .decide(sub("https://a.test/other.png", ResourceKind::Image, within))
        .await;
    assert!(
        matches!(&other, Decision::Deny(DenyReason::OutOfScope)),
        "{other:?}"
    );
    assert!(web.requests_to("https://a.test/pics/a.png").is_empty());
    assert!(web.requests_to("https://a.test/other.png").is_empty());
    let records = gate.take_records();
    assert_eq!(
        records.len(),
        2,
        "the two requests that went to the pipeline"
    );
}
