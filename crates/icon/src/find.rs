//! The polite search for a domain's icon, as RobotsTxtParser: the home page's declared icons
//! best first, then `/favicon.ico`; each request only where robots.txt lets the bot fetch
//! that path (fetched fresh once for the search), on the fetcher's polite pipeline, with a
//! byte cap and one deadline for the whole search.

use std::collections::HashSet;
use std::sync::Arc;
use std::time::Duration;

use fetch::{
    ErrorKind, FetchError, Fetcher, HeaderValue, Operation, Outcome, Pacer, PacerConfig, Policy,
    Polite, PoliteRequest, Request, RobotsCache, ScopeOrigins, SkipReason, StatusCode,
};
use robots::ProductTokens;
use url::Url;

use crate::error::IconError;
use crate::home::HeadBuffer;
use crate::limits::MAX_ICON_BYTES;
use crate::png::Png64;
use crate::rank::{IconLink, RelKind};
use crate::sandbox::IconDecoder;

/// The product token the search fetches as (RobotsTxtParser's, as in `crates/audit`).
pub const BOT_TOKEN: &str = "RobotsTxtParser";

const BOT: &ProductTokens = &ProductTokens::from_static(&[BOT_TOKEN]);

/// The whole search (robots.txt, the home page, every icon tried, decoding) ends within
/// this: a site that answers slowly costs at most this much.
pub const FIND_ICON_DEADLINE: Duration = Duration::from_secs(30);

/// The most time the search waits in all for a crawl-delay between its requests (as an
/// analysis: the bot page's 10 s); a request that would wait longer is skipped.
pub const CRAWL_DELAY_BUDGET: Duration = Duration::from_secs(10);

/// The most of the home page read to find its `<head>` (the bot page: "stops reading at
/// `</head>` or after 1 MB").
pub const HOME_PAGE_MAX_BYTES: usize = 1024 * 1024;

/// The most declared icons requested for one search; `/favicon.ico` comes after them.
pub const MAX_DECLARED_TRIED: usize = 3;

/// The `Accept` header of icon requests.
pub const ICON_ACCEPT: &str = "image/webp,image/png,image/svg+xml,image/*;q=0.8,*/*;q=0.5";

/// The home page, already fetched (by the analysis): no second request is made for it.
#[derive(Debug, Clone, Copy)]
pub struct HomePage<'a> {
    /// Its final URL (after redirects): relative icon links resolve against it.
    pub url: &'a Url,
    /// As much of its body as was read (at least its `<head>`).
    pub html: &'a [u8],
}

/// Where a tried icon URL came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum IconSource {
    /// Declared by the home page.
    Declared(RelKind),
    /// The conventional `/favicon.ico`.
    FaviconIco,
}

/// What one icon URL came to.
#[derive(Debug)]
pub enum AttemptResult {
    /// Decoded: this is the icon.
    Used,
    /// Not requested (robots.txt forbids it, robots.txt unreachable, no time left).
    Skipped(SkipReason),
    /// The request failed.
    Failed(FetchError),
    /// Answered with a status other than 2xx.
    Status(StatusCode),
    /// Answered, but not an icon: too large, broken, unsupported, a bomb.
    Broken(IconError),
    /// The deadline had passed before it could be requested, or passed while it was
    /// decoded.
    OutOfTime,
}

/// One icon URL tried.
#[derive(Debug)]
pub struct Attempt {
    /// The URL.
    pub url: Url,
    /// Where it came from.
    pub source: IconSource,
    /// What it came to.
    pub result: AttemptResult,
}

/// How the home page was read.
#[derive(Debug)]
pub enum HomePageRead {
    /// The caller gave it.
    Given,
    /// Fetched, with this status (a non-2xx page declares nothing).
    Fetched(StatusCode),
    /// Not requested.
    Skipped(SkipReason),
    /// The request failed (or its body did).
    Failed(ErrorKind),
}

/// The icon found.
#[derive(Debug, Clone)]
pub struct FoundIcon {
    /// The URL it was fetched from (before redirects).
    pub url: Url,
    /// The 64×64 PNG.
    pub png: Png64,
}

/// What an icon search came to: the icon, or none, and why.
#[derive(Debug)]
pub struct IconSearch {
    /// The icon, when one decoded.
    pub icon: Option<FoundIcon>,
    /// How the home page was read.
    pub home_page: HomePageRead,
    /// The icons the home page declares, best first.
    pub declared: Vec<IconLink>,
    /// Every icon URL tried, in order.
    pub attempts: Vec<Attempt>,
}

/// Looks for the icon of the site whose home page is `site` (e.g. `https://example.com/`),
/// as RobotsTxtParser, within [`FIND_ICON_DEADLINE`]. `home_page` spares the request for
/// the home page when the caller has it. The future is `Send`: run it on any runtime.
/// `fetcher` should identify as [`BOT_TOKEN`] (the service's analysis fetcher). Icons are
/// decoded by `decoder`: [`IconDecoder::Sandboxed`] for anything served by the web.
pub async fn find_icon(
    fetcher: &Fetcher,
    site: &Url,
    home_page: Option<HomePage<'_>>,
    decoder: &IconDecoder,
) -> IconSearch {
    let operation = Operation::within(FIND_ICON_DEADLINE).with_wait_budget(CRAWL_DELAY_BUDGET);
    find_icon_within(fetcher, site, home_page, decoder, &operation).await
}

/// [`find_icon`] within the caller's `operation` (its deadline and wait budget).
pub async fn find_icon_within(
    fetcher: &Fetcher,
    site: &Url,
    home_page: Option<HomePage<'_>>,
    decoder: &IconDecoder,
    operation: &Operation,
) -> IconSearch {
    // Fresh robots.txt for this search, remembered only within it (as an analysis).
    let polite = Polite::new(
        RobotsCache::new(fetcher.clone(), Policy::FreshPerOperation),
        Pacer::new(PacerConfig::analysis()),
        Arc::new(ScopeOrigins),
    );
    search(&polite, site, home_page, decoder, operation).await
}

/// What an analysis made just before the search read of the site's robots.txt.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum KnownRobots<'a> {
    /// It answered 2xx with this file (as read, at most 500 KiB): its rules apply.
    Rules(&'a [u8]),
    /// It answered 4xx: no rules.
    NoFile,
}

/// How long the robots.txt an analysis read stands in for a fetch during the search that
/// follows it (longer than the search's [`FIND_ICON_DEADLINE`]).
const KNOWN_ROBOTS_LIFETIME: Duration = Duration::from_secs(5 * 60);

/// [`find_icon`] right after an analysis of the site (icons decoded by `decoder`), with no
/// request the analysis already made: `known` is its robots.txt (not fetched again; another host's robots.txt, for an icon
/// declared there, is fetched as usual), `home_page` its page when that was the home page.
/// The search first waits `crawl_delay` (the site's Crawl-delay for the bot, at most
/// [`CRAWL_DELAY_BUDGET`]: the caller skips the search for a longer one), as the analysis
/// would have before another request of its own; the pacer spaces the search's own requests.
pub async fn find_icon_after_analysis(
    fetcher: &Fetcher,
    site: &Url,
    home_page: Option<HomePage<'_>>,
    known: KnownRobots<'_>,
    crawl_delay: Option<Duration>,
    decoder: &IconDecoder,
) -> IconSearch {
    let operation = Operation::within(FIND_ICON_DEADLINE).with_wait_budget(CRAWL_DELAY_BUDGET);
    let store = fetch::MemoryStore::default();
    if let Ok(scope) = fetch::Scope::of(site) {
        let now = jiff::Timestamp::now();
        let until = now
            .checked_add(KNOWN_ROBOTS_LIFETIME)
            .unwrap_or(jiff::Timestamp::MAX);
        let state = match known {
            KnownRobots::Rules(body) => fetch::StoredState::Fresh(fetch::StoredCopy {
                body: body.to_vec(),
                validators: fetch::Validators::default(),
                fetched_at: now,
                expires_at: until,
            }),
            KnownRobots::NoFile => fetch::StoredState::NoFile { until },
        };
        let entry = fetch::StoredEntry { scope, state };
        // A memory store cannot fail.
        let _ = fetch::RobotsStore::save(&store, &entry).await;
    }
    let robots = RobotsCache::with_store(
        fetcher.clone(),
        Policy::Cached,
        fetch::CacheLimits::default(),
        Arc::new(store),
    );
    let polite = Polite::new(
        robots,
        Pacer::new(PacerConfig::analysis()),
        Arc::new(ScopeOrigins),
    );
    if let Some(wait) = crawl_delay.filter(|d| !d.is_zero()) {
        tokio::time::sleep(wait.min(CRAWL_DELAY_BUDGET)).await;
    }
    search(&polite, site, home_page, decoder, &operation).await
}

/// The search on `polite`: the home page's declared icons, then `/favicon.ico`.
async fn search(
    polite: &Polite,
    site: &Url,
    home_page: Option<HomePage<'_>>,
    decoder: &IconDecoder,
    operation: &Operation,
) -> IconSearch {
    let (home, declared) = match home_page {
        Some(page) => (
            HomePageRead::Given,
            crate::declared_icons(page.html, page.url),
        ),
        None => read_home_page(polite, site, operation).await,
    };
    let favicon = site.join("/favicon.ico").ok();
    let candidates = declared
        .iter()
        .take(MAX_DECLARED_TRIED)
        .map(|link| (link.url.clone(), IconSource::Declared(link.rel)))
        .chain(favicon.map(|url| (url, IconSource::FaviconIco)));
    let mut search = IconSearch {
        icon: None,
        home_page: home,
        declared: declared.clone(),
        attempts: Vec::new(),
    };
    let mut tried = HashSet::new();
    for (url, source) in candidates {
        if !tried.insert(url.clone()) {
            continue;
        }
        // No request starts once the search's time is up.
        let (result, png) = if operation.deadline.is_expired() {
            (AttemptResult::OutOfTime, None)
        } else {
            try_icon(polite, &url, decoder, operation).await
        };
        tracing::debug!(url = %url, result = ?result, "icon attempt");
        search.attempts.push(Attempt {
            url: url.clone(),
            source,
            result,
        });
        if let Some(png) = png {
            search.icon = Some(FoundIcon { url, png });
            break;
        }
    }
    tracing::debug!(
        site = %site,
        found = search.icon.is_some(),
        declared = search.declared.len(),
        attempts = search.attempts.len(),
        "icon search"
    );
    search
}

/// Fetches the home page and reads its declared icons, stopping at the end of its head.
async fn read_home_page(
    polite: &Polite,
    site: &Url,
    operation: &Operation,
) -> (HomePageRead, Vec<IconLink>) {
    let request = Request::get(site.clone()).max_body_bytes(HOME_PAGE_MAX_BYTES);
    let response = polite
        .fetch(PoliteRequest::new(request, BOT), operation)
        .await;
    let mut fetched = match response.outcome {
        Outcome::Fetched(fetched) => fetched,
        Outcome::Skipped { reason, .. } => return (HomePageRead::Skipped(reason), Vec::new()),
        Outcome::Failed(error) => return (HomePageRead::Failed(error.kind()), Vec::new()),
    };
    let status = fetched.head.status;
    if !status.is_success() {
        return (HomePageRead::Fetched(status), Vec::new());
    }
    let mut buffer = HeadBuffer::default();
    let read = loop {
        match fetched.body.chunk().await {
            Ok(Some(chunk)) => {
                if buffer.feed(&chunk) {
                    break HomePageRead::Fetched(status);
                }
            }
            Ok(None) => break HomePageRead::Fetched(status),
            // What was read still counts: its links were declared.
            Err(error) => break HomePageRead::Failed(error.kind()),
        }
    };
    (read, crate::declared_icons(buffer.html(), &fetched.url))
}

/// Fetches and decodes one icon URL.
async fn try_icon(
    polite: &Polite,
    url: &Url,
    decoder: &IconDecoder,
    operation: &Operation,
) -> (AttemptResult, Option<Png64>) {
    // One byte past the cap tells a file of exactly the cap from a longer one.
    let request = Request::get(url.clone())
        .max_body_bytes(MAX_ICON_BYTES + 1)
        .accept(HeaderValue::from_static(ICON_ACCEPT));
    let response = polite
        .fetch(PoliteRequest::new(request, BOT), operation)
        .await;
    let fetched = match response.outcome {
        Outcome::Fetched(fetched) => fetched,
        Outcome::Skipped { reason, .. } => return (AttemptResult::Skipped(reason), None),
        Outcome::Failed(error) => return (AttemptResult::Failed(error), None),
    };
    let status = fetched.head.status;
    if !status.is_success() {
        return (AttemptResult::Status(status), None);
    }
    let content_type = fetched
        .head
        .headers
        .get(http::header::CONTENT_TYPE)
        .and_then(|value| value.to_str().ok())
        .map(str::to_owned);
    let body = match fetched.body.read_to_end(None).await {
        Ok(body) => body,
        Err(error) => return (AttemptResult::Failed(error), None),
    };
    if body.truncated || body.bytes.len() > MAX_ICON_BYTES {
        let error = IconError::TooLarge {
            limit: MAX_ICON_BYTES,
        };
        return (AttemptResult::Broken(error), None);
    }
    // Decoding is CPU work: off the async threads (in a helper process when sandboxed), and
    // bounded by the same deadline.
    let decoding = decoder.decode(body.bytes, content_type);
    match tokio::time::timeout_at(operation.deadline.instant(), decoding).await {
        Ok(Ok(png)) => (AttemptResult::Used, Some(png)),
        Ok(Err(error)) => (AttemptResult::Broken(error), None),
        Err(_elapsed) => (AttemptResult::OutOfTime, None),
    }
}
