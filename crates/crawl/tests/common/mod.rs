//! A crawl against the multi-address test web: the fetcher pinned to it, a fresh store and
//! WARC directory.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::time::Duration;

use crawl::crawler::{CrawlConfig, Crawler, Summary};
use crawl::event::Event;
use crawl::normal::NormalUrl;
use crawl::store::Store;
use db::DbTarget;
use fetch::{FetchConfig, Fetcher, ResolvePin};
use testweb::{MultiWeb, Reply};

/// A fetcher for `web`: `hosts` pinned (every port) to their address index.
pub fn fetcher(web: &MultiWeb, hosts: &[(&str, usize)]) -> Fetcher {
    let mut config = FetchConfig::new("JittyBot", "https://jittybot.test/bot");
    config.allow_private_addresses = true;
    config.extra_root_certificates_pem = vec![web.certificate_pem().as_bytes().to_vec()];
    config.resolve = hosts
        .iter()
        .map(|(h, i)| ResolvePin {
            host: h.to_string(),
            port: 0,
            addresses: vec![std::net::IpAddr::V4(web.addresses()[*i])],
        })
        .collect();
    Fetcher::new(config).unwrap()
}

/// A config with a short pace and back-off, writing to `warc`.
pub fn config(warc: &Path) -> CrawlConfig {
    let mut c = CrawlConfig::new(warc);
    c.pacer.pace = Duration::from_millis(50);
    c.pacer.backoff_base = Duration::from_millis(200);
    c.pacer.backoff_max = Duration::from_secs(2);
    c
}

/// Run a crawl to its end; returns the summary and every event.
pub async fn crawl(
    target: &DbTarget,
    fetcher: Fetcher,
    config: CrawlConfig,
    seeds: &[String],
) -> (Summary, Vec<Event>) {
    let store = Store::open(target).await.unwrap();
    let seeds: Vec<NormalUrl> = seeds.iter().map(|s| NormalUrl::parse(s).unwrap()).collect();
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
    let crawler = Crawler::new(store.clone(), fetcher, config);
    let summary = tokio::time::timeout(Duration::from_secs(60), crawler.run(&seeds, tx))
        .await
        .expect("the crawl ends")
        .unwrap();
    store.close().await;
    let mut events = Vec::new();
    while let Ok(e) = rx.try_recv() {
        events.push(e);
    }
    (summary, events)
}

/// Crawls the one site `host` (on the web's first address) from its home page, with
/// [`config`], archiving to `warc`.
pub async fn crawl_site(
    target: &DbTarget,
    web: &MultiWeb,
    host: &str,
    warc: &Path,
) -> (Summary, Vec<Event>) {
    let seeds = [web.http_url(host, "/")];
    crawl(target, fetcher(web, &[(host, 0)]), config(warc), &seeds).await
}

/// A site that allows everything and has no sitemap: only its own pages steer the crawl.
pub fn open_site(web: &MultiWeb, host: &str) {
    web.site(host)
        .path("/robots.txt")
        .respond(Reply::robots_txt("User-agent: *\nAllow: /\n"));
    web.site(host)
        .path("/sitemap.xml")
        .respond(Reply::status(404));
}

/// A site with robots.txt and pages linking to each other.
pub fn small_site(web: &MultiWeb, host: &str, pages: usize) {
    web.site(host)
        .path("/robots.txt")
        .respond(Reply::robots_txt("User-agent: *\nDisallow: /private\n"));
    web.site(host)
        .path("/sitemap.xml")
        .respond(Reply::status(404));
    for i in 0..pages {
        let next = (i + 1) % pages;
        let body = format!(
            "<html><body><a href=\"/p{next}.html\">next</a> <a href=\"/private/x\">private</a> \
             <a href=\"https://elsewhere.test/\">away</a></body></html>"
        );
        let path = if i == 0 {
            "/".to_string()
        } else {
            format!("/p{i}.html")
        };
        web.site(host).path(&path).respond(
            Reply::ok()
                .header("Content-Type", "text/html")
                .body(body.clone()),
        );
        if i == 0 {
            web.site(host)
                .path("/p0.html")
                .respond(Reply::ok().header("Content-Type", "text/html").body(body));
        }
    }
}

/// The files in `dir` (the WARC files a crawl wrote), in name order: the order written.
pub fn warc_files(dir: &Path) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    files.sort();
    files
}

/// Every WARC record in `dir`, read by the `warc` crate: (type, target URI).
pub fn warc_records(dir: &Path) -> Vec<(String, String)> {
    let mut out = Vec::new();
    for f in warc_files(dir) {
        assert!(
            f.to_string_lossy().ends_with(".warc.gz"),
            "unfinished {f:?}"
        );
        for r in warc_reader::WarcReader::from_path_gzip(&f)
            .unwrap()
            .iter_records()
        {
            let r = r.unwrap();
            let uri = r
                .header(warc_reader::WarcHeader::TargetURI)
                .map(|v| v.into_owned())
                .unwrap_or_default();
            out.push((r.warc_type().to_string(), uri));
        }
    }
    out
}

/// An HTML page.
pub fn html(body: &str) -> Reply {
    Reply::ok().header("Content-Type", "text/html").body(body)
}

/// A PNG image (its signature, then `name`: each image's bytes differ).
pub fn png(name: &str) -> Reply {
    Reply::ok()
        .header("Content-Type", "image/png")
        .body(format!("\u{89}PNG {name}"))
}

/// `bytes` gzip-compressed (a `.gz` sitemap, a `Content-Encoding: gzip` body).
pub fn gzip(bytes: &[u8]) -> Vec<u8> {
    use std::io::Write;
    let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    e.write_all(bytes).unwrap();
    e.finish().unwrap()
}

/// A site whose robots.txt declares one sitemap, `sitemap_at` (a full URL), which answers
/// `replies` in turn (the last one from then on) and lists `listed` pages of `host`: pages
/// known from the sitemap only (the home page links nowhere). With `replies` empty the
/// sitemap answers the listing itself.
pub fn sitemap_site(
    web: &MultiWeb,
    host: &str,
    sitemap_at: &str,
    listed: &[String],
    replies: Vec<Reply>,
) {
    web.site(host)
        .path("/robots.txt")
        .respond(Reply::robots_txt(&format!(
            "User-agent: *\nAllow: /\nSitemap: {sitemap_at}\n"
        )));
    let mut replies = replies;
    replies.push(urlset(listed));
    let path = url::Url::parse(sitemap_at).unwrap().path().to_string();
    web.site(host).path(&path).script(replies);
    web.site(host).path("/").respond(html("home"));
    for page in listed {
        let path = url::Url::parse(page).unwrap().path().to_string();
        web.site(host).path(&path).respond(html("listed"));
    }
}

/// A sitemap (`urlset`) listing `urls`.
pub fn urlset(urls: &[String]) -> Reply {
    let entries: String = urls
        .iter()
        .map(|u| format!("<url><loc>{u}</loc></url>"))
        .collect();
    Reply::ok()
        .header("Content-Type", "application/xml")
        .body(format!(
            "<?xml version=\"1.0\"?><urlset xmlns=\"http://www.sitemaps.org/schemas/sitemap/0.9\">{entries}</urlset>"
        ))
}
