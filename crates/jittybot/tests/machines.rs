//! Two machines on one PostgreSQL crawl: two `jittybot crawl` processes, each in its own PID
//! namespace (as on two machines, or in two containers: the same process ids mean different
//! processes), without `HOSTNAME` in their environment (as under systemd). The second must
//! not take the first's process for a dead one of its own machine and free its leases: the
//! test web's request log shows the pace, the crawl-delay and the back-off held across both,
//! and no page fetched twice.

mod common;

use common::INFO_URL;

use std::collections::HashMap;
use std::net::SocketAddr;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use db::testing::{postgres_skipped, TestDb};
use db::{Backend, DbTarget};
use testweb::{linked_pages, LinkedPages, MultiWeb, RecordedRequest, Reply};
use tokio::time::Instant;

const PACE: Duration = Duration::from_millis(200);
const CRAWL_DELAY: Duration = Duration::from_secs(1);
const BACKOFF_BASE: Duration = Duration::from_secs(1);
/// The wall-clock round trip of pacing stored by one process and read by the other.
const SLACK: Duration = Duration::from_millis(5);

const PAIRED: [&str; 2] = ["a1.machines.test", "a2.machines.test"];
const DELAYED: &str = "slow.delayed.test";
/// Pages per host (the crawl-delayed host has fewer: each costs a second).
const PAGES: u32 = 16;
const DELAYED_PAGES: u32 = 6;
const FLAKY: &str = "flaky.machines.test";
/// Pages of the flaky host that answer 503 once, then the page.
const FLAKY_PAGES: [u32; 3] = [2, 5, 9];

/// Whether this machine lets a process have its own PID namespace. `unshare` missing is a
/// broken test machine (util-linux is part of every Debian): the test fails and says so. A
/// kernel that refuses (no privilege, namespaces disabled) skips the test, loudly.
fn pid_namespaces_work() -> bool {
    let probe = Command::new("unshare")
        .args(["--pid", "--fork", "--mount-proc", "true"])
        .stderr(Stdio::piped())
        .output();
    match probe {
        Err(e) => panic!(
            "`unshare` (util-linux) cannot be run ({e}): this test needs it to put two crawls \
             in separate PID namespaces, as on two machines"
        ),
        Ok(out) if out.status.success() => true,
        Ok(out) => {
            eprintln!(
                "\n*** SKIPPED: the kernel refuses a PID namespace ({}): run this test as root \
                 (or with user namespaces) to check two machines on one database ***\n",
                String::from_utf8_lossy(&out.stderr).trim()
            );
            false
        }
    }
}

/// `jittybot ARGS` in a PID namespace of its own, without `HOSTNAME`. With `behind_shell` the
/// crawl is not the namespace's first process: a shell is (as an init would be), and it
/// starts 200 short processes first, so the crawl's process id is past anything the other
/// namespace uses (its crawl is process 1 there, its threads the next few ids, and a
/// thread's id answers in `/proc` too). The two crawls so have different process ids, as
/// two machines' crawls usually do, and each id names nothing in the other namespace.
fn spawn_machine(args: &[String], behind_shell: bool, log: &Path) -> Child {
    let mut command = Command::new("unshare");
    command.args(["--pid", "--fork", "--mount-proc", "--kill-child"]);
    if behind_shell {
        // `exit` after the command keeps the shell from replacing itself with it.
        let script = "n=0; while [ $n -lt 200 ]; do /bin/true; n=$((n+1)); done; \
                      \"$0\" \"$@\"; exit $?";
        command.args(["sh", "-c", script]);
    }
    command
        .arg(env!("CARGO_BIN_EXE_jittybot"))
        .args(args)
        .env_remove("HOSTNAME")
        .env_remove("RUST_LOG")
        .stdout(Stdio::null())
        .stderr(std::fs::File::create(log).unwrap())
        .spawn()
        .unwrap()
}

fn pages_web(web: &MultiWeb) {
    let pages = linked_pages(LinkedPages {
        host_suffix: ".machines.test".into(),
        pages: PAGES,
        page_bytes: 1_500,
        size_spread: 0,
        links_per_page: 2,
    });
    let delayed = linked_pages(LinkedPages {
        host_suffix: ".delayed.test".into(),
        pages: DELAYED_PAGES,
        page_bytes: 1_500,
        size_spread: 0,
        links_per_page: 2,
    });
    for n in FLAKY_PAGES {
        let path = format!("/p{n}.html");
        let page = pages(FLAKY, &path).unwrap();
        web.site(FLAKY)
            .path(&path)
            .script([Reply::status(503), page]);
    }
    web.site(DELAYED)
        .path("/robots.txt")
        .respond(Reply::robots_txt(&format!(
            "User-agent: *\nCrawl-delay: {}\n",
            CRAWL_DELAY.as_secs()
        )));
    web.generate(move |h, p| {
        pages(h, p)
            .or_else(|| delayed(h, p))
            .map(|r| r.delay(Duration::from_millis(5)))
    });
}

fn gaps_at_least(requests: &[&RecordedRequest], least: Duration, what: &str, logs: &str) {
    for w in requests.windows(2) {
        let gap = w[1].at - w[0].at;
        assert!(
            gap >= least - SLACK,
            "{what}: two requests {gap:?} apart (at least {least:?}): {} {}{} then {} {}{}\n{logs}",
            w[0].method,
            w[0].host,
            w[0].path,
            w[1].method,
            w[1].host,
            w[1].path,
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_machines_without_hostname_share_a_crawl_without_taking_each_others_leases() {
    if postgres_skipped() {
        eprintln!("JITTYBOT_TEST_POSTGRES=skip: not run");
        return;
    }
    if !pid_namespaces_work() {
        return;
    }
    let db = TestDb::new(Backend::Postgres).await;
    let DbTarget::Postgres(url) = &db.target else {
        unreachable!()
    };
    let web = MultiWeb::start(3).await;
    pages_web(&web);
    let dir = tempfile::tempdir().unwrap();
    let hosts = [(PAIRED[0], 0), (PAIRED[1], 0), (DELAYED, 1), (FLAKY, 2)];
    std::fs::write(dir.path().join("hosts"), web.hosts_file(&hosts)).unwrap();
    std::fs::write(dir.path().join("ca.pem"), web.certificate_pem()).unwrap();
    let args = |name: &str, seeds: bool| {
        let mut a: Vec<String> = vec![
            "crawl".into(),
            "--info-url".into(),
            INFO_URL.into(),
            "--db".into(),
            url.clone(),
            "--pace".into(),
            "200ms".into(),
            "--backoff-base".into(),
            "1s".into(),
            "--follow-links".into(),
            "always".into(),
            "--allow-private-addresses".into(),
            "--warc-dir".into(),
            dir.path().join(name).display().to_string(),
            "--hosts".into(),
            dir.path().join("hosts").display().to_string(),
            "--cacert".into(),
            dir.path().join("ca.pem").display().to_string(),
        ];
        if seeds {
            a.extend(hosts.iter().map(|(h, _)| web.http_url(h, "/p0.html")));
        }
        a
    };
    let logs = || {
        ["one", "two"]
            .map(|name| {
                let text = std::fs::read_to_string(dir.path().join(format!("{name}.log")))
                    .unwrap_or_default();
                format!("--- machine {name}:\n{text}")
            })
            .join("\n")
    };
    // Machine one holds every origin once it requested a page of each; machine two then
    // starts, in another PID namespace where machine one's process id is free.
    let mut one = spawn_machine(&args("one", true), true, &dir.path().join("one.log"));
    let started = Instant::now();
    loop {
        let log = web.requests();
        let working = hosts.iter().all(|(h, _)| {
            log.iter()
                .any(|r| r.host.starts_with(h) && r.path.starts_with("/p"))
        });
        if working {
            break;
        }
        if let Some(status) = one.try_wait().unwrap() {
            panic!("machine one exited ({status}) early\n{}", logs());
        }
        assert!(
            started.elapsed() < Duration::from_secs(60),
            "machine one fetched no page of some origin\n{}",
            logs()
        );
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    let two = spawn_machine(&args("two", false), false, &dir.path().join("two.log"));
    let wait = |mut child: Child, what: &'static str| {
        tokio::task::spawn_blocking(move || {
            common::wait_or_kill(&mut child, common::COMMAND_DEADLINE, what)
        })
    };
    let (one, two) = (wait(one, "machine one"), wait(two, "machine two"));
    let (s1, s2) = (one.await.unwrap(), two.await.unwrap());
    assert!(s1.success() && s2.success(), "{s1} {s2}\n{}", logs());

    let log = web.requests();
    // No page answered twice (a 503 answered page is asked again, once, after the back-off),
    // and every page fetched.
    let mut answered: HashMap<String, usize> = HashMap::new();
    for r in log
        .iter()
        .filter(|r| r.path.starts_with("/p") && r.status == 200)
    {
        *answered.entry(format!("{}{}", r.host, r.path)).or_default() += 1;
    }
    let twice: Vec<_> = answered.iter().filter(|(_, n)| **n > 1).collect();
    assert!(
        twice.is_empty(),
        "pages fetched twice: {twice:?}\n{}",
        logs()
    );
    let expected = (hosts.len() - 1) * PAGES as usize + DELAYED_PAGES as usize;
    assert_eq!(answered.len(), expected, "every page fetched");
    // The pace per origin (one address each), across both machines.
    let mut by_origin: HashMap<SocketAddr, Vec<&RecordedRequest>> = HashMap::new();
    for r in &log {
        by_origin.entry(r.local.unwrap()).or_default().push(r);
    }
    for (addr, requests) in &mut by_origin {
        requests.sort_by_key(|r| r.at);
        gaps_at_least(requests, PACE, &format!("origin {addr}"), &logs());
        // Back-off: after a 503, the origin's next request waits the back-off.
        for w in requests.windows(2) {
            if w[0].status == 503 {
                let gap = w[1].at - w[0].at;
                assert!(
                    gap >= BACKOFF_BASE - SLACK,
                    "origin {addr}: {gap:?} after a 503 of {}{} (back-off {BACKOFF_BASE:?})\n{}",
                    w[0].host,
                    w[0].path,
                    logs()
                );
            }
        }
    }
    // The crawl-delay of the delayed host.
    let delayed: Vec<&RecordedRequest> =
        log.iter().filter(|r| r.host.starts_with(DELAYED)).collect();
    gaps_at_least(&delayed, CRAWL_DELAY, DELAYED, &logs());
    db.cleanup().await;
}
