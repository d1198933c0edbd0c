//! Bytes from files and servers never reach the terminal raw, and an endless input is read
//! only up to the size limit: the binary run as a user runs it, against the test web.

mod common;

use std::process::{Command, Stdio};

use common::{jittybot, stdout, url_command};
use testweb::{Reply, TestWeb};

/// ESC [2J clears the screen; ESC ]0; sets the window title; U+009B is the one-byte CSI;
/// U+202E reverses the text after it.
const HOSTILE: &str = "\u{1b}[2J\u{1b}]0;pwned\u{7}\u{9b}31m\u{202e}";

/// Whether `text` holds anything a terminal would act on, other than line breaks.
#[track_caller]
fn assert_terminal_safe(text: &str) {
    let bad: Vec<char> = text
        .chars()
        .filter(|&c| {
            (c.is_control() && c != '\n')
                || matches!(c, '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}')
        })
        .collect();
    assert!(bad.is_empty(), "raw {bad:?} in:\n{text}");
}

fn hostile_robots(web: &TestWeb, host: &str) -> String {
    format!(
        "User-agent: *\nDisallow: /private{HOSTILE}\nX-Evil{HOSTILE}: 1\nSitemap: {}\n",
        web.http_url(host, &format!("/map{HOSTILE}.xml"))
    )
}

#[test]
fn check_diagnostics_and_decisions_are_escaped() {
    let robots = "User-agent: *\nDisallow: /a\u{1b}[31m\nFoo\u{1b}]0;x\u{7}: bar\n";
    for json in [false, true] {
        let mut args = vec!["check", "--robots", "-", "--diagnostics", "/a\u{1b}[31m"];
        if json {
            args.push("--json");
        }
        let output = jittybot(&args, Some(robots));
        let text = stdout(&output);
        assert_terminal_safe(&text);
        assert_terminal_safe(&String::from_utf8_lossy(&output.stderr));
        if json {
            for line in text.lines() {
                serde_json::from_str::<serde_json::Value>(line).expect("one JSON object a line");
            }
            assert!(text.contains("\\u001b"), "{text}");
        } else {
            assert!(text.contains("\\x1b[31m"), "{text}");
        }
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn robots_prints_a_hostile_file_escaped() {
    let web = TestWeb::start().await;
    web.site("evil.test")
        .path("/robots.txt")
        .respond(Reply::robots_txt(&hostile_robots(&web, "evil.test")));
    for extra in [&[][..], &["--json"][..]] {
        let args = url_command("robots", &web, "evil.test", "/", extra);
        let output = jittybot(&args, None);
        let text = stdout(&output);
        assert_terminal_safe(&text);
        assert!(text.contains("map"), "{text}");
        if !extra.is_empty() {
            serde_json::from_str::<serde_json::Value>(&text).expect("valid JSON");
        }
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn analyze_prints_hostile_robots_page_and_sitemaps_escaped() {
    let web = TestWeb::start().await;
    let site = web.site("evil.test");
    site.path("/robots.txt")
        .respond(Reply::robots_txt(&hostile_robots(&web, "evil.test")));
    site.path("/").respond(Reply::html(&format!(
        "<html><head><meta name=\"robots\" content=\"noindex, evil{HOSTILE}\nGrade A\">\
             </head></html>"
    )));
    for json in [false, true] {
        let mut args = url_command("analyze", &web, "evil.test", "/", &[]);
        if json {
            args.push("--json".to_owned());
        }
        let output = jittybot(&args, None);
        assert_eq!(output.status.code(), Some(0));
        let text = stdout(&output);
        assert_terminal_safe(&text);
        if json {
            let report: serde_json::Value = serde_json::from_str(&text).expect("valid JSON");
            // Escaped for the terminal, the same characters for a JSON reader.
            assert!(report["robots"]["body"].as_str().unwrap().contains(HOSTILE));
        } else {
            // The meta tag's line break does not forge a line of the summary.
            assert!(
                !text.lines().any(|line| line.starts_with("Grade A")),
                "{text}"
            );
            assert!(text.contains("\\x1b[2J"), "{text}");
        }
    }
}

/// `/dev/zero` never ends: the binary reads the limit and one byte more, then stops.
#[cfg(unix)]
#[test]
fn an_endless_input_is_read_up_to_the_limit_and_the_rest_ignored() {
    for command in [
        &["check", "--robots", "-", "/"][..],
        &["analyze", "--file", "-", "--json"][..],
    ] {
        let zero = std::fs::File::open("/dev/zero").expect("/dev/zero");
        let output = Command::new(env!("CARGO_BIN_EXE_jittybot"))
            .args(command)
            .stdin(Stdio::from(zero))
            .output()
            .expect("jittybot runs");
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(
            stderr.contains("standard input is longer than 512000 bytes")
                && stderr.contains("the rest is ignored"),
            "{command:?}: {stderr}"
        );
        assert!(
            matches!(output.status.code(), Some(0 | 1)),
            "{command:?}: {stderr}"
        );
        if command[0] == "analyze" {
            let report: serde_json::Value =
                serde_json::from_slice(&output.stdout).expect("JSON report");
            assert_eq!(report["robots"]["truncated"], true);
            let too_large = report["findings"]
                .as_array()
                .unwrap()
                .iter()
                .find(|f| f["id"] == "fetch.too-large")
                .expect("the size finding");
            // Its real size is unknown: no byte count is claimed.
            assert!(too_large["params"].get("bytes").is_none(), "{too_large}");
        }
    }
}
