//! The operator's levers, from the servers' side: a crawl runs, `jittybot crawl-control`
//! (another process, on the same store) pulls a lever, and the test web's request log shows
//! the crawl obeying it within 5 s: gaps grow to the pace set, an excluded site gets no
//! request, a refreshed robots.txt is requested again. And the same commands kept in a
//! `--control` file.

mod common;

use common::INFO_URL;

use std::path::Path;
use std::time::Duration;

use common::crawl::{crawl_db, crawl_from_first_pages, interrupt, serve_slow_pages, spawn_logging};
use common::{jittybot, stdout};
use testweb::{MultiWeb, RecordedRequest};
use tokio::time::Instant;

/// The promise: every running process obeys a lever within this.
const OBEYED_WITHIN: Duration = Duration::from_secs(5);
const SLACK: Duration = Duration::from_millis(5);

const PACED: &str = "paced.levers.test";
const EXCLUDED: &str = "excluded.levers.test";
const REFRESHED: &str = "refreshed.levers.test";

/// The three sites, `pages` linked pages each, answering at once (2 ms).
fn serve_sites(web: &MultiWeb, pages: u32) {
    serve_slow_pages(
        web,
        ".levers.test",
        pages,
        1_000,
        3,
        Duration::from_millis(2),
    );
}

/// `jittybot crawl` of the three sites, links followed, with `options`; the store and files
/// in `dir`.
fn crawl_of(web: &MultiWeb, dir: &Path, options: &[&str]) -> Vec<String> {
    let mut options = options.to_vec();
    options.extend(["--follow-links", "always"]);
    crawl_from_first_pages(web, dir, &[PACED, EXCLUDED, REFRESHED], &options)
}

fn to(log: &[RecordedRequest], host: &str) -> Vec<RecordedRequest> {
    let mut requests: Vec<RecordedRequest> = log
        .iter()
        .filter(|r| r.host.split(':').next() == Some(host))
        .cloned()
        .collect();
    requests.sort_by_key(|r| r.at);
    requests
}

fn gaps(requests: &[RecordedRequest]) -> Vec<Duration> {
    requests.windows(2).map(|w| w[1].at - w[0].at).collect()
}

async fn control(db: &str, command: &[&str]) -> Instant {
    let mut args = vec!["crawl-control", "--db", db];
    args.extend(command);
    let args: Vec<String> = args.iter().map(|s| s.to_string()).collect();
    let out = tokio::task::spawn_blocking(move || jittybot(&args, None))
        .await
        .unwrap();
    assert!(
        out.status.success(),
        "crawl-control {command:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    Instant::now()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn levers_pulled_on_a_running_crawl_are_obeyed_within_five_seconds() {
    let web = MultiWeb::start(3).await;
    serve_sites(&web, 400);
    let dir = tempfile::tempdir().unwrap();
    let db = crawl_db(dir.path());
    let args = crawl_of(&web, dir.path(), &["--pace", "100ms"]);
    let log_file = dir.path().join("crawl.log");
    let mut crawl = spawn_logging(&args, &log_file);
    let crawl_log = || std::fs::read_to_string(&log_file).unwrap_or_default();
    // Every site is being crawled.
    let started = Instant::now();
    loop {
        let log = web.requests();
        if [PACED, EXCLUDED, REFRESHED].iter().all(|h| {
            to(&log, h)
                .iter()
                .filter(|r| r.path.starts_with("/p"))
                .count()
                >= 3
        }) {
            break;
        }
        assert!(
            started.elapsed() < Duration::from_secs(60),
            "the crawl did not start: {}",
            crawl_log()
        );
        assert!(crawl.try_wait().unwrap().is_none(), "{}", crawl_log());
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let pulled = Instant::now();
    control(&db, &["pace", PACED, "1s"]).await;
    control(&db, &["exclude", EXCLUDED]).await;
    let last_pulled = control(&db, &["refresh-robots", REFRESHED]).await;
    let listed = common::jittybot(&["crawl-control", "--db", &db, "list", "--json"], None);
    let listed: serde_json::Value = serde_json::from_str(&stdout(&listed)).unwrap();
    assert_eq!(listed.as_array().unwrap().len(), 3, "{listed}");
    // Watch the levers work, then undo two of them.
    tokio::time::sleep(OBEYED_WITHIN + Duration::from_secs(3)).await;
    control(&db, &["pace", PACED, "default"]).await;
    let included = control(&db, &["include", EXCLUDED]).await;
    tokio::time::sleep(OBEYED_WITHIN + Duration::from_secs(2)).await;
    interrupt(&crawl);
    let status = tokio::task::spawn_blocking(move || {
        common::wait_or_kill(&mut crawl, common::COMMAND_DEADLINE, "the crawl")
    })
    .await
    .unwrap();
    assert_eq!(status.code(), Some(130), "{}", crawl_log());

    let log = web.requests();
    let in_force = last_pulled + OBEYED_WITHIN;
    let undone = included + OBEYED_WITHIN;
    // pace: 100 ms gaps before, at least 1 s once in force, short again once undone.
    let paced = to(&log, PACED);
    let before: Vec<_> = paced.iter().filter(|r| r.at < pulled).cloned().collect();
    assert!(gaps(&before)
        .iter()
        .any(|g| *g < Duration::from_millis(500)));
    let slowed: Vec<_> = paced
        .iter()
        .filter(|r| r.at >= in_force && r.at < included)
        .cloned()
        .collect();
    assert!(slowed.len() >= 2, "requests while paced: {}", slowed.len());
    for gap in gaps(&slowed) {
        assert!(
            gap >= Duration::from_secs(1) - SLACK,
            "{gap:?} between two requests to a site paced at 1 s\n{}",
            crawl_log()
        );
    }
    let after: Vec<_> = paced.iter().filter(|r| r.at >= undone).cloned().collect();
    assert!(
        gaps(&after).iter().any(|g| *g < Duration::from_millis(500)),
        "the pace back to the crawl's own once `default`"
    );
    // exclude: nothing at all while in force; requests again once included.
    let excluded = to(&log, EXCLUDED);
    let during: Vec<_> = excluded
        .iter()
        .filter(|r| r.at >= in_force && r.at < included)
        .map(|r| r.path.clone())
        .collect();
    assert!(
        during.is_empty(),
        "requests to an excluded site: {during:?}"
    );
    assert!(
        excluded.iter().any(|r| r.at >= included && r.at < undone),
        "the site crawled again within 5 s of `include`"
    );
    // refresh-robots: robots.txt requested again (it was cached for the run), before the
    // site's next page.
    let refreshed = to(&log, REFRESHED);
    let robots: Vec<_> = refreshed
        .iter()
        .filter(|r| r.path == "/robots.txt")
        .map(|r| r.at)
        .collect();
    assert!(robots.iter().any(|at| *at < pulled), "the first robots.txt");
    let again = robots
        .iter()
        .find(|at| **at >= pulled)
        .copied()
        .unwrap_or_else(|| panic!("robots.txt not requested again\n{}", crawl_log()));
    assert!(again <= in_force, "robots.txt requested again within 5 s");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn levers_kept_in_a_file_hold_from_the_first_request_and_a_run_ends_with_excluded_work_queued(
) {
    let web = MultiWeb::start(3).await;
    serve_sites(&web, 8);
    let dir = tempfile::tempdir().unwrap();
    let db = crawl_db(dir.path());
    let control_file = dir.path().join("levers");
    std::fs::write(
        &control_file,
        format!("# complaints\npace {PACED} 400ms\nexclude {EXCLUDED}  # asked by its owner\n"),
    )
    .unwrap();
    let control = control_file.display().to_string();
    let args = crawl_of(&web, dir.path(), &["--pace", "20ms", "--control", &control]);
    let out = tokio::task::spawn_blocking(move || {
        common::jittybot_with_env(&args, None, &[("RUST_LOG", "warn")])
    })
    .await
    .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(
        stderr.contains("only URLs of excluded sites are left"),
        "{stderr}"
    );
    let log = web.requests();
    assert!(
        to(&log, EXCLUDED).is_empty(),
        "no request to an excluded site"
    );
    let paced = to(&log, PACED);
    assert!(paced.len() >= 8, "{}", paced.len());
    for gap in gaps(&paced) {
        assert!(gap >= Duration::from_millis(400) - SLACK, "{gap:?}");
    }
    assert!(gaps(&to(&log, REFRESHED))
        .iter()
        .any(|g| *g < Duration::from_millis(200)));
    // The excluded site's URLs are still queued for a later run.
    let status = jittybot(&["crawl-status", "--db", &db, "--json"], None);
    let status: serde_json::Value = serde_json::from_str(&stdout(&status)).unwrap();
    assert!(
        status["urls"]["queued"].as_u64().unwrap_or(0) >= 1,
        "{status}"
    );
    // A bad file is refused before anything is crawled, naming the line.
    std::fs::write(&control_file, "pace a.test 1s\nslow b.test\n").unwrap();
    let bad = jittybot(
        &[
            "crawl",
            "--info-url",
            INFO_URL,
            "--db",
            &db,
            "--control",
            &control_file.display().to_string(),
        ],
        None,
    );
    assert_eq!(bad.status.code(), Some(2));
    assert!(
        common::stderr(&bad).contains(":2: unknown command \"slow\""),
        "{}",
        common::stderr(&bad)
    );
}
