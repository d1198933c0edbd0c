//! Two `jittybot crawl` processes on one PostgreSQL crawl: no URL fetched twice, the pace
//! held across both, and when one is killed its origins are taken over by the other.

mod common;

use std::collections::HashMap;
use std::time::Duration;

use common::crawl::{crawl_command, postgres, reach_args, serve_slow_pages, spawn, spawn_logging};
use testweb::MultiWeb;

const PACE: Duration = Duration::from_millis(200);

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_processes_share_a_crawl_and_one_takes_over_when_the_other_dies() {
    let Some((db, url)) = postgres().await else {
        return;
    };
    const HOSTS: [&str; 4] = ["a1.two.test", "a2.two.test", "b1.two.test", "b2.two.test"];
    const PAGES: u32 = 12;
    let web = MultiWeb::start(2).await;
    serve_slow_pages(&web, ".two.test", PAGES, 2_000, 2, Duration::from_millis(5));
    let dir = tempfile::tempdir().unwrap();
    let reach = reach_args(
        &web,
        dir.path(),
        &[(HOSTS[0], 0), (HOSTS[1], 0), (HOSTS[2], 1), (HOSTS[3], 1)],
    );
    let seeds: Vec<String> = HOSTS.iter().map(|h| web.http_url(h, "/p0.html")).collect();
    let options = [
        "--pace",
        "200ms",
        "--origin-lease",
        "1s",
        "--follow-links",
        "always",
    ];
    let start = |warc: &str| {
        let args = crawl_command(&url, &dir.path().join(warc), &reach, &options, &seeds);
        spawn_logging(&args, &dir.path().join(format!("{warc}.log")))
    };
    let log_of = |name: &str| {
        std::fs::read_to_string(dir.path().join(format!("{name}.log"))).unwrap_or_default()
    };
    let mut first = start("warc-1");
    let mut second = start("warc-2");
    tokio::time::sleep(Duration::from_millis(1500)).await;
    first.kill().unwrap();
    first.wait().unwrap();
    let killed_at = tokio::time::Instant::now();
    let status = tokio::task::spawn_blocking(move || {
        common::wait_or_kill(&mut second, common::COMMAND_DEADLINE, "the second crawl")
    })
    .await
    .unwrap();
    assert!(status.success(), "{status}: {}", log_of("warc-2"));

    let log = web.requests();
    let mut counts: HashMap<String, Vec<tokio::time::Instant>> = HashMap::new();
    for r in &log {
        if r.path.starts_with("/p") {
            counts
                .entry(format!("{}{}", r.host, r.path))
                .or_default()
                .push(r.at);
        }
    }
    assert_eq!(
        counts.len(),
        HOSTS.len() * PAGES as usize,
        "every page fetched"
    );
    for (page, times) in &counts {
        // Only a request in flight when the first process died may be made again.
        assert!(
            times.len() == 1 || times[0] <= killed_at,
            "{page} fetched twice while both ran\n{}\n{}",
            log_of("warc-1"),
            log_of("warc-2")
        );
    }
    let repeats = counts.values().filter(|t| t.len() > 1).count();
    assert!(repeats <= 2 * 3, "{repeats} pages fetched again");
    // The pace held across both processes: per address (one origin each), the server sees
    // requests at least PACE apart. The pace counts from each answer, which comes after the
    // server saw the request, and the next allowed start is stored with the origin's lease,
    // so neither a slow TLS handshake nor the other process shortens a gap (a few ms of slack
    // for the wall-clock round trip of the stored pacing). Two processes at once would show
    // gaps of a few ms.
    let mut by_origin: HashMap<std::net::SocketAddr, Vec<(tokio::time::Instant, String)>> =
        HashMap::new();
    for r in &log {
        let what = format!("{} {}{}", r.method, r.host, r.path);
        by_origin
            .entry(r.local.unwrap())
            .or_default()
            .push((r.at, what));
    }
    for (addr, mut times) in by_origin {
        times.sort();
        let smallest = times.windows(2).map(|w| w[1].0 - w[0].0).min();
        eprintln!("{addr}: smallest gap {smallest:?}");
        for w in times.windows(2) {
            let gap = w[1].0 - w[0].0;
            assert!(
                gap >= PACE - Duration::from_millis(5),
                "{addr}: two requests {gap:?} apart: {} then {}\n{}\n{}",
                w[0].1,
                w[1].1,
                log_of("warc-1"),
                log_of("warc-2")
            );
        }
    }
    db.cleanup().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_process_that_joins_waits_for_the_work_another_holds_then_both_exit_0() {
    let Some((db, url)) = postgres().await else {
        return;
    };
    const HOST: &str = "one.idle.test";
    const PAGES: u32 = 15;
    let web = MultiWeb::start(1).await;
    serve_slow_pages(
        &web,
        ".idle.test",
        PAGES,
        1_000,
        2,
        Duration::from_millis(20),
    );
    let dir = tempfile::tempdir().unwrap();
    let reach = reach_args(&web, dir.path(), &[(HOST, 0)]);
    let options = [
        "--pace",
        "50ms",
        "--follow-links",
        "always",
        "--origin-lease",
        "2s",
    ];
    let start = |name: &str, seeds: &[String]| {
        spawn(&crawl_command(
            &url,
            &dir.path().join(name),
            &reach,
            &options,
            seeds,
        ))
    };
    // One origin: the first process holds all the work; the second joins with no seeds.
    let mut first = start("warc-1", &[web.http_url(HOST, "/p0.html")]);
    // The second joins once the first is crawling (before, the crawl is empty and a process
    // that finds nothing to do rightly ends at once).
    let started = std::time::Instant::now();
    while !web.requests().iter().any(|r| r.path.starts_with("/p")) {
        if let Some(status) = first.try_wait().unwrap() {
            panic!("the first crawl exited ({status}) before fetching a page");
        }
        assert!(
            started.elapsed() < common::COMMAND_DEADLINE,
            "the first crawl fetched no page"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let second = start("warc-2", &[]);
    let wait = |mut child: std::process::Child| {
        tokio::task::spawn_blocking(move || {
            let status = common::wait_or_kill(&mut child, common::COMMAND_DEADLINE, "a crawl");
            (status, tokio::time::Instant::now())
        })
    };
    let (first, second) = (wait(first), wait(second));
    let (s1, _) = first.await.unwrap();
    let (s2, second_done) = second.await.unwrap();
    assert!(s1.success() && s2.success(), "{s1} {s2}");
    let log = web.requests();
    let page_requests: Vec<_> = log.iter().filter(|r| r.path.starts_with("/p")).collect();
    assert_eq!(page_requests.len(), PAGES as usize, "every page once");
    let last = page_requests.iter().map(|r| r.at).max().unwrap();
    assert!(
        second_done >= last,
        "the joining process exited before the other's work was done"
    );
    db.cleanup().await;
}
