//! Hostile servers on 127.0.0.1: many header lines, credentials in a redirect or in the
//! caller's URL, headerless deflate, encodings not asked for, a body streamed past its cap, a
//! slow redirect chain against the overall deadline, and the raw exchange as sent and
//! received.

mod common;

use robots::ProductTokens;
use std::time::Duration;

use common::{config, fetcher, url};
use fetch::{
    fetch_robots_txt, fetch_robots_txt_within, ContentCoding, Deadline, ErrorKind, FetchError,
    Fetcher, Request, RobotsOutcome, TimeoutPhase, MAX_HEADER_BYTES, MAX_RESPONSE_HEADERS,
};
use testweb::{Reply, TestWeb};

const FILE: &str = "User-agent: *\nDisallow: /private\n";

fn with_header_lines(mut reply: Reply, count: usize) -> Reply {
    for i in 0..count {
        // About 30 KB in all: past h2's default 16 KiB header list as well.
        reply = reply.header(
            &format!("X-Filler-{i}"),
            &"a value like many others ".repeat(4),
        );
    }
    reply
}

#[tokio::test]
async fn hundreds_of_header_lines_are_accepted_over_http1_and_http2() {
    let web = TestWeb::start().await;
    web.site("a.test")
        .path("/robots.txt")
        .respond(with_header_lines(Reply::robots_txt(FILE), 300));
    let fetcher = fetcher(&web, &["a.test"]);
    for target in [web.http_url("a.test", "/"), web.https_url("a.test", "/")] {
        let fetched = fetch_robots_txt(&fetcher, &url(&target)).await.unwrap();
        assert_eq!(
            fetched.outcome,
            RobotsOutcome::Rules,
            "{target}: {:?}",
            fetched.error
        );
        assert!(
            !fetched
                .verdict("/private", &ProductTokens::JITTYBOT)
                .allowed
        );
    }
}

/// `count` header lines of `value_bytes` bytes each.
fn with_headers_of(mut reply: Reply, count: usize, value_bytes: usize) -> Reply {
    for i in 0..count {
        reply = reply.header(&format!("X-F{i}"), &"v".repeat(value_bytes));
    }
    reply
}

#[tokio::test]
async fn header_limits_hold_at_their_constants() {
    let web = TestWeb::start().await;
    // The server adds a few lines of its own (date, content-length).
    let lines = |count| with_headers_of(Reply::ok().body("x"), count, 1);
    web.site("a.test")
        .path("/lines-under")
        .respond(lines(MAX_RESPONSE_HEADERS - 10));
    web.site("a.test")
        .path("/lines-over")
        .respond(lines(MAX_RESPONSE_HEADERS + 1));
    // Few lines, many bytes: 200 lines of 1,000 bytes fit, 300 do not.
    const { assert!(200 * 1010 < MAX_HEADER_BYTES && 300 * 1000 > MAX_HEADER_BYTES) };
    let kilobyte_lines = |count| with_headers_of(Reply::ok().body("x"), count, 1000);
    web.site("a.test")
        .path("/bytes-under")
        .respond(kilobyte_lines(200));
    web.site("a.test")
        .path("/bytes-over")
        .respond(kilobyte_lines(300));
    let fetcher = fetcher(&web, &["a.test"]);
    // Only the outcome is shown: a response would print hundreds of kilobytes of headers.
    let outcome = |target: String| {
        let fetcher = fetcher.clone();
        async move {
            let request = Request::get(url(&target));
            match fetcher.fetch(request).await {
                Ok(response) => Ok(response.headers.len()),
                Err(error) => Err(error.kind()),
            }
        }
    };
    let under = outcome(web.http_url("a.test", "/lines-under")).await;
    assert!(under.is_ok_and(|lines| lines >= MAX_RESPONSE_HEADERS - 10));
    let over = outcome(web.http_url("a.test", "/lines-over")).await;
    assert_eq!(over, Err(ErrorKind::MalformedResponse));
    for target in [web.http_url("a.test", "/"), web.https_url("a.test", "/")] {
        let under = outcome(target.clone() + "bytes-under").await;
        assert!(under.is_ok_and(|lines| lines >= 200), "{target}: {under:?}");
        let over = outcome(target.clone() + "bytes-over").await;
        assert_eq!(over, Err(ErrorKind::MalformedResponse), "{target}");
    }
}

#[tokio::test]
async fn credentials_in_a_redirect_location_are_never_sent_nor_shown() {
    let web = TestWeb::start().await;
    let with_credentials = web
        .http_url("b.test", "/next")
        .replace("http://", "http://user:secret@");
    web.site("a.test")
        .path("/start")
        .respond(Reply::redirect(302, &with_credentials));
    web.site("b.test")
        .path("/next")
        .respond(Reply::ok().body("landed"));
    web.site("a.test")
        .path("/robots.txt")
        .respond(Reply::redirect(301, &with_credentials));
    let fetcher = fetcher(&web, &["a.test", "b.test"]);
    let response = fetcher
        .fetch(Request::get(url(&web.http_url("a.test", "/start"))))
        .await
        .unwrap();
    assert_eq!(response.body, b"landed");
    let robots = fetch_robots_txt(&fetcher, &url(&web.http_url("a.test", "/")))
        .await
        .unwrap();
    for shown in [
        response.url.to_string(),
        response.redirects[0].location.clone(),
        robots.redirects[0].location.clone(),
        robots.final_url.as_ref().unwrap().to_string(),
        format!("{:?}", response.exchanges),
    ] {
        assert!(!shown.contains("secret"), "{shown}");
    }
    let landed = web.requests_to("b.test", "/next");
    assert_eq!(landed.len(), 2);
    for request in landed {
        assert_eq!(request.header("authorization"), None);
    }
}

#[tokio::test]
async fn credentials_in_the_callers_url_are_never_sent_nor_shown() {
    let web = TestWeb::start().await;
    web.site("a.test")
        .path("/robots.txt")
        .respond(Reply::robots_txt(FILE));
    web.site("a.test")
        .path("/page")
        .respond(Reply::redirect(302, "/landed"));
    web.site("a.test")
        .path("/landed")
        .respond(Reply::ok().body("landed"));
    let fetcher = fetcher(&web, &["a.test"]);
    let with_credentials = |path: &str| {
        url(&web
            .http_url("a.test", path)
            .replace("http://", "http://user:secret@"))
    };
    let response = fetcher
        .fetch(Request::get(with_credentials("/page")))
        .await
        .unwrap();
    assert_eq!(response.body, b"landed");
    let robots = fetch_robots_txt(&fetcher, &with_credentials("/page"))
        .await
        .unwrap();
    assert_eq!(robots.outcome, RobotsOutcome::Rules);
    let hop = fetcher
        .send_hop(
            &Request::get(with_credentials("/landed")),
            &with_credentials("/landed"),
            Deadline::after(Duration::from_secs(5)),
        )
        .await
        .unwrap();
    for shown in [
        format!("{response:?}"),
        format!("{robots:?}"),
        format!("{:?}", hop.record()),
    ] {
        assert!(!shown.contains("secret"), "{shown}");
        assert!(!shown.contains("user:"), "{shown}");
    }
    let log = web.requests();
    assert_eq!(log.len(), 4, "{log:?}");
    for request in log {
        assert_eq!(request.header("authorization"), None, "{}", request.path);
    }
}

#[tokio::test]
async fn headerless_deflate_is_decoded_like_zlib_deflate() {
    let web = TestWeb::start().await;
    web.site("a.test")
        .path("/robots.txt")
        .respond(Reply::robots_txt(FILE).raw_deflate());
    web.site("b.test")
        .path("/robots.txt")
        .respond(Reply::robots_txt(FILE).deflate());
    let fetcher = fetcher(&web, &["a.test", "b.test"]);
    for host in ["a.test", "b.test"] {
        let fetched = fetch_robots_txt(&fetcher, &url(&web.http_url(host, "/")))
            .await
            .unwrap();
        assert_eq!(
            fetched.outcome,
            RobotsOutcome::Rules,
            "{host}: {:?}",
            fetched.error
        );
        assert_eq!(fetched.body, FILE.as_bytes(), "{host}");
    }
}

#[tokio::test]
async fn an_encoding_not_asked_for_is_neither_decoded_nor_read_as_text() {
    let web = TestWeb::start().await;
    let reply = Reply::robots_txt(FILE).header("Content-Encoding", "zstd");
    web.site("a.test")
        .path("/robots.txt")
        .respond(reply.clone());
    web.site("a.test").path("/page").respond(reply);
    let fetcher = fetcher(&web, &["a.test"]);
    let page = fetcher
        .fetch(Request::get(url(&web.http_url("a.test", "/page"))))
        .await
        .unwrap();
    assert_eq!(page.coding, ContentCoding::Unsupported("zstd".into()));
    assert!(!page.coding.is_supported());
    let robots = fetch_robots_txt(&fetcher, &url(&web.http_url("a.test", "/")))
        .await
        .unwrap();
    // Not parsed as a (possibly empty, so allow-all) file: unreachable, disallow everything.
    assert_eq!(robots.outcome, RobotsOutcome::Unreachable);
    assert_eq!(
        robots.error.as_ref().map(FetchError::kind),
        Some(ErrorKind::UnsupportedEncoding)
    );
    assert!(
        !robots
            .verdict("/anything", &ProductTokens::JITTYBOT)
            .allowed
    );
    // An unknown coding and two stacked codings are not asked for either.
    for (host, coding) in [("b.test", "x-unheard-of"), ("c.test", "gzip, zstd")] {
        web.site(host)
            .path("/robots.txt")
            .respond(Reply::robots_txt(FILE).header("Content-Encoding", coding));
    }
    let fetcher = self::fetcher(&web, &["b.test", "c.test"]);
    for (host, coding) in [("b.test", "x-unheard-of"), ("c.test", "gzip, zstd")] {
        let robots = fetch_robots_txt(&fetcher, &url(&web.http_url(host, "/")))
            .await
            .unwrap();
        assert_eq!(robots.outcome, RobotsOutcome::Unreachable, "{host}");
        assert!(robots.robots.is_none(), "{host}: parsed as text");
        let error = robots.error.expect("an error");
        assert_eq!(error.kind(), ErrorKind::UnsupportedEncoding, "{host}");
        assert!(error.to_string().contains(coding), "{error}");
    }
}

#[tokio::test]
async fn a_streamed_body_is_cut_at_the_decoded_cap_and_says_so() {
    let web = TestWeb::start().await;
    // 8 MiB of zeros in about 8 KiB: the cap must hold on the decoded stream.
    web.site("a.test")
        .path("/bomb")
        .respond(Reply::gzip_bomb(8 * 1024 * 1024));
    web.site("a.test")
        .path("/exact")
        .respond(Reply::ok().body(vec![b'x'; 40_000]).gzip());
    let fetcher = fetcher(&web, &["a.test"]);
    let cap = 40_000;
    let stream = |path: &str| {
        let target = url(&web.http_url("a.test", path));
        let request = Request::get(target.clone()).max_body_bytes(cap).keep_raw();
        let fetcher = fetcher.clone();
        async move {
            let mut hop = fetcher
                .send_hop(&request, &target, Deadline::after(Duration::from_secs(10)))
                .await
                .unwrap();
            let mut chunks = Vec::new();
            while let Some(chunk) = hop.body.chunk().await.unwrap() {
                assert!(chunk.len() <= fetch::READ_CHUNK_BYTES);
                chunks.push(chunk.len());
            }
            // The end stays the end.
            assert_eq!(hop.body.chunk().await.unwrap(), None);
            (hop, chunks)
        }
    };
    let (bomb, chunks) = stream("/bomb").await;
    assert_eq!(chunks.iter().sum::<usize>(), cap);
    assert!(chunks.len() > 1, "streamed in pieces: {chunks:?}");
    assert!(bomb.body.truncated(), "the reader says it was cut");
    assert_eq!(bomb.body.decoded_bytes(), cap as u64 + 1);
    assert!(
        bomb.body.raw_bytes() < 64 * 1024,
        "{}",
        bomb.body.raw_bytes()
    );
    assert_eq!(bomb.head.headers["content-encoding"], "gzip");

    let (exact, chunks) = stream("/exact").await;
    assert_eq!(chunks.iter().sum::<usize>(), cap);
    assert!(
        !exact.body.truncated(),
        "a body of exactly the cap is whole"
    );
}

#[tokio::test]
async fn a_slow_redirect_chain_is_cut_by_the_overall_deadline() {
    let web = TestWeb::start().await;
    // Each hop answers just under the per-hop limit.
    for i in 0..10 {
        web.site("a.test").path(&format!("/r{i}")).respond(
            Reply::redirect(302, &format!("/r{}", i + 1)).delay(Duration::from_millis(300)),
        );
    }
    let mut config = config(&web, &["a.test"]);
    config.timeouts.first_byte = Duration::from_millis(400);
    let fetcher = Fetcher::new(config).unwrap();
    let started = tokio::time::Instant::now();
    let error = fetcher
        .fetch_within(
            Request::get(url(&web.http_url("a.test", "/r0"))).max_redirects(20),
            Deadline::after(Duration::from_millis(1000)),
        )
        .await
        .unwrap_err();
    assert!(
        matches!(
            error,
            FetchError::Timeout {
                phase: TimeoutPhase::Deadline
            }
        ),
        "{error:?}"
    );
    assert!(started.elapsed() < Duration::from_millis(1300));
    // 300 ms a hop: the 4th hop was cut, and no 5th was ever asked for.
    let asked = web.requests().len();
    assert_eq!(asked, 4, "{:?}", web.requests());

    // robots.txt under the same deadline gives the same answer whoever asks: unreachable.
    web.clear_requests();
    web.site("a.test")
        .path("/robots.txt")
        .respond(Reply::redirect(302, "/r0").delay(Duration::from_millis(300)));
    let robots = fetch_robots_txt_within(
        &fetcher,
        &url(&web.http_url("a.test", "/robots.txt")),
        None,
        Deadline::after(Duration::from_millis(1000)),
    )
    .await;
    assert_eq!(robots.outcome, RobotsOutcome::Unreachable);
    assert_eq!(
        robots.error.as_ref().map(FetchError::kind),
        Some(ErrorKind::Timeout)
    );
    assert!(web.requests().len() <= 4);
}

#[tokio::test]
async fn the_exchange_is_recorded_as_sent_and_as_received() {
    let web = TestWeb::start().await;
    let text = "User-agent: *\nDisallow: /x\n".repeat(50);
    web.site("a.test").path("/page").respond(
        Reply::ok()
            .header("Content-Type", "text/plain")
            .body(&text)
            .gzip(),
    );
    let fetcher = fetcher(&web, &["a.test"]);
    let response = fetcher
        .fetch(Request::get(url(&web.http_url("a.test", "/page"))).keep_raw())
        .await
        .unwrap();
    assert_eq!(response.body, text.as_bytes());
    // The headers as received, coding and length of the body as sent included.
    assert_eq!(response.headers["content-encoding"], "gzip");
    let length: u64 = response.headers["content-length"]
        .to_str()
        .unwrap()
        .parse()
        .unwrap();
    assert_eq!(response.raw_bytes_read, length);
    assert_eq!(response.raw_body.as_ref().unwrap().len() as u64, length);
    assert!(length < text.len() as u64);
    assert_eq!(
        response.remote_addr.unwrap().ip(),
        "127.0.0.1".parse::<std::net::IpAddr>().unwrap()
    );
    // The request headers recorded are the ones the server received, in that order.
    let sent = response.request_headers().unwrap();
    let received = &web.requests_to("a.test", "/page")[0];
    let names: Vec<&str> = sent.keys().map(|name| name.as_str()).collect();
    assert_eq!(names, ["host", "user-agent", "accept", "accept-encoding"]);
    for (name, value) in sent {
        assert_eq!(
            received.header(name.as_str()),
            Some(value.to_str().unwrap()),
            "{name}"
        );
    }
    assert_eq!(
        received.header("accept-encoding"),
        Some("gzip, deflate, br")
    );
    let other: Vec<&String> = received
        .headers
        .iter()
        .map(|(name, _)| name)
        .filter(|name| !sent.contains_key(name.as_str()))
        .collect();
    assert!(other.is_empty(), "sent but not recorded: {other:?}");
    // Over plain HTTP there is no certificate to record.
    assert_eq!(response.tls_leaf_sha256, None);
}

#[tokio::test]
async fn over_https_the_exchange_records_http2_and_the_leaf_certificate() {
    let web = TestWeb::start().await;
    web.site("a.test").path("/").respond(Reply::ok().body("s"));
    let fetcher = fetcher(&web, &["a.test"]);
    let first = fetcher
        .fetch(Request::get(url(&web.https_url("a.test", "/"))))
        .await
        .unwrap();
    let second = fetcher
        .fetch(Request::get(url(&web.https_url("a.test", "/"))))
        .await
        .unwrap();
    assert_eq!(first.version, fetch::Version::HTTP_2);
    let digest = first.tls_leaf_sha256.unwrap();
    assert_eq!(digest.to_hex().len(), 64);
    assert_eq!(second.tls_leaf_sha256, Some(digest));
}
