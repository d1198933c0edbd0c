//! The interactive crawl benchmark: a loopback test web of 40 sites (one address each) of 20
//! small script pages (a stylesheet, a script, and a data request from which the script
//! builds the page's links: the served HTML has none), crawled with `--interactive` at a pace
//! of 200 ms. Reports pages rendered per second (counted on the server: a page's data request
//! is made by its running script), the CPU per rendered page of the crawler and every browser
//! process it started, the browsers launched and why any was replaced, the mean time of each
//! step of a render, and whether every link built by script was followed.
//!
//! ```sh
//! cargo run --release -p crawl --example interactive_bench -- [--sites N] [--pages N] [--seconds N]
//! ```
//! `--seconds N` stops the crawl after N seconds (for a slow build: the rate is measured
//! over what was done by then). The test web runs in this process (its CPU, small beside the
//! browsers', is counted too).

use std::collections::HashMap;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use crawl::crawler::{CrawlConfig, Crawler, FollowLinks, Interactive};
use crawl::normal::NormalUrl;
use crawl::store::Store;
use db::DbTarget;
use fetch::{FetchConfig, Fetcher, ResolvePin};
use testweb::{script_links, script_pages, MultiWeb, ScriptPages};

#[global_allocator]
static ALLOCATOR: tikv_jemallocator::Jemalloc = tikv_jemallocator::Jemalloc;

const PACE: Duration = Duration::from_millis(200);

fn host(i: usize) -> String {
    format!("s{i}.web.test")
}

/// `/proc/PID/stat` fields after the command name.
fn stat_fields(pid: &str) -> Option<Vec<String>> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let after = stat.rsplit(')').next()?;
    Some(after.split_whitespace().map(str::to_string).collect())
}

/// CPU seconds of this process, the children it reaped, and every live descendant (the
/// browsers and their helpers, with what they reaped).
fn tree_cpu() -> f64 {
    let me = std::process::id().to_string();
    let mut parent: HashMap<String, String> = HashMap::new();
    let mut ticks: HashMap<String, f64> = HashMap::new();
    for entry in std::fs::read_dir("/proc").into_iter().flatten().flatten() {
        let pid = entry.file_name().to_string_lossy().to_string();
        if !pid.bytes().all(|b| b.is_ascii_digit()) {
            continue;
        }
        let Some(f) = stat_fields(&pid) else { continue };
        let n = |i: usize| f.get(i).and_then(|v| v.parse::<f64>().ok()).unwrap_or(0.0);
        parent.insert(pid.clone(), f.get(1).cloned().unwrap_or_default());
        ticks.insert(pid, n(11) + n(12) + n(13) + n(14));
    }
    let descends = |start: &str| {
        let mut pid = start.to_string();
        for _ in 0..64 {
            if pid == me {
                return true;
            }
            match parent.get(&pid) {
                Some(p) => pid = p.clone(),
                None => return false,
            }
        }
        false
    };
    ticks
        .iter()
        .filter(|(pid, _)| descends(pid.as_str()))
        .map(|(_, t)| t)
        .sum::<f64>()
        / 100.0
}

/// CPU seconds of this process alone (the crawler, the test web, the DevTools client).
fn own_cpu() -> f64 {
    let f = stat_fields(&std::process::id().to_string()).unwrap_or_default();
    let n = |i: usize| f.get(i).and_then(|v| v.parse::<f64>().ok()).unwrap_or(0.0);
    (n(11) + n(12)) / 100.0
}

#[tokio::main]
async fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let flag = |name: &str| {
        args.iter()
            .position(|a| a == name)
            .and_then(|i| args.get(i + 1))
            .and_then(|v| v.parse::<u64>().ok())
    };
    let sites = flag("--sites").unwrap_or(40) as usize;
    let pages = flag("--pages").unwrap_or(20) as u32;
    let seconds = flag("--seconds");
    if !crawl::crawler::chromium_available() {
        eprintln!("no Chromium installed (set JITTYBOT_CHROMIUM or install chromium)");
        std::process::exit(1);
    }
    let web = MultiWeb::start(sites).await;
    web.generate(script_pages(ScriptPages {
        host_suffix: ".web.test".into(),
        pages,
    }));
    let names: Vec<String> = (0..sites).map(host).collect();
    web.prepare_certificates(&names.iter().map(String::as_str).collect::<Vec<_>>());
    let mut config = FetchConfig::new("JittyBot", "https://jittybot.test/bot");
    config.allow_private_addresses = true;
    config.offer_http2 = false;
    config.extra_root_certificates_pem = vec![web.certificate_pem().as_bytes().to_vec()];
    config.resolve = (0..sites)
        .map(|i| ResolvePin {
            host: host(i),
            port: 0,
            addresses: vec![std::net::IpAddr::V4(web.addresses()[i])],
        })
        .collect();
    let fetcher = Fetcher::new(config).unwrap();
    let work = tempfile::tempdir().unwrap();
    let store = Store::open(&DbTarget::Sqlite(work.path().join("crawl.sqlite")))
        .await
        .unwrap();
    let seeds: Vec<NormalUrl> = (0..sites)
        .map(|i| NormalUrl::parse(&web.https_url(&host(i), "/p0.html")).unwrap())
        .collect();
    let mut c = CrawlConfig::new(work.path().join("warc"));
    c.pacer.pace = PACE;
    c.follow_links = FollowLinks::Always;
    c.interactive = Interactive::All;
    let crawler = Crawler::new(store.clone(), fetcher, c);
    if let Some(s) = seconds {
        let stop = crawler.stop_flag();
        tokio::spawn(async move {
            tokio::time::sleep(Duration::from_secs(s)).await;
            stop.store(true, Ordering::SeqCst);
        });
    }
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
    tokio::spawn(async move { while rx.recv().await.is_some() {} });
    let cpu0 = tree_cpu();
    let own0 = own_cpu();
    let t0 = Instant::now();
    let summary = crawler.run(&seeds, tx).await.unwrap();
    let wall = t0.elapsed().as_secs_f64();
    // Browsers still closing are counted once they are gone.
    tokio::time::sleep(Duration::from_millis(500)).await;
    let cpu = tree_cpu() - cpu0;
    let own = own_cpu() - own0;
    store.close().await;

    let log = web.requests();
    let rendered = log.iter().filter(|r| r.path.starts_with("/data/")).count();
    let mut missing = 0;
    let mut twice = 0;
    for i in 0..sites {
        let h = host(i);
        for n in 0..pages {
            let built = script_links(n, pages);
            // A link is followed when its page was rendered: only then is it known.
            if log
                .iter()
                .any(|r| r.host == h && r.path == format!("/data/{n}.json"))
            {
                for t in built {
                    let seen = log
                        .iter()
                        .filter(|r| r.host == h && r.path == format!("/p{t}.html"))
                        .count();
                    missing += usize::from(seen == 0);
                    twice += usize::from(seen > 1);
                }
            }
        }
    }
    let launches = render::browser::launches();
    println!("web              {sites} sites x {pages} script pages, pace {PACE:?}");
    println!("responses        {}", summary.fetched);
    println!("requests         {}", log.len());
    println!(
        "rendered         {rendered} of {} pages",
        sites * pages as usize
    );
    println!("wall             {wall:.1} s ({:?})", summary.reason);
    println!("rendered/s       {:.2}", rendered as f64 / wall);
    println!(
        "cpu per render   {:.0} ms (crawler and its browsers, both cores)",
        cpu * 1000.0 / rendered.max(1) as f64
    );
    println!(
        "  of which crawler {:.0} ms (this process: crawler, test web, DevTools client)",
        own * 1000.0 / rendered.max(1) as f64
    );
    println!("browsers started {launches}");
    let retired = render::retirements();
    let mut reasons: Vec<(&str, usize)> = Vec::new();
    for r in &retired {
        match reasons.iter_mut().find(|(l, _)| *l == r.reason.label()) {
            Some((_, n)) => *n += 1,
            None => reasons.push((r.reason.label(), 1)),
        }
    }
    let reasons: Vec<String> = reasons.iter().map(|(l, n)| format!("{n} {l}")).collect();
    println!(
        "browsers replaced {} ({})",
        retired.len(),
        if reasons.is_empty() {
            "none".to_string()
        } else {
            reasons.join(", ")
        }
    );
    println!("time per page (mean over the pages that reached each step):");
    for phase in render::timing::PHASES {
        let (n, total) = render::timing::total(phase);
        if n > 0 {
            println!(
                "  {:<22} {:>7.0} ms  x{n}",
                phase.label(),
                total.as_secs_f64() * 1000.0 / n as f64
            );
        }
    }
    println!(
        "links by script  {missing} not followed, {twice} requested twice (of rendered pages)"
    );
}
