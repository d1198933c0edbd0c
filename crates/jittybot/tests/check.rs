//! `jittybot check`, run as a user runs it.

mod common;

use common::{jittybot, stdout};

const ROBOTS: &str = "User-agent: *\nDisallow: /private\n\nUser-agent: JittyBot\nCrawl-delay: 2.5\nDisallow: /search\nAllow: /search/help\n\nUser-agent: JittyBot-Image\nDisallow: /photos/\nDissallow: /typo\n";

fn robots_file() -> tempfile_path::TempFile {
    tempfile_path::TempFile::with(ROBOTS)
}

/// A file removed when dropped (no extra dependency needed for one temp file).
mod tempfile_path {
    use std::path::PathBuf;
    pub struct TempFile(pub PathBuf);
    impl TempFile {
        pub fn with(content: &str) -> TempFile {
            let unique = format!(
                "jittybot-check-{}-{:?}.txt",
                std::process::id(),
                std::thread::current().id()
            );
            let path = std::env::temp_dir().join(unique.replace(['(', ')'], ""));
            std::fs::write(&path, content).expect("temp file");
            TempFile(path)
        }
    }
    impl Drop for TempFile {
        fn drop(&mut self) {
            let _ = std::fs::remove_file(&self.0);
        }
    }
}

#[test]
fn prints_one_line_per_url_with_its_reason_and_exits_1_when_any_is_disallowed() {
    let file = robots_file();
    let path = file.0.to_str().expect("utf-8 path");
    let output = jittybot(
        &[
            "check",
            "--robots",
            path,
            "https://example.com/search?q=1",
            "/search/help",
            "/private",
        ],
        None,
    );
    assert_eq!(output.status.code(), Some(1));
    assert_eq!(
        stdout(&output),
        "disallowed https://example.com/search?q=1  (line 6: Disallow: /search, group JittyBot)\n\
         allowed /search/help  (line 7: Allow: /search/help, group JittyBot)\n\
         allowed /private  (no matching rule, group JittyBot)\n"
    );
}

#[test]
fn exits_0_when_every_url_is_allowed() {
    let file = robots_file();
    let path = file.0.to_str().expect("utf-8 path");
    let output = jittybot(&["check", "--robots", path, "/", "/robots.txt"], None);
    assert_eq!(output.status.code(), Some(0));
}

#[test]
fn agents_are_tried_in_order_of_preference() {
    let file = robots_file();
    let path = file.0.to_str().expect("utf-8 path");
    let args = [
        "check",
        "--robots",
        path,
        "--agent",
        "JittyBot-Image",
        "--agent",
        "JittyBot",
    ];
    let output = jittybot(&[&args[..], &["/photos/a.jpg"]].concat(), None);
    assert_eq!(output.status.code(), Some(1));
    assert!(stdout(&output).contains("group JittyBot-Image"));
    let other = jittybot(
        &["check", "--robots", path, "--agent", "Other", "/private"],
        None,
    );
    assert!(stdout(&other).contains("line 2: Disallow: /private, group *"));
}

#[test]
fn json_has_url_allowed_rule_group_and_crawl_delay() {
    let output = jittybot(
        &["check", "--robots", "-", "--json", "/search", "/elsewhere"],
        Some(ROBOTS),
    );
    assert_eq!(output.status.code(), Some(1));
    let lines: Vec<serde_json::Value> = stdout(&output)
        .lines()
        .map(|line| serde_json::from_str(line).expect("one JSON object per line"))
        .collect();
    assert_eq!(lines.len(), 2);
    assert_eq!(lines[0]["url"], "/search");
    assert_eq!(lines[0]["allowed"], false);
    assert_eq!(lines[0]["rule"]["line"], 6);
    assert_eq!(lines[0]["rule"]["kind"], "disallow");
    assert_eq!(lines[0]["rule"]["pattern"], "/search");
    assert_eq!(lines[0]["group"], "JittyBot");
    assert_eq!(lines[0]["crawl_delay"], 2.5);
    assert_eq!(lines[1]["allowed"], true);
    assert!(lines[1]["rule"].is_null());
}

#[test]
fn diagnostics_are_listed_with_line_numbers() {
    let output = jittybot(&["check", "--robots", "-", "--diagnostics"], Some(ROBOTS));
    assert_eq!(output.status.code(), Some(0));
    let text = stdout(&output);
    assert!(text.contains("line 11: unknown field \"Dissallow\"; line ignored: Dissallow: /typo"));
    let json = jittybot(
        &["check", "--robots", "-", "--diagnostics", "--json"],
        Some(ROBOTS),
    );
    let first: serde_json::Value =
        serde_json::from_str(stdout(&json).lines().next().expect("a diagnostic")).expect("json");
    assert_eq!(first["line"], 11);
    assert_eq!(first["kind"], "unknown_field");
    assert_eq!(first["field"], "Dissallow");
}

#[test]
fn usage_and_input_errors_exit_2_with_one_line() {
    let missing = jittybot(&["check", "--robots", "/no/such/file", "/"], None);
    assert_eq!(missing.status.code(), Some(2));
    let message = String::from_utf8_lossy(&missing.stderr);
    assert_eq!(message.lines().count(), 1, "{message}");
    assert!(message.contains("/no/such/file"));

    let bad_url = jittybot(&["check", "--robots", "-", "not a url"], Some(ROBOTS));
    assert_eq!(bad_url.status.code(), Some(2));
    let no_urls = jittybot(&["check", "--robots", "-"], Some(ROBOTS));
    assert_eq!(no_urls.status.code(), Some(2));
    // URLs without a host: no robots.txt governs them.
    for url in ["mailto:someone@example.com", "localhost:8080/a", "http:/a"] {
        let output = jittybot(&["check", "--robots", "-", "/", url], Some(ROBOTS));
        assert_eq!(output.status.code(), Some(2), "{url}");
        let message = String::from_utf8_lossy(&output.stderr);
        assert_eq!(message.lines().count(), 1, "{message}");
        assert!(message.contains("give a URL with a host"), "{message}");
        assert!(output.stdout.is_empty());
    }
    let too_many: Vec<&str> = ["check", "--robots", "-"]
        .into_iter()
        .chain(std::iter::repeat_n(["--agent", "JittyBot"], 64).flatten())
        .chain(["/"])
        .collect();
    let output = jittybot(&too_many, Some(ROBOTS));
    assert_eq!(output.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&output.stderr).contains("at most 63"));
}

/// The agents crawlers really have, and what each is read as.
const AGENTS: &str = "User-agent: *\nDisallow: /private\n\n\
    User-agent: MJ12bot\nDisallow: /\n\n\
    User-agent: MJ\nDisallow: /mj-only\n\n\
    User-agent: Googlebot\nDisallow: /nogoogle\n";

#[test]
fn a_name_with_digits_is_matched_whole_with_a_warning() {
    let output = jittybot(
        &[
            "check", "--robots", "-", "--agent", "MJ12bot", "/page", "/mj-only",
        ],
        Some(AGENTS),
    );
    assert_eq!(output.status.code(), Some(1));
    assert_eq!(
        stdout(&output),
        "disallowed /page  (line 5: Disallow: /, group MJ12bot)\n\
         disallowed /mj-only  (line 5: Disallow: /, group MJ12bot)\n"
    );
    let warning = String::from_utf8_lossy(&output.stderr);
    assert_eq!(
        warning,
        "jittybot: warning: --agent \"MJ12bot\" is not an RFC 9309 product token (letters, '-' \
         and '_' only); matching the user-agent lines that name exactly \"MJ12bot\"\n"
    );
}

#[test]
fn a_user_agent_string_is_matched_by_its_product_token_with_a_warning() {
    let agent = "Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)";
    let output = jittybot(
        &[
            "check",
            "--robots",
            "-",
            "--agent",
            agent,
            "/nogoogle",
            "/private",
        ],
        Some(AGENTS),
    );
    assert_eq!(output.status.code(), Some(1));
    assert_eq!(
        stdout(&output),
        "disallowed /nogoogle  (line 11: Disallow: /nogoogle, group Googlebot)\n\
         allowed /private  (no matching rule, group Googlebot)\n"
    );
    let warning = String::from_utf8_lossy(&output.stderr);
    assert!(
        warning
            .contains("is not a product token; matching the product token it names, \"Googlebot\""),
        "{warning}"
    );
}

#[test]
fn an_empty_agent_follows_the_star_groups_with_a_warning() {
    let output = jittybot(
        &["check", "--robots", "-", "--agent", "", "/private", "/page"],
        Some(AGENTS),
    );
    assert_eq!(output.status.code(), Some(1));
    assert_eq!(
        stdout(&output),
        "disallowed /private  (line 2: Disallow: /private, group *)\n\
         allowed /page  (no matching rule, group *)\n"
    );
    let warning = String::from_utf8_lossy(&output.stderr);
    assert!(warning.contains("\"\" names no crawler"), "{warning}");
}

#[test]
fn a_product_token_gets_no_warning() {
    let output = jittybot(
        &["check", "--robots", "-", "--agent", "MJ", "/mj-only"],
        Some(AGENTS),
    );
    assert_eq!(output.status.code(), Some(1));
    assert!(stdout(&output).contains("group MJ)"));
    assert!(
        output.stderr.is_empty(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
}

#[test]
fn urls_of_other_schemes_are_decided_by_their_path() {
    let output = jittybot(
        &[
            "check",
            "--robots",
            "-",
            "--agent",
            "Other",
            "ftp://example.net/foo.html",
            "ftp://example.net/private/a.txt",
        ],
        Some(AGENTS),
    );
    assert_eq!(output.status.code(), Some(1));
    assert_eq!(
        stdout(&output),
        "allowed ftp://example.net/foo.html  (no matching rule, group *)\n\
         disallowed ftp://example.net/private/a.txt  (line 2: Disallow: /private, group *)\n"
    );
    assert!(output.stderr.is_empty());
}
