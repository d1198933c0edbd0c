//! The polite icon search against real loopback servers (crates/testweb), asserting what the
//! servers were asked; the deadline on tokio's paused clock with the scripted web.

use std::time::Duration;

use fetch::{FetchConfig, Fetcher, ResolvePin, SkipReason, StatusCode};
use icon::{
    find_icon, AttemptResult, HomePage, HomePageRead, IconDecoder, IconError, IconSearch,
    IconSource, RelKind, BOT_TOKEN, CRAWL_DELAY_BUDGET, FIND_ICON_DEADLINE, HOME_PAGE_MAX_BYTES,
    MAX_DECLARED_TRIED, MAX_ICON_BYTES,
};
use image::{ImageFormat, Rgba};
use testweb::{Reply, TestWeb};
use url::Url;

mod bombs;

fn make_fetcher(web: &TestWeb, hosts: &[&str]) -> Fetcher {
    let mut config = FetchConfig::new(BOT_TOKEN, "https://robotstxtparser.example/bot");
    config.allow_private_addresses = true;
    for host in hosts {
        for pin in web.pins(host) {
            config.resolve.push(pin.parse::<ResolvePin>().expect("pin"));
        }
    }
    Fetcher::new(config).expect("fetcher")
}

fn image_bytes(colour: [u8; 4], size: u32, format: ImageFormat) -> Vec<u8> {
    bombs::encode(&bombs::solid(size, size, Rgba(colour)), format)
}

/// [`find_icon`] decoding in this process: the images are the test's own.
async fn find_in_process(
    fetcher: &Fetcher,
    site: &Url,
    home_page: Option<HomePage<'_>>,
) -> IconSearch {
    find_icon(fetcher, site, home_page, &IconDecoder::InProcess).await
}

/// The search of `host`'s icon on the test web, its home page fetched.
async fn find_on_web(web: &TestWeb, host: &str) -> IconSearch {
    find_in_process(&make_fetcher(web, &[host]), &site(web, host), None).await
}

/// The colour at the centre of a found icon.
fn centre(png: &[u8]) -> [u8; 4] {
    let image = image::load_from_memory(png).expect("a PNG").into_rgba8();
    assert_eq!(image.dimensions(), (64, 64));
    image.get_pixel(32, 32).0
}

const GREEN: [u8; 4] = [0, 255, 0, 255];
const BLUE: [u8; 4] = [0, 0, 255, 255];

fn home_page(links: &str) -> Reply {
    Reply::ok()
        .header("Content-Type", "text/html")
        .body(format!(
            "<html><head><title>x</title>{links}</head><body>page</body></html>"
        ))
}

fn paths(web: &TestWeb) -> Vec<String> {
    web.requests().into_iter().map(|r| r.path).collect()
}

fn site(web: &TestWeb, host: &str) -> Url {
    Url::parse(&web.http_url(host, "/")).expect("a site URL")
}

#[tokio::test]
async fn the_best_declared_icon_is_used() {
    let web = TestWeb::start().await;
    let host = "declared.test";
    web.site(host)
        .path("/robots.txt")
        .respond(Reply::robots_txt("User-agent: *\nAllow: /\n"));
    web.site(host).path("/").respond(home_page(
        r#"<link rel="icon" href="/small.png" sizes="16x16">
           <link rel="icon" href="static/big.png" sizes="128x128">"#,
    ));
    web.site(host).path("/static/big.png").respond(
        Reply::ok()
            .header("Content-Type", "image/png")
            .body(image_bytes(GREEN, 128, ImageFormat::Png)),
    );
    web.site(host)
        .path("/small.png")
        .respond(Reply::ok().body(image_bytes(BLUE, 16, ImageFormat::Png)));
    let search = find_on_web(&web, host).await;
    let found = search.icon.expect("an icon");
    assert_eq!(found.url.path(), "/static/big.png");
    assert_eq!(centre(found.png.as_bytes()), GREEN);
    assert!(matches!(
        search.home_page,
        HomePageRead::Fetched(StatusCode::OK)
    ));
    assert_eq!(search.declared.len(), 2);
    assert_eq!(search.attempts.len(), 1);
    assert_eq!(
        search.attempts[0].source,
        IconSource::Declared(RelKind::Icon)
    );
    assert_eq!(paths(&web), ["/robots.txt", "/", "/static/big.png"]);
    let icon_request = &web.requests_to(host, "/static/big.png")[0];
    let agent = icon_request.header("user-agent").expect("a User-Agent");
    assert!(agent.contains("RobotsTxtParser/"), "{agent}");
}

#[tokio::test]
async fn favicon_ico_is_the_fallback_after_broken_declared_icons() {
    let web = TestWeb::start().await;
    let host = "fallback.test";
    web.site(host)
        .path("/robots.txt")
        .respond(Reply::status(404));
    web.site(host).path("/").respond(home_page(
        r#"<link rel="icon" href="/gone.png"><link rel="apple-touch-icon" href="/broken.png">"#,
    ));
    web.site(host)
        .path("/broken.png")
        .respond(Reply::ok().body("<html>oops</html>"));
    web.site(host).path("/favicon.ico").respond(
        Reply::ok()
            .header("Content-Type", "text/plain")
            .body(image_bytes(GREEN, 32, ImageFormat::Ico)),
    );
    let search = find_on_web(&web, host).await;
    let found = search.icon.expect("an icon");
    assert_eq!(found.url.path(), "/favicon.ico");
    assert_eq!(centre(found.png.as_bytes()), GREEN);
    let results: Vec<&AttemptResult> = search.attempts.iter().map(|a| &a.result).collect();
    assert!(matches!(
        results[0],
        AttemptResult::Broken(IconError::Unrecognised)
    ));
    assert!(matches!(
        results[1],
        AttemptResult::Status(StatusCode::NOT_FOUND)
    ));
    assert!(matches!(results[2], AttemptResult::Used));
    assert_eq!(search.attempts[2].source, IconSource::FaviconIco);
    assert_eq!(
        paths(&web),
        [
            "/robots.txt",
            "/",
            "/broken.png",
            "/gone.png",
            "/favicon.ico"
        ]
    );
}

#[tokio::test]
async fn robots_forbidden_icon_paths_are_never_requested() {
    let web = TestWeb::start().await;
    let host = "forbidden.test";
    web.site(host).path("/robots.txt").respond(Reply::robots_txt(
        "User-agent: *\nDisallow: /\n\nUser-agent: RobotsTxtParser\nAllow: /$\nDisallow: /static/\nDisallow: /favicon.ico\n",
    ));
    web.site(host)
        .path("/")
        .respond(home_page(r#"<link rel="icon" href="/static/icon.png">"#));
    web.site(host)
        .path("/static/icon.png")
        .respond(Reply::ok().body(image_bytes(GREEN, 64, ImageFormat::Png)));
    web.site(host)
        .path("/favicon.ico")
        .respond(Reply::ok().body(image_bytes(GREEN, 16, ImageFormat::Ico)));
    let search = find_on_web(&web, host).await;
    assert!(search.icon.is_none());
    assert_eq!(search.attempts.len(), 2);
    for attempt in &search.attempts {
        assert!(
            matches!(
                attempt.result,
                AttemptResult::Skipped(SkipReason::Disallowed { .. })
            ),
            "{attempt:?}"
        );
    }
    assert!(web.requests_to(host, "/static/icon.png").is_empty());
    assert!(web.requests_to(host, "/favicon.ico").is_empty());
    assert_eq!(paths(&web), ["/robots.txt", "/"]);
}

#[tokio::test]
async fn a_forbidden_home_page_still_allows_favicon_ico() {
    let web = TestWeb::start().await;
    let host = "nohome.test";
    web.site(host)
        .path("/robots.txt")
        .respond(Reply::robots_txt(
            "User-agent: RobotsTxtParser\nDisallow: /\nAllow: /favicon.ico\n",
        ));
    web.site(host)
        .path("/favicon.ico")
        .respond(Reply::ok().body(image_bytes(BLUE, 48, ImageFormat::Png)));
    let search = find_on_web(&web, host).await;
    assert!(matches!(
        search.home_page,
        HomePageRead::Skipped(SkipReason::Disallowed { .. })
    ));
    assert_eq!(centre(search.icon.expect("an icon").png.as_bytes()), BLUE);
    assert_eq!(paths(&web), ["/robots.txt", "/favicon.ico"]);
}

#[tokio::test]
async fn broken_and_bomb_images_give_no_icon() {
    let web = TestWeb::start().await;
    let host = "hostile.test";
    web.site(host)
        .path("/robots.txt")
        .respond(Reply::status(404));
    web.site(host).path("/").respond(home_page(
        r#"<link rel="icon" href="/bomb.png" sizes="64x64"><link rel="icon" href="/truncated.png" sizes="32x32">
           <link rel="icon" href="/huge.ico" sizes="16x16">"#,
    ));
    // A PNG declaring 100,000 × 100,000 pixels.
    let bomb = bombs::png_declaring(100_000, 100_000, 8);
    web.site(host)
        .path("/bomb.png")
        .respond(Reply::ok().body(bomb));
    let png = image_bytes(GREEN, 64, ImageFormat::Png);
    web.site(host)
        .path("/truncated.png")
        .respond(Reply::ok().body(&png[..png.len() / 2]));
    web.site(host)
        .path("/huge.ico")
        .respond(Reply::ok().body(vec![0u8; MAX_ICON_BYTES + 10]));
    web.site(host)
        .path("/favicon.ico")
        .respond(Reply::ok().body(b"\x00\x00\x01\x00garbage"));
    let search = find_on_web(&web, host).await;
    assert!(search.icon.is_none());
    let results: Vec<String> = search
        .attempts
        .iter()
        .map(|a| format!("{:?}", a.result))
        .collect();
    assert!(
        matches!(
            search.attempts[0].result,
            AttemptResult::Broken(IconError::Limits(_))
        ),
        "{results:?}"
    );
    assert!(
        matches!(
            search.attempts[1].result,
            AttemptResult::Broken(IconError::Decode(_))
        ),
        "{results:?}"
    );
    assert!(
        matches!(
            search.attempts[2].result,
            AttemptResult::Broken(IconError::TooLarge { .. })
        ),
        "{results:?}"
    );
    assert!(
        matches!(search.attempts[3].result, AttemptResult::Broken(_)),
        "{results:?}"
    );
    assert_eq!(search.attempts.len(), 4);
}

#[tokio::test]
async fn a_given_home_page_is_not_fetched_again_and_resolves_against_its_final_url() {
    let web = TestWeb::start().await;
    let host = "given.test";
    web.site(host)
        .path("/robots.txt")
        .respond(Reply::status(404));
    web.site(host)
        .path("/en/touch.png")
        .respond(Reply::ok().body(image_bytes(BLUE, 180, ImageFormat::Png)));
    let final_url = Url::parse(&web.http_url(host, "/en/index.html")).expect("a URL");
    let html = br#"<head><link rel="apple-touch-icon" href="touch.png"></head>"#;
    let page = HomePage {
        url: &final_url,
        html,
    };
    let search = find_in_process(&make_fetcher(&web, &[host]), &site(&web, host), Some(page)).await;
    assert!(matches!(search.home_page, HomePageRead::Given));
    assert_eq!(centre(search.icon.expect("an icon").png.as_bytes()), BLUE);
    assert_eq!(paths(&web), ["/robots.txt", "/en/touch.png"]);
}

#[tokio::test]
async fn an_svg_icon_is_rendered_and_its_external_image_never_requested() {
    let web = TestWeb::start().await;
    let host = "svg.test";
    let pixel = web.http_url(host, "/pixel.png");
    web.site(host)
        .path("/robots.txt")
        .respond(Reply::status(404));
    web.site(host).path("/").respond(home_page(
        r#"<link rel="icon" href="/logo.svg" type="image/svg+xml">"#,
    ));
    web.site(host).path("/logo.svg").respond(Reply::ok().header("Content-Type", "image/svg+xml").body(format!(
        r#"<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 10 10"><rect width="10" height="10" fill="blue"/><image href="{pixel}" width="10" height="10"/></svg>"#
    )));
    web.site(host)
        .path("/pixel.png")
        .respond(Reply::ok().body(image_bytes(GREEN, 10, ImageFormat::Png)));
    let search = find_on_web(&web, host).await;
    assert_eq!(centre(search.icon.expect("an icon").png.as_bytes()), BLUE);
    assert!(web.requests_to(host, "/pixel.png").is_empty());
    assert_eq!(paths(&web), ["/robots.txt", "/", "/logo.svg"]);
}

#[tokio::test(start_paused = true)]
async fn one_deadline_covers_the_whole_search() {
    use fetch::testing::{Reply as Scripted, ScriptedWeb};
    let web = ScriptedWeb::new();
    web.route("https://slow.test/robots.txt", Scripted::status(404));
    web.route(
        "https://slow.test/",
        Scripted::ok()
            .header("Content-Type", "text/html")
            .body(r#"<head><link rel="icon" href="/a.png"><link rel="icon" href="/b.png"></head>"#)
            .delay(Duration::from_secs(12)),
    );
    web.route(
        "https://slow.test/a.png",
        Scripted::ok().body("x").delay(Duration::from_secs(20)),
    );
    web.route(
        "https://slow.test/b.png",
        Scripted::ok().body("x").delay(Duration::from_secs(12)),
    );
    let fetcher = web.fetcher_with(FetchConfig::new(
        BOT_TOKEN,
        "https://robotstxtparser.example/bot",
    ));
    let started = tokio::time::Instant::now();
    let site = Url::parse("https://slow.test/").expect("a URL");
    let search = find_in_process(&fetcher, &site, None).await;
    let took = started.elapsed();
    assert!(search.icon.is_none());
    assert!(took <= FIND_ICON_DEADLINE, "{took:?}");
    assert!(
        took >= FIND_ICON_DEADLINE - Duration::from_secs(1),
        "{took:?}"
    );
    // The first icon used the time left; nothing more was sent after the deadline.
    assert!(web.requests_to("https://slow.test/b.png").is_empty());
    assert!(web.requests_to("https://slow.test/favicon.ico").is_empty());
    assert!(
        matches!(search.attempts[0].result, AttemptResult::Failed(_))
            && matches!(search.attempts[1].result, AttemptResult::OutOfTime)
            && matches!(search.attempts[2].result, AttemptResult::OutOfTime),
        "{:?}",
        search.attempts
    );
}

#[tokio::test]
async fn at_most_three_declared_icons_are_tried_then_favicon_ico() {
    assert_eq!(MAX_DECLARED_TRIED, 3);
    let web = TestWeb::start().await;
    let host = "many.test";
    web.site(host)
        .path("/robots.txt")
        .respond(Reply::status(404));
    let links: String = (1..=5)
        .map(|n| {
            format!(
                r#"<link rel="icon" href="/{n}.png" sizes="{}x{}">"#,
                64 + n,
                64 + n
            )
        })
        .collect();
    web.site(host).path("/").respond(home_page(&links));
    let search = find_on_web(&web, host).await;
    assert!(search.icon.is_none());
    assert_eq!(search.declared.len(), 5);
    assert_eq!(
        paths(&web),
        [
            "/robots.txt",
            "/",
            "/1.png",
            "/2.png",
            "/3.png",
            "/favicon.ico"
        ]
    );
}

#[tokio::test]
async fn the_home_page_is_read_up_to_its_cap() {
    assert_eq!(HOME_PAGE_MAX_BYTES, 1024 * 1024);
    let web = TestWeb::start().await;
    let host = "longhead.test";
    web.site(host)
        .path("/robots.txt")
        .respond(Reply::status(404));
    let filler = "x".repeat(HOME_PAGE_MAX_BYTES);
    web.site(host).path("/").respond(home_page(&format!(
        r#"<link rel="icon" href="/early.png"><!-- {filler} --><link rel="icon" href="/late.png" sizes="64x64">"#
    )));
    let search = find_on_web(&web, host).await;
    let declared: Vec<&str> = search.declared.iter().map(|link| link.url.path()).collect();
    assert_eq!(declared, ["/early.png"]);
}

#[tokio::test]
async fn a_redirect_to_a_forbidden_path_is_not_followed() {
    let web = TestWeb::start().await;
    let host = "redirect.test";
    web.site(host)
        .path("/robots.txt")
        .respond(Reply::robots_txt("User-agent: *\nDisallow: /private/\n"));
    web.site(host)
        .path("/")
        .respond(home_page(r#"<link rel="icon" href="/icon.png">"#));
    web.site(host)
        .path("/icon.png")
        .respond(Reply::redirect(301, "/private/icon.png"));
    web.site(host)
        .path("/private/icon.png")
        .respond(Reply::ok().body(image_bytes(BLUE, 64, ImageFormat::Png)));
    web.site(host)
        .path("/favicon.ico")
        .respond(Reply::ok().body(image_bytes(GREEN, 16, ImageFormat::Ico)));
    let search = find_on_web(&web, host).await;
    assert!(matches!(
        search.attempts[0].result,
        AttemptResult::Skipped(SkipReason::Disallowed { .. })
    ));
    assert_eq!(centre(search.icon.expect("an icon").png.as_bytes()), GREEN);
    assert!(web.requests_to(host, "/private/icon.png").is_empty());
}

#[tokio::test(start_paused = true)]
async fn crawl_delay_waits_come_out_of_one_budget() {
    use fetch::testing::{Reply as Scripted, ScriptedWeb};
    use fetch::PaceSkip;
    assert_eq!(CRAWL_DELAY_BUDGET, Duration::from_secs(10));
    let web = ScriptedWeb::new();
    web.route(
        "https://delay.test/robots.txt",
        Scripted::robots_txt("User-agent: RobotsTxtParser\nCrawl-delay: 4\n"),
    );
    web.route(
        "https://delay.test/",
        Scripted::ok().body(r#"<head><link rel="icon" href="/a.png"></head>"#),
    );
    web.route("https://delay.test/a.png", Scripted::status(404));
    let fetcher = web.fetcher_with(FetchConfig::new(
        BOT_TOKEN,
        "https://robotstxtparser.example/bot",
    ));
    let site = Url::parse("https://delay.test/").expect("a URL");
    let started = tokio::time::Instant::now();
    let search = find_in_process(&fetcher, &site, None).await;
    let results: Vec<String> = search
        .attempts
        .iter()
        .map(|a| format!("{:?}", a.result))
        .collect();
    assert!(
        matches!(
            search.attempts[0].result,
            AttemptResult::Status(StatusCode::NOT_FOUND)
        ),
        "{results:?}"
    );
    assert!(
        matches!(
            search.attempts[1].result,
            AttemptResult::Skipped(SkipReason::Pacing(PaceSkip::WaitBudget { .. }))
        ),
        "{results:?}"
    );
    assert!(web.requests_to("https://delay.test/favicon.ico").is_empty());
    assert!(
        started.elapsed() <= CRAWL_DELAY_BUDGET,
        "{:?}",
        started.elapsed()
    );
}

#[tokio::test]
async fn an_unreachable_robots_txt_means_no_request_at_all() {
    let web = TestWeb::start().await;
    let host = "down.test";
    web.site(host)
        .path("/robots.txt")
        .respond(Reply::status(503));
    web.site(host)
        .path("/favicon.ico")
        .respond(Reply::ok().body(image_bytes(GREEN, 16, ImageFormat::Ico)));
    let search = find_on_web(&web, host).await;
    assert!(search.icon.is_none());
    assert!(matches!(
        search.home_page,
        HomePageRead::Skipped(SkipReason::RobotsUnreachable { .. })
    ));
    assert!(matches!(
        search.attempts[0].result,
        AttemptResult::Skipped(SkipReason::RobotsUnreachable { .. })
    ));
    assert_eq!(paths(&web), ["/robots.txt"]);
}

/// The service runs searches on its multi-threaded runtime (`IconSource::find` returns a
/// `Send` future), so the search's future must be `Send`.
#[test]
fn the_search_future_is_send() {
    fn assert_send<T: Send>(_: &T) {}
    let web = fetch::testing::ScriptedWeb::new();
    let fetcher = web.fetcher();
    let site = Url::parse("https://send.test/").expect("a URL");
    let search = find_icon(&fetcher, &site, None, &IconDecoder::InProcess);
    assert_send(&search);
}

#[tokio::test(start_paused = true)]
async fn the_home_page_is_read_only_to_the_end_of_its_head() {
    use fetch::testing::{Reply as Scripted, ScriptedWeb};
    let web = ScriptedWeb::new();
    web.route("https://head.test/robots.txt", Scripted::status(404));
    // The head arrives in the first second; the rest would take 100 s.
    web.route(
        "https://head.test/",
        Scripted::ok().drip(
            br#"<head><link rel="icon" href="/a.png"></head><p>more"#,
            Duration::from_secs(1),
            100,
        ),
    );
    web.route(
        "https://head.test/a.png",
        Scripted::ok().body(image_bytes(GREEN, 64, ImageFormat::Png)),
    );
    let fetcher = web.fetcher_with(FetchConfig::new(
        BOT_TOKEN,
        "https://robotstxtparser.example/bot",
    ));
    let site = Url::parse("https://head.test/").expect("a URL");
    let started = tokio::time::Instant::now();
    let search = find_in_process(&fetcher, &site, None).await;
    assert!(matches!(
        search.home_page,
        HomePageRead::Fetched(StatusCode::OK)
    ));
    assert_eq!(search.declared.len(), 1);
    assert_eq!(centre(search.icon.expect("an icon").png.as_bytes()), GREEN);
    assert!(
        started.elapsed() < Duration::from_secs(3),
        "{:?}",
        started.elapsed()
    );
}
