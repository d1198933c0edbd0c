//! `jittybot crawl` as a user runs it, on the multi-address test web: the command end to
//! end, a crawl killed with SIGKILL at random points and restarted, and resume.

mod common;

use std::collections::HashMap;
use std::path::Path;
use std::time::Duration;

use common::crawl::{
    crawl_args, crawl_db, crawl_from_first_pages, interrupt, reach_args, serve_slow_pages, spawn,
};
use common::{jittybot, stdout};
use testweb::{MultiWeb, Reply};

/// Options of a crawl as fast as the test web answers: no pace, every link followed.
const UNPACED_FOLLOWING_LINKS: [&str; 4] = ["--pace", "0", "--follow-links", "always"];

fn warc_targets(dir: &Path) -> Vec<(String, String)> {
    let mut out = Vec::new();
    let Ok(entries) = std::fs::read_dir(dir) else {
        return out;
    };
    let mut files: Vec<_> = entries.map(|e| e.unwrap().path()).collect();
    files.sort();
    for f in files {
        assert!(
            f.to_string_lossy().ends_with(".warc.gz"),
            "left unfinished: {f:?}"
        );
        for r in warc::WarcReader::from_path_gzip(&f).unwrap().iter_records() {
            let r = r.unwrap_or_else(|e| panic!("{f:?}: {e}"));
            let uri = r
                .header(warc::WarcHeader::TargetURI)
                .map(|v| v.into_owned())
                .unwrap_or_default();
            out.push((r.warc_type().to_string(), uri));
        }
    }
    out
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_command_crawls_prints_json_events_and_reports_status() {
    let web = MultiWeb::start(2).await;
    web.site("www.shop.test")
        .path("/robots.txt")
        .respond(Reply::robots_txt("User-agent: *\nDisallow: /cart\n"));
    let home = format!(
        "<a href=/a>a</a><a href=/cart>c</a><a href={}>b</a>",
        web.http_url("shop.test", "/b")
    );
    web.site("www.shop.test")
        .path("/")
        .respond(Reply::html(&home));
    web.site("www.shop.test")
        .path("/a")
        .respond(Reply::html("<p>a</p>"));
    web.site("shop.test")
        .path("/robots.txt")
        .respond(Reply::robots_txt("User-agent: *\nAllow: /\n"));
    web.site("shop.test")
        .path("/b")
        .respond(Reply::html("<p>b</p>"));
    let dir = tempfile::tempdir().unwrap();
    let db = crawl_db(dir.path());
    let args = crawl_args(
        &web,
        dir.path(),
        &[("www.shop.test", 0), ("shop.test", 1)],
        &["--pace", "10ms", "--json"],
        &[web.http_url("www.shop.test", "/")],
    );
    let out = tokio::task::spawn_blocking(move || jittybot(&args, None))
        .await
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let events: Vec<serde_json::Value> = stdout(&out)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let kinds: Vec<&str> = events
        .iter()
        .map(|e| e["event"].as_str().unwrap())
        .collect();
    assert_eq!(
        kinds.iter().filter(|k| **k == "fetch").count(),
        3,
        "{}",
        stdout(&out)
    );
    assert!(kinds.contains(&"skip"), "the disallowed /cart: {kinds:?}");
    assert_eq!(kinds.last(), Some(&"done"));
    assert!(web.requests_to("www.shop.test", "/cart").is_empty());
    // HTTPS was tried first and worked, so everything went over TLS.
    assert!(
        web.requests().iter().all(|r| r.tls),
        "{:?}",
        web.requests()
            .iter()
            .map(|r| (r.host.clone(), r.path.clone(), r.tls))
            .collect::<Vec<_>>()
    );
    let status = jittybot(&["crawl-status", "--db", &db, "--json"], None);
    assert!(status.status.success());
    let report: serde_json::Value = serde_json::from_str(&stdout(&status)).unwrap();
    assert_eq!(report["urls"]["fetched"], 3);
    assert_eq!(report["urls"]["disallowed"], 1);
    let text = stdout(&jittybot(&["crawl-status", "--db", &db], None));
    assert!(
        text.contains("URLs: ") && text.contains("fetched 3"),
        "{text}"
    );
    assert!(text.contains("www.shop.test"), "{text}");
}

/// Pages of the generated site the server answered, by URL path and host, with counts.
fn page_requests(web: &MultiWeb) -> HashMap<String, usize> {
    let mut counts = HashMap::new();
    for r in web.requests() {
        if r.path.starts_with("/p") {
            *counts.entry(format!("{}{}", r.host, r.path)).or_insert(0) += 1;
        }
    }
    counts
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_crawl_killed_at_random_points_loses_nothing() {
    const HOSTS: [&str; 3] = ["h1.kill.test", "h2.kill.test", "h3.kill.test"];
    const PAGES: u32 = 40;
    let web = MultiWeb::start(3).await;
    // Slow pages, so the kills land mid-crawl: 40 pages × 40 ms is 1.6 s of fetching per
    // host, more than two runs killed at the latest kill time (750 ms) can do, so at least
    // two kills land (at 15 ms, once connections were reused, the crawl could end first).
    serve_slow_pages(
        &web,
        ".kill.test",
        PAGES,
        3_000,
        3,
        Duration::from_millis(40),
    );
    let dir = tempfile::tempdir().unwrap();
    let db = crawl_db(dir.path());
    let args = crawl_from_first_pages(&web, dir.path(), &HOSTS, &UNPACED_FOLLOWING_LINKS);
    // A simple generator of kill times, varied per run but reproducible from the printed seed.
    let mut seed = jiff::Timestamp::now().as_nanosecond() as u64 | 1;
    eprintln!("kill seed {seed}");
    let mut kills = 0;
    let finished = loop {
        let mut child = spawn(&args);
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        let after = Duration::from_millis(150 + seed % 600);
        tokio::time::sleep(after).await;
        match child.try_wait().unwrap() {
            Some(status) => {
                eprintln!("run ended by itself after {after:?}");
                break status;
            }
            None if kills < 6 => {
                child.kill().unwrap(); // SIGKILL
                child.wait().unwrap(); // reaped: its leases count as dead
                kills += 1;
            }
            None => {
                let t = std::time::Instant::now();
                let s = tokio::task::spawn_blocking(move || {
                    common::wait_or_kill(&mut child, common::COMMAND_DEADLINE, "the last crawl")
                })
                .await
                .unwrap();
                eprintln!("last run took {:?} more", t.elapsed());
                break s;
            }
        }
    };
    assert!(finished.success(), "the last run ends normally");
    assert!(
        kills >= 2,
        "the crawl ended before it could be killed twice ({kills})"
    );
    let counts = page_requests(&web);
    assert_eq!(
        counts.len(),
        HOSTS.len() * PAGES as usize,
        "every page fetched"
    );
    let extra: usize = counts.values().map(|n| n - 1).sum();
    // Each kill may cost, per origin, the request in flight and the results not yet committed.
    assert!(
        extra <= kills * HOSTS.len() * 4,
        "{extra} repeated requests after {kills} kills"
    );
    let records = warc_targets(&dir.path().join("warc"));
    for host in HOSTS {
        for i in 0..PAGES {
            let uri = web.https_url(host, &format!("/p{i}.html"));
            let n = records
                .iter()
                .filter(|(t, u)| t == "response" && *u == uri)
                .count();
            assert!(n >= 1, "{uri} not archived");
        }
    }
    let status = jittybot(&["crawl-status", "--db", &db, "--json"], None);
    let report: serde_json::Value = serde_json::from_str(&stdout(&status)).unwrap();
    assert_eq!(
        report["urls"]["fetched"],
        HOSTS.len() as u64 * u64::from(PAGES)
    );
    assert_eq!(report["urls"]["queued"], 0);
    assert_eq!(report["urls"]["in_flight"], 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ctrl_c_stops_cleanly_and_the_next_run_resumes() {
    const HOSTS: [&str; 2] = ["h1.stop.test", "h2.stop.test"];
    const PAGES: u32 = 30;
    let web = MultiWeb::start(2).await;
    serve_slow_pages(
        &web,
        ".stop.test",
        PAGES,
        2_000,
        3,
        Duration::from_millis(40),
    );
    let dir = tempfile::tempdir().unwrap();
    let db = crawl_db(dir.path());
    let args = crawl_from_first_pages(&web, dir.path(), &HOSTS, &UNPACED_FOLLOWING_LINKS);
    let mut child = spawn(&args);
    tokio::time::sleep(Duration::from_millis(1200)).await;
    interrupt(&child);
    let status = tokio::task::spawn_blocking(move || {
        common::wait_or_kill(
            &mut child,
            common::COMMAND_DEADLINE,
            "the interrupted crawl",
        )
    })
    .await
    .unwrap();
    assert_eq!(status.code(), Some(130), "{status}");
    // The WARC file was closed (no `.open` file left), the state committed: nothing is left
    // in flight, and the crawl stopped part way.
    let records = warc_targets(&dir.path().join("warc"));
    let report = jittybot(&["crawl-status", "--db", &db, "--json"], None);
    let report: serde_json::Value = serde_json::from_str(&stdout(&report)).unwrap();
    assert_eq!(report["urls"]["in_flight"], 0, "{report}");
    assert!(
        report["urls"]["queued"].as_u64().unwrap() > 0,
        "stopped part way: {report}"
    );
    let archived = records.iter().filter(|(t, _)| t == "response").count() as u64;
    assert!(
        archived >= report["urls"]["fetched"].as_u64().unwrap(),
        "every URL committed as fetched is archived: {archived} {report}"
    );
    // The next run finishes, and no page was requested twice: requests under way finished
    // (and were committed) or went back to the queue unsent.
    let out = tokio::task::spawn_blocking(move || jittybot(&args, None))
        .await
        .unwrap();
    assert!(out.status.success());
    let counts = page_requests(&web);
    assert_eq!(
        counts.len(),
        HOSTS.len() * PAGES as usize,
        "every page fetched"
    );
    assert!(
        counts.values().all(|n| *n == 1),
        "{:?}",
        counts.iter().filter(|(_, n)| **n > 1).collect::<Vec<_>>()
    );
}

/// A crawler must say where site owners read about it: without `--info-url` or `--public-url`
/// nothing is requested; with `--public-url` the User-Agent points to that service's `/bot`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_crawl_names_the_page_about_it_or_does_not_start() {
    let web = MultiWeb::start(1).await;
    web.site("who.test")
        .path("/robots.txt")
        .respond(Reply::robots_txt("User-agent: *\nAllow: /\n"));
    web.site("who.test")
        .path("/")
        .respond(Reply::html("<p>who</p>"));
    let dir = tempfile::tempdir().unwrap();
    let db = crawl_db(dir.path());
    let mut args: Vec<String> = ["crawl", "--db", &db, "--warc-dir"]
        .map(String::from)
        .to_vec();
    args.push(dir.path().join("warc").display().to_string());
    args.extend(reach_args(&web, dir.path(), &[("who.test", 0)]));
    args.push(web.http_url("who.test", "/"));
    let refused = tokio::task::spawn_blocking({
        let args = args.clone();
        move || jittybot(&args, None)
    })
    .await
    .unwrap();
    assert_eq!(refused.status.code(), Some(2));
    let message = String::from_utf8_lossy(&refused.stderr).into_owned();
    assert!(
        message.contains("--info-url URL") && message.contains("--public-url URL"),
        "{message}"
    );
    assert!(web.requests().is_empty(), "nothing requested");
    args.extend([
        "--public-url".into(),
        "https://robotstxtparser.test/".into(),
    ]);
    let out = tokio::task::spawn_blocking(move || jittybot(&args, None))
        .await
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let robots = web.requests_to("who.test", "/robots.txt");
    let agent = robots[0].header("user-agent").unwrap_or_default();
    assert!(
        agent.contains("+https://robotstxtparser.test/bot)"),
        "{agent}"
    );
}
