//! `jittybot crawl` against the multi-address test web, as the crawl command tests start it:
//! the web's hosts pinned by a hosts file, its certificate trusted, the store and the WARC
//! directory in a directory of the test's.

use std::path::Path;

use testweb::MultiWeb;

use super::INFO_URL;

/// The store of a crawl in `dir`.
pub fn crawl_db(dir: &Path) -> String {
    dir.join("crawl.sqlite").display().to_string()
}

/// The arguments of `jittybot crawl` for `seeds` on `web`: `hosts` pinned to their address
/// index, the store ([`crawl_db`]) and WARC files in `dir`, private addresses allowed (the
/// test web is on loopback), and `options` (`--pace`, `--follow-links`, ...).
pub fn crawl_args(
    web: &MultiWeb,
    dir: &Path,
    hosts: &[(&str, usize)],
    options: &[&str],
    seeds: &[String],
) -> Vec<String> {
    let hosts_file = dir.join("hosts");
    std::fs::write(&hosts_file, web.hosts_file(hosts)).unwrap();
    let ca = dir.join("ca.pem");
    std::fs::write(&ca, web.certificate_pem()).unwrap();
    let mut args: Vec<String> = [
        "crawl",
        "--info-url",
        INFO_URL,
        "--db",
        &crawl_db(dir),
        "--warc-dir",
        &dir.join("warc").display().to_string(),
        "--allow-private-addresses",
        "--hosts",
        &hosts_file.display().to_string(),
        "--cacert",
        &ca.display().to_string(),
    ]
    .iter()
    .chain(options)
    .map(|s| s.to_string())
    .collect();
    args.extend(seeds.iter().cloned());
    args
}
