//! The robots.txt lifecycle on tokio's paused clock, on the scripted web: the status table,
//! lifetimes, conditional refreshes, stale copies, back-off, single-flight, scope, the bound,
//! the store, and the fresh-per-operation policy.

use robots::ProductTokens;
use std::sync::Arc;
use std::time::Duration;

use fetch::testing::{Reply, ScriptedWeb};
use fetch::{
    CacheLimits, Deadline, MemoryStore, Policy, RobotsCache, RulesSource, StoredState, Url,
    Verdict, DEFAULT_CACHE_LIFETIME, FIRST_RETRY_DELAY, MAX_RETRY_AFTER, MAX_STALE,
};
use tokio::time::advance;

const FILE: &str = "User-agent: JittyBot\nDisallow: /private\nCrawl-delay: 2\n\nUser-agent: JittyBot-Image\nDisallow: /photos\n";
const ROBOTS: &str = "https://site.test/robots.txt";
const TOKENS: &ProductTokens = &ProductTokens::JITTYBOT;
const SECOND: Duration = Duration::from_secs(1);

fn ok() -> Reply {
    Reply::robots_txt(FILE).header("ETag", "\"v1\"")
}

fn page(path: &str) -> Url {
    Url::parse(&format!("https://site.test{path}")).unwrap()
}

fn cache(web: &Arc<ScriptedWeb>) -> RobotsCache {
    RobotsCache::new(web.fetcher(), Policy::Cached)
}

async fn check(cache: &RobotsCache, path: &str) -> Verdict {
    cache
        .check(
            &page(path),
            TOKENS,
            Deadline::after(Duration::from_secs(60)),
        )
        .await
        .unwrap()
}

#[tokio::test(start_paused = true)]
async fn a_copy_is_cached_for_its_lifetime_then_revalidated() {
    let web = ScriptedWeb::new();
    web.script(ROBOTS, [ok(), Reply::status(304).header("ETag", "\"v1\"")]);
    let cache = cache(&web);

    let first = check(&cache, "/private/1").await;
    assert!(!first.allowed);
    assert_eq!(first.source, RulesSource::Fresh);
    assert_eq!(first.valid_for, Some(DEFAULT_CACHE_LIFETIME));
    assert_eq!(first.crawl_delay(), Some(2 * SECOND));
    assert_eq!(
        first.deciding_rule(),
        Some((2, "Disallow: /private".into()))
    );

    advance(DEFAULT_CACHE_LIFETIME - SECOND).await;
    let cached = check(&cache, "/public").await;
    assert!(cached.allowed);
    assert_eq!(cached.source, RulesSource::Cached);
    assert_eq!(cached.valid_for, Some(SECOND));
    assert_eq!(web.requests().len(), 1);

    advance(SECOND).await;
    let revalidated = check(&cache, "/private/2").await;
    assert_eq!(revalidated.source, RulesSource::Fresh);
    assert!(!revalidated.allowed, "the old rules still apply after 304");
    let requests = web.requests();
    assert_eq!(requests.len(), 2);
    assert_eq!(requests[0].headers.get("if-none-match"), None);
    assert_eq!(requests[1].headers["if-none-match"], "\"v1\"");
}

#[tokio::test(start_paused = true)]
async fn max_age_sets_the_lifetime() {
    let web = ScriptedWeb::new();
    web.route(ROBOTS, ok().header("Cache-Control", "max-age=3600"));
    let cache = cache(&web);
    check(&cache, "/").await;
    advance(Duration::from_secs(3599)).await;
    check(&cache, "/").await;
    assert_eq!(web.requests().len(), 1);
    advance(SECOND).await;
    check(&cache, "/").await;
    assert_eq!(web.requests().len(), 2);
}

#[tokio::test(start_paused = true)]
async fn a_stale_copy_is_used_while_refreshing_fails_up_to_its_maximum() {
    let web = ScriptedWeb::new();
    web.script(ROBOTS, [ok(), Reply::status(503)]);
    let cache = cache(&web);
    check(&cache, "/").await;
    advance(DEFAULT_CACHE_LIFETIME).await;

    let stale = check(&cache, "/private/x").await;
    assert_eq!(stale.source, RulesSource::Stale);
    assert!(!stale.allowed);
    assert!(
        check(&cache, "/public").await.allowed,
        "the old rules, not disallow-all"
    );
    assert_eq!(stale.valid_for, Some(FIRST_RETRY_DELAY));
    assert_eq!(web.requests().len(), 2);

    // Retries back off: 1 minute, then 2 ...
    advance(FIRST_RETRY_DELAY - SECOND).await;
    check(&cache, "/").await;
    assert_eq!(web.requests().len(), 2);
    advance(SECOND).await;
    assert_eq!(check(&cache, "/").await.source, RulesSource::Stale);
    assert_eq!(web.requests().len(), 3);
    advance(2 * FIRST_RETRY_DELAY).await;
    check(&cache, "/").await;
    assert_eq!(web.requests().len(), 4);

    // Past the maximum staleness the failure rules apply: disallow everything.
    advance(MAX_STALE).await;
    let expired = check(&cache, "/public").await;
    assert_eq!(expired.source, RulesSource::Unreachable);
    assert!(!expired.allowed);
}

#[tokio::test(start_paused = true)]
async fn every_unreachable_row_of_the_status_table_disallows_everything() {
    let loop_url = "https://site.test/loop";
    let rows = [
        Reply::status(500),
        Reply::status(503),
        Reply::status(999),
        Reply::status(302),
        Reply::redirect(301, "ftp://site.test/robots.txt"),
        Reply::redirect(301, loop_url),
        Reply::fail(fetch::FetchError::Timeout {
            phase: fetch::TimeoutPhase::FirstByte,
        }),
    ];
    for row in rows {
        let web = ScriptedWeb::new();
        web.route(ROBOTS, row.clone());
        web.route(loop_url, Reply::redirect(301, ROBOTS));
        let verdict = check(&cache(&web), "/public").await;
        assert_eq!(verdict.source, RulesSource::Unreachable, "{row:?}");
        assert!(!verdict.allowed, "{row:?}");
    }
    // Six hops is one too many.
    let web = ScriptedWeb::new();
    web.route(ROBOTS, Reply::redirect(301, "/r1"));
    for i in 1..=6 {
        web.route(
            &format!("https://site.test/r{i}"),
            Reply::redirect(302, &format!("/r{}", i + 1)),
        );
    }
    web.route("https://site.test/r7", Reply::robots_txt(FILE));
    assert_eq!(
        check(&cache(&web), "/").await.source,
        RulesSource::Unreachable
    );
    assert_eq!(web.requests().len(), 6);
}

#[tokio::test(start_paused = true)]
async fn without_a_copy_an_unreachable_site_is_disallowed_until_a_retry_succeeds() {
    let web = ScriptedWeb::new();
    web.script(ROBOTS, [Reply::status(500), Reply::status(500), ok()]);
    let cache = cache(&web);
    let first = check(&cache, "/public").await;
    assert_eq!(first.source, RulesSource::Unreachable);
    assert!(!first.allowed);
    advance(FIRST_RETRY_DELAY).await;
    assert!(!check(&cache, "/public").await.allowed);
    advance(2 * FIRST_RETRY_DELAY).await;
    let recovered = check(&cache, "/public").await;
    assert_eq!(recovered.source, RulesSource::Fresh);
    assert!(recovered.allowed);
    let at: Vec<Duration> = web
        .requests()
        .windows(2)
        .map(|pair| pair[1].at - pair[0].at)
        .collect();
    assert_eq!(at, [FIRST_RETRY_DELAY, 2 * FIRST_RETRY_DELAY]);
}

#[tokio::test(start_paused = true)]
async fn too_many_requests_blocks_the_site_until_retry_after_within_its_bound() {
    let web = ScriptedWeb::new();
    web.script(
        ROBOTS,
        [Reply::status(429).header("Retry-After", "600"), ok()],
    );
    let cache = cache(&web);
    let backing_off = check(&cache, "/public").await;
    assert_eq!(backing_off.source, RulesSource::BackingOff);
    assert!(!backing_off.allowed);
    assert_eq!(backing_off.valid_for, Some(Duration::from_secs(600)));
    advance(Duration::from_secs(599)).await;
    assert!(!check(&cache, "/public").await.allowed);
    assert_eq!(web.requests().len(), 1, "no request before Retry-After");
    advance(SECOND).await;
    assert!(check(&cache, "/public").await.allowed);

    let web = ScriptedWeb::new();
    web.route(
        ROBOTS,
        Reply::status(429).header("Retry-After", "18446744073709551615"),
    );
    let verdict = check(&cache_for(&web), "/").await;
    assert_eq!(verdict.valid_for, Some(MAX_RETRY_AFTER));
}

fn cache_for(web: &Arc<ScriptedWeb>) -> RobotsCache {
    cache(web)
}

#[tokio::test(start_paused = true)]
async fn no_file_allows_everything_and_a_later_failure_does_not() {
    let web = ScriptedWeb::new();
    web.script(ROBOTS, [ok(), Reply::status(404), Reply::status(503)]);
    let cache = cache(&web);
    assert!(!check(&cache, "/private").await.allowed);
    advance(DEFAULT_CACHE_LIFETIME).await;
    let open = check(&cache, "/private").await;
    assert!(open.allowed, "the file is gone: its rules no longer apply");
    assert_eq!(open.source, RulesSource::NoFile);
    advance(DEFAULT_CACHE_LIFETIME).await;
    assert!(
        !check(&cache, "/").await.allowed,
        "a 404 never protects against a 5xx"
    );
}

#[tokio::test(start_paused = true)]
async fn concurrent_callers_share_one_fetch_and_one_copy_serves_every_token() {
    let web = ScriptedWeb::new();
    web.route(ROBOTS, ok().delay(Duration::from_secs(2)));
    let cache = Arc::new(cache(&web));
    let mut tasks = Vec::new();
    for i in 0..50 {
        let cache = Arc::clone(&cache);
        tasks.push(tokio::spawn(async move {
            let path = if i % 2 == 0 { "/private" } else { "/public" };
            check(&cache, path).await
        }));
    }
    for (i, task) in tasks.into_iter().enumerate() {
        assert_eq!(task.await.unwrap().allowed, i % 2 == 1);
    }
    let deadline = Deadline::after(Duration::from_secs(60));
    let image = &ProductTokens::JITTYBOT_IMAGE;
    assert!(
        !cache
            .check(&page("/photos/1"), image, deadline)
            .await
            .unwrap()
            .allowed
    );
    assert!(
        cache
            .check(&page("/photos/1"), TOKENS, deadline)
            .await
            .unwrap()
            .allowed
    );
    assert_eq!(web.requests().len(), 1);
}

#[tokio::test(start_paused = true)]
async fn each_scope_is_fetched_separately_and_idn_is_punycode() {
    let web = ScriptedWeb::new();
    let cache = cache(&web);
    for target in [
        "https://site.test/a",
        "https://SITE.test:443/b",
        "http://site.test/",
        "https://www.site.test/",
        "https://site.test:8443/",
        "https://bücher.test/",
        "https://xn--bcher-kva.test/x",
    ] {
        let deadline = Deadline::after(Duration::from_secs(60));
        cache
            .check(&Url::parse(target).unwrap(), TOKENS, deadline)
            .await
            .unwrap();
    }
    let urls: Vec<String> = web.requests().iter().map(|r| r.url.to_string()).collect();
    assert_eq!(
        urls,
        [
            "https://site.test/robots.txt",
            "http://site.test/robots.txt",
            "https://www.site.test/robots.txt",
            "https://site.test:8443/robots.txt",
            "https://xn--bcher-kva.test/robots.txt",
        ]
    );
    assert_eq!(cache.len(), 5);
}

#[tokio::test(start_paused = true)]
async fn the_cache_is_bounded_by_bytes() {
    let web = ScriptedWeb::new();
    let big = format!("User-agent: *\n{}", "Disallow: /x\n".repeat(8000));
    for host in 0..20 {
        web.route(
            &format!("https://h{host}.test/robots.txt"),
            Reply::robots_txt(&big),
        );
    }
    let cache = RobotsCache::with_store(
        web.fetcher(),
        Policy::Cached,
        CacheLimits {
            max_bytes: 5 * big.len() as u64,
        },
        Arc::new(fetch::NoStore),
    );
    for host in 0..20 {
        let url = Url::parse(&format!("https://h{host}.test/x")).unwrap();
        let verdict = cache
            .check(&url, TOKENS, Deadline::after(Duration::from_secs(60)))
            .await
            .unwrap();
        assert!(!verdict.allowed);
    }
    assert!(cache.len() <= 5, "{}", cache.len());
}

#[tokio::test(start_paused = true)]
async fn entries_are_saved_one_by_one_and_loaded_on_a_miss() {
    let web = ScriptedWeb::new();
    web.route(ROBOTS, ok());
    web.route("https://down.test/robots.txt", Reply::status(503));
    let store = Arc::new(MemoryStore::default());
    let first = RobotsCache::with_store(
        web.fetcher(),
        Policy::Cached,
        CacheLimits::default(),
        store.clone(),
    );
    check(&first, "/").await;
    let deadline = Deadline::after(Duration::from_secs(60));
    let down = Url::parse("https://down.test/").unwrap();
    first.check(&down, TOKENS, deadline).await.unwrap();
    let mut states: Vec<&str> = store
        .entries()
        .iter()
        .map(|entry| match entry.state {
            StoredState::Fresh(_) => "fresh",
            StoredState::Failing(_) => "failing",
            _ => "other",
        })
        .collect();
    states.sort();
    assert_eq!(states, ["failing", "fresh"]);
    // The stored form is plain JSON with wall-clock times.
    let json = serde_json::to_string(&store.entries()).unwrap();
    assert!(json.contains("\"state\":\"fresh\""), "{json}");

    advance(Duration::from_secs(3600)).await;
    let second = RobotsCache::with_store(
        web.fetcher(),
        Policy::Cached,
        CacheLimits::default(),
        store.clone(),
    );
    let verdict = check(&second, "/private").await;
    assert_eq!(verdict.source, RulesSource::Cached);
    assert!(!verdict.allowed);
    assert_eq!(
        web.requests_to(ROBOTS).len(),
        1,
        "loaded, not fetched again"
    );
    // The failing scope keeps its retry time (stored on the wall clock, which the paused
    // tokio clock does not move): not retried before it, retried after.
    let loaded = second.check(&down, TOKENS, deadline).await.unwrap();
    assert_eq!(loaded.source, RulesSource::Unreachable);
    assert_eq!(web.requests_to("https://down.test/robots.txt").len(), 1);
    advance(FIRST_RETRY_DELAY).await;
    let deadline = Deadline::after(Duration::from_secs(60));
    second.check(&down, TOKENS, deadline).await.unwrap();
    assert_eq!(web.requests_to("https://down.test/robots.txt").len(), 2);
}

#[tokio::test(start_paused = true)]
async fn fresh_per_operation_fetches_once_per_cache_and_never_reuses_across_operations() {
    let web = ScriptedWeb::new();
    web.script(ROBOTS, [Reply::status(503), ok()]);
    let operation = RobotsCache::new(web.fetcher(), Policy::FreshPerOperation);
    assert!(!check(&operation, "/public").await.allowed);
    advance(FIRST_RETRY_DELAY * 10).await;
    // Memoised for the whole operation, failure included: one verdict per analysis.
    assert!(!check(&operation, "/public").await.allowed);
    assert_eq!(web.requests().len(), 1);
    let next = RobotsCache::new(web.fetcher(), Policy::FreshPerOperation);
    assert!(check(&next, "/public").await.allowed);
    assert_eq!(web.requests().len(), 2);
}
