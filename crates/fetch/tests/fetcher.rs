//! The fetcher against real servers on 127.0.0.1: statuses, headers, redirects, caps,
//! compression, time limits, broken servers, TLS and address refusal.

mod common;

use std::net::IpAddr;
use std::time::Duration;

use common::{config, fetcher, url};
use fetch::{
    FetchError, Fetcher, MinTransferRate, RedirectError, RefusedRange, Request, TimeoutPhase,
    Validators,
};
use testweb::{Reply, TestWeb};

#[tokio::test]
async fn get_identifies_the_bot_and_returns_everything() {
    let web = TestWeb::start().await;
    web.site("a.test").path("/page").respond(
        Reply::ok()
            .header("Content-Type", "text/html; charset=utf-8")
            .header("X-Robots-Tag", "noindex")
            .header("X-Robots-Tag", "JittyBot: nofollow")
            .body("<html>hello</html>"),
    );
    let response = fetcher(&web, &["a.test"])
        .fetch(Request::get(url(&web.http_url("a.test", "/page"))))
        .await
        .unwrap();
    assert_eq!(response.status, 200);
    assert_eq!(response.body, b"<html>hello</html>");
    assert_eq!(response.bytes_read, 18);
    assert!(!response.truncated);
    assert_eq!(
        response.content_type.as_deref(),
        Some("text/html; charset=utf-8")
    );
    assert_eq!(
        response.header_values("x-robots-tag"),
        vec!["noindex", "JittyBot: nofollow"]
    );
    assert!(response.redirects.is_empty());

    let requests = web.requests_to("a.test", "/page");
    assert_eq!(requests.len(), 1);
    assert_eq!(requests[0].method, "GET");
    let user_agent = requests[0].header("user-agent").unwrap();
    assert_eq!(
        user_agent,
        format!(
            "Mozilla/5.0 (compatible; JittyBot/{}; +{})",
            env!("CARGO_PKG_VERSION"),
            common::INFO_URL
        )
    );
    let accept_encoding = requests[0].header("accept-encoding").unwrap();
    for encoding in ["gzip", "deflate", "br"] {
        assert!(accept_encoding.contains(encoding), "{accept_encoding}");
    }
}

#[tokio::test]
async fn head_reads_no_body() {
    let web = TestWeb::start().await;
    web.site("a.test")
        .path("/big")
        .respond(Reply::ok().body(vec![b'x'; 10_000]));
    let response = fetcher(&web, &["a.test"])
        .fetch(Request::head(url(&web.http_url("a.test", "/big"))))
        .await
        .unwrap();
    assert_eq!(response.status, 200);
    assert!(response.body.is_empty());
    assert_eq!(web.requests()[0].method, "HEAD");
}

#[tokio::test]
async fn redirects_are_followed_and_recorded_across_hosts() {
    let web = TestWeb::start().await;
    let b = web.http_url("b.test", "/two");
    web.site("a.test")
        .path("/one")
        .respond(Reply::redirect(301, &b));
    web.site("b.test")
        .path("/two")
        .respond(Reply::redirect(302, "/three"));
    web.site("b.test")
        .path("/three")
        .respond(Reply::ok().body("done"));
    let start = url(&web.http_url("a.test", "/one"));
    let response = fetcher(&web, &["a.test", "b.test"])
        .fetch(Request::get(start.clone()))
        .await
        .unwrap();
    assert_eq!(response.body, b"done");
    assert_eq!(response.url.as_str(), web.http_url("b.test", "/three"));
    let hops: Vec<(String, u16, String)> = response
        .redirects
        .iter()
        .map(|hop| {
            (
                hop.url.to_string(),
                hop.status.as_u16(),
                hop.location.clone(),
            )
        })
        .collect();
    assert_eq!(
        hops,
        vec![
            (start.to_string(), 301, b.clone()),
            (b.clone(), 302, "/three".to_owned()),
        ]
    );
}

fn redirect_chain(web: &TestWeb, hops: usize) {
    for i in 0..hops {
        web.site("a.test")
            .path(&format!("/r{i}"))
            .respond(Reply::redirect(307, &format!("/r{}", i + 1)));
    }
    web.site("a.test")
        .path(&format!("/r{hops}"))
        .respond(Reply::ok().body("end"));
}

#[tokio::test]
async fn the_hop_limit_is_the_callers() {
    let web = TestWeb::start().await;
    redirect_chain(&web, 6);
    let fetcher = fetcher(&web, &["a.test"]);
    let start = url(&web.http_url("a.test", "/r0"));

    let six = fetcher
        .fetch(Request::get(start.clone()).max_redirects(6))
        .await
        .unwrap();
    assert_eq!(six.body, b"end");
    assert_eq!(six.redirects.len(), 6);

    let five = fetcher
        .fetch(Request::get(start).max_redirects(5))
        .await
        .unwrap_err();
    match five {
        FetchError::Redirect {
            error: RedirectError::TooMany { limit },
            chain,
        } => {
            assert_eq!(limit, 5);
            assert_eq!(chain.len(), 6);
        }
        other => panic!("{other:?}"),
    }
}

#[tokio::test]
async fn redirect_loops_are_detected() {
    let web = TestWeb::start().await;
    web.site("a.test")
        .path("/a")
        .respond(Reply::redirect(301, "/b"));
    web.site("a.test")
        .path("/b")
        .respond(Reply::redirect(301, "/a#again"));
    let error = fetcher(&web, &["a.test"])
        .fetch(Request::get(url(&web.http_url("a.test", "/a"))).max_redirects(10))
        .await
        .unwrap_err();
    match error {
        FetchError::Redirect {
            error: RedirectError::Loop { url },
            chain,
        } => {
            assert!(url.as_str().ends_with("/a#again"), "{url}");
            assert_eq!(chain.len(), 2);
        }
        other => panic!("{other:?}"),
    }
    // Two requests, not ten: the loop is caught on its first turn.
    assert_eq!(web.requests().len(), 2);
}

#[tokio::test]
async fn bodies_over_the_cap_are_cut() {
    let web = TestWeb::start().await;
    web.site("a.test")
        .path("/big")
        .respond(Reply::ok().body(vec![b'x'; 600_000]));
    web.site("a.test")
        .path("/exact")
        .respond(Reply::ok().body(vec![b'x'; 1000]));
    let fetcher = fetcher(&web, &["a.test"]);
    let big = fetcher
        .fetch(Request::get(url(&web.http_url("a.test", "/big"))).max_body_bytes(512_000))
        .await
        .unwrap();
    assert!(big.truncated);
    assert_eq!(big.body.len(), 512_000);
    assert!(big.bytes_read >= 512_000);

    let exact = fetcher
        .fetch(Request::get(url(&web.http_url("a.test", "/exact"))).max_body_bytes(1000))
        .await
        .unwrap();
    assert!(!exact.truncated);
    assert_eq!(exact.body.len(), 1000);
}

#[tokio::test]
async fn compressed_bodies_are_decoded_and_the_cap_counts_decoded_bytes() {
    let web = TestWeb::start().await;
    let text = "User-agent: *\nDisallow: /private\n".repeat(100);
    web.site("a.test")
        .path("/gzip")
        .respond(Reply::ok().body(&text).gzip());
    web.site("a.test")
        .path("/deflate")
        .respond(Reply::ok().body(&text).deflate());
    // 64 MiB of zeros in about 64 KiB.
    web.site("a.test")
        .path("/bomb")
        .respond(Reply::gzip_bomb(64 * 1024 * 1024));
    let fetcher = fetcher(&web, &["a.test"]);
    for path in ["/gzip", "/deflate"] {
        let response = fetcher
            .fetch(Request::get(url(&web.http_url("a.test", path))))
            .await
            .unwrap();
        assert_eq!(response.body, text.as_bytes(), "{path}");
        assert!(!response.truncated);
    }

    let bomb = fetcher
        .fetch(Request::get(url(&web.http_url("a.test", "/bomb"))).max_body_bytes(512_000))
        .await
        .unwrap();
    assert!(bomb.truncated);
    assert_eq!(bomb.body.len(), 512_000);
    // Reading stopped near the cap instead of inflating all 64 MiB.
    assert!(bomb.bytes_read < 2 * 1024 * 1024, "{}", bomb.bytes_read);
}

#[tokio::test]
async fn reading_stops_after_the_marker() {
    let web = TestWeb::start().await;
    let page = format!(
        "<html><HEAD><title>t</title></Head><body>{}</body>",
        "x".repeat(100_000)
    );
    web.site("a.test").path("/").respond(Reply::ok().body(page));
    let response = fetcher(&web, &["a.test"])
        .fetch(Request::get(url(&web.http_url("a.test", "/"))).stop_at(b"</head>"))
        .await
        .unwrap();
    assert!(response.stopped_at_marker);
    assert!(!response.truncated);
    assert_eq!(response.body, b"<html><HEAD><title>t</title></Head>");
}

#[tokio::test]
async fn conditional_requests_send_validators_and_see_not_modified() {
    let web = TestWeb::start().await;
    web.site("a.test").path("/r").script([
        Reply::ok()
            .header("ETag", "\"v1\"")
            .header("Last-Modified", "Wed, 21 Oct 2015 07:28:00 GMT")
            .body("one"),
        Reply::status(304).header("ETag", "\"v1\""),
    ]);
    let fetcher = fetcher(&web, &["a.test"]);
    let target = url(&web.http_url("a.test", "/r"));
    let first = fetcher.fetch(Request::get(target.clone())).await.unwrap();
    let validators = first.validators();
    assert_eq!(
        validators,
        Validators {
            etag: Some("\"v1\"".into()),
            last_modified: Some("Wed, 21 Oct 2015 07:28:00 GMT".into()),
        }
    );
    let second = fetcher
        .fetch(Request::get(target).validators(validators))
        .await
        .unwrap();
    assert!(second.is_not_modified());
    let requests = web.requests();
    assert_eq!(requests[0].header("if-none-match"), None);
    assert_eq!(requests[1].header("if-none-match"), Some("\"v1\""));
    assert_eq!(
        requests[1].header("if-modified-since"),
        Some("Wed, 21 Oct 2015 07:28:00 GMT")
    );
}

#[tokio::test]
async fn a_slow_drip_is_cut_off_by_the_minimum_rate() {
    let web = TestWeb::start().await;
    // One byte every 50 ms: 20 bytes per second.
    web.site("a.test").path("/drip").respond(Reply::ok().drip(
        b"x",
        Duration::from_millis(50),
        1000,
    ));
    let mut config = config(&web, &["a.test"]);
    config.timeouts.min_transfer_rate = MinTransferRate {
        bytes: 1000,
        window: Duration::from_millis(300),
    };
    let error = Fetcher::new(config)
        .unwrap()
        .fetch(Request::get(url(&web.http_url("a.test", "/drip"))))
        .await
        .unwrap_err();
    assert!(
        matches!(
            error,
            FetchError::Timeout {
                phase: TimeoutPhase::Transfer
            }
        ),
        "{error:?}"
    );
}

#[tokio::test]
async fn a_fast_enough_drip_completes() {
    let web = TestWeb::start().await;
    web.site("a.test").path("/drip").respond(Reply::ok().drip(
        b"0123456789",
        Duration::from_millis(10),
        20,
    ));
    let mut config = config(&web, &["a.test"]);
    config.timeouts.min_transfer_rate = MinTransferRate {
        bytes: 10,
        window: Duration::from_secs(2),
    };
    let response = Fetcher::new(config)
        .unwrap()
        .fetch(Request::get(url(&web.http_url("a.test", "/drip"))))
        .await
        .unwrap();
    assert_eq!(response.body.len(), 200);
}

#[tokio::test]
async fn slow_headers_hit_the_first_byte_limit_and_everything_hits_the_total_limit() {
    let web = TestWeb::start().await;
    web.site("a.test")
        .path("/slow")
        .respond(Reply::ok().delay(Duration::from_secs(30)));
    web.site("a.test").path("/drip").respond(Reply::ok().drip(
        b"xxxxxxxxxx",
        Duration::from_millis(20),
        100_000,
    ));
    let mut config = config(&web, &["a.test"]);
    config.timeouts.first_byte = Duration::from_millis(200);
    config.timeouts.total = Duration::from_millis(500);
    let fetcher = Fetcher::new(config).unwrap();
    let slow = fetcher
        .fetch(Request::get(url(&web.http_url("a.test", "/slow"))))
        .await
        .unwrap_err();
    assert!(
        matches!(
            slow,
            FetchError::Timeout {
                phase: TimeoutPhase::FirstByte
            }
        ),
        "{slow:?}"
    );
    let endless = fetcher
        .fetch(Request::get(url(&web.http_url("a.test", "/drip"))).max_body_bytes(10_000_000))
        .await
        .unwrap_err();
    assert!(
        matches!(
            endless,
            FetchError::Timeout {
                phase: TimeoutPhase::Deadline
            }
        ),
        "{endless:?}"
    );
}

#[tokio::test]
async fn broken_servers_give_typed_errors() {
    let web = TestWeb::start().await;
    web.site("a.test").path("/reset").respond(Reply::reset());
    web.site("a.test")
        .path("/garbage")
        .respond(Reply::raw(b"NOT HTTP AT ALL\r\n\r\n"));
    let fetcher = fetcher(&web, &["a.test", "closed.test"]);
    let reset = fetcher
        .fetch(Request::get(url(&web.http_url("a.test", "/reset"))))
        .await
        .unwrap_err();
    assert_eq!(reset.kind().as_str(), "connection_reset", "{reset:?}");
    let garbage = fetcher
        .fetch(Request::get(url(&web.http_url("a.test", "/garbage"))))
        .await
        .unwrap_err();
    assert_eq!(garbage.kind().as_str(), "malformed_response", "{garbage:?}");

    // A port nobody listens on.
    let closed = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = closed.local_addr().unwrap().port();
    drop(closed);
    let mut config = config(&web, &[]);
    config.resolve = vec![format!("closed.test:{port}:127.0.0.1").parse().unwrap()];
    let refused = Fetcher::new(config)
        .unwrap()
        .fetch(Request::get(url(&format!("http://closed.test:{port}/"))))
        .await
        .unwrap_err();
    assert_eq!(refused.kind().as_str(), "connect_refused", "{refused:?}");
}

#[tokio::test]
async fn https_uses_http2_and_only_trusted_certificates() {
    let web = TestWeb::start().await;
    web.site("a.test")
        .path("/")
        .respond(Reply::ok().body("secure"));
    let response = fetcher(&web, &["a.test"])
        .fetch(Request::get(url(&web.https_url("a.test", "/"))))
        .await
        .unwrap();
    assert_eq!(response.body, b"secure");
    assert_eq!(response.version, fetch::Version::HTTP_2);
    assert!(web.requests()[0].tls);

    let mut untrusting = config(&web, &["a.test"]);
    untrusting.extra_root_certificates_pem.clear();
    let error = Fetcher::new(untrusting)
        .unwrap()
        .fetch(Request::get(url(&web.https_url("a.test", "/"))))
        .await
        .unwrap_err();
    assert_eq!(error.kind().as_str(), "tls", "{error:?}");
}

fn refused(error: &FetchError) -> Option<(IpAddr, RefusedRange)> {
    match error {
        FetchError::AddressRefused { address, range, .. } => Some((*address, *range)),
        _ => None,
    }
}

#[tokio::test]
async fn private_addresses_are_refused_by_default() {
    let web = TestWeb::start().await;
    web.site("a.test").path("/").respond(Reply::ok());
    let mut config = config(&web, &["a.test"]);
    config.allow_private_addresses = false;
    let fetcher = Fetcher::new(config).unwrap();
    let port = web.http_port();
    // A pinned name, an IP literal, a mapped IPv6 literal and `localhost` from the hosts
    // file: all loopback, all refused before connecting.
    for target in [
        web.http_url("a.test", "/"),
        format!("http://127.0.0.1:{port}/"),
        format!("http://[::ffff:127.0.0.1]:{port}/"),
        format!("http://[::1]:{port}/"),
        format!("http://localhost:{port}/"),
    ] {
        let error = fetcher.fetch(Request::get(url(&target))).await.unwrap_err();
        let (_, range) = refused(&error).unwrap_or_else(|| panic!("{target}: {error:?}"));
        assert_eq!(range, RefusedRange::Loopback, "{target}");
    }
    assert!(web.requests().is_empty());
}

#[tokio::test]
async fn a_redirect_to_a_refused_address_is_refused() {
    let web = TestWeb::start().await;
    let port = web.http_port();
    // Only 127.0.0.1 (the allowed name's address) is let through; every hop is checked.
    let targets = [
        format!("http://127.0.0.2:{port}/"),
        format!("http://[::ffff:127.0.0.3]:{port}/"),
        format!("http://inside.test:{port}/"),
        format!("http://10.0.0.1:{port}/"),
        format!("http://169.254.169.254:{port}/latest/meta-data/"),
    ];
    for (i, target) in targets.iter().enumerate() {
        web.site("public.test")
            .path(&format!("/go{i}"))
            .respond(Reply::redirect(302, target));
    }
    let mut config = config(&web, &["public.test"]);
    config.allow_private_addresses = false;
    config.allowed_addresses = vec!["127.0.0.1".parse().unwrap()];
    // The pinned private address is refused although it is pinned.
    config
        .resolve
        .push(format!("inside.test:{port}:127.0.0.4").parse().unwrap());
    let fetcher = Fetcher::new(config).unwrap();
    let expected = [
        RefusedRange::Loopback,
        RefusedRange::Loopback,
        RefusedRange::Loopback,
        RefusedRange::Private,
        RefusedRange::LinkLocal,
    ];
    for (i, range) in expected.into_iter().enumerate() {
        let start = url(&web.http_url("public.test", &format!("/go{i}")));
        let error = fetcher.fetch(Request::get(start)).await.unwrap_err();
        assert_eq!(refused(&error).map(|r| r.1), Some(range), "{error:?}");
    }
    // Only the first hops reached the web.
    assert!(web.requests().iter().all(|r| r.host == "public.test"));
}

#[tokio::test]
async fn idn_hosts_are_requested_in_punycode() {
    let web = TestWeb::start().await;
    web.site("xn--bcher-kva.test")
        .path("/")
        .respond(Reply::ok().body("books"));
    let fetcher = fetcher(&web, &["bücher.test"]);
    let response = fetcher
        .fetch(Request::get(url(&web.http_url("bücher.test", "/"))))
        .await
        .unwrap();
    assert_eq!(response.body, b"books");
    assert_eq!(web.requests()[0].host, "xn--bcher-kva.test");
}

#[tokio::test]
async fn only_http_and_https_urls_are_fetched() {
    let web = TestWeb::start().await;
    let error = fetcher(&web, &[])
        .fetch(Request::get(url("ftp://a.test/file")))
        .await
        .unwrap_err();
    assert_eq!(error.kind().as_str(), "invalid_url");
}

#[tokio::test]
async fn callers_cannot_lift_the_ceilings() {
    let web = TestWeb::start().await;
    web.site("a.test").path("/bomb").respond(Reply::gzip_bomb(
        fetch::MAX_BODY_BYTES_CEILING + 1024 * 1024,
    ));
    redirect_chain(&web, fetch::MAX_REDIRECTS_CEILING + 1);
    let fetcher = fetcher(&web, &["a.test"]);
    let bomb = fetcher
        .fetch(Request::get(url(&web.http_url("a.test", "/bomb"))).max_body_bytes(usize::MAX))
        .await
        .unwrap();
    assert!(bomb.truncated);
    assert_eq!(bomb.body.len(), fetch::MAX_BODY_BYTES_CEILING);

    let error = fetcher
        .fetch(Request::get(url(&web.http_url("a.test", "/r0"))).max_redirects(usize::MAX))
        .await
        .unwrap_err();
    assert!(
        matches!(error, FetchError::Redirect { error: RedirectError::TooMany { limit }, .. } if limit == fetch::MAX_REDIRECTS_CEILING),
        "{error:?}"
    );
}

/// Requests to one host one after another reuse their connection, on the multi-threaded
/// runtime the bots run on. hyper returns a connection to its pool from another task, so a
/// request started right after a response ends can still race it and open a second one:
/// the assertion is that connections are reused, not that there is exactly one.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn back_to_back_requests_to_a_host_reuse_connections() {
    let web = TestWeb::start().await;
    for (i, size) in [300, 20_000, 60_000, 5_000]
        .iter()
        .cycle()
        .take(24)
        .enumerate()
    {
        web.site("a.test")
            .path(&format!("/{i}"))
            .respond(Reply::ok().body(vec![b'x'; *size]));
    }
    let mut config = config(&web, &["a.test"]);
    config.offer_http2 = false;
    let fetcher = Fetcher::new(config).unwrap();
    for i in 0..24 {
        let response = fetcher
            .fetch(Request::get(
                url(&web.https_url("a.test", &format!("/{i}"))),
            ))
            .await
            .unwrap();
        assert_eq!(response.version, fetch::Version::HTTP_11);
    }
    let peers: std::collections::HashSet<_> = web.requests().iter().map(|r| r.peer).collect();
    assert!(
        peers.len() <= 6,
        "24 requests over {} connections",
        peers.len()
    );
    assert!(settled_open_connections(&web).await <= fetch::IDLE_CONNECTIONS_PER_HOST);
}

/// However many connections a host needed at once, only [`fetch::IDLE_CONNECTIONS_PER_HOST`]
/// stay open once the requests are done.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn idle_connections_per_host_are_bounded() {
    let web = TestWeb::start().await;
    web.site("a.test")
        .path("/slow")
        .respond(Reply::ok().delay(Duration::from_millis(200)).body("late"));
    let mut config = config(&web, &["a.test"]);
    config.offer_http2 = false;
    let fetcher = Fetcher::new(config).unwrap();
    let at_once =
        (0..6).map(|_| fetcher.fetch(Request::get(url(&web.https_url("a.test", "/slow")))));
    for response in futures_util::future::join_all(at_once).await {
        assert_eq!(response.unwrap().body, b"late");
    }
    let peers: std::collections::HashSet<_> = web.requests().iter().map(|r| r.peer).collect();
    assert_eq!(peers.len(), 6, "six requests at once, six connections");
    assert_eq!(
        settled_open_connections(&web).await,
        fetch::IDLE_CONNECTIONS_PER_HOST
    );
}

/// The connections open on the server once the spares have closed: they close as they come
/// back to the pool, a moment after their response, so this waits up to 5 s for the count to
/// fall to the bound.
async fn settled_open_connections(web: &TestWeb) -> usize {
    let deadline = std::time::Instant::now() + Duration::from_secs(5);
    while web.open_connections() > fetch::IDLE_CONNECTIONS_PER_HOST
        && std::time::Instant::now() < deadline
    {
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    web.open_connections()
}
