//! `jittybot crawl` against the multi-address test web, as the crawl command tests start it:
//! the web's hosts pinned by a hosts file, its certificate trusted, the store and the WARC
//! directory in a directory of the test's.

use std::ffi::OsStr;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use db::testing::{postgres_skipped, TestDb};
use db::{Backend, DbTarget};
use testweb::{linked_pages, LinkedPages, MultiWeb};

use super::INFO_URL;

/// The store of a crawl in `dir`.
pub fn crawl_db(dir: &Path) -> String {
    dir.join("crawl.sqlite").display().to_string()
}

/// The options that let `jittybot crawl` reach `web` from `dir`: `hosts` pinned to their
/// address index by a hosts file, the web's certificate trusted, private addresses allowed (the
/// test web is on loopback).
pub fn reach_args(web: &MultiWeb, dir: &Path, hosts: &[(&str, usize)]) -> Vec<String> {
    let hosts_file = dir.join("hosts");
    std::fs::write(&hosts_file, web.hosts_file(hosts)).unwrap();
    let ca = dir.join("ca.pem");
    std::fs::write(&ca, web.certificate_pem()).unwrap();
    vec![
        "--allow-private-addresses".into(),
        "--hosts".into(),
        hosts_file.display().to_string(),
        "--cacert".into(),
        ca.display().to_string(),
    ]
}

/// The arguments of `jittybot crawl` for `seeds` on `web`: the store ([`crawl_db`]) and WARC
/// files in `dir`, `web` reached as [`reach_args`] says, and `options` (`--pace`,
/// `--follow-links`, ...).
pub fn crawl_args(
    web: &MultiWeb,
    dir: &Path,
    hosts: &[(&str, usize)],
    options: &[&str],
    seeds: &[String],
) -> Vec<String> {
    let reach = reach_args(web, dir, hosts);
    crawl_command(&crawl_db(dir), &dir.join("warc"), &reach, options, seeds)
}

/// The arguments of `jittybot crawl` for `seeds` on the store `db`, writing WARC files to
/// `warc`, with `reach` (from [`reach_args`], written once for all the processes of a test)
/// and `options`.
pub fn crawl_command(
    db: &str,
    warc: &Path,
    reach: &[String],
    options: &[&str],
    seeds: &[String],
) -> Vec<String> {
    let mut args: Vec<String> = ["crawl", "--info-url", INFO_URL, "--db", db, "--warc-dir"]
        .iter()
        .map(|s| s.to_string())
        .collect();
    args.push(warc.display().to_string());
    args.extend(reach.iter().cloned());
    args.extend(options.iter().map(|s| s.to_string()));
    args.extend(seeds.iter().cloned());
    args
}

/// [`crawl_args`] for a crawl of `hosts` from their first page (`/p0.html`, as
/// [`serve_slow_pages`] serves), the i-th host on the web's i-th address (an origin each).
pub fn crawl_from_first_pages(
    web: &MultiWeb,
    dir: &Path,
    hosts: &[&str],
    options: &[&str],
) -> Vec<String> {
    let pins: Vec<(&str, usize)> = hosts.iter().enumerate().map(|(i, h)| (*h, i)).collect();
    let seeds: Vec<String> = hosts.iter().map(|h| web.http_url(h, "/p0.html")).collect();
    crawl_args(web, dir, &pins, options, &seeds)
}

/// A fresh PostgreSQL database and its URL, or `None` (said on stderr) when the PostgreSQL
/// tests are skipped (`JITTYBOT_TEST_POSTGRES=skip`).
pub async fn postgres() -> Option<(TestDb, String)> {
    if postgres_skipped() {
        eprintln!("JITTYBOT_TEST_POSTGRES=skip: not run");
        return None;
    }
    let db = TestDb::new(Backend::Postgres).await;
    let DbTarget::Postgres(url) = &db.target else {
        unreachable!("a PostgreSQL test database has a PostgreSQL URL")
    };
    let url = url.clone();
    Some((db, url))
}

/// Starts `jittybot ARGS` in the background with no input and its output discarded, for the
/// tests that stop, kill or race it; they read what it did from the servers and the store.
pub fn spawn<S: AsRef<OsStr>>(args: &[S]) -> Child {
    spawn_with_log(args, Stdio::null())
}

/// [`spawn`], its standard error (the log) written to the file `log`, which a test shows when
/// the process did not do what it should.
pub fn spawn_logging<S: AsRef<OsStr>>(args: &[S], log: &Path) -> Child {
    spawn_with_log(args, std::fs::File::create(log).unwrap().into())
}

fn spawn_with_log<S: AsRef<OsStr>>(args: &[S], log: Stdio) -> Child {
    Command::new(env!("CARGO_BIN_EXE_jittybot"))
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(log)
        .spawn()
        .unwrap()
}

/// Serves `pages` linked pages (of about `page_bytes`, `links_per_page` links each) on every
/// host ending with `host_suffix`, each answered after `delay`, so that a crawl is still under
/// way when the test stops or kills it.
pub fn serve_slow_pages(
    web: &MultiWeb,
    host_suffix: &str,
    pages: u32,
    page_bytes: usize,
    links_per_page: u32,
    delay: Duration,
) {
    let site = linked_pages(LinkedPages {
        host_suffix: host_suffix.into(),
        pages,
        page_bytes,
        size_spread: 0,
        links_per_page,
    });
    web.generate(move |host, path| site(host, path).map(|r| r.delay(delay)));
}

/// Sends `signal` (`-INT`, `-TERM`) to `child` with `kill`, as an operator stops a crawl.
pub fn signal(child: &Child, signal: &str) {
    let sent = Command::new("kill")
        .args([signal, &child.id().to_string()])
        .status()
        .unwrap();
    assert!(sent.success(), "kill {signal} {}", child.id());
}

/// Ctrl-C: SIGINT to `child`.
pub fn interrupt(child: &Child) {
    signal(child, "-INT");
}
