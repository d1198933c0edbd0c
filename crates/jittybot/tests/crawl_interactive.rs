//! `jittybot crawl --interactive-sites FILE` / `--interactive` as a user runs them: only the
//! listed sites are rendered (a link made by script is followed there, not elsewhere); the two
//! flags exclude each other. Skipped, with a message, when no Chromium is installed.

mod common;

use common::INFO_URL;

use common::{jittybot, stderr};
use testweb::{MultiWeb, Reply};

fn site(web: &MultiWeb, host: &str) {
    web.site(host)
        .path("/robots.txt")
        .respond(Reply::robots_txt("User-agent: *\nAllow: /\n"));
    web.site(host)
        .path("/sitemap.xml")
        .respond(Reply::status(404));
    web.site(host).path("/").respond(Reply::html(
        "<html><body><script>var a = document.createElement('a'); \
         a.href = '/by-script'; document.body.appendChild(a);</script></body></html>",
    ));
    web.site(host)
        .path("/by-script")
        .respond(Reply::html("<p>found</p>"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn only_the_listed_sites_are_rendered() {
    if !crawl::crawler::chromium_available() {
        eprintln!("SKIPPED: no Chromium installed (set JITTYBOT_CHROMIUM or install chromium)");
        return;
    }
    let web = MultiWeb::start(2).await;
    site(&web, "rendered.test");
    site(&web, "plain.test");
    let dir = tempfile::tempdir().unwrap();
    let hosts = dir.path().join("hosts");
    std::fs::write(
        &hosts,
        web.hosts_file(&[("rendered.test", 0), ("plain.test", 1)]),
    )
    .unwrap();
    let ca = dir.path().join("ca.pem");
    std::fs::write(&ca, web.certificate_pem()).unwrap();
    let listed = dir.path().join("interactive-sites");
    std::fs::write(&listed, "# rendered in a browser\nhttps://rendered.test/\n").unwrap();
    let db = dir.path().join("crawl.sqlite").display().to_string();
    let args: Vec<String> = [
        "crawl",
        "--info-url",
        INFO_URL,
        "--db",
        &db,
        "--warc-dir",
        &dir.path().join("warc").display().to_string(),
        "--pace",
        "10ms",
        "--json",
        "--allow-private-addresses",
        "--hosts",
        &hosts.display().to_string(),
        "--cacert",
        &ca.display().to_string(),
        "--interactive-sites",
        &listed.display().to_string(),
        &web.https_url("rendered.test", "/"),
        &web.https_url("plain.test", "/"),
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    let out = tokio::task::spawn_blocking(move || jittybot(&args, None))
        .await
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(web.requests_to("rendered.test", "/by-script").len(), 1);
    assert!(
        web.requests_to("plain.test", "/by-script").is_empty(),
        "a site not listed is crawled from its served HTML only"
    );
}

#[test]
fn the_two_flags_exclude_each_other() {
    let dir = tempfile::tempdir().unwrap();
    let listed = dir.path().join("sites");
    std::fs::write(&listed, "https://a.test/\n").unwrap();
    let out = jittybot(
        &[
            "crawl",
            "--interactive",
            "--interactive-sites",
            &listed.display().to_string(),
            "https://a.test/",
        ],
        None,
    );
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(stderr(&out).contains("--interactive"), "{}", stderr(&out));
}
