//! The robots.txt cache's state machine on tokio's paused clock, with a scripted source in
//! place of the network: lifetimes, conditional refreshes, stale copies, back-off,
//! single-flight, scope, bounds and persistence.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use fetch::{
    CacheLimits, RobotsCache, RobotsFetch, RobotsOutcome, RobotsSource, RulesSource, Url,
    Validators, DEFAULT_CACHE_LIFETIME, FIRST_RETRY_DELAY, MAX_RETRY_AFTER, MAX_STALE,
    MAX_TOKEN_LISTS_PER_COPY,
};
use tokio::time::{advance, Instant};

const FILE: &str = "User-agent: JittyBot\nDisallow: /private\nCrawl-delay: 2\n\nUser-agent: JittyBot-Image\nDisallow: /photos\n";
const TOKENS: &[&str] = &["JittyBot"];

/// One call the cache made.
#[derive(Debug, Clone)]
struct Call {
    url: String,
    validators: Option<Validators>,
    at: Instant,
}

/// Plays scripted results, one per fetch (the last repeats), after `latency`.
#[derive(Clone, Default)]
struct Script {
    replies: Arc<Mutex<VecDeque<RobotsFetch>>>,
    calls: Arc<Mutex<Vec<Call>>>,
    latency: Duration,
}

impl Script {
    fn new(replies: impl IntoIterator<Item = RobotsFetch>) -> Script {
        Script {
            replies: Arc::new(Mutex::new(replies.into_iter().collect())),
            ..Script::default()
        }
    }

    fn calls(&self) -> Vec<Call> {
        self.calls.lock().unwrap().clone()
    }
}

impl RobotsSource for Script {
    async fn fetch_robots_txt(
        &self,
        robots_url: &Url,
        validators: Option<&Validators>,
    ) -> RobotsFetch {
        self.calls.lock().unwrap().push(Call {
            url: robots_url.to_string(),
            validators: validators.cloned(),
            at: Instant::now(),
        });
        tokio::time::sleep(self.latency).await;
        let mut replies = self.replies.lock().unwrap();
        let mut reply = if replies.len() > 1 {
            replies.pop_front().unwrap()
        } else {
            replies.front().cloned().unwrap()
        };
        reply.robots_url = robots_url.clone();
        reply
    }
}

fn reply(outcome: RobotsOutcome, status: u16) -> RobotsFetch {
    RobotsFetch {
        robots_url: Url::parse("http://placeholder.test/robots.txt").unwrap(),
        outcome,
        status: Some(status),
        final_url: None,
        redirects: Vec::new(),
        bytes_read: 0,
        truncated: false,
        x_robots_tag: Vec::new(),
        content_type: None,
        body: Vec::new(),
        robots: None,
        max_age: None,
        cache_lifetime: DEFAULT_CACHE_LIFETIME,
        retry_after: None,
        validators: Validators::default(),
        error: None,
    }
}

fn file(text: &str, etag: &str, lifetime: Duration) -> RobotsFetch {
    RobotsFetch {
        body: text.as_bytes().to_vec(),
        robots: Some(robots::RobotsTxt::parse(text.as_bytes())),
        cache_lifetime: lifetime,
        validators: Validators {
            etag: Some(etag.to_owned()),
            last_modified: None,
        },
        ..reply(RobotsOutcome::Rules, 200)
    }
}

fn ok() -> RobotsFetch {
    file(FILE, "\"v1\"", DEFAULT_CACHE_LIFETIME)
}

fn not_modified(lifetime: Duration) -> RobotsFetch {
    RobotsFetch {
        cache_lifetime: lifetime,
        ..reply(RobotsOutcome::NotModified, 304)
    }
}

fn unreachable() -> RobotsFetch {
    reply(RobotsOutcome::Unreachable, 503)
}

fn too_many(retry_after: Option<u64>) -> RobotsFetch {
    RobotsFetch {
        retry_after: retry_after.map(Duration::from_secs),
        ..reply(RobotsOutcome::BackingOff, 429)
    }
}

fn no_file() -> RobotsFetch {
    reply(RobotsOutcome::NoFile, 404)
}

fn page(path: &str) -> Url {
    Url::parse(&format!("https://site.test{path}")).unwrap()
}

async fn check(cache: &RobotsCache<Script>, path: &str) -> fetch::Verdict {
    cache.check(&page(path), TOKENS).await.unwrap()
}

const SECOND: Duration = Duration::from_secs(1);

#[tokio::test(start_paused = true)]
async fn a_copy_is_cached_for_its_lifetime_then_revalidated() {
    let script = Script::new([ok(), not_modified(DEFAULT_CACHE_LIFETIME)]);
    let cache = RobotsCache::new(script.clone());

    let first = check(&cache, "/private/1").await;
    assert!(!first.allowed);
    assert_eq!(first.source, RulesSource::Fresh);
    assert_eq!(first.valid_for, Some(DEFAULT_CACHE_LIFETIME));
    assert_eq!(first.crawl_delay.unwrap().seconds, 2.0);

    advance(DEFAULT_CACHE_LIFETIME - SECOND).await;
    let cached = check(&cache, "/public").await;
    assert!(cached.allowed);
    assert_eq!(cached.source, RulesSource::Cached);
    assert_eq!(cached.valid_for, Some(SECOND));
    assert_eq!(script.calls().len(), 1);

    advance(SECOND).await;
    let revalidated = check(&cache, "/private/2").await;
    assert_eq!(revalidated.source, RulesSource::Fresh);
    assert!(!revalidated.allowed, "the old rules still apply after 304");
    let calls = script.calls();
    assert_eq!(calls.len(), 2);
    assert_eq!(calls[0].validators, None);
    assert_eq!(
        calls[1].validators.as_ref().unwrap().etag.as_deref(),
        Some("\"v1\"")
    );
    assert_eq!(calls[1].url, "https://site.test/robots.txt");
}

#[tokio::test(start_paused = true)]
async fn max_age_shortens_and_extends_the_lifetime() {
    let hour = Duration::from_secs(3600);
    let short = Script::new([file(FILE, "\"s\"", hour)]);
    let cache = RobotsCache::new(short.clone());
    check(&cache, "/").await;
    advance(hour - SECOND).await;
    check(&cache, "/").await;
    assert_eq!(short.calls().len(), 1);
    advance(SECOND).await;
    check(&cache, "/").await;
    assert_eq!(short.calls().len(), 2);

    let three_days = Duration::from_secs(3 * 86_400);
    let long = Script::new([file(FILE, "\"l\"", three_days)]);
    let cache = RobotsCache::new(long.clone());
    check(&cache, "/").await;
    advance(2 * DEFAULT_CACHE_LIFETIME).await;
    assert_eq!(check(&cache, "/").await.source, RulesSource::Cached);
    assert_eq!(long.calls().len(), 1);
}

#[tokio::test(start_paused = true)]
async fn a_stale_copy_is_used_while_refreshing_fails_up_to_its_maximum() {
    let script = Script::new([ok(), unreachable()]);
    let cache = RobotsCache::new(script.clone());
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
    assert_eq!(script.calls().len(), 2);

    // Retries back off: 1 minute, then 2, then 4 ...
    advance(FIRST_RETRY_DELAY - SECOND).await;
    check(&cache, "/").await;
    assert_eq!(script.calls().len(), 2);
    advance(SECOND).await;
    assert_eq!(check(&cache, "/").await.source, RulesSource::Stale);
    assert_eq!(script.calls().len(), 3);
    advance(2 * FIRST_RETRY_DELAY).await;
    check(&cache, "/").await;
    assert_eq!(script.calls().len(), 4);

    // Past the maximum staleness the failure rules apply: disallow everything.
    advance(MAX_STALE).await;
    let expired = check(&cache, "/public").await;
    assert_eq!(expired.source, RulesSource::Unreachable);
    assert!(!expired.allowed);
}

#[tokio::test(start_paused = true)]
async fn without_a_copy_an_unreachable_site_is_disallowed_until_a_retry_succeeds() {
    let script = Script::new([unreachable(), unreachable(), ok()]);
    let cache = RobotsCache::new(script.clone());
    let first = check(&cache, "/public").await;
    assert_eq!(first.source, RulesSource::Unreachable);
    assert!(!first.allowed);
    assert_eq!(
        first.reason(),
        "robots.txt unreachable (5xx or network error): everything disallowed"
    );

    advance(FIRST_RETRY_DELAY).await;
    assert!(!check(&cache, "/public").await.allowed);
    advance(2 * FIRST_RETRY_DELAY).await;
    let recovered = check(&cache, "/public").await;
    assert_eq!(recovered.source, RulesSource::Fresh);
    assert!(recovered.allowed);
    let calls = script.calls();
    assert_eq!(calls.len(), 3);
    assert_eq!(calls[1].at - calls[0].at, FIRST_RETRY_DELAY);
    assert_eq!(calls[2].at - calls[1].at, 2 * FIRST_RETRY_DELAY);
}

#[tokio::test(start_paused = true)]
async fn too_many_requests_without_a_copy_blocks_the_site_until_retry_after() {
    let script = Script::new([too_many(Some(600)), ok()]);
    let cache = RobotsCache::new(script.clone());
    let backing_off = check(&cache, "/public").await;
    assert_eq!(backing_off.source, RulesSource::BackingOff);
    assert!(!backing_off.allowed);
    assert_eq!(backing_off.valid_for, Some(Duration::from_secs(600)));

    advance(Duration::from_secs(599)).await;
    assert!(!check(&cache, "/public").await.allowed);
    assert_eq!(script.calls().len(), 1, "no request before Retry-After");
    advance(SECOND).await;
    assert!(check(&cache, "/public").await.allowed);
    assert_eq!(script.calls().len(), 2);
}

#[tokio::test(start_paused = true)]
async fn too_many_requests_without_retry_after_backs_off_exponentially() {
    let script = Script::new([too_many(None), too_many(None), too_many(None)]);
    let cache = RobotsCache::new(script.clone());
    check(&cache, "/").await;
    advance(FIRST_RETRY_DELAY).await;
    check(&cache, "/").await;
    advance(2 * FIRST_RETRY_DELAY).await;
    check(&cache, "/").await;
    let at: Vec<Duration> = script
        .calls()
        .windows(2)
        .map(|pair| pair[1].at - pair[0].at)
        .collect();
    assert_eq!(at, vec![FIRST_RETRY_DELAY, 2 * FIRST_RETRY_DELAY]);
}

#[tokio::test(start_paused = true)]
async fn retry_after_is_bounded() {
    let script = Script::new([too_many(Some(30 * 86_400))]);
    let cache = RobotsCache::new(script);
    let verdict = check(&cache, "/").await;
    assert_eq!(verdict.valid_for, Some(MAX_RETRY_AFTER));
}

#[tokio::test(start_paused = true)]
async fn too_many_requests_with_a_copy_keeps_using_it() {
    let script = Script::new([ok(), too_many(Some(120))]);
    let cache = RobotsCache::new(script.clone());
    check(&cache, "/").await;
    advance(DEFAULT_CACHE_LIFETIME).await;
    let stale = check(&cache, "/private").await;
    assert_eq!(stale.source, RulesSource::Stale);
    assert!(!stale.allowed);
    assert!(check(&cache, "/public").await.allowed);
    assert_eq!(stale.valid_for, Some(Duration::from_secs(120)));
}

#[tokio::test(start_paused = true)]
async fn no_file_allows_everything_and_replaces_an_old_copy() {
    let script = Script::new([ok(), no_file()]);
    let cache = RobotsCache::new(script.clone());
    assert!(!check(&cache, "/private").await.allowed);
    advance(DEFAULT_CACHE_LIFETIME).await;
    let open = check(&cache, "/private").await;
    assert!(open.allowed);
    assert_eq!(open.source, RulesSource::NoFile);
    assert_eq!(open.reason(), "no robots.txt (4xx): no restrictions");
    advance(DEFAULT_CACHE_LIFETIME - SECOND).await;
    assert_eq!(check(&cache, "/").await.source, RulesSource::NoFile);
    assert_eq!(script.calls().len(), 2);
}

#[tokio::test(start_paused = true)]
async fn a_server_error_after_no_file_is_not_an_open_site() {
    let script = Script::new([no_file(), unreachable()]);
    let cache = RobotsCache::new(script);
    assert!(check(&cache, "/").await.allowed);
    advance(DEFAULT_CACHE_LIFETIME).await;
    assert!(!check(&cache, "/").await.allowed);
}

#[tokio::test(start_paused = true)]
async fn concurrent_callers_share_one_fetch() {
    let script = Script {
        latency: Duration::from_secs(2),
        ..Script::new([ok()])
    };
    let cache = Arc::new(RobotsCache::new(script.clone()));
    let mut tasks = Vec::new();
    for i in 0..50 {
        let cache = Arc::clone(&cache);
        tasks.push(tokio::spawn(async move {
            let path = if i % 2 == 0 { "/private" } else { "/public" };
            cache.check(&page(path), TOKENS).await.unwrap()
        }));
    }
    for (i, task) in tasks.into_iter().enumerate() {
        let verdict = task.await.unwrap();
        assert_eq!(verdict.allowed, i % 2 == 1);
    }
    assert_eq!(script.calls().len(), 1);
}

#[tokio::test(start_paused = true)]
async fn one_copy_serves_every_token() {
    let script = Script::new([ok()]);
    let cache = RobotsCache::new(script.clone());
    let image = &["JittyBot-Image", "JittyBot"];
    let photos = page("/photos/1");
    assert!(!cache.check(&photos, image).await.unwrap().allowed);
    assert!(cache.check(&photos, &["JittyBot"]).await.unwrap().allowed);
    assert!(
        !cache
            .check(&page("/private"), &["JittyBot"])
            .await
            .unwrap()
            .allowed
    );
    assert_eq!(script.calls().len(), 1);
}

#[tokio::test(start_paused = true)]
async fn rules_kept_per_token_list_stay_right_beyond_the_bound() {
    let script = Script::new([ok()]);
    let cache = RobotsCache::new(script.clone());
    let photos = page("/photos/1");
    let private = page("/private");
    // More token lists than one copy keeps ready, asked for twice over: each answer must
    // still come from the right group, rebuilt or kept.
    let lists: Vec<Vec<String>> = (0..MAX_TOKEN_LISTS_PER_COPY + 3)
        .map(|i| {
            vec![
                format!("Other{}", "x".repeat(i)),
                "JittyBot-Image".to_owned(),
            ]
        })
        .collect();
    for _ in 0..2 {
        for list in &lists {
            let tokens: Vec<&str> = list.iter().map(String::as_str).collect();
            assert!(!cache.check(&photos, &tokens).await.unwrap().allowed);
            assert!(cache.check(&private, &tokens).await.unwrap().allowed);
        }
        assert!(!cache.check(&private, TOKENS).await.unwrap().allowed);
    }
    assert_eq!(script.calls().len(), 1);
}

#[tokio::test(start_paused = true)]
async fn each_scope_is_fetched_separately_and_idn_is_punycode() {
    let script = Script::new([ok()]);
    let cache = RobotsCache::new(script.clone());
    for target in [
        "https://site.test/a",
        "https://SITE.test:443/b",
        "http://site.test/",
        "https://www.site.test/",
        "https://site.test:8443/",
        "https://bücher.test/",
        "https://xn--bcher-kva.test/x",
    ] {
        cache
            .check(&Url::parse(target).unwrap(), TOKENS)
            .await
            .unwrap();
    }
    let urls: Vec<String> = script.calls().into_iter().map(|c| c.url).collect();
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
async fn the_cache_is_bounded() {
    let script = Script::new([ok()]);
    let cache = RobotsCache::with_limits(
        script.clone(),
        CacheLimits {
            max_entries: 2,
            max_bytes: 10 * FILE.len(),
        },
    );
    for host in ["a", "b", "c"] {
        let url = Url::parse(&format!("https://{host}.test/")).unwrap();
        cache.check(&url, TOKENS).await.unwrap();
        advance(SECOND).await;
    }
    assert_eq!(cache.len(), 2);
    // The least recently used scope went first: asking again fetches again.
    cache
        .check(&Url::parse("https://a.test/").unwrap(), TOKENS)
        .await
        .unwrap();
    assert_eq!(script.calls().len(), 4);

    let tight = RobotsCache::with_limits(
        Script::new([ok()]),
        CacheLimits {
            max_entries: 100,
            max_bytes: FILE.len() + 1,
        },
    );
    for host in ["a", "b", "c"] {
        let url = Url::parse(&format!("https://{host}.test/")).unwrap();
        tight.check(&url, TOKENS).await.unwrap();
    }
    assert_eq!(tight.len(), 1);
}

#[tokio::test(start_paused = true)]
async fn saved_entries_restore_into_a_new_cache() {
    let script = Script::new([ok(), unreachable()]);
    let cache = RobotsCache::new(script.clone());
    check(&cache, "/").await;
    cache
        .check(&Url::parse("https://down.test/").unwrap(), TOKENS)
        .await
        .unwrap();
    advance(Duration::from_secs(3600)).await;

    let saved = serde_json::to_string(&cache.save()).unwrap();
    let restored_source = Script::new([unreachable()]);
    let restored = RobotsCache::new(restored_source.clone());
    restored.restore(serde_json::from_str(&saved).unwrap());
    assert_eq!(restored.len(), 2);

    let verdict = check(&restored, "/private").await;
    assert_eq!(verdict.source, RulesSource::Cached);
    assert!(!verdict.allowed);
    let left = verdict.valid_for.unwrap();
    // Wall-clock round trip: within a second of the 23 hours left.
    let expected = DEFAULT_CACHE_LIFETIME - Duration::from_secs(3600);
    assert!(left <= expected && left + SECOND >= expected, "{left:?}");
    let down = restored
        .check(&Url::parse("https://down.test/").unwrap(), TOKENS)
        .await
        .unwrap();
    assert_eq!(down.source, RulesSource::Unreachable);
    assert_eq!(
        restored_source.calls().len(),
        1,
        "the due retry of down.test only"
    );
}
