//! The site in a real browser: headless Chromium driven through chromedriver (fantoccini).
//!
//! A site of the test web is analysed from the home form, the report is awaited (the page
//! reloads itself), its grade and findings checked, the domain page followed; a file is
//! pasted and its private report reached; the ranking shows the right domains. Each page is
//! screenshotted to `target/site-screenshots/`.
//!
//! Skips, saying so, only when chromedriver or chromium is absent (`.ci/run` installs both).

use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::time::Duration;

use audit::crawlers::BOT_TOKEN;
use db::Backend;
use fantoccini::{Client, ClientBuilder, Locator};
use fetch::{FetchConfig, Fetcher, ResolvePin};
use testweb::{Reply, TestWeb};
use url::Url;

const CHROMEDRIVER: &str = "/usr/bin/chromedriver";
const CHROMIUM: &str = "/usr/bin/chromium";

/// The longest the whole browser session may take.
const SESSION_LIMIT: Duration = Duration::from_secs(120);

/// How long to wait for one page state (an analysis to finish, a page to load).
const WAIT: Duration = Duration::from_secs(30);

/// chromedriver, ended when the test ends.
struct Driver {
    child: Child,
    port: u16,
}

impl Drop for Driver {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|listener| listener.local_addr())
        .map(|addr| addr.port())
        .expect("a free loopback port")
}

async fn start_driver() -> Driver {
    let port = free_port();
    let child = Command::new(CHROMEDRIVER)
        .arg(format!("--port={port}"))
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("chromedriver starts");
    let driver = Driver { child, port };
    for _ in 0..100 {
        if tokio::net::TcpStream::connect(("127.0.0.1", port))
            .await
            .is_ok()
        {
            return driver;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    panic!("chromedriver did not listen on port {port}");
}

async fn browser(driver: &Driver, profile: &std::path::Path) -> Client {
    let args = [
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-quic",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--disable-dev-shm-usage",
        "--window-size=1200,900",
    ]
    .iter()
    .map(|arg| (*arg).to_owned())
    .chain([format!("--user-data-dir={}", profile.display())])
    .collect::<Vec<_>>();
    let mut caps = serde_json::Map::new();
    caps.insert(
        "goog:chromeOptions".into(),
        serde_json::json!({ "binary": CHROMIUM, "args": args }),
    );
    let connector = hyper_util::client::legacy::connect::HttpConnector::new();
    ClientBuilder::new(connector)
        .capabilities(caps)
        .connect(&format!("http://127.0.0.1:{}", driver.port))
        .await
        .expect("a browser session")
}

fn screenshot_dir() -> PathBuf {
    let target = std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../../target")));
    target.join("site-screenshots")
}

async fn screenshot(client: &Client, name: &str) {
    let png = client.screenshot().await.expect("a screenshot");
    let dir = screenshot_dir();
    std::fs::create_dir_all(&dir).expect("the screenshot folder");
    std::fs::write(dir.join(format!("{name}.png")), png).expect("the screenshot is written");
}

/// Waits until the page's source contains `text` (the page may reload itself meanwhile).
async fn wait_for_text(client: &Client, text: &str) -> String {
    let deadline = tokio::time::Instant::now() + WAIT;
    loop {
        let source = client.source().await.unwrap_or_default();
        if source.contains(text) {
            return source;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "no {text:?} within {WAIT:?}; the page: {source}"
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

fn fetcher(web: &TestWeb, hosts: &[&str]) -> Fetcher {
    let mut config = FetchConfig::new(BOT_TOKEN, "http://127.0.0.1/bot");
    config.allow_private_addresses = true;
    for host in hosts {
        for pin in web.pins(host) {
            config
                .resolve
                .push(pin.parse::<ResolvePin>().expect("a pin"));
        }
    }
    Fetcher::new(config).expect("a fetcher")
}

fn browser_present() -> bool {
    let present =
        std::path::Path::new(CHROMEDRIVER).exists() && std::path::Path::new(CHROMIUM).exists();
    if !present {
        eprintln!("SKIPPED: the browser tests need {CHROMEDRIVER} and {CHROMIUM} (Debian's chromium-driver and chromium; .ci/run installs them)");
    }
    present
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn analyse_browse_and_paste_in_a_real_browser() {
    if !browser_present() {
        return;
    }
    // One after the other: two browsers at once on a small machine make slow pages.
    for backend in [Backend::Sqlite, Backend::Postgres] {
        if backend == Backend::Postgres && db::testing::postgres_skipped() {
            eprintln!("SKIPPED: the PostgreSQL walk (JITTYBOT_TEST_POSTGRES=skip)");
            continue;
        }
        tokio::time::timeout(SESSION_LIMIT, session(backend))
            .await
            .expect("the browser session ends within its limit");
    }
}

fn test_web_site(web: &TestWeb) {
    web.site("example.test")
        .path("/robots.txt")
        .respond(Reply::robots_txt(
        "User-agent: *\nDissallow: /tmp\nDisallow: /private\n\nUser-agent: GPTBot\nDisallow: /\n",
    ));
    web.site("example.test").path("/").respond(
        Reply::ok()
            .header("Content-Type", "text/html; charset=utf-8")
            .body("<html><head><title>Example</title></head><body>hello</body></html>"),
    );
}

/// A stored report of `url` as if fetched; its page says `noindex` when asked.
fn seeded(url: &str, noindex: bool) -> audit::Analysis {
    let mut analysis = audit::analyze_file(
        audit::ProvidedFile::whole(b"User-agent: *\nAllow: /\n"),
        Some(url),
    );
    analysis.robots.outcome = audit::report::RobotsStatus::Rules;
    if noindex {
        analysis.page.directives.add_header("noindex");
    }
    analysis
}

/// Sites already in the store: one ranked, one whose page asks not to be indexed.
const SEEDS: [(&str, bool); 2] = [
    ("https://ranked.test/", false),
    ("https://hidden.test/", true),
];

/// The service (its store, workers and API, merged with the pages as `jittybot serve` does)
/// on a loopback port.
async fn serve_service(web: &TestWeb, target: &db::DbTarget) -> SocketAddr {
    let store = service::Store::open(target).await.expect("the store");
    let now = jiff::Timestamp::now();
    for (url, noindex) in SEEDS {
        let id = store
            .queue_analysis(&Url::parse(url).expect("a URL"), now, false)
            .await
            .expect("queued");
        let mut analysis = seeded(url, noindex);
        analysis.analysed_at = now;
        store.finish_report(&id, &analysis).await.expect("stored");
    }
    let holder = db::Holder::new();
    while let Some(job) = store.claim_job(&holder, now).await.expect("a job") {
        store.finish_job(&job, &holder).await.expect("finished");
    }
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("a loopback port");
    let addr = listener.local_addr().expect("its address");
    let public = Url::parse(&format!("http://{addr}/")).expect("the site's URL");
    let mut config = service::ServiceConfig::new(public);
    config.data_refresh = Duration::ZERO;
    let service = service::Service::new(
        store,
        fetcher(web, &["example.test"]),
        config,
        Arc::new(service::SystemClock),
    );
    let app = service::router(service.clone()).merge(site::router(service.clone()));
    let options = service::ServeOptions {
        scheduler: false,
        maintenance: false,
    };
    tokio::spawn(service::serve(
        service,
        app,
        listener,
        options,
        std::future::pending(),
    ));
    addr
}

async fn session(backend: Backend) {
    let web = TestWeb::start().await;
    test_web_site(&web);
    let folder =
        std::env::temp_dir().join(format!("site-browser-{}-{backend:?}", std::process::id()));
    std::fs::create_dir_all(&folder).expect("a scratch folder");
    let store = db::testing::TestDb::new(backend).await;
    let addr = serve_service(&web, &store.target).await;
    // The SQLite walk's screenshots are the site's; the PostgreSQL walk's are prefixed.
    let prefix = match backend {
        Backend::Sqlite => "",
        Backend::Postgres => "postgres-",
    };
    let driver = start_driver().await;
    let client = browser(&driver, &folder.join("profile")).await;
    let base = format!("http://{addr}");
    // The walk runs as a task so that a failed assertion still closes the browser.
    let walker = client.clone();
    let target = web.http_url("example.test", "/");
    let result = tokio::spawn(async move { walk(&walker, &base, &target, prefix).await }).await;
    let _ = client.close().await;
    drop(driver);
    let _ = std::fs::remove_dir_all(&folder);
    store.cleanup().await;
    if let Err(failure) = result {
        std::panic::resume_unwind(failure.into_panic());
    }
    assert!(
        !web.requests_to("example.test", "/robots.txt").is_empty(),
        "the bot fetched robots.txt"
    );
    assert_eq!(
        web.requests_to("example.test", "/").len(),
        1,
        "and the page, once"
    );
}

async fn walk(client: &Client, base: &str, target: &str, prefix: &str) {
    // Home: the ranking shows the ranked site and not the noindex one.
    client.goto(&format!("{base}/")).await.expect("home");
    let home = wait_for_text(client, "Ranking").await;
    assert!(
        home.contains("ranked.test"),
        "the ranking shows ranked.test"
    );
    assert!(
        !home.contains("hidden.test"),
        "a noindex site is kept off the ranking"
    );
    screenshot(client, &format!("{prefix}home")).await;

    // Analyse a site of the test web from the form, and wait for the report.
    let field = client
        .find(Locator::Id("url"))
        .await
        .expect("the URL field");
    field.send_keys(target).await.expect("typing the URL");
    client
        .find(Locator::Css("form[action='/analyze'] button"))
        .await
        .expect("the Analyse button")
        .click()
        .await
        .expect("submitting");
    let report = wait_for_text(client, "Rules for each crawler").await;
    assert!(client
        .current_url()
        .await
        .expect("a URL")
        .path()
        .starts_with("/score/example.test/"));
    assert!(report.contains("aria-label=\"grade "), "a grade is shown");
    assert!(report.contains("Dissallow"), "the file is shown");
    assert!(report.contains("has-finding"), "a finding at its line");
    assert!(report.contains("GPTBot"));
    screenshot(client, &format!("{prefix}report")).await;

    // Follow to the domain page.
    client
        .find(Locator::LinkText("Every report of example.test"))
        .await
        .expect("the domain link")
        .click()
        .await
        .expect("following it");
    let domain = wait_for_text(client, "robots.txt reports of example.test").await;
    assert!(domain.contains("<svg"), "the score chart");
    screenshot(client, &format!("{prefix}domain")).await;

    // Paste a file and reach its private report.
    client.goto(&format!("{base}/")).await.expect("home again");
    let robots = client
        .find(Locator::Id("robots"))
        .await
        .expect("the paste box");
    robots
        .send_keys("User-agent: *\nDisalow: /admin\nCrawl-delay: 5\n")
        .await
        .expect("typing the file");
    client
        .find(Locator::Css("form[action='/paste'] button"))
        .await
        .expect("the paste button")
        .click()
        .await
        .expect("submitting the paste");
    let paste = wait_for_text(client, "This report is private").await;
    assert!(client
        .current_url()
        .await
        .expect("a URL")
        .path()
        .starts_with("/paste/"));
    assert!(paste.contains("Disalow"));
    screenshot(client, &format!("{prefix}paste")).await;

    // The ranking now shows the analysed site too.
    client
        .goto(&format!("{base}/#ranking"))
        .await
        .expect("home");
    let home = wait_for_text(client, "Ranking").await;
    assert!(home.contains("href=\"/score/example.test\""));
    assert!(!home.contains("/paste/"), "pastes are never listed");
    screenshot(client, &format!("{prefix}ranking")).await;

    for (path, name, text) in [
        ("/stats", "stats", "The state of the web"),
        ("/scoring", "scoring", "How scoring works"),
        ("/bot", "bot", "Blocking the bot"),
        ("/nothing-here", "not-found", "Page not found"),
    ] {
        client.goto(&format!("{base}{path}")).await.expect("a page");
        wait_for_text(client, text).await;
        screenshot(client, &format!("{prefix}{name}")).await;
    }
    client
        .set_window_size(412, 900)
        .await
        .expect("a phone-sized window");
    client.goto(&format!("{base}/")).await.expect("home");
    wait_for_text(client, "Ranking").await;
    screenshot(client, &format!("{prefix}home-phone")).await;
}
