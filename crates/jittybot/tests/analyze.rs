//! `jittybot analyze`, run as a user runs it: offline on a file, and against the test web.

mod common;

use common::{
    jittybot, jittybot_with_env, reach, slow_redirect_chain, stderr, stdout, url_command,
};
use std::process::Output;

use testweb::{Reply, TestWeb};

/// The JSON report of an `analyze --json` that succeeded (exit 0; its log shown if not).
fn json_report(output: &Output) -> serde_json::Value {
    assert_eq!(output.status.code(), Some(0), "{}", stderr(output));
    serde_json::from_slice(&output.stdout).expect("JSON report")
}

const TYPO: &str = "User-agent: *\nDissallow: /private\nDisallow: /tmp/\n";

#[tokio::test(flavor = "multi_thread")]
async fn a_pasted_file_is_audited_offline_and_scored() {
    let output = jittybot(&["analyze", "--file", "-", "--json"], Some(TYPO));
    let report = json_report(&output);
    let score = report["score"].as_u64().expect("score");
    assert!(score < 90, "an error caps the score below A: {score}");
    assert!(report["grade"].is_string());
    let findings = report["findings"].as_array().expect("findings");
    let typo = findings
        .iter()
        .find(|f| f["line"] == 2)
        .expect("a finding on the typo line");
    assert!(typo["id"].is_string() && typo["severity"].is_string());
    assert!(report["robots"].is_object() && report["sitemaps"].is_array());
    assert_eq!(report["robots"]["requested"], false);
}

#[tokio::test(flavor = "multi_thread")]
async fn the_readable_summary_leads_with_grade_and_score() {
    let output = jittybot(&["analyze", "--file", "-"], Some(TYPO));
    assert_eq!(output.status.code(), Some(0));
    let text = String::from_utf8_lossy(&output.stdout);
    assert!(text.contains("Grade ") && text.contains("Score "), "{text}");
    assert!(text.contains("line 2"), "{text}");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_site_is_fetched_as_the_bot_does_it() {
    let web = TestWeb::start().await;
    let site = web.site("site.test");
    site.path("/robots.txt").respond(Reply::robots_txt(&format!(
        "User-agent: *\nDisallow: /private/\n\nSitemap: {}\n",
        web.http_url("site.test", "/sitemap.xml")
    )));
    site.path("/page").respond(
        Reply::ok()
            .header("Content-Type", "text/html")
            .header("X-Robots-Tag", "noarchive")
            .body("<html><head><meta name=\"robots\" content=\"noindex\"></head><body>x</body></html>"),
    );
    site.path("/sitemap.xml").respond(
        Reply::ok()
            .header("Content-Type", "application/xml")
            .body("<?xml version=\"1.0\"?><urlset xmlns=\"http://www.sitemaps.org/schemas/sitemap/0.9\"></urlset>"),
    );
    let list = url_command("analyze", &web, "site.test", "/page", &["--json"]);
    let output = jittybot(&list, None);
    let report = json_report(&output);
    assert_eq!(report["robots"]["status"], 200);
    assert_eq!(report["page"]["status"], 200);
    assert!(report["page"]["meta"].to_string().contains("noindex"));
    assert_eq!(report["sitemaps"][0]["status"], 200);
    assert_eq!(web.requests_to("site.test", "/robots.txt").len(), 1);
    assert_eq!(web.requests_to("site.test", "/page").len(), 1);
    let agent = web.requests_to("site.test", "/page")[0]
        .header("user-agent")
        .map(str::to_owned)
        .unwrap_or_default();
    assert!(agent.contains("RobotsTxtParser"), "{agent}");
}

#[tokio::test(flavor = "multi_thread")]
async fn it_exits_2_when_it_cannot_run() {
    let missing = jittybot(&["analyze", "--file", "/no/such/robots.txt"], None);
    assert_eq!(missing.status.code(), Some(2));
    let bad = jittybot(&["analyze", "ftp://example.com/"], None);
    assert_eq!(bad.status.code(), Some(2));
}

#[tokio::test(flavor = "multi_thread")]
async fn a_refused_address_gets_no_grade() {
    let web = TestWeb::start().await;
    web.site("inside.test")
        .path("/robots.txt")
        .respond(Reply::robots_txt("User-agent: *\nAllow: /\n"));
    let mut args = url_command("analyze", &web, "inside.test", "/", &[]);
    args.retain(|arg| arg != "--allow-private-addresses");
    let output = jittybot(&args, None);
    assert_eq!(output.status.code(), Some(2), "{}", stdout(&output));
    assert!(!stdout(&output).contains("Grade"), "{}", stdout(&output));
    assert!(output.stdout.is_empty());
    let message = stderr(&output);
    assert!(message.contains("not contacted"), "{message}");
    assert!(message.contains("loopback"), "{message}");
    assert!(web.requests().is_empty());
}

#[tokio::test(flavor = "multi_thread")]
async fn robots_and_analyze_agree_on_a_slow_redirect_chain_and_the_analysis_keeps_its_budget() {
    let web = TestWeb::start().await;
    slow_redirect_chain(&web, "slow.test");
    let robots = url_command("robots", &web, "slow.test", "/", &["--timeout", "1"]);
    let verdict = jittybot(&robots, None);
    assert_eq!(verdict.status.code(), Some(1), "{}", stdout(&verdict));
    assert!(stdout(&verdict).contains("outcome:     unreachable"));
    web.clear_requests();

    let analyze = url_command(
        "analyze",
        &web,
        "slow.test",
        "/",
        &["--json", "--timeout", "1"],
    );
    let output = jittybot(&analyze, None);
    let report = json_report(&output);
    assert_eq!(report["robots"]["outcome"], "unreachable");
    assert_eq!(report["page"]["requested"], false);
    // The budget bounds the requests; auditing what came back takes a few more ms.
    let took = report["duration_ms"].as_u64().unwrap_or(u64::MAX);
    assert!(took <= 1_250, "{took} ms");
    // From the web's log: the page was never asked for, nothing arrived past the budget.
    assert!(web.requests_to("slow.test", "/").is_empty());
    let log = web.requests();
    let first = log.first().map(|request| request.at).expect("requests");
    assert!(log
        .iter()
        .all(|request| request.at.duration_since(first) < std::time::Duration::from_secs(1)));
}

#[tokio::test(flavor = "multi_thread")]
async fn rust_log_traces_the_analysis() {
    let web = TestWeb::start().await;
    web.site("traced.test")
        .path("/robots.txt")
        .respond(Reply::robots_txt("User-agent: *\nDisallow: /x\n"));
    let args = url_command("analyze", &web, "traced.test", "/", &[]);
    let output = jittybot_with_env(&args, None, &[("RUST_LOG", "audit=debug")]);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    let log = stderr(&output);
    assert!(log.contains("analysis{url=http://traced.test:"), "{log}");
    assert!(log.contains("robots.txt outcome=rules"), "{log}");
    let quiet = jittybot(&args, None);
    assert!(quiet.stderr.is_empty(), "{}", stderr(&quiet));
}

#[tokio::test(flavor = "multi_thread")]
async fn robots_and_analyze_agree_on_a_slow_drip_across_hops() {
    // Two hops of 250 ms, then a file dripped a line every 100 ms for 3 s: fast enough for
    // the minimum transfer rate; only the one deadline over hops and body stops it.
    let web = TestWeb::start().await;
    let site = web.site("drip.test");
    site.path("/robots.txt")
        .respond(Reply::redirect(301, "/r1").delay(std::time::Duration::from_millis(250)));
    site.path("/r1")
        .respond(Reply::redirect(301, "/r2").delay(std::time::Duration::from_millis(250)));
    site.path("/r2").respond(Reply::ok().drip(
        b"User-agent: *\nAllow: /\n",
        std::time::Duration::from_millis(100),
        30,
    ));
    site.path("/").respond(Reply::ok().body("<head></head>"));
    let run = |command: &str, extra: &[&str]| {
        let mut args = vec![command.to_owned(), web.http_url("drip.test", "/")];
        args.extend(reach(&web, "drip.test"));
        args.extend(
            ["--timeout", "1"]
                .iter()
                .chain(extra)
                .map(|s| (*s).to_owned()),
        );
        jittybot(&args, None)
    };
    let verdict = run("robots", &[]);
    assert_eq!(verdict.status.code(), Some(1), "{}", stdout(&verdict));
    assert!(stdout(&verdict).contains("outcome:     unreachable"));
    web.clear_requests();

    let output = run("analyze", &["--json"]);
    let report = json_report(&output);
    assert_eq!(report["robots"]["outcome"], "unreachable");
    assert_eq!(report["grade"], "F");
    let took = report["duration_ms"].as_u64().unwrap_or(u64::MAX);
    assert!(took <= 1_250, "{took} ms");
    assert!(web.requests_to("drip.test", "/").is_empty());
}
