//! The fetcher on the scripted web and tokio's paused clock: manual redirect mode, the body
//! reader's cap, rate and deadline, and typed redirect outcomes in automatic mode.

use std::time::Duration;

use fetch::testing::{Reply, ScriptedWeb};
use fetch::{Deadline, FetchError, Next, RedirectChain, RedirectError, Request, TimeoutPhase, Url};

fn url(text: &str) -> Url {
    Url::parse(text).unwrap()
}

#[tokio::test(start_paused = true)]
async fn manual_mode_shows_every_hop_and_lets_the_caller_decide() {
    let web = ScriptedWeb::new();
    web.route(
        "https://a.test/one",
        Reply::redirect(301, "/two").header("Set-Cookie", "seen=1"),
    );
    web.route(
        "https://a.test/two",
        Reply::redirect(302, "https://b.test/three"),
    );
    let fetcher = web.fetcher();
    let request = Request::get(url("https://a.test/one"));
    let deadline = Deadline::after(Duration::from_secs(10));
    let mut chain = RedirectChain::new(&request.url, 5);
    let mut current = request.url.clone();
    let mut seen = Vec::new();
    loop {
        let hop = fetcher
            .send_hop(&request, &current, deadline)
            .await
            .unwrap();
        seen.push((hop.head.status.as_u16(), hop.head.headers.clone()));
        match chain
            .next(&current, hop.head.status, &hop.head.headers)
            .unwrap()
        {
            Next::Final => break,
            // The caller's decision: stay on a.test.
            Next::Follow(next) if next.host_str() == Some("a.test") => current = next,
            Next::Follow(_) => break,
        }
    }
    assert_eq!(seen.len(), 2);
    assert_eq!(seen[0].1["set-cookie"], "seen=1", "all headers of each hop");
    assert_eq!(chain.hops().len(), 2);
    assert!(web.requests_to("https://b.test/three").is_empty());
}

#[tokio::test(start_paused = true)]
async fn automatic_mode_gives_typed_redirect_outcomes() {
    let web = ScriptedWeb::new();
    web.route("https://a.test/none", Reply::status(307));
    web.route("https://a.test/ftp", Reply::redirect(301, "ftp://a.test/x"));
    let fetcher = web.fetcher();
    for (path, expected) in [("/none", "missing"), ("/ftp", "scheme")] {
        let error = fetcher
            .fetch(Request::get(url(&format!("https://a.test{path}"))))
            .await
            .unwrap_err();
        let FetchError::Redirect { error, chain } = error else {
            panic!("{error:?}")
        };
        assert_eq!(chain.len(), 1);
        match (expected, error) {
            ("missing", RedirectError::MissingLocation { status }) => {
                assert_eq!(status.as_u16(), 307)
            }
            ("scheme", RedirectError::UnsupportedScheme { scheme }) => assert_eq!(scheme, "ftp"),
            (_, other) => panic!("{path}: {other:?}"),
        }
    }
}

#[tokio::test(start_paused = true)]
async fn bodies_are_cut_at_the_cap_and_bounded_in_time() {
    let web = ScriptedWeb::new();
    web.route("https://a.test/big", Reply::ok().body(vec![b'x'; 100_000]));
    web.route(
        "https://a.test/drip",
        Reply::ok().drip(b"x", Duration::from_secs(2), 1000),
    );
    web.route(
        "https://a.test/steady",
        Reply::ok().drip(&[b'y'; 2048], Duration::from_secs(1), 1000),
    );
    let fetcher = web.fetcher();
    let big = fetcher
        .fetch(Request::get(url("https://a.test/big")).max_body_bytes(1000))
        .await
        .unwrap();
    assert!(big.truncated);
    assert_eq!(big.body.len(), 1000);
    assert_eq!(
        big.bytes_read, 1001,
        "one byte past the cap tells it was longer"
    );

    // One byte every 2 s is below 1 KiB per 10 s: a slow drip.
    let drip = fetcher
        .fetch(Request::get(url("https://a.test/drip")))
        .await
        .unwrap_err();
    assert!(
        matches!(
            drip,
            FetchError::Timeout {
                phase: TimeoutPhase::Transfer
            }
        ),
        "{drip:?}"
    );
    // Fast enough, but endless: the deadline ends it.
    let start = tokio::time::Instant::now();
    let steady = fetcher
        .fetch_within(
            Request::get(url("https://a.test/steady")).max_body_bytes(10_000_000),
            Deadline::after(Duration::from_secs(30)),
        )
        .await
        .unwrap_err();
    assert!(
        matches!(
            steady,
            FetchError::Timeout {
                phase: TimeoutPhase::Deadline
            }
        ),
        "{steady:?}"
    );
    assert_eq!(start.elapsed(), Duration::from_secs(30));
}
