//! The pages over the service's store, on SQLite and PostgreSQL: an analysis
//! of a test-web site asked for from the form and run by the service's worker, its report,
//! domain page, ranking and sitemap; a paste; a report folded by retention redirecting to its
//! domain page; noindex from the store's decision.

mod common;

use std::net::SocketAddr;
use std::sync::Arc;

use audit::report::RobotsStatus;
use axum::body::Body;
use axum::extract::connect_info::MockConnectInfo;
use common::{html_page, send};
use db::testing::on_both_backends;
use db::{DbTarget, Holder};
use http::Request;
use jiff::{SignedDuration, Timestamp};
use service::{Service, ServiceConfig, Store, SystemClock};
use testweb::{Reply, TestWeb};
use url::Url;

async fn service(target: &DbTarget, web: &TestWeb) -> Service {
    let store = Store::open(target).await.expect("the store");
    let mut config = fetch::FetchConfig::new("RobotsTxtParser", "http://service.test/bot");
    config.allow_private_addresses = true;
    for pin in web.pins("example.test") {
        config.resolve.push(pin.parse().expect("a pin"));
    }
    let fetcher = fetch::Fetcher::new(config).expect("a fetcher");
    let mut config = ServiceConfig::new("http://service.test/".parse().expect("a URL"));
    config.data_refresh = std::time::Duration::ZERO;
    config.stats_refresh = std::time::Duration::ZERO;
    Service::new(store, fetcher, config, Arc::new(SystemClock))
}

fn pages(service: &Service) -> axum::Router {
    site::router(service.clone()).layer(MockConnectInfo(SocketAddr::from(([192, 0, 2, 1], 4000))))
}

fn form(path: &str, body: &str) -> Request<Body> {
    Request::post(path)
        .header("content-type", "application/x-www-form-urlencoded")
        .body(Body::from(body.to_owned()))
        .expect("a request")
}

/// A finished report of `url` stored at `at`, with a page that says `noindex` or not.
async fn stored(store: &Store, url: &str, at: Timestamp, noindex: bool) -> service::ReportId {
    let parsed = Url::parse(url).expect("a URL");
    let id = store
        .queue_analysis(&parsed, at, false)
        .await
        .expect("queued");
    let mut analysis = audit::analyze_file(
        audit::ProvidedFile::whole(b"User-agent: *\nAllow: /\n"),
        Some(url),
    );
    analysis.robots.outcome = RobotsStatus::Rules;
    analysis.analysed_at = at;
    if noindex {
        analysis.page.directives.add_header("noindex");
    }
    store.finish_report(&id, &analysis).await.expect("finished");
    let holder = Holder::new();
    while let Some(job) = store.claim_job(&holder, at).await.expect("a job") {
        store.finish_job(&job, &holder).await.expect("done");
    }
    id
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn analyse_from_the_form_and_browse_on_both_backends() {
    on_both_backends(|target| async move {
        let web = TestWeb::start().await;
        web.site("example.test")
            .path("/robots.txt")
            .respond(Reply::robots_txt("User-agent: *\nDissallow: /tmp\n"));
        web.site("example.test").path("/").respond(html_page());
        let service = service(&target, &web).await;
        let app = pages(&service);
        let target_url = web.http_url("example.test", "/");
        let answer = send(&app, form("/analyze", &format!("url={target_url}"))).await;
        assert_eq!(answer.status(), 303, "{}", answer.body);
        let location = answer.header("location").expect("a location").to_owned();
        assert!(location.starts_with("/score/example.test/"), "{location}");
        let queued = common::get(&app, &location).await;
        assert!(
            queued.body.contains("http-equiv=\"refresh\""),
            "in progress first"
        );
        assert!(service
            .run_one_job(&Holder::new())
            .await
            .expect("a job ran"));
        let report = common::get(&app, &location).await;
        assert!(
            report.body.contains("Rules for each crawler"),
            "{}",
            report.body
        );
        assert!(report.body.contains("Dissallow"));
        assert!(report.headers("x-robots-tag").is_empty());
        assert_eq!(web.requests_to("example.test", "/robots.txt").len(), 1);
        let domain = common::get(&app, "/score/example.test").await;
        assert!(domain.body.contains(location.as_str()));
        let home = common::get(&app, "/").await;
        assert!(home.body.contains("href=\"/score/example.test\""));
        let sitemap = common::get(&app, "/sitemap.xml").await;
        assert!(sitemap
            .body
            .contains(&format!("http://service.test{location}</loc>")));
        let paste = send(&app, paste_form("User-agent: *\nDisalow: /x\n")).await;
        assert_eq!(paste.status(), 303);
        let paste_page = common::get(&app, paste.header("location").expect("a paste")).await;
        assert!(paste_page.body.contains("This report is private"));
        assert_eq!(paste_page.headers("x-robots-tag"), vec!["noindex"]);
        service.store().close().await;
    })
    .await;
}

fn paste_form(text: &str) -> Request<Body> {
    let body = format!(
        "--b\r\nContent-Disposition: form-data; name=\"robots\"\r\n\r\n{text}\r\n--b--\r\n"
    );
    Request::post("/paste")
        .header("content-type", "multipart/form-data; boundary=b")
        .body(Body::from(body))
        .expect("a request")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn folded_reports_redirect_and_noindex_follows_the_store() {
    on_both_backends(|target| async move {
        let web = TestWeb::start().await;
        let service = service(&target, &web).await;
        let store = service.store();
        let now = Timestamp::now();
        let year_ago = now - SignedDuration::from_hours(24 * 365);
        let old = stored(store, "https://folded.test/", year_ago, false).await;
        let new = stored(store, "https://folded.test/", now, false).await;
        stored(store, "https://hidden.test/", now, true).await;
        store.retention(now, false).await.expect("retention");
        let app = pages(&service);
        let gone = common::get(&app, &format!("/score/folded.test/{old}")).await;
        assert_eq!(gone.status(), 308);
        assert_eq!(gone.header("location"), Some("/score/folded.test"));
        let kept = common::get(&app, &format!("/score/folded.test/{new}")).await;
        assert_eq!(kept.status(), 200);
        let domain = common::get(&app, "/score/folded.test").await;
        assert!(domain.body.contains("Monthly summaries"));
        let hidden = common::get(&app, "/score/hidden.test").await;
        assert_eq!(hidden.headers("x-robots-tag"), vec!["noindex"]);
        let home = common::get(&app, "/").await.body;
        assert!(home.contains("folded.test") && !home.contains("hidden.test"));
        let sitemap = common::get(&app, "/sitemap.xml").await.body;
        assert!(!sitemap.contains("hidden.test"));
        assert_eq!(
            common::get(&app, "/score/nobody.test/abc").await.status(),
            404
        );
        let stats = common::get(&app, "/stats").await;
        assert_eq!(stats.status(), 200);
        assert!(stats.body.contains("Month by month"));
        store.close().await;
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn what_changed_compares_with_the_previous_report_only() {
    on_both_backends(|target| async move {
        let web = TestWeb::start().await;
        let service = service(&target, &web).await;
        let store = service.store();
        // Sub-millisecond times: the store keeps milliseconds.
        let now = Timestamp::now() + SignedDuration::from_nanos(123_456);
        let first = stored(store, "https://changes.test/", now, false).await;
        let app = pages(&service);
        let alone = common::get(&app, &format!("/score/changes.test/{first}")).await;
        assert!(
            alone.body.contains("first report of this address"),
            "{}",
            alone.body
        );
        let second = stored(
            store,
            "https://changes.test/",
            now + SignedDuration::from_secs(60),
            false,
        )
        .await;
        let later = common::get(&app, &format!("/score/changes.test/{second}")).await;
        assert!(later
            .body
            .contains("Since the previous report of this address"));
        store.close().await;
    })
    .await;
}

/// A robots.txt in Latin-1 (not UTF-8): `Disallow: /café` with `é` as the single byte 0xE9.
const LATIN1_ROBOTS: &[u8] = b"# Caf\xe9 du Monde\nUser-agent: *\nDisallow: /caf\xe9\n";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_latin1_robots_txt_is_stored_byte_exact_and_shown_readably() {
    on_both_backends(|target| async move {
        let web = TestWeb::start().await;
        web.site("example.test").path("/robots.txt").respond(
            Reply::ok()
                .header("Content-Type", "text/plain; charset=iso-8859-1")
                .body(LATIN1_ROBOTS),
        );
        web.site("example.test").path("/").respond(html_page());
        let service = service(&target, &web).await;
        let app = pages(&service);
        let target_url = web.http_url("example.test", "/");
        let answer = send(&app, form("/analyze", &format!("url={target_url}"))).await;
        let location = answer.header("location").expect("a location").to_owned();
        assert!(service
            .run_one_job(&Holder::new())
            .await
            .expect("a job ran"));
        let id: service::ReportId = location
            .rsplit('/')
            .next()
            .expect("an id")
            .parse()
            .expect("a report id");
        let stored = service.report(&id).await.expect("read").expect("stored");
        assert_eq!(
            stored.robots_body.as_deref(),
            Some(LATIN1_ROBOTS),
            "the bytes as served"
        );
        let analysis = stored.report.expect("done");
        assert_eq!(analysis.robots.body_bytes(), LATIN1_ROBOTS);
        assert!(!analysis.robots.body_is_utf8);
        assert!(
            analysis.robots.body.contains('\u{fffd}'),
            "the text is the lossy reading"
        );
        let page = common::get(&app, &location).await;
        assert_eq!(page.status(), 200);
        assert!(page.body.contains("# Café du Monde"), "{}", page.body);
        assert!(page.body.contains("Disallow: /café"));
        assert!(page.body.contains("not valid UTF-8"));
        // The listing reads as written; findings quote the engine's (lossy) reading of a line.
        let listing = page
            .body
            .split("id=\"robots-txt\"")
            .nth(1)
            .expect("the listing");
        let listing = listing.split("<h2").next().expect("its section");
        assert!(!listing.contains('\u{fffd}'), "{listing}");
        service.store().close().await;
    })
    .await;
}
