//! The interactive crawl benchmark: a loopback test web of 40 sites (one address each) of 20
//! small script pages (a stylesheet, a script, and a data request from which the script
//! builds the page's links: the served HTML has none), crawled with `--interactive` at a pace
//! of 200 ms. Reports pages rendered per second (counted on the server: a page's data request
//! is made by its running script), the CPU per rendered page, the browsers launched and why
//! any was replaced, the mean time of each step of a render, and whether every link built by
//! script was followed.
//!
//! CPU is counted two ways. Machine-wide (`/proc/stat`: every process on the machine, so
//! other work running meanwhile counts too; run it in a quiet window). And this process's
//! tree by kind of process (the crawler; each browser's main process, renderers, GPU
//! process, network and storage services, zygotes), read from `/proc` every
//! [`SAMPLE_EVERY`] during the run: a renderer ends with its page's context and is reaped by
//! its zygote, and the browsers are gone by the time the crawl returns, so the tree read
//! once at the end (as this benchmark did before) missed most of Chromium's CPU.
//!
//! ```sh
//! cargo run --release -p crawl --example interactive_bench -- [--sites N] [--pages N] [--seconds N]
//! ```
//! `--seconds N` stops the crawl after N seconds (for a slow build: the rate is measured
//! over what was done by then). The test web runs in this process (its CPU, small beside the
//! browsers', is counted too).

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
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

/// How often the browsers' processes are read from `/proc` during the run. A process that
/// ends between two readings loses its last interval; for renderers (reaped by their zygote)
/// that tail is recovered from the zygote's count of its reaped children.
const SAMPLE_EVERY: Duration = Duration::from_millis(200);
/// Clock ticks per second of `/proc/stat` and `/proc/PID/stat` (`USER_HZ`, 100 on Linux).
const TICKS_PER_SECOND: f64 = 100.0;

/// What a process is, from its command line (`--type=...` of Chromium's helpers).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
enum Kind {
    /// This process: the crawler, the test web, the DevTools client, the sampler.
    Crawler,
    /// A browser's main process.
    Browser,
    /// A page's renderer (one per browser context at least).
    Renderer,
    /// A renderer of the browser's own UI (`--top-chrome-webui`).
    UiRenderer,
    /// The GPU process (software compositing here).
    Gpu,
    /// The network service (a utility process).
    Network,
    /// The storage service (a utility process).
    Storage,
    /// Another utility process.
    Utility,
    /// A zygote (forks the renderers, reaps them).
    Zygote,
    /// Renderers after their last reading, up to their end (estimated from their zygote).
    RendererTail,
    /// Anything else under this process.
    Other,
}

impl Kind {
    fn of(cmdline: &str) -> Kind {
        // A zygote's child rewrites its command line as one string, arguments joined by
        // spaces.
        let arg = |name: &str| {
            cmdline
                .split(['\0', ' '])
                .find_map(|a| a.strip_prefix(name))
                .unwrap_or("")
        };
        match arg("--type=") {
            "" if cmdline.contains("chrom") => Kind::Browser,
            "" => Kind::Other,
            "renderer" if cmdline.contains("--top-chrome-webui") => Kind::UiRenderer,
            "renderer" => Kind::Renderer,
            "gpu-process" => Kind::Gpu,
            "zygote" => Kind::Zygote,
            "utility" if arg("--utility-sub-type=").starts_with("network") => Kind::Network,
            "utility" if arg("--utility-sub-type=").starts_with("storage") => Kind::Storage,
            "utility" => Kind::Utility,
            _ => Kind::Other,
        }
    }

    fn label(self) -> &'static str {
        match self {
            Kind::Crawler => "crawler process",
            Kind::Browser => "browser",
            Kind::Renderer => "renderer",
            Kind::UiRenderer => "renderer of the browser's UI (WebUI)",
            Kind::Gpu => "gpu-process",
            Kind::Network => "utility: network",
            Kind::Storage => "utility: storage",
            Kind::Utility => "utility: other",
            Kind::Zygote => "zygote",
            Kind::RendererTail => "renderers' last interval (estimated)",
            Kind::Other => "other",
        }
    }
}

/// One process of the tree as last read.
struct Proc {
    kind: Kind,
    ppid: u32,
    /// utime + stime, ticks, at its first and last reading.
    own: (u64, u64),
    /// cutime + cstime (its reaped children), ticks, at its first and last reading.
    reaped: (u64, u64),
    /// The reading that saw it last.
    last_seen: u64,
    /// Present at the run's start: only its growth counts.
    old: bool,
}

/// `/proc/PID/stat`: parent, own ticks, reaped children's ticks.
fn read_stat(pid: u32) -> Option<(u32, u64, u64)> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let f: Vec<&str> = stat.rsplit(')').next()?.split_whitespace().collect();
    let n = |i: usize| f.get(i).and_then(|v| v.parse::<u64>().ok()).unwrap_or(0);
    Some((n(1) as u32, n(11) + n(12), n(13) + n(14)))
}

/// Machine-wide busy and total ticks (`/proc/stat`: user+nice+system+irq+softirq, and
/// those with idle and iowait).
fn machine_ticks() -> (u64, u64) {
    let stat = std::fs::read_to_string("/proc/stat").unwrap_or_default();
    let f: Vec<u64> = stat
        .lines()
        .next()
        .unwrap_or("")
        .split_whitespace()
        .skip(1)
        .filter_map(|v| v.parse().ok())
        .collect();
    let n = |i: usize| f.get(i).copied().unwrap_or(0);
    let busy = n(0) + n(1) + n(2) + n(5) + n(6);
    (busy, busy + n(3) + n(4))
}

/// Every process under this one, read every [`SAMPLE_EVERY`] during the run.
#[derive(Default)]
struct Tree {
    procs: HashMap<u32, Proc>,
    readings: u64,
}

impl Tree {
    fn read(&mut self) {
        let me = std::process::id();
        let mut parent: HashMap<u32, (u32, u64, u64)> = HashMap::new();
        for entry in std::fs::read_dir("/proc").into_iter().flatten().flatten() {
            let Some(pid) = entry.file_name().to_str().and_then(|p| p.parse().ok()) else {
                continue;
            };
            if let Some(stat) = read_stat(pid) {
                parent.insert(pid, stat);
            }
        }
        let under_me = |mut pid: u32| {
            for _ in 0..64 {
                if pid == me {
                    return true;
                }
                match parent.get(&pid) {
                    Some(&(p, _, _)) if p != pid => pid = p,
                    _ => return false,
                }
            }
            false
        };
        let first = self.readings == 0;
        self.readings += 1;
        for (&pid, &(ppid, own, reaped)) in &parent {
            if !under_me(pid) {
                continue;
            }
            let readings = self.readings;
            let kind_now = || {
                let cmd = std::fs::read_to_string(format!("/proc/{pid}/cmdline"));
                Kind::of(&cmd.unwrap_or_default())
            };
            // A zygote's child shows the zygote's command line until it has set its own.
            let forked = self.procs.get(&pid).is_some_and(|p| p.kind == Kind::Zygote)
                && self
                    .procs
                    .get(&ppid)
                    .is_some_and(|p| p.kind == Kind::Zygote);
            if forked {
                if let Some(p) = self.procs.get_mut(&pid) {
                    p.kind = kind_now();
                }
            }
            let p = self.procs.entry(pid).or_insert_with(|| Proc {
                kind: if pid == me { Kind::Crawler } else { kind_now() },
                ppid,
                own: (own, own),
                reaped: (reaped, reaped),
                last_seen: readings,
                old: first,
            });
            p.own.1 = own;
            p.reaped.1 = reaped;
            p.last_seen = readings;
        }
    }

    /// CPU seconds by kind over the run. A zygote's reaped children count beyond what was
    /// read of its children that ended is the renderers' last intervals.
    fn by_kind(&self) -> Vec<(Kind, f64)> {
        let mut ticks: HashMap<Kind, u64> = HashMap::new();
        for p in self.procs.values() {
            let start = if p.old { p.own.0 } else { 0 };
            *ticks.entry(p.kind).or_default() += p.own.1 - start;
        }
        for (&pid, z) in self.procs.iter().filter(|(_, p)| p.kind == Kind::Zygote) {
            let ended: u64 = self
                .procs
                .values()
                .filter(|c| c.ppid == pid && c.last_seen < z.last_seen)
                .map(|c| c.own.1)
                .sum();
            let reaped = z.reaped.1 - z.reaped.0;
            *ticks.entry(Kind::RendererTail).or_default() += reaped.saturating_sub(ended);
        }
        let mut out: Vec<(Kind, f64)> = ticks
            .into_iter()
            .map(|(k, t)| (k, t as f64 / TICKS_PER_SECOND))
            .collect();
        out.sort_by_key(|(k, _)| *k);
        out
    }

    fn count(&self, kind: Kind) -> usize {
        self.procs.values().filter(|p| p.kind == kind).count()
    }
}

/// Reads the tree every [`SAMPLE_EVERY`] until stopped; returns it.
fn sample_tree(stop: Arc<AtomicBool>) -> std::thread::JoinHandle<Tree> {
    std::thread::spawn(move || {
        let mut tree = Tree::default();
        while !stop.load(Ordering::Relaxed) {
            tree.read();
            std::thread::sleep(SAMPLE_EVERY);
        }
        tree.read();
        tree
    })
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
    let stop_sampling = Arc::new(AtomicBool::new(false));
    let sampler = sample_tree(Arc::clone(&stop_sampling));
    let machine0 = machine_ticks();
    let t0 = Instant::now();
    let summary = crawler.run(&seeds, tx).await.unwrap();
    let wall = t0.elapsed().as_secs_f64();
    let machine1 = machine_ticks();
    stop_sampling.store(true, Ordering::Relaxed);
    let tree = sampler.join().unwrap();
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
    print_cpu(&tree, machine0, machine1, rendered);
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

/// CPU per rendered page: machine-wide (every process, the run's whole machine), and this
/// process's tree by kind of process.
fn print_cpu(tree: &Tree, machine0: (u64, u64), machine1: (u64, u64), rendered: usize) {
    let per_page = |seconds: f64| seconds * 1000.0 / rendered.max(1) as f64;
    let busy = (machine1.0 - machine0.0) as f64 / TICKS_PER_SECOND;
    let total = (machine1.1 - machine0.1).max(1) as f64 / TICKS_PER_SECOND;
    println!(
        "cpu per render   {:.0} ms machine-wide (/proc/stat user+nice+system+irq+softirq; machine {:.0}% busy)",
        per_page(busy),
        100.0 * busy / total
    );
    let kinds = tree.by_kind();
    let sum: f64 = kinds.iter().map(|(_, s)| s).sum();
    println!(
        "                 {:.0} ms this process's tree (read every {SAMPLE_EVERY:?}), of which:",
        per_page(sum)
    );
    for (kind, seconds) in kinds {
        let processes = match kind {
            Kind::Crawler | Kind::RendererTail => String::new(),
            _ => format!("  ({} processes)", tree.count(kind)),
        };
        println!(
            "    {:<38} {:>5.0} ms{processes}",
            kind.label(),
            per_page(seconds)
        );
    }
}
