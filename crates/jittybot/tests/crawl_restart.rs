//! A restart never shortens an origin's gap: `jittybot crawl` killed with SIGKILL mid-crawl
//! and started again at once, as the servers see it.

mod common;

use common::crawl::{crawl_from_first_pages, serve_slow_pages, spawn};
use std::path::Path;
use std::time::Duration;

use testweb::MultiWeb;

const HOSTS: [&str; 3] = ["h1.restart.test", "h2.restart.test", "h3.restart.test"];

fn args(web: &MultiWeb, dir: &Path) -> Vec<String> {
    crawl_from_first_pages(
        web,
        dir,
        &HOSTS,
        &["--pace", "1s", "--follow-links", "always"],
    )
}

/// Requests for pages the server has seen so far.
fn pages_seen(web: &MultiWeb) -> usize {
    web.requests()
        .iter()
        .filter(|r| r.path.starts_with("/p"))
        .count()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_crawl_killed_and_restarted_at_once_never_comes_closer_than_the_pace() {
    let web = MultiWeb::start(3).await;
    // Pages take a moment, so the one just requested is in flight (not committed) at the kill.
    serve_slow_pages(
        &web,
        ".restart.test",
        60,
        2_000,
        3,
        Duration::from_millis(100),
    );
    let dir = tempfile::tempdir().unwrap();
    let args = args(&web, dir.path());
    // Three runs, each killed as soon as a page request of its own reached a server, and
    // followed at once by the next: the next run's first request to that origin comes as soon
    // as the process is up, unless it waits a full pace.
    for _ in 0..3 {
        let before = pages_seen(&web);
        let mut child = spawn(&args);
        let t = std::time::Instant::now();
        while pages_seen(&web) == before {
            assert!(t.elapsed() < Duration::from_secs(30), "no page requested");
            assert!(child.try_wait().unwrap().is_none(), "ended before a page");
            tokio::time::sleep(Duration::from_millis(2)).await;
        }
        child.kill().unwrap(); // SIGKILL
        child.wait().unwrap(); // reaped: the next run frees its leases as a dead process's
    }
    let log = web.requests();
    for (i, address) in web.addresses().iter().enumerate() {
        let mut at: Vec<_> = log
            .iter()
            .filter(|r| r.local.unwrap().ip() == *address)
            .map(|r| r.at)
            .collect();
        at.sort();
        if at.len() < 2 {
            continue;
        }
        let t0 = at[0];
        let gaps: Vec<Duration> = at.windows(2).map(|w| w[1] - w[0]).collect();
        let smallest = gaps.iter().min().unwrap();
        eprintln!(
            "{}: {} requests, smallest gap {smallest:?}",
            HOSTS[i],
            at.len()
        );
        assert!(
            *smallest >= Duration::from_millis(995),
            "{}: gap {smallest:?} (pace 1 s); arrivals {:?}",
            HOSTS[i],
            at.iter().map(|t| *t - t0).collect::<Vec<_>>()
        );
    }
}
