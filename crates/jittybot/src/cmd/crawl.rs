//! `jittybot crawl` and `jittybot crawl-status`: argument parsing and wiring; the crawl is
//! `crates/crawl`.

use std::io::{BufReader, IsTerminal, Write};
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::atomic::Ordering;
use std::time::Duration;

use anyhow::Context;
use crawl::crawler::{CrawlConfig, Crawler, EndReason, FollowLinks, Interactive};
use crawl::event::Event;
use crawl::input::{parse_duration, parse_hosts, parse_origins, read_seeds};
use crawl::normal::NormalUrl;
use crawl::site::Site;
use crawl::store::Store;
use db::DbTarget;
use fetch::ResolvePin;
use url::Url;

use super::NetworkArgs;

/// Why `crawl` will not start: its User-Agent would name no page about it (there is no
/// default: a placeholder on a reserved domain names a page no one can read).
const NO_INFO_URL: &str = "a crawler must say where site owners can read about it: give \
    --info-url URL (the page about this crawler, sent in its User-Agent) or --public-url URL \
    (the service whose /bot page describes it)";

/// Arguments of `jittybot crawl`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Start URLs; the crawl stays within their sites.
    #[arg(value_name = "URL")]
    urls: Vec<String>,
    /// A file of start URLs, one per line.
    #[arg(long, value_name = "FILE")]
    seeds: Option<PathBuf>,
    /// The store: a SQLite file, or a postgres:// URL.
    #[arg(long, default_value = "crawl.sqlite", value_name = "PATH|URL")]
    db: String,
    /// Where WARC files are written.
    #[arg(long, default_value = "crawl-warc", value_name = "DIR")]
    warc_dir: PathBuf,
    /// Minimum time between the starts of two requests to one origin.
    #[arg(long, default_value = "1s", value_parser = parse_duration)]
    pace: Duration,
    /// First back-off after a failure.
    #[arg(long, default_value = "30s", value_parser = parse_duration)]
    backoff_base: Duration,
    /// Longest back-off.
    #[arg(long, default_value = "1h", value_parser = parse_duration)]
    backoff_max: Duration,
    /// Failures in a row that pause an origin until a probe succeeds.
    #[arg(long, default_value_t = 5)]
    pause_after: u32,
    /// Attempts before a URL is given up.
    #[arg(long, default_value_t = 5)]
    max_attempts: u32,
    /// Stop after this many responses.
    #[arg(long)]
    max_pages: Option<u64>,
    /// When a fetched page (not governed by a sitemap lastmod) is due again.
    #[arg(long, default_value = "7d", value_parser = parse_duration)]
    revisit_after: Duration,
    /// Follow links on sites with a usable sitemap too (`always`), or only without (`auto`).
    #[arg(long, default_value = "auto", value_parser = ["auto", "always"])]
    follow_links: String,
    /// Operator origin rules: `HOST-OR-*.DOMAIN ORIGIN-NAME` per line.
    #[arg(long, value_name = "FILE")]
    origins: Option<PathBuf>,
    /// A hosts(5) file (`ADDR NAME...`) pinning names to addresses on every port.
    #[arg(long, value_name = "FILE")]
    hosts: Option<PathBuf>,
    /// The page about this crawler its User-Agent points to (required unless --public-url
    /// is given).
    #[arg(long, value_name = "URL")]
    info_url: Option<Url>,
    /// The public address of the service running this crawler: its `/bot` page is the info
    /// URL when --info-url is not given.
    #[arg(long, value_name = "URL")]
    public_url: Option<Url>,
    /// How long a process holds an origin without renewing (a dead process's origins pass
    /// to the others after it).
    #[arg(long, default_value = "30s", value_parser = parse_duration)]
    origin_lease: Duration,
    /// One JSON event per line on standard output.
    #[arg(long)]
    json: bool,
    /// Interactive mode: render every HTML page in headless Chromium, every request the
    /// page makes held to JittyBot's rules.
    #[arg(long, conflicts_with = "interactive_sites")]
    interactive: bool,
    /// Interactive mode for the sites of the URLs in FILE (one URL per line, as `--seeds`).
    #[arg(long, value_name = "FILE")]
    interactive_sites: Option<PathBuf>,
    /// Operator levers kept in a file, one `crawl-control` command per line (`pace SITE
    /// DURATION|default`, `exclude SITE`, `include SITE`, `refresh-robots SITE`): applied to
    /// the store at the start, and again whenever the file changes.
    #[arg(long, value_name = "FILE")]
    control: Option<PathBuf>,
    /// Serve Prometheus metrics at http://ADDR:PORT/metrics while the crawl runs (requests
    /// by kind and status, bytes, URLs and origins by state, WARC bytes, store commit
    /// latency). Plain HTTP without authentication: bind to loopback or a private network.
    #[arg(long, value_name = "ADDR:PORT")]
    metrics_listen: Option<std::net::SocketAddr>,
    #[command(flatten)]
    network: NetworkArgs,
}

/// Arguments of `jittybot crawl-status`.
#[derive(Debug, clap::Args)]
pub struct StatusArgs {
    /// The store: a SQLite file, or a postgres:// URL.
    #[arg(long, default_value = "crawl.sqlite", value_name = "PATH|URL")]
    db: String,
    /// Machine-readable output.
    #[arg(long)]
    json: bool,
}

fn open_file(path: &PathBuf) -> anyhow::Result<BufReader<std::fs::File>> {
    Ok(BufReader::new(std::fs::File::open(path).with_context(
        || format!("cannot read {}", path.display()),
    )?))
}

fn seeds(args: &Args) -> anyhow::Result<Vec<NormalUrl>> {
    let mut seeds = Vec::new();
    for u in &args.urls {
        seeds.push(NormalUrl::parse(u).with_context(|| format!("bad start URL {u:?}"))?);
    }
    if let Some(path) = &args.seeds {
        seeds.extend(read_seeds(path, open_file(path)?)?);
    }
    Ok(seeds)
}

fn config(args: &Args) -> anyhow::Result<CrawlConfig> {
    let mut c = CrawlConfig::new(&args.warc_dir);
    c.pacer.pace = args.pace;
    c.pacer.backoff_base = args.backoff_base;
    c.pacer.backoff_max = args.backoff_max;
    c.pacer.pause_after = args.pause_after;
    c.max_attempts = args.max_attempts.max(1);
    c.max_pages = args.max_pages;
    c.revisit_after = args.revisit_after;
    c.origin_lease = args.origin_lease;
    c.follow_links = if args.follow_links == "always" {
        FollowLinks::Always
    } else {
        FollowLinks::Auto
    };
    if let Some(path) = &args.origins {
        c.origin_rules = parse_origins(path, open_file(path)?)?;
    }
    c.interactive = interactive(args)?;
    c.control_file = args.control.clone();
    Ok(c)
}

/// `--interactive` / `--interactive-sites`; either needs a Chromium.
fn interactive(args: &Args) -> anyhow::Result<Interactive> {
    let mode = match &args.interactive_sites {
        Some(path) => Interactive::Sites(
            read_seeds(path, open_file(path)?)?
                .iter()
                .map(Site::of)
                .collect(),
        ),
        None if args.interactive => Interactive::All,
        None => Interactive::Off,
    };
    if mode != Interactive::Off && !crawl::crawler::chromium_available() {
        anyhow::bail!(
            "interactive mode needs Chromium: install Debian's chromium or set JITTYBOT_CHROMIUM"
        );
    }
    Ok(mode)
}

/// The page the User-Agent points to: `--info-url`, else `<--public-url>/bot`; neither is
/// refused, as a crawler must say where to read about it.
fn info_url(args: &Args) -> anyhow::Result<Url> {
    if let Some(url) = &args.info_url {
        return Ok(url.clone());
    }
    let Some(public) = &args.public_url else {
        anyhow::bail!(NO_INFO_URL);
    };
    Ok(Url::parse(&service::paths::absolute(public, "/bot"))?)
}

/// Run `jittybot crawl`.
pub fn run(mut args: Args) -> anyhow::Result<ExitCode> {
    if let Some(path) = &args.hosts {
        for pin in parse_hosts(path, open_file(path)?)? {
            args.network.add_pin(ResolvePin {
                host: pin.name,
                port: 0,
                addresses: vec![pin.addr],
            });
        }
    }
    let seeds = seeds(&args)?;
    let config = config(&args)?;
    let target: DbTarget = args.db.parse()?;
    let info_url = info_url(&args)?;
    let mut fetch_config = args.network.fetch_config("JittyBot", info_url.as_str())?;
    // One request in flight per origin: HTTP/1.1 keep-alive serves that at less CPU than
    // HTTP/2 (see `FetchConfig::offer_http2`).
    fetch_config.offer_http2 = false;
    let fetcher = fetch::Fetcher::new(fetch_config)?;
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()?;
    runtime.block_on(async move {
        let store = Store::open(&target)
            .await
            .with_context(|| format!("cannot open the store {target}"))?;
        let mut crawler = Crawler::new(store.clone(), fetcher, config);
        let metrics_server = match args.metrics_listen {
            Some(addr) => {
                let metrics = std::sync::Arc::new(crawl::metrics::CrawlMetrics::new(
                    store.clone(),
                    crawler.counters(),
                ));
                crawler.observe_requests(metrics.clone());
                Some(super::metrics::serve(addr, metrics).await?)
            }
            None => None,
        };
        let stop = crawler.stop_flag();
        tokio::spawn(async move {
            stop_signal().await;
            stop.store(true, Ordering::SeqCst);
        });
        let counters = crawler.counters();
        let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel::<Event>();
        let show = Show::new(args.json);
        let printer = tokio::spawn(async move {
            let mut show = show;
            let mut tick = tokio::time::interval(Duration::from_millis(250));
            loop {
                tokio::select! {
                    e = rx.recv() => match e { Some(e) => show.event(&e), None => break },
                    _ = tick.tick() => show.progress(&counters),
                }
            }
            show.finish();
        });
        let summary = crawler.run(&seeds, tx).await;
        let _ = printer.await;
        if let Some(server) = metrics_server {
            server.abort();
        }
        store.close().await;
        let summary = summary?;
        Ok(match summary.reason {
            EndReason::Finished | EndReason::MaxPages => ExitCode::SUCCESS,
            EndReason::Interrupted => ExitCode::from(130),
        })
    })
}

async fn stop_signal() {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{signal, SignalKind};
        let mut term = match signal(SignalKind::terminate()) {
            Ok(s) => s,
            Err(_) => return std::future::pending().await,
        };
        tokio::select! {
            _ = tokio::signal::ctrl_c() => {}
            _ = term.recv() => {}
        }
    }
    #[cfg(not(unix))]
    {
        let _ = tokio::signal::ctrl_c().await;
    }
}

/// The live display: a spinner with the elapsed time and [`progress_message`].
fn spinner(target: indicatif::ProgressDrawTarget) -> indicatif::ProgressBar {
    let bar = indicatif::ProgressBar::with_draw_target(None, target);
    bar.set_style(
        indicatif::ProgressStyle::with_template("{spinner} {elapsed} {msg}")
            .unwrap_or_else(|_| indicatif::ProgressStyle::default_spinner()),
    );
    bar
}

/// How the crawl is shown: JSON lines, a live display on a terminal, or log lines.
struct Show {
    json: bool,
    bar: Option<indicatif::ProgressBar>,
    started: std::time::Instant,
}

impl Show {
    fn new(json: bool) -> Show {
        let terminal = std::io::stderr().is_terminal();
        // Log lines (tracing) on standard error: the crawl's events at `info` without a
        // terminal, only warnings beside the live display; RUST_LOG overrides.
        let level = if terminal && !json { "warn" } else { "info" };
        let filter = tracing_subscriber::EnvFilter::try_from_default_env()
            .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new(level));
        let _ = tracing_subscriber::fmt()
            .with_env_filter(filter)
            .with_writer(std::io::stderr)
            .with_ansi(terminal)
            .try_init();
        let bar = (!json && terminal).then(|| spinner(indicatif::ProgressDrawTarget::stderr()));
        Show {
            json,
            bar,
            started: std::time::Instant::now(),
        }
    }

    fn event(&mut self, event: &Event) {
        if self.json {
            let mut out = std::io::stdout().lock();
            let _ = writeln!(out, "{}", event.json());
            return;
        }
        let line = match event {
            Event::Fetch { .. } if self.bar.is_some() => return,
            Event::Fetch {
                final_url,
                status,
                bytes,
                directives,
                ..
            } => {
                format!(
                    "fetch {status} {} ({bytes} bytes){}",
                    safe(final_url),
                    if directives.is_empty() {
                        String::new()
                    } else {
                        format!(" [{directives}]")
                    }
                )
            }
            Event::Skip { url, reason } => format!("skip {} ({reason})", safe(url)),
            Event::Error {
                url,
                error,
                attempts,
                given_up,
            } => {
                format!(
                    "error {} attempt {attempts}{}: {}",
                    safe(url),
                    if *given_up { ", given up" } else { "" },
                    safe(error)
                )
            }
            Event::Backoff {
                origin,
                failures,
                until,
            } => format!(
                "back-off {} after {failures} failures until {until}",
                safe(origin)
            ),
            Event::Pause { origin, probe_at } => format!(
                "pause {} until a probe at {probe_at} succeeds",
                safe(origin)
            ),
            Event::Resume { origin } => format!("resume {}", safe(origin)),
            Event::Merge {
                absorbed,
                into,
                evidence,
            } => format!(
                "origin {} joins {} ({evidence})",
                safe(absorbed),
                safe(into)
            ),
            Event::RobotsWaiting { urls } => format!(
                "{urls} URLs stay queued for a later run: their sites' robots.txt is unreachable"
            ),
            Event::Done {
                fetched,
                reason,
                seconds,
            } => format!("done: {fetched} fetched in {seconds} s ({reason})"),
        };
        match &self.bar {
            Some(bar) => bar.println(line),
            None => tracing::info!(target: "crawl", "{line}"),
        }
    }

    fn progress(&mut self, c: &crawl::crawler::LiveCounters) {
        let Some(bar) = &self.bar else { return };
        bar.set_message(progress_message(c, self.started.elapsed()));
        bar.tick();
    }

    fn finish(&mut self) {
        if let Some(bar) = self.bar.take() {
            bar.finish_and_clear();
        }
    }
}

/// The live display's line: pages fetched, the rate, URLs queued (the whole crawl), skips,
/// errors, and origins active (this process), backing off and paused (the whole crawl).
fn progress_message(c: &crawl::crawler::LiveCounters, elapsed: Duration) -> String {
    let n = |a: &std::sync::atomic::AtomicU64| a.load(Ordering::Relaxed);
    let fetched = n(&c.fetched);
    let rate = fetched as f64 / elapsed.as_secs_f64().max(0.001);
    format!(
        "{fetched} fetched, {rate:.0}/s, {} queued, {} skipped, {} errors; origins: {} active, \
         {} backing off, {} paused",
        n(&c.queued),
        n(&c.skipped),
        n(&c.errors),
        n(&c.active_origins),
        n(&c.backing_off),
        n(&c.paused),
    )
}

/// Text from the network with control characters escaped.
fn safe(text: &str) -> String {
    text.chars()
        .flat_map(|c| {
            if c.is_control() {
                c.escape_default().collect::<Vec<_>>()
            } else {
                vec![c]
            }
        })
        .collect()
}

/// Run `jittybot crawl-status`.
pub fn status(args: StatusArgs) -> anyhow::Result<ExitCode> {
    let target: DbTarget = args.db.parse()?;
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    let report = runtime.block_on(async {
        let store = Store::open(&target)
            .await
            .with_context(|| format!("cannot open the store {target}"))?;
        let report = store.status(jiff::Timestamp::now()).await;
        store.close().await;
        anyhow::Ok(report?)
    })?;
    let mut out = std::io::stdout().lock();
    if args.json {
        writeln!(out, "{}", serde_json::to_string_pretty(&report)?)?;
        return Ok(ExitCode::SUCCESS);
    }
    let urls: Vec<String> = report
        .urls
        .iter()
        .map(|(k, v)| format!("{k} {v}"))
        .collect();
    writeln!(out, "URLs: {}", urls.join(", "))?;
    let count = |s: &str| report.origins.iter().filter(|o| o.state == s).count();
    writeln!(
        out,
        "Origins: {} (active {}, backing off {}, paused {})",
        report.origins.len(),
        count("active"),
        count("backing_off"),
        count("paused")
    )?;
    for o in &report.origins {
        writeln!(
            out,
            "  {}  {}  pace {} ms  failures {}  next start {}  hosts: {}",
            safe(&o.name),
            o.state,
            o.pace_ms,
            o.failures,
            o.next_start,
            safe(&o.hosts.join(" "))
        )?;
    }
    writeln!(
        out,
        "Totals: {} requests, {} bytes",
        report.requests, report.bytes
    )?;
    Ok(ExitCode::SUCCESS)
}

#[cfg(test)]
mod tests {
    use std::sync::{Arc, Mutex};

    use super::*;

    /// A terminal that keeps what is drawn on it.
    #[derive(Debug, Default, Clone)]
    struct Screen(Arc<Mutex<String>>);

    impl indicatif::TermLike for Screen {
        fn width(&self) -> u16 {
            200
        }
        fn move_cursor_up(&self, _: usize) -> std::io::Result<()> {
            Ok(())
        }
        fn move_cursor_down(&self, _: usize) -> std::io::Result<()> {
            Ok(())
        }
        fn move_cursor_right(&self, _: usize) -> std::io::Result<()> {
            Ok(())
        }
        fn move_cursor_left(&self, _: usize) -> std::io::Result<()> {
            Ok(())
        }
        fn write_line(&self, s: &str) -> std::io::Result<()> {
            self.write_str(&format!("{s}\n"))
        }
        fn write_str(&self, s: &str) -> std::io::Result<()> {
            self.0.lock().unwrap().push_str(s);
            Ok(())
        }
        fn clear_line(&self) -> std::io::Result<()> {
            Ok(())
        }
        fn flush(&self) -> std::io::Result<()> {
            Ok(())
        }
    }

    #[test]
    fn the_live_display_shows_the_crawl_and_prints_events_above_it() {
        let screen = Screen::default();
        let target = indicatif::ProgressDrawTarget::term_like(Box::new(screen.clone()));
        let mut show = Show {
            json: false,
            bar: Some(spinner(target)),
            started: std::time::Instant::now(),
        };
        let c = crawl::crawler::LiveCounters::default();
        for (counter, value) in [
            (&c.fetched, 7),
            (&c.queued, 30),
            (&c.errors, 2),
            (&c.active_origins, 4),
            (&c.backing_off, 1),
            (&c.paused, 3),
        ] {
            counter.store(value, Ordering::Relaxed);
        }
        show.progress(&c);
        show.event(&Event::Skip {
            url: "https://a.test/\u{1b}[2J".into(),
            reason: crawl::event::SkipReason::Disallowed,
        });
        show.finish();
        let drawn = screen.0.lock().unwrap().clone();
        for part in [
            "7 fetched",
            "30 queued",
            "2 errors",
            "origins: 4 active, 1 backing off, 3 paused",
            "skip https://a.test/\\u{1b}[2J (disallowed)",
        ] {
            assert!(drawn.contains(part), "{part:?} not in {drawn:?}");
        }
        assert!(!drawn.contains('\u{1b}'), "no raw escape: {drawn:?}");
    }
}
