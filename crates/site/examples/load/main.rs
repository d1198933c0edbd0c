//! The service's benchmark: a store of
//! 1,000,000 synthetic reports, the JSON API and the pages read at a fixed rate, then the
//! retention pass (`jittybot maintain`) timed on it.
//!
//! ```sh
//! cargo run -p site --release --example load -- --db /tmp/bench.sqlite
//! cargo run -p site --release --example load -- --db postgres://postgres@127.0.0.1/bench
//! # options: --reports 1000000 --domains 100000 --months 24 --rate 500 --seconds 10
//! #          --generate-only, --reuse (measure an existing store), --no-pages, --no-maintain
//! ```
//!
//! The store must be empty (it is filled by `generate.rs`) unless `--reuse` is given. The
//! server (the API merged with the site's pages, as `jittybot serve` does)
//! runs on a 2-thread runtime; the load generator (`rate.rs`, fixed rate, latency from each
//! request's scheduled start) on a runtime of its own. Each endpoint gets one request per
//! sampled address first (a running server is warm), then `rate × seconds` requests.

mod generate;
mod rate;

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Instant;

use db::{sqlx, DbTarget};
use jiff::Timestamp;
use service::{ServiceConfig, Store, SystemClock};
use url::Url;

/// Report ids (and their domains) sampled for the requests.
const SAMPLE: i64 = 2_000;
/// Threads of the server's runtime (the machine has 2 cores).
const SERVER_THREADS: usize = 2;

struct Args {
    db: String,
    plan: generate::Plan,
    rate: u64,
    seconds: u64,
    reuse: bool,
    pages: bool,
    maintain: bool,
    generate_only: bool,
}

fn parse_args() -> Result<Args, String> {
    let mut args = Args {
        db: String::new(),
        plan: generate::Plan {
            reports: 1_000_000,
            domains: 100_000,
            months: 24,
            as_of: Timestamp::now(),
        },
        rate: 500,
        seconds: 10,
        reuse: false,
        pages: true,
        maintain: true,
        generate_only: false,
    };
    let mut it = std::env::args().skip(1);
    while let Some(flag) = it.next() {
        let mut value = || it.next().ok_or(format!("{flag} needs a value"));
        let number = |v: String| v.parse::<u64>().map_err(|e| format!("{flag}: {e}"));
        match flag.as_str() {
            "--db" => args.db = value()?,
            "--reports" => args.plan.reports = number(value()?)? as usize,
            "--domains" => args.plan.domains = (number(value()?)? as usize).max(1),
            "--months" => args.plan.months = number(value()?)? as i64,
            "--rate" => args.rate = number(value()?)?.max(1),
            "--seconds" => args.seconds = number(value()?)?,
            "--reuse" => args.reuse = true,
            "--no-pages" => args.pages = false,
            "--no-maintain" => args.maintain = false,
            "--generate-only" => args.generate_only = true,
            other => return Err(format!("unknown argument {other}")),
        }
    }
    if args.db.is_empty() {
        return Err("--db PATH|postgres://... is required".into());
    }
    Ok(args)
}

fn main() {
    if let Err(message) = run() {
        eprintln!("load: {message}");
        std::process::exit(1);
    }
}

fn run() -> Result<(), String> {
    let args = parse_args()?;
    let target: DbTarget = args.db.parse().map_err(|e| format!("{e}"))?;
    let server = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(SERVER_THREADS)
        .enable_all()
        .build()
        .map_err(|e| e.to_string())?;
    let client = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| e.to_string())?;
    let store = server.block_on(prepare(&target, &args))?;
    if args.generate_only {
        server.block_on(store.close());
        return Ok(());
    }
    let addr = server.block_on(start_server(store.clone()))?;
    let backend = format!("{:?}", store.db().backend());
    println!(
        "| backend | request | requests | p50 | p99 | p99.9 | max | largest | errors | load avg |"
    );
    println!("|---|---|---|---|---|---|---|---|---|---|");
    measure(&server, &client, &store, addr, &args, &backend, "")?;
    if args.maintain {
        let started = Instant::now();
        let outcome = server
            .block_on(store.retention(Timestamp::now(), false))
            .map_err(|e| e.to_string())?;
        eprintln!(
            "maintain: {:.1} s (load avg {}): {}",
            started.elapsed().as_secs_f64(),
            rate::load_average(),
            serde_json::to_string(&outcome).unwrap_or_default()
        );
        measure(
            &server,
            &client,
            &store,
            addr,
            &args,
            &backend,
            " after maintain",
        )?;
    }
    server.block_on(store.close());
    Ok(())
}

/// Open the store and fill it (or check it is filled, with `--reuse`).
async fn prepare(target: &DbTarget, args: &Args) -> Result<Store, String> {
    let store = Store::open(target).await.map_err(|e| e.to_string())?;
    let count = "SELECT COUNT(*) FROM service_reports";
    let n: i64 =
        db::with_pool!(store.db(), pool => sqlx::query_scalar(count).fetch_one(pool).await)
            .map_err(|e| e.to_string())?;
    match (n, args.reuse) {
        (0, false) => {
            generate::generate(&store, &args.plan).await?;
        }
        (_, true) => eprintln!("reusing a store of {n} reports"),
        (_, false) => {
            return Err(format!(
                "{target} already holds {n} reports: give an empty store, or --reuse"
            ))
        }
    }
    Ok(store)
}

/// Serve the API and the pages on a free loopback port.
async fn start_server(store: Store) -> Result<SocketAddr, String> {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .map_err(|e| e.to_string())?;
    let addr = listener.local_addr().map_err(|e| e.to_string())?;
    let public = Url::parse(&format!("http://{addr}/")).map_err(|e| e.to_string())?;
    let fetcher = fetch::Fetcher::new(fetch::FetchConfig::new(
        "RobotsTxtParser",
        format!("{public}bot"),
    ))
    .map_err(|e| e.to_string())?;
    let config = ServiceConfig::new(public);
    let service = service::Service::new(store, fetcher, config, Arc::new(SystemClock));
    let app = service::router(service.clone()).merge(site::router(service));
    tokio::spawn(async move {
        let _ = axum::serve(
            listener,
            app.into_make_service_with_connect_info::<SocketAddr>(),
        )
        .await;
    });
    Ok(addr)
}

/// Report ids with their domains, a uniform sample (ids are random).
async fn sample(store: &Store) -> Result<Vec<(String, String)>, String> {
    let sql = "SELECT id, domain FROM service_reports WHERE is_paste = FALSE AND state = 'done' \
               ORDER BY id LIMIT $1";
    let rows: Vec<(String, Option<String>)> = db::with_pool!(store.db(), pool =>
        sqlx::query_as(sql).bind(SAMPLE).fetch_all(pool).await)
    .map_err(|e| e.to_string())?;
    Ok(rows
        .into_iter()
        .filter_map(|(id, domain)| Some((id, domain?)))
        .collect())
}

/// Every endpoint in turn: warm-up, then the fixed-rate run; one table row each.
fn measure(
    server: &tokio::runtime::Runtime,
    client: &tokio::runtime::Runtime,
    store: &Store,
    addr: SocketAddr,
    args: &Args,
    backend: &str,
    when: &str,
) -> Result<(), String> {
    let rows = server.block_on(sample(store))?;
    let api_reports: Vec<String> = rows
        .iter()
        .map(|(id, _)| format!("/api/report/{id}"))
        .collect();
    let api_domains: Vec<String> = rows
        .iter()
        .map(|(_, d)| format!("/api/score/{d}"))
        .collect();
    let page_reports: Vec<String> = rows
        .iter()
        .map(|(id, d)| format!("/score/{d}/{id}"))
        .collect();
    let page_domains: Vec<String> = rows.iter().map(|(_, d)| format!("/score/{d}")).collect();
    let mut runs = vec![
        ("`GET /api/report/{id}`", api_reports),
        ("`GET /api/score/{domain}`", api_domains),
    ];
    if args.pages {
        runs.push(("page `/`", vec!["/".to_owned()]));
        runs.push(("page `/score/{domain}`", page_domains));
        runs.push(("page `/score/{domain}/{id}`", page_reports));
    }
    for (name, paths) in runs {
        // One request per address, at the same rate.
        let warm_seconds = (paths.len() as u64).div_ceil(args.rate);
        let started = Instant::now();
        client.block_on(rate::run(addr, &paths, args.rate, warm_seconds));
        eprintln!("{name}: warm-up {:.1} s", started.elapsed().as_secs_f64());
        let load = rate::load_average();
        let f = client.block_on(rate::run(addr, &paths, args.rate, args.seconds));
        let label = format!("{backend} | {name}{when}");
        println!("{}", rate::table_row(&label, &f, args.rate, &load));
    }
    Ok(())
}
