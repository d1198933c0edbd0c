//! A restart never shortens an origin's gap: `jittybot crawl` killed with SIGKILL mid-crawl
//! and started again at once, as the servers see it.

mod common;

use common::crawl::crawl_args;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Duration;

use testweb::{linked_pages, LinkedPages, MultiWeb};

const HOSTS: [&str; 3] = ["h1.restart.test", "h2.restart.test", "h3.restart.test"];

fn args(web: &MultiWeb, dir: &Path) -> Vec<String> {
    let pins: Vec<(&str, usize)> = HOSTS.iter().enumerate().map(|(i, h)| (*h, i)).collect();
    let seeds: Vec<String> = HOSTS.iter().map(|h| web.http_url(h, "/p0.html")).collect();
    crawl_args(
        web,
        dir,
        &pins,
        &["--pace", "1s", "--follow-links", "always"],
        &seeds,
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
    let pages = linked_pages(LinkedPages {
        host_suffix: ".restart.test".into(),
        pages: 60,
        page_bytes: 2_000,
        size_spread: 0,
        links_per_page: 3,
    });
    // Pages take a moment, so the one just requested is in flight (not committed) at the kill.
    web.generate(move |host, path| pages(host, path).map(|r| r.delay(Duration::from_millis(100))));
    let dir = tempfile::tempdir().unwrap();
    let args = args(&web, dir.path());
    // Three runs, each killed as soon as a page request of its own reached a server, and
    // followed at once by the next: the next run's first request to that origin comes as soon
    // as the process is up, unless it waits a full pace.
    for _ in 0..3 {
        let before = pages_seen(&web);
        let mut child = Command::new(env!("CARGO_BIN_EXE_jittybot"))
            .args(&args)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
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
