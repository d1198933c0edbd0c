//! `jittybot robots` against the test web: the binary run as a user runs it.

mod common;

use common::{jittybot, reach, slow_redirect_chain, stderr, stdout, url_command};
use testweb::{Reply, TestWeb};

fn robots_args(web: &TestWeb, host: &str, path: &str, extra: &[&str]) -> Vec<String> {
    url_command("robots", web, host, path, extra)
}

#[tokio::test(flavor = "multi_thread")]
async fn a_disallowed_url_exits_1_and_prints_the_reason() {
    let web = TestWeb::start().await;
    web.site("shop.test")
        .path("/robots.txt")
        .respond(Reply::robots_txt(
            "User-agent: JittyBot\nDisallow: /cart\n\nSitemap: https://shop.test/sitemap.xml\n",
        ));
    let output = jittybot(&robots_args(&web, "shop.test", "/cart/1", &[]), None);
    let text = String::from_utf8_lossy(&output.stdout);
    assert_eq!(output.status.code(), Some(1), "{text}");
    assert!(
        text.contains("line 2: Disallow: /cart, group JittyBot"),
        "{text}"
    );
    assert!(text.contains("https://shop.test/sitemap.xml"), "{text}");
    assert!(text.contains("(whole file)"), "{text}");
    assert_eq!(web.requests_to("shop.test", "/robots.txt").len(), 1);
    assert!(web.requests_to("shop.test", "/cart/1").is_empty());
}

#[tokio::test(flavor = "multi_thread")]
async fn json_reports_outcome_status_and_decision() {
    let web = TestWeb::start().await;
    web.site("open.test")
        .path("/robots.txt")
        .respond(Reply::status(404));
    let output = jittybot(
        &robots_args(&web, "open.test", "/anything", &["--json"]),
        None,
    );
    assert_eq!(output.status.code(), Some(0));
    let report: serde_json::Value =
        serde_json::from_slice(&output.stdout).expect("one JSON object");
    assert_eq!(report["status"], 404);
    assert_eq!(report["allowed"], true);
    let text = report.to_string();
    assert!(
        text.contains("no_file") || text.contains("NoFile"),
        "{text}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_server_error_disallows_everything() {
    let web = TestWeb::start().await;
    web.site("down.test")
        .path("/robots.txt")
        .respond(Reply::status(503));
    let output = jittybot(&robots_args(&web, "down.test", "/", &[]), None);
    assert_eq!(output.status.code(), Some(1));
    let text = String::from_utf8_lossy(&output.stdout).to_lowercase();
    assert!(text.contains("unreachable"), "{text}");
}

#[tokio::test(flavor = "multi_thread")]
async fn private_addresses_are_refused_without_the_opt_in() {
    let web = TestWeb::start().await;
    web.site("inside.test")
        .path("/robots.txt")
        .respond(Reply::robots_txt("User-agent: *\nAllow: /\n"));
    let mut args = robots_args(&web, "inside.test", "/", &[]);
    args.retain(|arg| arg != "--allow-private-addresses");
    let output = jittybot(&args, None);
    // Not "disallowed" (1): the site said nothing; the refusal is an error (2).
    assert_eq!(output.status.code(), Some(2), "{}", stdout(&output));
    assert!(output.stdout.is_empty(), "{}", stdout(&output));
    let message = stderr(&output);
    assert!(message.contains("not contacted"), "{message}");
    assert!(message.contains("loopback"), "{message}");
    assert!(message.contains("--allow-private-addresses"), "{message}");
    assert!(
        web.requests().is_empty(),
        "no request may reach a refused address"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn retry_after_is_shown_as_honoured() {
    let web = TestWeb::start().await;
    web.site("busy.test")
        .path("/robots.txt")
        .respond(Reply::status(429).header("Retry-After", "99999999999999999999999"));
    let output = jittybot(&robots_args(&web, "busy.test", "/", &[]), None);
    let text = stdout(&output);
    assert_eq!(output.status.code(), Some(1), "{text}");
    assert!(text.contains("(Retry-After 86400 s)"), "{text}");
    let output = jittybot(&robots_args(&web, "busy.test", "/", &["--json"]), None);
    let report: serde_json::Value = serde_json::from_slice(&output.stdout).expect("JSON");
    assert_eq!(report["retry_after_seconds"], 86_400);
}

#[tokio::test(flavor = "multi_thread")]
async fn a_slow_redirect_chain_is_unreachable_within_the_timeout() {
    let web = TestWeb::start().await;
    slow_redirect_chain(&web, "slow.test");
    let output = jittybot(
        &robots_args(&web, "slow.test", "/", &["--timeout", "1"]),
        None,
    );
    let text = stdout(&output);
    assert_eq!(output.status.code(), Some(1), "{text}");
    assert!(text.contains("outcome:     unreachable"), "{text}");
    assert!(
        web.requests_to("slow.test", "/r5").is_empty(),
        "cut before the file"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn redirects_and_a_cut_file_are_reported() {
    let web = TestWeb::start().await;
    let big = format!(
        "User-agent: *\nDisallow: /early\n{}",
        "# padding\n".repeat(60_000)
    );
    web.site("moved.test")
        .path("/robots.txt")
        .respond(Reply::redirect(301, "/files/robots.txt"));
    web.site("moved.test")
        .path("/files/robots.txt")
        .respond(Reply::robots_txt(&big));
    let output = jittybot(&robots_args(&web, "moved.test", "/early", &[]), None);
    let text = String::from_utf8_lossy(&output.stdout);
    assert_eq!(output.status.code(), Some(1), "{text}");
    assert!(text.contains("redirect:") && text.contains("301"), "{text}");
    assert!(text.contains("cut at 512000 bytes"), "{text}");
    assert!(text.contains("line 2: Disallow: /early"), "{text}");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_bad_url_exits_2() {
    let output = jittybot(&["robots", "ftp://example.com/"], None);
    assert_eq!(output.status.code(), Some(2));
}

#[tokio::test(flavor = "multi_thread")]
async fn credentials_in_the_url_are_refused_unsent_and_unshown() {
    let web = TestWeb::start().await;
    web.site("cred.test")
        .path("/robots.txt")
        .respond(Reply::robots_txt("User-agent: *\nAllow: /\n"));
    for command in ["robots", "analyze"] {
        let target = web
            .http_url("cred.test", "/")
            .replace("http://", "http://user:hunter2@");
        let mut args = vec![command.to_owned(), target];
        args.extend(reach(&web, "cred.test"));
        let output = jittybot(&args, None);
        assert_eq!(
            output.status.code(),
            Some(2),
            "{command}: {}",
            stdout(&output)
        );
        let message = stderr(&output);
        assert!(message.contains("credentials"), "{command}: {message}");
        assert!(!message.contains("hunter2"), "{command}: {message}");
        assert!(output.stdout.is_empty(), "{command}: {}", stdout(&output));
    }
    assert!(web.requests().is_empty(), "{:?}", web.requests());
}

#[tokio::test(flavor = "multi_thread")]
async fn a_coding_not_asked_for_is_unreachable_and_said() {
    let web = TestWeb::start().await;
    web.site("zstd.test")
        .path("/robots.txt")
        .respond(Reply::robots_txt("User-agent: *\nAllow: /\n").header("Content-Encoding", "zstd"));
    let output = jittybot(&robots_args(&web, "zstd.test", "/", &[]), None);
    let text = stdout(&output);
    // Not read as a (permissive) text file: unreachable, so everything is disallowed.
    assert_eq!(output.status.code(), Some(1), "{text}");
    assert!(text.contains("outcome:     unreachable"), "{text}");
    assert!(
        text.contains("unsupported Content-Encoding \"zstd\""),
        "{text}"
    );
    let output = jittybot(&robots_args(&web, "zstd.test", "/", &["--json"]), None);
    let report: serde_json::Value = serde_json::from_slice(&output.stdout).expect("JSON");
    assert_eq!(report["error"]["kind"], "unsupported_encoding");
    assert_eq!(report["allowed"], false);

    let args = url_command("analyze", &web, "zstd.test", "/", &[]);
    let output = jittybot(&args, None);
    let text = stdout(&output);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    assert!(
        text.contains("a content coding that was not asked for"),
        "{text}"
    );
    assert!(web.requests_to("zstd.test", "/").is_empty());
}
