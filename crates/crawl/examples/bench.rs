//! The crawler benchmark: a loopback test web of 1,000 hosts behind 50 origins
//! (50 addresses, 20 hosts each; pages of 20–60 KB with links; the pace set to 0), crawled
//! with the SQLite (or PostgreSQL) store and WARC output. Reports pages per second, CPU time
//! per page (the crawler's process only: the test web runs in a child process), peak memory,
//! and where the time goes.
//!
//! ```sh
//! cargo run --release -p crawl --example bench -- [PAGES] [--queue N] [--db postgres://...]
//! ```
//! `PAGES` (default 20,000) responses are fetched; `--queue N` first fills the frontier with
//! N URLs (1,000,000 for the memory target) so memory is measured with them queued.
//! `--http` serves plain HTTP only (every host refuses TLS handshakes): the crawler tries
//! HTTPS once per host, marks it "no HTTPS" and goes on over HTTP, as the `spider`
//! comparison (plain HTTP against nginx) did. HTTPS is the default.
//!
//! `--shape sitemaps` crawls another web: 200 sites behind 20 addresses (10 sites per
//! origin), each with a robots.txt naming its `sitemap.xml` of 50 pages (20–60 KB, links not
//! followed: the sitemaps list everything), 10,000 pages in all. `--shape links` (the
//! default) is the web above.

use std::io::{BufRead, BufReader, Write};
use std::process::{Command, Stdio};
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use crawl::crawler::{CrawlConfig, Crawler};
use crawl::normal::NormalUrl;
use crawl::origins::OriginName;
use crawl::store::{Store, UrlKind, PRIORITY_LINKED};
use db::DbTarget;
use fetch::{FetchConfig, Fetcher, ResolvePin};
use testweb::{linked_pages, LinkedPages, MultiWeb, Reply};

/// The allocator the `jittybot` binary uses (see its `main.rs`): measured as users run it.
#[global_allocator]
static ALLOCATOR: tikv_jemallocator::Jemalloc = tikv_jemallocator::Jemalloc;

/// The web crawled.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Shape {
    /// 1,000 hosts of one site behind 50 addresses, pages found by their links.
    Links,
    /// 200 sites behind 20 addresses, each with robots.txt and a sitemap of 50 pages.
    Sitemaps,
}

impl Shape {
    fn origins(self) -> usize {
        match self {
            Shape::Links => 50,
            Shape::Sitemaps => 20,
        }
    }

    fn hosts_per_origin(self) -> usize {
        match self {
            Shape::Links => 20,
            Shape::Sitemaps => 10,
        }
    }

    fn pages_per_host(self) -> u32 {
        match self {
            Shape::Links => 1_000,
            Shape::Sitemaps => 50,
        }
    }

    fn hosts(self) -> usize {
        self.origins() * self.hosts_per_origin()
    }

    /// Host `i`: hosts of one site in the link shape, one site each in the sitemap shape.
    fn host(self, i: usize) -> String {
        match self {
            Shape::Links => format!("h{i}.bench.test"),
            Shape::Sitemaps => format!("s{i}-bench.test"),
        }
    }

    fn name(self) -> &'static str {
        match self {
            Shape::Links => "links",
            Shape::Sitemaps => "sitemaps",
        }
    }
}

/// The sitemap shape's answers: robots.txt naming `/sitemap.xml`, the sitemap listing the
/// host's pages, and the pages of [`linked_pages`].
fn sitemapped(
    shape: Shape,
    scheme: &'static str,
    port: u16,
) -> impl Fn(&str, &str) -> Option<Reply> + Send + Sync + 'static {
    let pages = linked_pages(LinkedPages {
        host_suffix: "-bench.test".into(),
        pages: shape.pages_per_host(),
        page_bytes: 20_000,
        size_spread: 40_000,
        links_per_page: 30,
    });
    move |host, path| {
        if !host.ends_with("-bench.test") {
            return None;
        }
        match path {
            "/robots.txt" => Some(Reply::robots_txt(&format!(
                "User-agent: *\nAllow: /\nSitemap: {scheme}://{host}:{port}/sitemap.xml\n"
            ))),
            "/sitemap.xml" => {
                let urls: String = (0..shape.pages_per_host())
                    .map(|p| format!("<url><loc>{scheme}://{host}:{port}/p{p}.html</loc></url>"))
                    .collect();
                Some(
                    Reply::ok()
                        .header("Content-Type", "application/xml")
                        .body(format!("<urlset xmlns=\"http://www.sitemaps.org/schemas/sitemap/0.9\">{urls}</urlset>")),
                )
            }
            _ => pages(host, path),
        }
    }
}

/// The child: serve the test web, print the port and CA, run until stdin closes.
async fn serve(plain_http: bool, shape: Shape) {
    let web = MultiWeb::start(shape.origins()).await;
    // The sitemap shape's log tells the longest silence of an address (10,000 entries).
    web.set_logging(shape == Shape::Sitemaps);
    match shape {
        Shape::Links => web.generate(linked_pages(LinkedPages {
            host_suffix: ".bench.test".into(),
            pages: shape.pages_per_host(),
            page_bytes: 20_000,
            size_spread: 40_000,
            links_per_page: 30,
        })),
        Shape::Sitemaps => web.generate(sitemapped(
            shape,
            if plain_http { "http" } else { "https" },
            web.port(),
        )),
    }
    let names: Vec<String> = (0..shape.hosts()).map(|i| shape.host(i)).collect();
    if plain_http {
        for name in &names {
            // The sitemap shape: nothing listens for HTTPS (connections reset, which a client
            // may take for a transient failure); the link shape: TLS handshakes refused.
            match shape {
                Shape::Links => web.without_https(name),
                Shape::Sitemaps => web.reset_https(name),
            }
        }
    } else {
        web.prepare_certificates(&names.iter().map(String::as_str).collect::<Vec<_>>());
    }
    let dir = std::env::temp_dir().join(format!("jittybot-bench-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let ca = dir.join("ca.pem");
    std::fs::write(&ca, web.certificate_pem()).unwrap();
    println!("{} {}", web.port(), ca.display());
    std::io::stdout().flush().unwrap();
    let _ = tokio::task::spawn_blocking(|| {
        let mut s = String::new();
        let _ = std::io::stdin().read_line(&mut s);
    })
    .await;
    if shape == Shape::Sitemaps {
        // Between an address's first and last request its work was due (the pace is 0).
        let mut by_address: std::collections::HashMap<_, Vec<tokio::time::Instant>> =
            std::collections::HashMap::new();
        for r in web.requests() {
            by_address
                .entry(r.local.map(|a| a.ip()))
                .or_default()
                .push(r.at);
        }
        let longest = by_address
            .values_mut()
            .filter_map(|times| {
                times.sort();
                times.windows(2).map(|w| w[1] - w[0]).max()
            })
            .max()
            .unwrap_or_default();
        eprintln!(
            "longest silence  {:.0} ms (of any address, between its first and last request)",
            longest.as_secs_f64() * 1000.0
        );
    }
}

/// User and system CPU seconds of this process (utime, stime from /proc, Linux): the system
/// share is the kernel's TCP and file work done on the crawler's behalf.
fn cpu_split() -> (f64, f64) {
    let stat = std::fs::read_to_string("/proc/self/stat").unwrap_or_default();
    let after = stat.rsplit(')').next().unwrap_or_default();
    let fields: Vec<&str> = after.split_whitespace().collect();
    let ticks = |i: usize| {
        fields
            .get(i)
            .and_then(|f| f.parse::<f64>().ok())
            .unwrap_or(0.0)
    };
    (ticks(11) / 100.0, ticks(12) / 100.0)
}

fn peak_rss_mb() -> f64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<f64>().ok())
        .map_or(0.0, |kb| kb / 1024.0)
}

#[tokio::main]
async fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let plain_http = args.iter().any(|a| a == "--http");
    let flag = |name: &str| {
        args.iter()
            .position(|a| a == name)
            .and_then(|i| args.get(i + 1))
            .cloned()
    };
    let shape = match flag("--shape").as_deref() {
        None | Some("links") => Shape::Links,
        Some("sitemaps") => Shape::Sitemaps,
        Some(other) => panic!("--shape links|sitemaps, not {other}"),
    };
    if args.first().map(String::as_str) == Some("serve") {
        serve(plain_http, shape).await;
        return;
    }
    let pages: u64 = args.iter().find_map(|a| a.parse().ok()).unwrap_or(20_000);
    let queue: u64 = flag("--queue").and_then(|q| q.parse().ok()).unwrap_or(0);
    let work = tempfile::tempdir().unwrap();
    let target: DbTarget = match flag("--db") {
        Some(url) => url.parse().unwrap(),
        None => DbTarget::Sqlite(work.path().join("bench.sqlite")),
    };

    let mut child = Command::new(std::env::current_exe().unwrap())
        .arg("serve")
        .args(plain_http.then_some("--http"))
        .args(["--shape", shape.name()])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut line = String::new();
    BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    let mut parts = line.split_whitespace();
    let port: u16 = parts.next().unwrap().parse().unwrap();
    let ca = std::fs::read(parts.next().unwrap()).unwrap();

    let mut config = FetchConfig::new("JittyBot", "https://jittybot.test/bot");
    config.allow_private_addresses = true;
    // As `jittybot crawl` runs (HTTP/1.1 only; see `FetchConfig::offer_http2`).
    config.offer_http2 = false;
    config.extra_root_certificates_pem = vec![ca];
    config.resolve = (0..shape.hosts())
        .map(|i| ResolvePin {
            host: shape.host(i),
            port: 0,
            addresses: vec![std::net::IpAddr::V4(std::net::Ipv4Addr::new(
                127,
                0,
                0,
                (i / shape.hosts_per_origin() + 2) as u8,
            ))],
        })
        .collect();
    let fetcher = Fetcher::new(config).unwrap();
    let store = Store::open(&target).await.unwrap();
    let seeds: Vec<NormalUrl> = (0..shape.hosts())
        .map(|i| {
            let scheme = if plain_http { "http" } else { "https" };
            NormalUrl::parse(&format!("{scheme}://{}:{port}/p0.html", shape.host(i))).unwrap()
        })
        .collect();
    if queue > 0 {
        fill(&store, &seeds, port, queue, shape).await;
    }
    let mut c = CrawlConfig::new(work.path().join("warc"));
    c.pacer.pace = Duration::ZERO;
    c.max_pages = Some(pages);
    if shape == Shape::Links {
        c.follow_links = crawl::crawler::FollowLinks::Always;
    }
    let crawler = Crawler::new(store.clone(), fetcher, c);
    let counters = crawler.counters();
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
    tokio::spawn(async move { while rx.recv().await.is_some() {} });
    let split0 = cpu_split();
    let t0 = Instant::now();
    let summary = crawler.run(&seeds, tx).await.unwrap();
    let wall = t0.elapsed().as_secs_f64();
    let split1 = cpu_split();
    let (user, system) = (split1.0 - split0.0, split1.1 - split0.1);
    let cpu = user + system;
    let fetched = summary.fetched as f64;
    let warc_bytes: u64 = std::fs::read_dir(work.path().join("warc"))
        .unwrap()
        .map(|e| e.unwrap().metadata().unwrap().len())
        .sum();
    println!(
        "backend          {}",
        if matches!(target, DbTarget::Postgres(_)) {
            "postgres"
        } else {
            "sqlite"
        }
    );
    println!(
        "scheme           {}",
        if plain_http { "http" } else { "https" }
    );
    println!("pages            {}", summary.fetched);
    println!("wall             {wall:.2} s");
    println!("pages/s          {:.0}", fetched / wall);
    println!(
        "cpu per page     {:.3} ms (crawler process, both cores)",
        cpu * 1000.0 / fetched
    );
    println!(
        "  of which       user {:.3} ms, system {:.3} ms",
        user * 1000.0 / fetched,
        system * 1000.0 / fetched
    );
    println!("peak memory      {:.0} MB", peak_rss_mb());
    println!("queued before    {queue}");
    println!("warc             {:.1} MB", warc_bytes as f64 / 1e6);
    let t = &counters.time;
    let ms = |a: &std::sync::atomic::AtomicU64| a.load(Ordering::Relaxed) as f64 / 1e6 / fetched;
    println!(
        "time per page    fetch {:.3} ms (wall, includes waiting), parse {:.3} ms, links {:.3} ms, warc encode {:.3} ms, warc write {:.3} ms, store {:.3} ms",
        ms(&t.fetch),
        ms(&t.parse),
        ms(&t.links),
        ms(&t.warc_encode),
        ms(&t.warc_write),
        ms(&t.store)
    );
    store.close().await;
    drop(child.stdin.take());
    let _ = child.wait();
}

/// Rows per multi-row `INSERT` of the fill (4 bound values each: well inside both
/// backends' parameter limits).
const FILL_ROWS_PER_INSERT: usize = 2_000;

/// Queue `n` URLs of the bench hosts (pages beyond the first ones, claimed after the
/// crawl's own links), as a bulk load: multi-row `INSERT`s in one transaction (going
/// through the crawler's upsert host by host took more than 10 minutes for 1,000,000).
async fn fill(store: &Store, seeds: &[NormalUrl], port: u16, n: u64, shape: Shape) {
    let started = Instant::now();
    let hosts = seeds.len() as u64;
    let per_host = n.div_ceil(hosts);
    let mut placed = Vec::with_capacity(seeds.len());
    for (i, seed) in seeds.iter().enumerate() {
        let site = crawl::site::Site::of(seed);
        let site_id = store.ensure_site(site.as_str(), true).await.unwrap();
        let per_origin = shape.hosts_per_origin();
        let origin = OriginName(shape.host(i / per_origin * per_origin));
        let info = store
            .ensure_host(seed.host(), &origin, site_id)
            .await
            .unwrap();
        placed.push((seed.host().to_string(), info));
    }
    // Rows are made chunk by chunk, not all at once: a vector of 1,000,000 rows held ~80 MB
    // of the bench's own, which the peak memory figure counted as the crawler's.
    let rows = placed.iter().flat_map(|(name, info)| {
        (0..per_host).map(move |p| {
            (
                format!("//{name}:{port}/q{p}.html"),
                info.host_id,
                info.origin_id,
                info.site_id,
            )
        })
    });
    let total = per_host * hosts;
    let now = db::millis(jiff::Timestamp::now());
    let head = "INSERT INTO crawl_urls (key, host_id, origin_id, site_id, kind, state, priority, in_sitemap, discovered_at) ";
    let (kind, priority) = (
        UrlKind::Page.code().to_string(),
        (PRIORITY_LINKED + 1).to_string(),
    );
    let now = now.to_string();
    let result: Result<(), db::DbError> = async {
        db::write_tx!(store.db(), tx => {
            let mut rows = rows.peekable();
            while rows.peek().is_some() {
                let chunk: Vec<_> = rows.by_ref().take(FILL_ROWS_PER_INSERT).collect();
                let mut q = sqlx::QueryBuilder::new(head);
                q.push_values(&chunk, |mut b, (key, host_id, origin_id, site_id)| {
                    b.push_bind(key.as_str())
                        .push_bind(*host_id)
                        .push_bind(*origin_id)
                        .push_bind(*site_id)
                        .push(&kind)
                        .push("0")
                        .push(&priority)
                        .push("0")
                        .push(&now);
                });
                q.push(" ON CONFLICT (key) DO NOTHING");
                q.build()
                    .execute(&mut *tx)
                    .await
                    .map_err(db::DbError::query("fill the frontier"))?;
            }
        });
        Ok(())
    }
    .await;
    result.unwrap();
    println!(
        "filled           {} URLs in {:.1} s",
        total,
        started.elapsed().as_secs_f64()
    );
}
