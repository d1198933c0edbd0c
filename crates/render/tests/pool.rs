//! The browser pool against the loopback test web: pages share long-lived browsers but
//! nothing else, a browser that dies or hangs is replaced, and a page that hangs its
//! browser is failed once. What reached the server is read from its request log.
//!
//! One pool for the whole file (one test function, scenarios in turn), short budgets.
//! Skipped, with a message, only when no Chromium is installed.

use std::sync::Arc;
use std::time::Duration;

use common::gate;
use fetch::Polite;
use render::{BrowserPool, GateResponse, PageToRender, PoolConfig, RenderLimits};
use testweb::{Reply, TestWeb};
use url::Url;

mod common;

const HOSTS: &[&str] = &[
    "late.test",
    "silent.test",
    "a.test",
    "b.test",
    "many.test",
    "slow.test",
    "hang.test",
    "after.test",
];

/// The pace of the test pool's origins.
const PACE: Duration = Duration::from_millis(20);

fn page(url: String, html: &str, set_cookie: Option<&str>) -> PageToRender {
    let mut headers = http::HeaderMap::new();
    headers.insert("content-type", "text/html; charset=utf-8".parse().unwrap());
    if let Some(c) = set_cookie {
        headers.insert("set-cookie", c.parse().unwrap());
    }
    PageToRender {
        url: Url::parse(&url).unwrap(),
        document: GateResponse {
            status: http::StatusCode::OK,
            headers,
            body: html.as_bytes().to_vec(),
        },
    }
}

fn limits(budget: Duration) -> RenderLimits {
    RenderLimits {
        time_budget: budget,
        settle: Duration::from_millis(200),
        ..RenderLimits::default()
    }
}

fn site(web: &TestWeb, host: &str) {
    web.site(host)
        .path("/robots.txt")
        .respond(Reply::robots_txt("User-agent: *\nAllow: /\n"));
}

fn js(body: &str) -> Reply {
    Reply::ok()
        .header("Content-Type", "text/javascript")
        .body(body)
}

/// What a page reports of the state it finds: cookies, storage, and whether it may register
/// a service worker (the report is a request the server logs).
const REPORT: &str = "<script>
  var sw = 'none';
  if (navigator.serviceWorker) {
    sw = 'exposed';
    navigator.serviceWorker.register('/sw.js').catch(function () {});
  }
  fetch('/report?cookie=' + encodeURIComponent(document.cookie)
    + '&storage=' + encodeURIComponent(String(localStorage.getItem('kept')))
    + '&sw=' + sw).catch(function () {});
  document.cookie = 'set=by-script; path=/';
  localStorage.setItem('kept', 'yes');
  try {
    new Worker('/worker.js');
  } catch (e) {}
</script>";

/// Page A stores a cookie (from its response and by script) and local storage; page B of
/// the same site, later in the same browser, finds none of it; neither can register a
/// service worker; a worker's own request goes through the gate like the page's.
async fn pages_share_nothing(pool: &BrowserPool, web: &TestWeb, polite: &Arc<Polite>) {
    site(web, "a.test");
    web.site("a.test")
        .path("/worker.js")
        .respond(js("fetch('/from-worker').catch(function () {});"));
    for name in ["first", "second"] {
        let url = web.http_url("a.test", &format!("/{name}"));
        let rendered = pool
            .render(
                page(url, REPORT, Some(&format!("{name}=1; Path=/"))),
                gate(polite),
                &limits(Duration::from_secs(10)),
            )
            .await
            .expect("the page renders");
        assert!(rendered.loaded);
    }
    let reports: Vec<String> = web
        .requests()
        .iter()
        .filter(|r| r.host == "a.test")
        .filter_map(|r| r.path.strip_prefix("/report?").map(str::to_string))
        .collect();
    assert_eq!(
        reports,
        vec![
            "cookie=first%3D1&storage=null&sw=none",
            "cookie=second%3D1&storage=null&sw=none"
        ],
        "each page saw its own response's cookie only: nothing the first stored (cookies \
         from its response and its script, local storage), and no service worker API"
    );
    assert!(web.requests_to("a.test", "/sw.js").is_empty());
    assert!(
        web.requests().iter().all(|r| r
            .header("user-agent")
            .is_some_and(|ua| ua.contains("JittyBot"))),
        "nothing reached the server but through the gate (a worker's request included)"
    );
}

/// Twelve pages at once on a pool of two: two browsers, never more.
async fn pages_share_browsers(pool: &BrowserPool, web: &TestWeb, polite: &Arc<Polite>) {
    site(web, "many.test");
    web.site("many.test").path("/app.js").respond(
        js("var a = document.createElement('a'); a.href = '/built'; document.body.appendChild(a);")
            .delay(Duration::from_millis(300)),
    );
    let launched = render::browser::launches();
    let renders = (0..12).map(|i| {
        let url = web.http_url("many.test", &format!("/p{i}"));
        let gate = gate(polite);
        async move {
            let html = "<html><body><script src=\"/app.js\"></script></body></html>";
            let running = pool.running();
            let r = pool
                .render(
                    page(url, html, None),
                    gate,
                    &limits(Duration::from_secs(20)),
                )
                .await;
            (r, running)
        }
    });
    let done = futures::future::join_all(renders).await;
    for (r, running) in &done {
        let r = r.as_ref().expect("every page renders");
        assert!(r.facts.links.iter().any(|l| l.url.path() == "/built"));
        assert!(*running <= 2);
    }
    assert!(pool.running() <= 2);
    let started = render::browser::launches() - launched;
    assert!(
        started <= 2,
        "{started} browsers started for 12 pages on a pool of two"
    );
    assert_eq!(web.requests_to("many.test", "/app.js").len(), 12);
}

/// The browsers are killed while a page waits for a slow script: that page fails, the next
/// one renders in a new browser.
async fn a_killed_browser_is_replaced(pool: &BrowserPool, web: &TestWeb, polite: &Arc<Polite>) {
    site(web, "slow.test");
    web.site("slow.test")
        .path("/slow.js")
        .respond(js("var x = 1;").delay(Duration::from_secs(3)));
    site(web, "after.test");
    let url = web.http_url("slow.test", "/");
    let html = "<html><body><script src=\"/slow.js\"></script></body></html>";
    let pids = pool.pids();
    assert!(!pids.is_empty());
    let killer = async {
        tokio::time::sleep(Duration::from_millis(1_000)).await;
        for pid in pool.pids() {
            let _ = std::process::Command::new("kill")
                .args(["-9", &pid.to_string()])
                .status();
        }
    };
    let eight = limits(Duration::from_secs(8));
    let (result, ()) = tokio::join!(
        pool.render(page(url, html, None), gate(polite), &eight),
        killer
    );
    assert!(result.is_err(), "the page whose browser died fails");
    let url = web.http_url("after.test", "/");
    let html = "<html><body><script>fetch('/alive');</script></body></html>";
    pool.render(
        page(url, html, None),
        gate(polite),
        &limits(Duration::from_secs(10)),
    )
    .await
    .expect("a new browser renders the next page");
    assert_eq!(web.requests_to("after.test", "/alive").len(), 1);
    assert!(
        pool.pids().iter().all(|p| !pids.contains(p)),
        "new browsers"
    );
}

/// CPU seconds used so far by the processes `pids` and every descendant of theirs.
fn tree_cpu(pids: &[u32]) -> f64 {
    let mut parent = std::collections::HashMap::new();
    let mut ticks = std::collections::HashMap::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(pid) = entry.file_name().to_string_lossy().parse::<u32>() else {
            continue;
        };
        let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else {
            continue;
        };
        let f: Vec<&str> = stat
            .rsplit(')')
            .next()
            .unwrap()
            .split_whitespace()
            .collect();
        parent.insert(pid, f[1].parse::<u32>().unwrap_or(0));
        ticks.insert(
            pid,
            f[11].parse::<f64>().unwrap() + f[12].parse::<f64>().unwrap(),
        );
    }
    let in_tree = |mut pid: u32| {
        for _ in 0..64 {
            if pids.contains(&pid) {
                return true;
            }
            match parent.get(&pid) {
                Some(&p) if p != pid => pid = p,
                _ => return false,
            }
        }
        false
    };
    ticks
        .iter()
        .filter(|(pid, _)| in_tree(**pid))
        .map(|(_, t)| t)
        .sum::<f64>()
        / 100.0
}

fn signal(pids: &[u32], signal: &str) {
    for pid in pids {
        let _ = std::process::Command::new("kill")
            .args([signal, &pid.to_string()])
            .status();
    }
}

fn hung_retirements() -> usize {
    render::retirements()
        .iter()
        .filter(|r| r.reason == render::RetireReason::Hung)
        .count()
}

/// The time budget of a page expected to fail.
const FAILING_BUDGET: Duration = Duration::from_secs(4);

/// Render `html` at `url` with [`FAILING_BUDGET`]: it fails (`why`), within two seconds of
/// its deadline.
async fn fails_at_deadline(
    pool: &BrowserPool,
    polite: &Arc<Polite>,
    url: String,
    html: &str,
    why: &str,
) {
    let started = std::time::Instant::now();
    let result = pool
        .render(page(url, html, None), gate(polite), &limits(FAILING_BUDGET))
        .await;
    assert!(result.is_err(), "{why}");
    assert!(
        started.elapsed() < FAILING_BUDGET + Duration::from_secs(2),
        "failed at its deadline: {:?}",
        started.elapsed()
    );
}

/// The browsers stop answering for longer than a DevTools command used to be waited for
/// (`SIGSTOP` for 12 s, resumed): a page started meanwhile waits, within its budget, and
/// renders; no browser is replaced.
async fn a_slow_browser_is_kept(pool: &BrowserPool, web: &TestWeb, polite: &Arc<Polite>) {
    site(web, "late.test");
    let pids = pool.pids();
    let launched = render::browser::launches();
    let hung = hung_retirements();
    signal(&pids, "-STOP");
    let resume = {
        let pids = pids.clone();
        tokio::spawn(async move {
            tokio::time::sleep(Duration::from_secs(12)).await;
            signal(&pids, "-CONT");
        })
    };
    let url = web.http_url("late.test", "/");
    let html = "<html><body><script>fetch('/late');</script></body></html>";
    let rendered = pool
        .render(
            page(url, html, None),
            gate(polite),
            &limits(Duration::from_secs(25)),
        )
        .await;
    resume.await.unwrap();
    assert!(
        rendered.is_ok(),
        "a late browser is waited for: {rendered:?}"
    );
    assert_eq!(web.requests_to("late.test", "/late").len(), 1);
    // The page's context is disposed of after its result: give it a moment.
    tokio::time::sleep(Duration::from_secs(1)).await;
    assert_eq!(render::browser::launches(), launched, "no browser started");
    assert_eq!(hung_retirements(), hung, "no browser judged hung");
    let mut now = pool.pids();
    now.sort_unstable();
    let mut before = pids;
    before.sort_unstable();
    assert_eq!(now, before, "the same browsers");
}

/// The browsers stop answering for longer than the pool's hung limit: the page started
/// meanwhile fails at its deadline, its browser is judged hung once the limit has passed
/// after it and replaced (killed); the other, resumed, renders the next page.
async fn a_silent_browser_is_replaced(pool: &BrowserPool, web: &TestWeb, polite: &Arc<Polite>) {
    site(web, "silent.test");
    let pids = pool.pids();
    let hung = hung_retirements();
    signal(&pids, "-STOP");
    let url = web.http_url("silent.test", "/");
    let html = "<html><body><script>fetch('/never');</script></body></html>";
    let started = std::time::Instant::now();
    fails_at_deadline(pool, polite, url, html, "a page of a stopped browser fails").await;
    // Judged hung HUNG_AFTER (test pool: 8 s) after the page's end.
    while hung_retirements() == hung && started.elapsed() < Duration::from_secs(20) {
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    assert_eq!(hung_retirements(), hung + 1, "one browser judged hung");
    signal(&pids, "-CONT");
    tokio::time::sleep(Duration::from_secs(1)).await;
    let gone: Vec<&u32> = pids
        .iter()
        .filter(|p| {
            !std::path::Path::new(&format!("/proc/{p}")).exists()
                || std::fs::read_to_string(format!("/proc/{p}/stat")).is_ok_and(|s| {
                    s.rsplit(')')
                        .next()
                        .is_some_and(|r| r.trim_start().starts_with('Z'))
                })
        })
        .collect();
    assert_eq!(
        gone.len(),
        1,
        "the hung browser was killed: {gone:?} of {pids:?}"
    );
    assert_eq!(web.requests_to("silent.test", "/never").len(), 0);
    let url = web.http_url("after.test", "/after-silence");
    let html = "<html><body><script>fetch('/alive-after-silence');</script></body></html>";
    pool.render(
        page(url, html, None),
        gate(polite),
        &limits(Duration::from_secs(10)),
    )
    .await
    .expect("the next page renders");
    assert_eq!(
        web.requests_to("after.test", "/alive-after-silence").len(),
        1
    );
}

/// A page whose script never ends hangs its renderer: the page fails within its budget and
/// is not tried again; its browser still answers, so it is kept, and the spinning renderer
/// goes with the page's context; the next page renders.
async fn a_hanging_page_fails_once(pool: &BrowserPool, web: &TestWeb, polite: &Arc<Polite>) {
    let pids = pool.pids();
    let launched = render::browser::launches();
    let hung = hung_retirements();
    site(web, "hang.test");
    web.site("hang.test")
        .path("/hang.js")
        .respond(js("fetch('/before-hang'); while (true) {}"));
    let url = web.http_url("hang.test", "/");
    let html = "<html><body><script src=\"/hang.js\"></script></body></html>";
    fails_at_deadline(pool, polite, url, html, "a hung page has no DOM to read").await;
    assert_eq!(
        web.requests_to("hang.test", "/hang.js").len(),
        1,
        "not tried again"
    );
    let url = web.http_url("after.test", "/second");
    let html = "<html><body><script>fetch('/alive-again');</script></body></html>";
    pool.render(
        page(url, html, None),
        gate(polite),
        &limits(Duration::from_secs(10)),
    )
    .await
    .expect("the next page renders");
    assert_eq!(web.requests_to("after.test", "/alive-again").len(), 1);
    assert_eq!(render::browser::launches(), launched, "no browser started");
    assert_eq!(hung_retirements(), hung, "its browser answered: kept");
    assert!(
        pids.iter().all(|p| pool.pids().contains(p)),
        "the same browsers"
    );
    let cpu = tree_cpu(&pids);
    tokio::time::sleep(Duration::from_secs(2)).await;
    let used = tree_cpu(&pids) - cpu;
    assert!(
        used < 1.0,
        "no renderer left spinning: {used:.2} s of CPU in 2 s"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_pool_isolates_pages_and_survives_its_browsers() {
    let Some(chromium) = render::find_chromium() else {
        eprintln!("SKIPPED: no Chromium installed (set JITTYBOT_CHROMIUM or install chromium)");
        return;
    };
    let web = TestWeb::start().await;
    let polite = common::polite(HOSTS, PACE);
    let mut config = PoolConfig::new(chromium);
    config.browsers = 2;
    config.hung_after = Duration::from_secs(8);
    let pool = BrowserPool::new(config);
    pages_share_nothing(&pool, &web, &polite).await;
    pages_share_browsers(&pool, &web, &polite).await;
    a_killed_browser_is_replaced(&pool, &web, &polite).await;
    a_hanging_page_fails_once(&pool, &web, &polite).await;
    a_slow_browser_is_kept(&pool, &web, &polite).await;
    a_silent_browser_is_replaced(&pool, &web, &polite).await;
    pool.close().await;
    assert_eq!(pool.running(), 0);
}
