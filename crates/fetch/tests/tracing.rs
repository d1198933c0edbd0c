//! `RUST_LOG=fetch=debug` shows a span per polite request, per hop and per robots.txt fetch,
//! and an event per robots decision.

use robots::ProductTokens;
use std::io::Write;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use fetch::testing::{Reply, ScriptedWeb};
use fetch::{
    Operation, Pacer, PacerConfig, Policy, Polite, PoliteRequest, Request, RobotsCache,
    ScopeOrigins,
};

#[derive(Clone, Default)]
struct Captured(Arc<Mutex<Vec<u8>>>);

impl Write for Captured {
    fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(bytes);
        Ok(bytes.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

#[tokio::test(start_paused = true)]
async fn requests_hops_and_robots_decisions_are_traced() {
    let captured = Captured::default();
    let writer = captured.clone();
    let subscriber = tracing_subscriber::fmt()
        .with_env_filter(tracing_subscriber::EnvFilter::new("fetch=debug"))
        .with_writer(move || writer.clone())
        .with_ansi(false)
        .finish();
    let _guard = tracing::subscriber::set_default(subscriber);

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

    let log = String::from_utf8(captured.0.lock().unwrap().clone()).unwrap();
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
