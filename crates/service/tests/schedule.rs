//! The schedule against the test web on both backends, on a manual clock (sleeps move it at
//! once and are recorded): one site at a time 15 s apart, results expiring after 7 days,
//! back-off for an unreachable site, 429 with and without Retry-After, 403 and a challenge
//! page; the state surviving a restart; one scheduler at a time.

use std::sync::Arc;
use std::time::Duration;

use db::testing::on_both_backends;
use db::DbTarget;
use jiff::Timestamp;
use service::clock::add;
use service::limits::{BETWEEN_SITES, RESULT_LIFETIME, SCHEDULER_IDLE_POLL, SCHEDULER_LEASE};
use service::schedule::CheckOutcome;
use service::{Clock, ManualClock, Scheduler, Service, ServiceConfig, Store, Tick};
use testweb::{Reply, TestWeb};
use url::Url;

const HOUR: Duration = Duration::from_secs(3600);
const DAY: Duration = Duration::from_secs(86_400);

fn closed_port() -> u16 {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    listener.local_addr().unwrap().port()
}

fn sites(web: &TestWeb) {
    web.site("ok.test")
        .path("/robots.txt")
        .respond(Reply::robots_txt("User-agent: *\nAllow: /\n"));
    web.site("busy.test")
        .path("/robots.txt")
        .respond(Reply::status(429));
    web.site("slow.test")
        .path("/robots.txt")
        .respond(Reply::status(429).header("Retry-After", "7200"));
    web.site("deny.test")
        .path("/robots.txt")
        .respond(Reply::status(403));
    web.site("deny.test").path("/").respond(Reply::status(403));
    web.site("chal.test").path("/robots.txt").respond(
        Reply::status(403)
            .header("cf-mitigated", "challenge")
            .header("Content-Type", "text/html")
            .body("<html><head><title>Just a moment...</title></head></html>"),
    );
}

async fn service(
    target: &DbTarget,
    web: &TestWeb,
    down_port: u16,
    clock: Arc<ManualClock>,
) -> Service {
    let store = Store::open(target).await.unwrap();
    let mut config = fetch::FetchConfig::new("RobotsTxtParser", "http://service.test/bot");
    config.allow_private_addresses = true;
    for host in [
        "ok.test",
        "busy.test",
        "slow.test",
        "deny.test",
        "chal.test",
        "long.test",
        "page429.test",
        "pagechal.test",
        "pagecf.test",
        "two.test",
        "icon.test",
        "page.icon.test",
        "paced.test",
    ] {
        for pin in web.pins(host) {
            config.resolve.push(pin.parse().unwrap());
        }
    }
    config
        .resolve
        .push(format!("down.test:{down_port}:127.0.0.1").parse().unwrap());
    let fetcher = fetch::Fetcher::new(config).unwrap();
    let config = ServiceConfig::new("http://service.test/".parse().unwrap());
    Service::new(store, fetcher, config, clock)
}

fn start() -> Timestamp {
    "2026-03-01T00:00:00Z".parse().unwrap()
}

#[tokio::test(flavor = "multi_thread")]
async fn one_site_at_a_time_with_back_off_by_outcome() {
    on_both_backends(|target| async move {
        let web = TestWeb::start().await;
        sites(&web);
        let down = closed_port();
        let clock = ManualClock::new(start());
        let service = service(&target, &web, down, clock.clone()).await;
        let urls: Vec<Url> = [
            "ok.test",
            "busy.test",
            "slow.test",
            "deny.test",
            "chal.test",
        ]
        .iter()
        .map(|h| Url::parse(&web.http_url(h, "/")).unwrap())
        .chain([Url::parse(&format!("http://down.test:{down}/")).unwrap()])
        .collect();
        service.store().add_sites(&urls, start()).await.unwrap();
        let scheduler = Scheduler::new(service.clone());
        let mut outcomes = std::collections::BTreeMap::new();
        for _ in 0..6 {
            let Tick::Checked { url, outcome } = scheduler.step().await else {
                panic!("a check")
            };
            outcomes.insert(url.host_str().unwrap().to_owned(), outcome);
        }
        assert_eq!(
            clock.take_sleeps(),
            vec![BETWEEN_SITES; 6],
            "15 s between sites"
        );
        let failure = CheckOutcome::Failure { retry_after: None };
        assert_eq!(outcomes["ok.test"], CheckOutcome::Ok);
        assert_eq!(outcomes["down.test"], failure);
        assert_eq!(outcomes["busy.test"], failure);
        assert_eq!(
            outcomes["slow.test"],
            CheckOutcome::Failure {
                retry_after: Some(2 * HOUR)
            }
        );
        assert_eq!(outcomes["deny.test"], CheckOutcome::Refusal);
        assert_eq!(outcomes["chal.test"], CheckOutcome::Refusal);
        // Nothing is due now: everything was just checked or backs off.
        assert_eq!(scheduler.step().await, Tick::NothingDue);
        assert_eq!(clock.take_sleeps(), vec![SCHEDULER_IDLE_POLL]);

        // The state survives a restart: a new process sees the same back-offs.
        drop(scheduler);
        let service = self::service(&target, &web, down, clock.clone()).await;
        let scheduler = Scheduler::new(service.clone());
        let until = |host: &str| {
            let store = service.store().clone();
            let site = service::site_of(
                &urls
                    .iter()
                    .find(|u| u.host_str() == Some(host))
                    .unwrap()
                    .clone(),
            );
            async move { store.backoff(&site).await.unwrap().unwrap() }
        };
        let t0 = start();
        for (host, wait) in [
            ("busy.test", HOUR),
            ("down.test", HOUR),
            ("slow.test", 2 * HOUR),
            ("deny.test", DAY),
            ("chal.test", DAY),
        ] {
            let b = until(host).await;
            let since = t0.duration_until(b.until).unsigned_abs();
            assert!(
                since >= wait && since < wait + Duration::from_secs(600),
                "{host}: {since:?}"
            );
        }
        // Scheduler lease: the first scheduler's lease (dropped, never released) blocks
        // this one until it expires.
        assert_eq!(scheduler.tick().await.unwrap(), Tick::NotLeader);
        clock.advance(SCHEDULER_LEASE);
        assert_eq!(
            scheduler.tick().await.unwrap(),
            Tick::NothingDue,
            "taken over"
        );
        clock.set(add(t0, HOUR + Duration::from_secs(300)));
        // busy and down are due again after an hour; they fail again: two hours now.
        let mut again = Vec::new();
        while let Tick::Checked { url, .. } = scheduler.step().await {
            again.push(url.host_str().unwrap().to_owned());
        }
        again.sort();
        assert_eq!(again, vec!["busy.test", "down.test"]);
        assert_eq!(until("busy.test").await.failures, 2);
        assert_eq!(web.requests_to("busy.test", "/robots.txt").len(), 2);
        assert_eq!(
            web.requests_to("ok.test", "/robots.txt").len(),
            1,
            "fetched at most once per 7 days"
        );

        // After 7 days the good site is checked again.
        clock.set(add(t0, RESULT_LIFETIME));
        let mut week = Vec::new();
        while let Tick::Checked { url, .. } = scheduler.step().await {
            week.push(url.host_str().unwrap().to_owned());
        }
        assert!(week.contains(&"ok.test".to_owned()), "{week:?}");
        assert_eq!(web.requests_to("ok.test", "/robots.txt").len(), 2);
    })
    .await;
}

#[tokio::test(flavor = "multi_thread")]
async fn a_restarted_scheduler_waits_out_the_pause_between_sites() {
    on_both_backends(|target| async move {
        let web = TestWeb::start().await;
        sites(&web);
        let clock = ManualClock::new(start());
        let service = service(&target, &web, closed_port(), clock.clone()).await;
        service.store().set_last_check(start()).await.unwrap();
        clock.advance(Duration::from_secs(5));
        Scheduler::new(service).resume().await.unwrap();
        assert_eq!(
            clock.take_sleeps(),
            vec![BETWEEN_SITES - Duration::from_secs(5)]
        );
    })
    .await;
}

/// An icon source that counts its calls and answers with a fixed PNG.
struct FakeIcons(std::sync::atomic::AtomicUsize, Option<Vec<u8>>);

impl service::icons::IconSource for FakeIcons {
    fn find<'a>(
        &'a self,
        request: service::icons::IconRequest<'a>,
    ) -> service::icons::BoxFuture<'a, Option<Vec<u8>>> {
        assert_eq!(request.home.path(), "/", "looked for from the home page");
        self.0.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        Box::pin(async move { self.1.clone() })
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn icons_are_looked_for_after_checks_when_due() {
    on_both_backends(|target| async move {
        let web = TestWeb::start().await;
        sites(&web);
        let clock = ManualClock::new(start());
        let service = service(&target, &web, closed_port(), clock.clone()).await;
        let icons = Arc::new(FakeIcons(
            Default::default(),
            Some(b"\x89PNG icon".to_vec()),
        ));
        service.set_icon_source(icons.clone());
        let url = Url::parse(&web.http_url("ok.test", "/some/page?q=1")).unwrap();
        service.store().add_sites(&[url], start()).await.unwrap();
        let scheduler = Scheduler::new(service.clone());
        assert!(matches!(scheduler.step().await, Tick::Checked { .. }));
        assert_eq!(icons.0.load(std::sync::atomic::Ordering::SeqCst), 1);
        let icon = service.store().icon("ok.test").await.unwrap().unwrap();
        assert_eq!(icon.png, b"\x89PNG icon");
        // A week later the page is checked again, but the icon is not 30 days old.
        clock.set(add(start(), RESULT_LIFETIME));
        assert!(matches!(scheduler.step().await, Tick::Checked { .. }));
        assert_eq!(icons.0.load(std::sync::atomic::Ordering::SeqCst), 1);
    })
    .await;
}

/// A 1×1 PNG.
const PNG: &str =
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAQAAAC1HAwCAAAAC0lEQVR42mNkYAAAAAYAAjCB0C8AAAAASUVORK5CYII=";

#[tokio::test(flavor = "multi_thread")]
async fn icons_are_fetched_politely_from_favicon_ico_and_shrunk() {
    on_both_backends(|target| async move {
        let web = TestWeb::start().await;
        sites(&web);
        let png = data_encoding::BASE64.decode(PNG.as_bytes()).unwrap();
        web.site("ok.test")
            .path("/")
            .respond(Reply::html("<head></head>"));
        web.site("ok.test")
            .path("/favicon.ico")
            .respond(Reply::ok().body(&png));
        web.site("deny.test")
            .path("/favicon.ico")
            .respond(Reply::ok().body(&png));
        let clock = ManualClock::new(start());
        let service = service(&target, &web, closed_port(), clock.clone()).await;
        let fetcher = {
            let mut config = fetch::FetchConfig::new("RobotsTxtParser", "http://service.test/bot");
            config.allow_private_addresses = true;
            for host in ["ok.test", "deny.test"] {
                for pin in web.pins(host) {
                    config.resolve.push(pin.parse().unwrap());
                }
            }
            fetch::Fetcher::new(config).unwrap()
        };
        service.set_icon_source(Arc::new(service::icons::FetchedIcons::new(
            fetcher,
            icon::IconDecoder::InProcess,
        )));
        web.site("deny.test")
            .path("/robots.txt")
            .respond(Reply::robots_txt("User-agent: *\nDisallow: /favicon.ico\n"));
        let urls = [web.http_url("ok.test", "/"), web.http_url("deny.test", "/")]
            .map(|u| Url::parse(&u).unwrap());
        service.store().add_sites(&urls, start()).await.unwrap();
        let scheduler = Scheduler::new(service.clone());
        for _ in 0..2 {
            assert!(matches!(scheduler.step().await, Tick::Checked { .. }));
        }
        let icon = service
            .store()
            .icon("ok.test")
            .await
            .unwrap()
            .expect("an icon");
        assert!(icon.png.starts_with(b"\x89PNG"), "a PNG");
        assert_eq!(web.requests_to("ok.test", "/favicon.ico").len(), 1);
        assert!(service.store().icon("deny.test").await.unwrap().is_none());
        assert!(
            web.requests_to("deny.test", "/favicon.ico").is_empty(),
            "robots.txt forbids it"
        );
    })
    .await;
}

/// Runs one scheduled check of `url` (the only one due) and answers its outcome.
async fn check_one(scheduler: &Scheduler, url: &Url) -> CheckOutcome {
    match scheduler.tick().await.unwrap() {
        Tick::Checked {
            url: checked,
            outcome,
        } => {
            assert_eq!(&checked, url);
            outcome
        }
        other => panic!("{url}: {other:?}"),
    }
}

/// How long after `from` the site of `url` is left alone.
async fn backoff_after(service: &Service, url: &Url, from: Timestamp) -> Duration {
    let site = service::site_of(url);
    let backoff = service.store().backoff(&site).await.unwrap().unwrap();
    from.duration_until(backoff.until).unsigned_abs()
}

#[tokio::test(flavor = "multi_thread")]
async fn retry_after_is_read_as_sent_up_to_seven_days_from_robots_txt_and_the_page() {
    on_both_backends(|target| async move {
        let web = TestWeb::start().await;
        // Three days: longer than the fetcher's own one-day cap.
        web.site("long.test")
            .path("/robots.txt")
            .respond(Reply::status(503).header("Retry-After", "259200"));
        web.site("page429.test")
            .path("/robots.txt")
            .respond(Reply::robots_txt("User-agent: *\nAllow: /\n"));
        web.site("page429.test")
            .path("/")
            .respond(Reply::status(429).header("Retry-After", "172800"));
        let clock = ManualClock::new(start());
        let service = service(&target, &web, closed_port(), clock.clone()).await;
        let scheduler = Scheduler::new(service.clone());
        let long = Url::parse(&web.http_url("long.test", "/")).unwrap();
        service
            .store()
            .add_sites(std::slice::from_ref(&long), start())
            .await
            .unwrap();
        assert_eq!(
            check_one(&scheduler, &long).await,
            CheckOutcome::Failure {
                retry_after: Some(3 * DAY)
            }
        );
        let wait = backoff_after(&service, &long, start()).await;
        assert!(wait >= 3 * DAY && wait < 3 * DAY + HOUR, "{wait:?}");
        // A day and an hour later (when the fetcher's cap would have let it go) it is left
        // alone; three days later it is checked again.
        clock.set(add(start(), DAY + HOUR));
        assert_eq!(scheduler.tick().await.unwrap(), Tick::NothingDue);
        assert_eq!(web.requests_to("long.test", "/robots.txt").len(), 1);
        clock.set(add(start(), 3 * DAY + HOUR));
        check_one(&scheduler, &long).await;
        assert_eq!(web.requests_to("long.test", "/robots.txt").len(), 2);

        // A page's 429 is read too.
        let page = Url::parse(&web.http_url("page429.test", "/")).unwrap();
        service
            .store()
            .add_sites(std::slice::from_ref(&page), start())
            .await
            .unwrap();
        let t = clock.now();
        assert_eq!(
            check_one(&scheduler, &page).await,
            CheckOutcome::Failure {
                retry_after: Some(2 * DAY)
            }
        );
        let wait = backoff_after(&service, &page, t).await;
        assert!(wait >= 2 * DAY && wait < 2 * DAY + HOUR, "{wait:?}");
        assert_eq!(web.requests_to("page429.test", "/").len(), 1);
    })
    .await;
}

#[tokio::test(flavor = "multi_thread")]
async fn a_challenge_on_the_analysed_page_backs_off_for_a_day() {
    on_both_backends(|target| async move {
        let web = TestWeb::start().await;
        for host in ["pagechal.test", "pagecf.test"] {
            web.site(host)
                .path("/robots.txt")
                .respond(Reply::robots_txt("User-agent: *\nAllow: /\n"));
        }
        // A challenge page behind a 503, with no header saying so.
        web.site("pagechal.test").path("/").respond(
            Reply::status(503)
                .header("Content-Type", "text/html")
                .body("<!DOCTYPE html><html><head><title>Just a moment...</title></head></html>"),
        );
        // A 200 that says it is a challenge.
        web.site("pagecf.test").path("/").respond(
            Reply::ok()
                .header("Content-Type", "text/html")
                .header("cf-mitigated", "challenge")
                .body("<html><head></head></html>"),
        );
        let clock = ManualClock::new(start());
        let service = service(&target, &web, closed_port(), clock.clone()).await;
        let scheduler = Scheduler::new(service.clone());
        for host in ["pagechal.test", "pagecf.test"] {
            let url = Url::parse(&web.http_url(host, "/")).unwrap();
            service
                .store()
                .add_sites(std::slice::from_ref(&url), start())
                .await
                .unwrap();
            let t = clock.now();
            assert_eq!(
                check_one(&scheduler, &url).await,
                CheckOutcome::Refusal,
                "{host}"
            );
            let wait = backoff_after(&service, &url, t).await;
            assert!(wait >= DAY && wait < DAY + HOUR, "{host}: {wait:?}");
        }
        clock.set(add(start(), DAY - HOUR));
        assert_eq!(scheduler.tick().await.unwrap(), Tick::NothingDue);
        for host in ["pagechal.test", "pagecf.test"] {
            assert_eq!(web.requests_to(host, "/").len(), 1, "{host}");
        }
    })
    .await;
}

#[tokio::test(flavor = "multi_thread")]
async fn when_a_back_off_ends_only_the_url_that_failed_is_fetched_again() {
    on_both_backends(|target| async move {
        let web = TestWeb::start().await;
        // robots.txt answers the first check, then fails once.
        web.site("two.test").path("/robots.txt").script([
            Reply::robots_txt("User-agent: *\nAllow: /\n"),
            Reply::status(503),
            Reply::robots_txt("User-agent: *\nAllow: /\n"),
        ]);
        for path in ["/a", "/b"] {
            web.site("two.test")
                .path(path)
                .respond(Reply::html("<head></head>"));
        }
        let clock = ManualClock::new(start());
        let service = service(&target, &web, closed_port(), clock.clone()).await;
        let scheduler = Scheduler::new(service.clone());
        let [a, b] = ["/a", "/b"].map(|p| Url::parse(&web.http_url("two.test", p)).unwrap());
        service
            .store()
            .add_sites(&[a.clone(), b.clone()], start())
            .await
            .unwrap();
        assert_eq!(check_one(&scheduler, &a).await, CheckOutcome::Ok);
        clock.advance(BETWEEN_SITES);
        let failure = CheckOutcome::Failure { retry_after: None };
        assert_eq!(check_one(&scheduler, &b).await, failure);
        // The back-off (an hour) ends: /b, whose check failed, is due; /a was fetched an
        // hour ago and waits for its seven days.
        clock.set(add(start(), 2 * HOUR));
        assert_eq!(check_one(&scheduler, &b).await, CheckOutcome::Ok);
        assert_eq!(scheduler.tick().await.unwrap(), Tick::NothingDue);
        assert_eq!(web.requests_to("two.test", "/a").len(), 1, "/a once");
        assert_eq!(
            web.requests_to("two.test", "/b").len(),
            1,
            "/b once it answered"
        );
        assert_eq!(web.requests_to("two.test", "/robots.txt").len(), 3);
        clock.set(add(start(), RESULT_LIFETIME));
        assert_eq!(check_one(&scheduler, &a).await, CheckOutcome::Ok);
        assert_eq!(web.requests_to("two.test", "/a").len(), 2);
    })
    .await;
}

#[tokio::test(flavor = "multi_thread")]
async fn a_removed_domain_leaves_the_schedule_and_its_back_off() {
    on_both_backends(|target| async move {
        let web = TestWeb::start().await;
        sites(&web);
        let clock = ManualClock::new(start());
        let service = service(&target, &web, closed_port(), clock.clone()).await;
        let scheduler = Scheduler::new(service.clone());
        let [ok, busy] =
            ["ok.test", "busy.test"].map(|h| Url::parse(&web.http_url(h, "/")).unwrap());
        service
            .store()
            .add_sites(&[ok.clone(), busy.clone()], start())
            .await
            .unwrap();
        for _ in 0..2 {
            assert!(matches!(scheduler.step().await, Tick::Checked { .. }));
        }
        let site = service::site_of(&busy);
        assert!(service.store().backoff(&site).await.unwrap().is_some());
        let name = service::store::domain_of_name("WWW.busy.test").unwrap();
        let removed = service.store().remove_domain(&name, false).await.unwrap();
        assert_eq!(
            (removed.reports, removed.scheduled, removed.backoffs),
            (1, 1, 1)
        );
        assert!(service.store().backoff(&site).await.unwrap().is_none());
        let removed = service
            .store()
            .remove_domain("ok.test", false)
            .await
            .unwrap();
        assert_eq!((removed.reports, removed.scheduled), (1, 1));
        assert!(service.store().sites().await.unwrap().is_empty());
        // Past both the back-off and the results' expiry: nothing of them is due.
        clock.set(add(start(), RESULT_LIFETIME + DAY));
        assert_eq!(scheduler.tick().await.unwrap(), Tick::NothingDue);
        assert_eq!(web.requests_to("busy.test", "/robots.txt").len(), 1);
        assert_eq!(web.requests_to("ok.test", "/robots.txt").len(), 1);
    })
    .await;
}

/// Queues a person's analysis of `url` and runs it as a worker does.
async fn person_analyses(service: &Service, url: &Url, clock: &ManualClock) {
    service
        .store()
        .queue_analysis(url, clock.now(), false)
        .await
        .unwrap();
    assert!(service.run_one_job(&db::Holder::new()).await.unwrap());
}

#[tokio::test(flavor = "multi_thread")]
async fn icons_come_from_what_the_analysis_read_after_a_persons_analysis_too() {
    on_both_backends(|target| async move {
        let web = TestWeb::start().await;
        let png = data_encoding::BASE64.decode(PNG.as_bytes()).unwrap();
        let robots = "User-agent: *\nAllow: /\n";
        for host in ["icon.test", "page.icon.test"] {
            web.site(host)
                .path("/robots.txt")
                .respond(Reply::robots_txt(robots));
            web.site(host).path("/").respond(Reply::html(
                r#"<head><link rel="icon" href="/i.png"></head><body>"#,
            ));
            web.site(host)
                .path("/i.png")
                .respond(Reply::ok().body(&png));
        }
        web.site("page.icon.test")
            .path("/about")
            .respond(Reply::html("<head></head>"));
        // A Crawl-delay of 1 s: the icon waits for it after the analysis's page.
        web.site("paced.test")
            .path("/robots.txt")
            .respond(Reply::robots_txt("User-agent: *\nCrawl-delay: 1\n"));
        web.site("paced.test")
            .path("/")
            .respond(Reply::html("<head></head>"));
        web.site("paced.test")
            .path("/favicon.ico")
            .respond(Reply::ok().body(&png));
        web.site("busy.test")
            .path("/robots.txt")
            .respond(Reply::status(429));
        let clock = ManualClock::new(start());
        let service = service(&target, &web, closed_port(), clock.clone()).await;
        let mut config = fetch::FetchConfig::new("RobotsTxtParser", "http://service.test/bot");
        config.allow_private_addresses = true;
        for host in ["icon.test", "page.icon.test", "paced.test", "busy.test"] {
            for pin in web.pins(host) {
                config.resolve.push(pin.parse().unwrap());
            }
        }
        let fetcher = fetch::Fetcher::new(config).unwrap();
        service.set_icon_source(Arc::new(service::icons::FetchedIcons::new(
            fetcher,
            icon::IconDecoder::InProcess,
        )));

        // A person analyses the home page: the icon is found from what it read.
        let home = Url::parse(&web.http_url("icon.test", "/")).unwrap();
        person_analyses(&service, &home, &clock).await;
        let icon = service.store().icon("icon.test").await.unwrap();
        assert!(icon.expect("an icon").png.starts_with(b"\x89PNG"));
        assert_eq!(web.requests_to("icon.test", "/robots.txt").len(), 1);
        assert_eq!(
            web.requests_to("icon.test", "/").len(),
            1,
            "the home page once"
        );
        assert_eq!(web.requests_to("icon.test", "/i.png").len(), 1);
        assert!(web.requests_to("icon.test", "/favicon.ico").is_empty());

        // A scheduled check of another page: robots.txt once, the home page for its links.
        let about = Url::parse(&web.http_url("page.icon.test", "/about")).unwrap();
        service
            .store()
            .add_sites(std::slice::from_ref(&about), start())
            .await
            .unwrap();
        let scheduler = Scheduler::new(service.clone());
        assert_eq!(check_one(&scheduler, &about).await, CheckOutcome::Ok);
        // page.icon.test shares icon.test's registrable domain, whose icon is fresh.
        assert_eq!(web.requests_to("page.icon.test", "/robots.txt").len(), 1);
        assert!(web.requests_to("page.icon.test", "/").is_empty());

        // Crawl-delay: the icon request waits for it after the page.
        let paced = Url::parse(&web.http_url("paced.test", "/")).unwrap();
        person_analyses(&service, &paced, &clock).await;
        assert!(service.store().icon("paced.test").await.unwrap().is_some());
        assert_eq!(web.requests_to("paced.test", "/robots.txt").len(), 1);
        let page = web.requests_to("paced.test", "/")[0].at;
        let icon = web.requests_to("paced.test", "/favicon.ico")[0].at;
        assert!(icon.duration_since(page) >= Duration::from_millis(900));

        // After a 429, no icon search at all.
        let busy = Url::parse(&web.http_url("busy.test", "/")).unwrap();
        person_analyses(&service, &busy, &clock).await;
        assert_eq!(web.requests_to("busy.test", "/robots.txt").len(), 1);
        assert!(web.requests_to("busy.test", "/favicon.ico").is_empty());
        assert!(web.requests_to("busy.test", "/").is_empty());
    })
    .await;
}
