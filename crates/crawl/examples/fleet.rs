//! What one PostgreSQL sustains: several `jittybot crawl` processes on one crawl store,
//! against the benchmark's loopback web (1,000 hosts behind 50 origins, the pace 0). Reports
//! pages per second, the transactions PostgreSQL committed per second (claims, group
//! commits, renewals, everything), the processes' group commits per second and their
//! latency (from each process's `/metrics`), and the CPU the database server used per page.
//!
//! ```sh
//! cargo build --release -p jittybot -p crawl --example bench --example fleet
//! target/release/examples/fleet PROCESSES [PAGES] [--db postgres://...]
//! ```
//! `PAGES` (default 20,000) is the total, split evenly (`--max-pages`); the store is a fresh
//! schema `fleet_bench` of the database at `--db` (default the tests' server,
//! `postgres://postgres@127.0.0.1:5432/test`), dropped first. The server's CPU is read from
//! `/proc` for every process named `postgres` (the database runs on this machine).

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use sqlx::Connection;

const ORIGINS: usize = 50;
const HOSTS_PER_ORIGIN: usize = 20;
const SCHEMA: &str = "fleet_bench";

fn host(i: usize) -> String {
    format!("h{i}.bench.test")
}

/// CPU seconds (user + system) of every process whose command name is `name`.
fn cpu_of(name: &str) -> f64 {
    let mut total = 0.0;
    for entry in std::fs::read_dir("/proc").into_iter().flatten().flatten() {
        let Ok(stat) = std::fs::read_to_string(entry.path().join("stat")) else {
            continue;
        };
        let Some((head, rest)) = stat.rsplit_once(')') else {
            continue;
        };
        if !head.ends_with(&format!("({name}")) {
            continue;
        }
        let fields: Vec<&str> = rest.split_whitespace().collect();
        let ticks = |i: usize| {
            fields
                .get(i)
                .and_then(|f| f.parse::<f64>().ok())
                .unwrap_or(0.0)
        };
        total += (ticks(11) + ticks(12)) / 100.0;
    }
    total
}

fn free_port() -> SocketAddr {
    TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .expect("a free port")
}

fn scrape(addr: SocketAddr) -> String {
    let Ok(mut stream) = TcpStream::connect(addr) else {
        return String::new();
    };
    let _ = write!(
        stream,
        "GET /metrics HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n\r\n"
    );
    let mut text = String::new();
    let _ = stream.read_to_string(&mut text);
    text
}

fn metric(text: &str, name: &str) -> f64 {
    text.lines()
        .find_map(|l| l.strip_prefix(name)?.trim().parse().ok())
        .unwrap_or(0.0)
}

async fn stats(url: &str) -> (i64, i64) {
    let mut conn = sqlx::PgConnection::connect(url).await.expect("PostgreSQL");
    sqlx::query_as(
        "SELECT xact_commit, tup_updated + tup_inserted FROM pg_stat_database \
         WHERE datname = current_database()",
    )
    .fetch_one(&mut conn)
    .await
    .expect("pg_stat_database")
}

async fn admin(url: &str, sql: &str) {
    let mut conn = sqlx::PgConnection::connect(url).await.expect("PostgreSQL");
    sqlx::raw_sql(sql).execute(&mut conn).await.expect(sql);
}

fn jittybot() -> PathBuf {
    let exe = std::env::current_exe().expect("this example's path");
    // target/release/examples/fleet -> target/release/jittybot
    exe.parent()
        .and_then(Path::parent)
        .map(|d| d.join("jittybot"))
        .expect("target directory")
}

#[tokio::main]
async fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let mut numbers = args.iter().filter_map(|a| a.parse::<u64>().ok());
    let processes = numbers.next().unwrap_or(2).max(1);
    let pages = numbers.next().unwrap_or(20_000);
    let base = args
        .iter()
        .position(|a| a == "--db")
        .and_then(|i| args.get(i + 1))
        .cloned()
        .unwrap_or_else(|| "postgres://postgres@127.0.0.1:5432/test".into());
    let db = format!("{base}?options[search_path]={SCHEMA}");
    admin(
        &base,
        &format!("DROP SCHEMA IF EXISTS {SCHEMA} CASCADE; CREATE SCHEMA {SCHEMA}"),
    )
    .await;
    // Migrate once, before the processes race to.
    crawl::store::Store::open(&db.parse().expect("--db"))
        .await
        .expect("the store")
        .close()
        .await;

    let bench = std::env::current_exe()
        .expect("path")
        .with_file_name("bench");
    let mut web = Command::new(&bench)
        .arg("serve")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("{}: {e} (build --example bench)", bench.display()));
    let mut line = String::new();
    BufReader::new(web.stdout.take().expect("stdout"))
        .read_line(&mut line)
        .expect("the web's port");
    let mut parts = line.split_whitespace();
    let port: u16 = parts.next().and_then(|p| p.parse().ok()).expect("port");
    let ca = parts.next().expect("CA").to_string();
    let work = tempfile::tempdir().expect("a directory");
    let hosts: String = (0..ORIGINS * HOSTS_PER_ORIGIN)
        .map(|i| format!("127.0.0.{} {}\n", i / HOSTS_PER_ORIGIN + 2, host(i)))
        .collect();
    std::fs::write(work.path().join("hosts"), hosts).expect("hosts file");
    let seeds: String = (0..ORIGINS * HOSTS_PER_ORIGIN)
        .map(|i| format!("https://{}:{port}/p0.html\n", host(i)))
        .collect();
    std::fs::write(work.path().join("seeds"), seeds).expect("seeds file");

    let (commits0, rows0) = stats(&base).await;
    let pg0 = cpu_of("postgres");
    let started = Instant::now();
    let mut crawls: Vec<(Child, SocketAddr)> = Vec::new();
    for n in 0..processes {
        let metrics = free_port();
        let child = Command::new(jittybot())
            .args([
                "crawl",
                "--info-url",
                "http://jittybot.test/bot",
                "--db",
                &db,
                "--pace",
                "0",
                "--follow-links",
                "always",
            ])
            .args(["--allow-private-addresses", "--cacert", &ca])
            .arg("--hosts")
            .arg(work.path().join("hosts"))
            .arg("--seeds")
            .arg(work.path().join("seeds"))
            .arg("--warc-dir")
            .arg(work.path().join(format!("warc-{n}")))
            .args(["--max-pages", &(pages / processes).to_string()])
            .args(["--metrics-listen", &metrics.to_string()])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("jittybot (build it with --release)");
        crawls.push((child, metrics));
    }
    // The last scrape of each process before it ends holds its commit figures.
    let mut last = vec![String::new(); crawls.len()];
    let mut done: Vec<String> = Vec::new();
    while !crawls.is_empty() {
        tokio::time::sleep(Duration::from_millis(200)).await;
        let mut i = 0;
        while i < crawls.len() {
            if crawls[i].0.try_wait().expect("wait").is_some() {
                crawls.remove(i);
                done.push(last.remove(i));
                continue;
            }
            let text = scrape(crawls[i].1);
            if !text.is_empty() {
                last[i] = text;
            }
            i += 1;
        }
    }
    let wall = started.elapsed().as_secs_f64();
    let pg = cpu_of("postgres") - pg0;
    let (commits1, rows1) = stats(&base).await;
    let fetched: i64 = {
        let mut conn = sqlx::PgConnection::connect(&db).await.expect("PostgreSQL");
        sqlx::query_scalar("SELECT COUNT(*) FROM crawl_urls WHERE state = 2")
            .fetch_one(&mut conn)
            .await
            .expect("count")
    };
    drop(web.stdin.take());
    let _ = web.wait();
    let group_commits: f64 = done
        .iter()
        .map(|t| metric(t, "jittybot_crawl_store_commit_seconds_count"))
        .sum();
    let commit_time: f64 = done
        .iter()
        .map(|t| metric(t, "jittybot_crawl_store_commit_seconds_sum"))
        .sum();
    let load = std::fs::read_to_string("/proc/loadavg").unwrap_or_default();
    println!("processes             {processes}");
    println!("pages fetched         {fetched}");
    println!("wall                  {wall:.1} s");
    println!("pages/s               {:.0}", fetched as f64 / wall);
    println!(
        "transactions/s        {:.0} (PostgreSQL, all: claims, commits, renewals)",
        (commits1 - commits0) as f64 / wall
    );
    println!("rows written/s        {:.0}", (rows1 - rows0) as f64 / wall);
    println!(
        "group commits/s       {:.0} (mean {:.1} ms; last scrape of each process)",
        group_commits / wall,
        commit_time * 1000.0 / group_commits.max(1.0)
    );
    println!(
        "transactions per page {:.2}",
        (commits1 - commits0) as f64 / (fetched.max(1) as f64)
    );
    println!(
        "postgres cpu per page {:.3} ms ({:.0} % of one core)",
        pg * 1000.0 / fetched.max(1) as f64,
        pg * 100.0 / wall
    );
    println!("load average          {}", load.trim());
    admin(&base, &format!("DROP SCHEMA IF EXISTS {SCHEMA} CASCADE")).await;
}
