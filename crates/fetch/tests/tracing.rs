//! `RUST_LOG=fetch=debug` shows a span per polite request, per hop and per robots.txt fetch,
//! and an event per robots decision.

use robots::ProductTokens;
use std::sync::Arc;
use std::time::Duration;

use fetch::testing::{capture_log, Reply, ScriptedWeb};
use fetch::{
    Operation, Pacer, PacerConfig, Policy, Polite, PoliteRequest, Request, RobotsCache,
    ScopeOrigins,
};

#[tokio::test(start_paused = true)]
async fn requests_hops_and_robots_decisions_are_traced() {
    let captured = capture_log("fetch=debug");

    let web = ScriptedWeb::new();
    web.route(
        "https://a.test/robots.txt",
        Reply::robots_txt("User-agent: *\nDisallow: /x\n"),
    );
    let polite = Polite::new(
        RobotsCache::new(web.fetcher(), Policy::Cached),
        Pacer::new(PacerConfig::default()),
        Arc::new(ScopeOrigins),
    );
    let operation = Operation::within(Duration::from_secs(60));
    let url = "https://a.test/x".parse().unwrap();
    polite
        .fetch(
            PoliteRequest::new(Request::get(url), &ProductTokens::JITTYBOT),
            &operation,
        )
        .await;

    let log = captured.text();
    for expected in [
        "polite{url=https://a.test/x}",
        "robots_txt{url=https://a.test/robots.txt}",
        "hop{",
        "robots decision",
        "allowed=false",
    ] {
        assert!(log.contains(expected), "{expected:?} missing from:\n{log}");
    }
}
