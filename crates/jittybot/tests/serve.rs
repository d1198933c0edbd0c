//! `jittybot serve`, `sites`, `maintain` and `remove-domain`, run as an operator runs them:
//! the server started on a free port, driven over HTTP against the test web, stopped with
//! SIGTERM; the other commands on the same store.

mod common;

use std::io::Read;
use std::process::Stdio;
use std::time::{Duration, Instant};

use common::serve::{http_bytes, poll, serve_command, spawn_serve, start_serve, Server};
use common::{jittybot, reach, stderr, stdout};
use serde_json::Value;
use testweb::{Reply, TestWeb};

/// A request over HTTP/1.1: the status and the JSON body.
fn http(addr: &str, method: &str, path: &str, body: &str) -> (u16, Value) {
    let (status, body) = http_text(addr, method, path, body);
    let json = serde_json::from_str(&body).unwrap_or_else(|_| panic!("{path}: not JSON: {body}"));
    (status, json)
}

/// A request over HTTP/1.1: the status and the body as text.
fn http_text(addr: &str, method: &str, path: &str, body: &str) -> (u16, String) {
    let json = "Content-Type: application/json\r\n";
    let (status, body) = http_bytes(addr, method, path, json, body);
    (status, String::from_utf8_lossy(&body).into_owned())
}

/// `serve` on `db` without its schedule.
fn start(db: &str, extra: &[String]) -> Server {
    let mut args = vec!["--no-scheduler".to_owned()];
    args.extend_from_slice(extra);
    start_scheduled(db, &args)
}

/// `serve` with its schedule running (unless `extra` says `--no-scheduler`).
fn start_scheduled(db: &str, extra: &[String]) -> Server {
    let mut args = vec!["--db".to_owned(), db.to_owned()];
    args.extend_from_slice(extra);
    start_serve(&[], &args)
}

#[tokio::test(flavor = "multi_thread")]
async fn serve_queues_runs_and_answers_analyses_then_stops_gracefully() {
    let web = TestWeb::start().await;
    web.site("site.test")
        .path("/robots.txt")
        .respond(Reply::robots_txt("User-agent: *\nDisallow: /private/\n"));
    web.site("site.test")
        .path("/")
        .respond(Reply::html("<head></head>"));
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("service.sqlite");
    let db = db.to_str().unwrap();
    let server = start(db, &reach(&web, "site.test"));
    let addr = server.addr.clone();
    let url = web.http_url("site.test", "/");
    let (status, queued) = tokio::task::spawn_blocking({
        let addr = addr.clone();
        let body = format!("{{\"url\": \"{url}\"}}");
        move || http(&addr, "POST", "/api/analyze", &body)
    })
    .await
    .unwrap();
    assert_eq!(status, 202, "{queued}");
    let id = queued["id"].as_str().unwrap().to_owned();
    assert!(queued["address"]
        .as_str()
        .unwrap()
        .starts_with(&format!("http://{addr}/score/site.test/")));
    let report = tokio::task::spawn_blocking({
        let addr = addr.clone();
        move || {
            poll(Duration::from_secs(60), Duration::from_millis(100), || {
                let (_, report) = http(&addr, "GET", &format!("/api/report/{id}"), "");
                (report["state"] == "done", report)
            })
        }
    })
    .await
    .unwrap();
    assert_eq!(report["state"], "done", "{report}");
    assert_eq!(report["report"]["robots"]["status"], 200);
    // The icon is looked for after a person's analysis too, from what the analysis read:
    // /favicon.ico (the home page declares none), with no second robots.txt or home page.
    let started = Instant::now();
    while web.requests_to("site.test", "/favicon.ico").is_empty() {
        assert!(
            started.elapsed() < Duration::from_secs(30),
            "no icon search"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert_eq!(web.requests_to("site.test", "/robots.txt").len(), 1);
    assert_eq!(web.requests_to("site.test", "/").len(), 1);
    // The pages are served by the same server, from the same store.
    let page = format!("/score/site.test/{}", report["id"].as_str().unwrap());
    let pages = tokio::task::spawn_blocking({
        let addr = addr.clone();
        move || {
            [
                http_text(&addr, "GET", &page, ""),
                http_text(&addr, "GET", "/score/site.test", ""),
                http_text(&addr, "GET", "/", ""),
            ]
        }
    })
    .await
    .unwrap();
    for (status, html) in &pages {
        assert_eq!(*status, 200, "{html}");
        assert!(html.contains("site.test"), "{html}");
    }
    let ua = web.requests_to("site.test", "/robots.txt")[0]
        .header("user-agent")
        .unwrap()
        .to_owned();
    assert!(ua.contains(&format!("+http://{addr}/bot")), "{ua}");
    let (status, bad) = tokio::task::spawn_blocking({
        let addr = addr.clone();
        move || {
            http(
                &addr,
                "POST",
                "/api/analyze",
                "{\"url\": \"file:///etc/passwd\"}",
            )
        }
    })
    .await
    .unwrap();
    assert_eq!(status, 400);
    assert!(bad["error"].as_str().unwrap().contains("http"), "{bad}");
    assert_eq!(
        tokio::task::spawn_blocking(move || server.stop())
            .await
            .unwrap(),
        Some(0)
    );

    // The other commands on the same store.
    let out = jittybot(
        &[
            "remove-domain",
            "site.test",
            "--db",
            db,
            "--keep-off-ranking",
        ],
        None,
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(stdout(&out).contains("1 report,"), "{}", stdout(&out));
}

/// `sites list --json` on `db`.
fn listed(db: &str) -> Vec<Value> {
    let out = jittybot(&["sites", "list", "--json", "--db", db], None);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let list: Value = serde_json::from_slice(&out.stdout).unwrap();
    list.as_array().unwrap().clone()
}

/// A site answering 503 with `Retry-After: 259200` (3 days) on the schedule of a running
/// `serve`: `sites list` shows the check, its outcome, the next check 3 days later and the
/// back-off with its reason; the domain page shows the next check; `remove-domain`, given the
/// www. name, deletes the report and takes the site off the schedule.
#[tokio::test(flavor = "multi_thread")]
async fn sites_list_shows_the_next_check_and_removal_takes_a_site_off_the_schedule() {
    let web = TestWeb::start().await;
    web.site("www.later.test")
        .path("/robots.txt")
        .respond(Reply::status(503).header("Retry-After", "259200"));
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("schedule.sqlite");
    let db = db.to_str().unwrap();
    let url = web.http_url("www.later.test", "/");
    let out = jittybot(&["sites", "add", &url, "--db", db], None);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let never = listed(db);
    assert_eq!(never[0]["last_check"], Value::Null, "{never:?}");
    let server = start_scheduled(db, &reach(&web, "www.later.test"));
    let started = Instant::now();
    let entry = loop {
        let list = tokio::task::spawn_blocking({
            let db = db.to_owned();
            move || listed(&db)
        })
        .await
        .unwrap();
        // The report is stored a moment before the schedule's back-off: wait for both.
        if list[0]["outcome"] == "done" && !list[0]["backoff"].is_null() {
            break list[0].clone();
        }
        assert!(started.elapsed() < Duration::from_secs(60), "{list:?}");
        tokio::time::sleep(Duration::from_millis(200)).await;
    };
    let time = |key: &str| -> jiff::Timestamp { entry[key].as_str().unwrap().parse().unwrap() };
    let ahead = time("last_check").duration_until(time("next_check"));
    let three_days = jiff::SignedDuration::from_hours(72);
    assert!(
        ahead >= three_days && ahead < three_days + jiff::SignedDuration::from_hours(1),
        "{entry}"
    );
    assert_eq!(entry["backoff"]["reason"], "failure", "{entry}");
    assert_eq!(entry["backoff"]["until"], entry["next_check"], "{entry}");
    let text = stdout(&jittybot(&["sites", "list", "--db", db], None));
    assert!(text.contains("backing off until"), "{text}");
    assert!(
        text.contains("unreachable or asked for fewer requests"),
        "{text}"
    );
    let addr = server.addr.clone();
    let (status, page) =
        tokio::task::spawn_blocking(move || http_text(&addr, "GET", "/score/later.test", ""))
            .await
            .unwrap();
    assert_eq!(status, 200);
    let next = entry["next_check"].as_str().unwrap();
    assert!(page.contains("Next scheduled check"), "{page}");
    assert!(page.contains(&next[..10]), "{page}");
    assert!(page.contains("1 report, newest first"), "{page}");

    let out = jittybot(&["remove-domain", "WWW.Later.test.", "--db", db], None);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(
        stdout(&out).trim(),
        "later.test: 1 report, 0 monthly summaries and 0 icons deleted; 1 listed URL taken off the schedule"
    );
    assert!(listed(db).is_empty());
    assert_eq!(server.stop(), Some(0));
    assert_eq!(
        web.requests_to("www.later.test", "/robots.txt").len(),
        1,
        "no icon search after a failure"
    );
}

#[test]
fn sites_are_added_imported_listed_and_removed() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("sites.sqlite");
    let db = db.to_str().unwrap();
    let file = dir.path().join("sites.txt");
    std::fs::write(
        &file,
        "# the list\nhttps://b.test/\n\nc.test/page  # schemeless: https\n",
    )
    .unwrap();
    let out = jittybot(&["sites", "add", "https://a.test/", "--db", db], None);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let out = jittybot(
        &["sites", "import", file.to_str().unwrap(), "--db", db],
        None,
    );
    assert_eq!(stdout(&out).trim(), "2 added, 0 already listed");
    let out = jittybot(&["sites", "list", "--json", "--db", db], None);
    let list: Value = serde_json::from_slice(&out.stdout).unwrap();
    let urls: Vec<&str> = list
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["url"].as_str().unwrap())
        .collect();
    assert_eq!(
        urls,
        vec!["https://a.test/", "https://b.test/", "https://c.test/page"]
    );
    let out = jittybot(&["sites", "remove", "https://b.test/", "--db", db], None);
    assert_eq!(out.status.code(), Some(0));
    let out = jittybot(&["sites", "list", "--db", db], None);
    assert!(!stdout(&out).contains("b.test") && stdout(&out).contains("a.test"));
    let bad = jittybot(&["sites", "add", "ftp://x.test/", "--db", db], None);
    assert_eq!(bad.status.code(), Some(2));
    std::fs::write(&file, "https://ok.test/\nmailto:x@y\n").unwrap();
    let bad = jittybot(
        &["sites", "import", file.to_str().unwrap(), "--db", db],
        None,
    );
    assert!(stderr(&bad).contains("line 2"), "{}", stderr(&bad));
}

#[test]
fn maintain_runs_as_of_a_time_and_dry() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("m.sqlite");
    let db = db.to_str().unwrap();
    let out = jittybot(
        &[
            "maintain",
            "--db",
            db,
            "--as-of",
            "2026-09-01T00:00:00Z",
            "--dry-run",
            "--json",
        ],
        None,
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let outcome: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(outcome["cutoff"], "2026-03-01T00:00:00Z");
    assert_eq!(outcome["dry_run"], true);
    let out = jittybot(&["maintain", "--db", db, "--as-of", "yesterday"], None);
    assert_eq!(out.status.code(), Some(2));
}

/// The README's first screen: exactly two commands, and the first one (the binary this test
/// builds stands in for `cargo run --release --`) runs as written on a fresh directory: it
/// creates its SQLite store there, answers at the address it prints, serves the home page
/// with its forms, and stops gracefully.
#[test]
fn the_readme_first_screen_runs_as_written() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let readme = std::fs::read_to_string(root.join("README.md")).expect("README.md");
    let block = readme
        .split("```sh\n")
        .nth(1)
        .and_then(|rest| rest.split("```").next())
        .expect("a first sh block");
    let commands: Vec<&str> = block
        .lines()
        .map(|line| line.split('#').next().unwrap_or("").trim())
        .filter(|line| !line.is_empty())
        .collect();
    assert_eq!(commands.len(), 2, "{commands:?}");
    assert_eq!(commands[1], "cargo test --workspace");
    let args: Vec<&str> = commands[0]
        .strip_prefix("cargo run --release --")
        .expect("cargo run --release -- ...")
        .split_whitespace()
        .collect();
    assert_eq!(
        args,
        ["serve"],
        "the README's first command changed: check it here"
    );
    let dir = tempfile::tempdir().unwrap();
    let mut command = serve_command(&[]);
    command
        .args(&args)
        .current_dir(dir.path())
        .stderr(Stdio::piped());
    let (mut child, line) = spawn_serve(command);
    if !line.contains("http://127.0.0.1:8080") {
        let _ = child.kill();
        let mut err = String::new();
        child
            .stderr
            .take()
            .unwrap()
            .read_to_string(&mut err)
            .unwrap();
        panic!(
            "the README's `serve` did not start on 127.0.0.1:8080 (is the port taken?): \
             stdout {line:?}, stderr {err}"
        );
    }
    let server = Server {
        child,
        addr: "127.0.0.1:8080".to_owned(),
    };
    let (status, health) = http(&server.addr, "GET", "/api/health", "");
    assert_eq!(status, 200, "{health}");
    let (status, home) = http_text(&server.addr, "GET", "/", "");
    assert_eq!(status, 200);
    assert!(home.contains("<form"), "{home}");
    assert!(dir.path().join("robotstxtparser.sqlite").is_file());
    assert_eq!(server.stop(), Some(0));
}
