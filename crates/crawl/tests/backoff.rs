//! Back-off as the server sees it: it grows with every failure in a row, whatever robots.txt
//! answers in between, and only a page's answer ends it. SQLite.

mod common;

use std::time::Duration;

use common::*;
use db::testing::TestDb;
use db::Backend;
use testweb::{MultiWeb, RecordedRequest, Reply};

/// The wait after the `n`th failure in a row: `base × 2^(n−1)`, at most `max`.
fn backoff(base: Duration, max: Duration, n: u32) -> Duration {
    (base * 2u32.pow(n.saturating_sub(1).min(20))).min(max)
}

fn failed(r: &RecordedRequest) -> bool {
    r.status == 429 || r.status >= 500
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn back_off_grows_through_robots_txt_answers_between_failures() {
    let db = TestDb::new(Backend::Sqlite).await;
    let web = MultiWeb::start(1).await;
    // Three sites on one address (one origin) that serve their robots.txt and answer 429 to
    // everything else: every site's robots.txt is read between two failures.
    let hosts = ["a.busy.test", "b.busy.test", "c.busy.test"];
    for h in hosts {
        web.site(h)
            .path("/robots.txt")
            .respond(Reply::robots_txt("User-agent: *\nAllow: /\n"));
        for path in ["/", "/sitemap.xml"] {
            web.site(h).path(path).respond(Reply::status(429));
        }
    }
    let warc = tempfile::tempdir().unwrap();
    let f = fetcher(&web, &hosts.map(|h| (h, 0)));
    let mut c = config(warc.path());
    c.pacer.pace = Duration::from_millis(20);
    c.pacer.backoff_base = Duration::from_millis(100);
    c.pacer.backoff_max = Duration::from_millis(800);
    c.pacer.pause_after = 0;
    c.max_attempts = 1;
    let (base, max) = (c.pacer.backoff_base, c.pacer.backoff_max);
    let seeds: Vec<String> = hosts.iter().map(|h| web.http_url(h, "/")).collect();
    crawl(&db.target, f, c, &seeds).await;
    let mut log = web.requests();
    log.sort_by_key(|r| r.at);
    let t0 = log[0].at;
    let shown: Vec<String> = log
        .iter()
        .map(|r| format!("{:>6?} {} {}{}", r.at - t0, r.status, r.host, r.path))
        .collect();
    // After the nth failure in a row, the next request of any kind (robots.txt included)
    // waits the nth back-off; a robots.txt answer does not end the run of failures.
    let mut run = 0;
    let mut checked = 0;
    let mut robots_between = 0;
    for pair in log.windows(2) {
        let (r, next) = (&pair[0], &pair[1]);
        if failed(r) {
            run += 1;
            let want = backoff(base, max, run);
            let gap = next.at - r.at;
            assert!(
                gap >= want - Duration::from_millis(5),
                "failure {run} in a row: next request after {gap:?}, not {want:?}\n{shown:#?}"
            );
            checked += 1;
        } else if r.path == "/robots.txt" {
            robots_between += usize::from(run > 0);
        } else {
            run = 0;
        }
    }
    assert!(checked >= 4, "{shown:#?}");
    assert!(
        robots_between >= 1,
        "robots.txt read between failures {shown:#?}"
    );
    assert!(run >= 4, "the run of failures never ended {shown:#?}");
    db.cleanup().await;
}
