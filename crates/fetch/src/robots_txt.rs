//! Fetching one robots.txt and reading the answer by the status table.
//!
//! | response | outcome |
//! |---|---|
//! | 2xx | [`RobotsOutcome::Rules`]: the first [`ROBOTS_TXT_MAX_BYTES`] are parsed and applied |
//! | 3xx | followed up to [`ROBOTS_TXT_MAX_REDIRECTS`] hops; a loop or one hop more is [`RobotsOutcome::Unreachable`] |
//! | 304 to a conditional request | [`RobotsOutcome::NotModified`] |
//! | 4xx except 429 | [`RobotsOutcome::NoFile`]: no restrictions |
//! | 429 | [`RobotsOutcome::BackingOff`], honouring `Retry-After` |
//! | 5xx, anything else | [`RobotsOutcome::Unreachable`]: everything disallowed |
//! | network error | [`RobotsOutcome::Unreachable`] |

use std::time::{Duration, SystemTime};

use reqwest::header::{self, HeaderMap};
use robots::RobotsTxt;
use url::Url;

use crate::client::{Fetcher, RedirectHop, Request, Validators};
use crate::error::FetchError;
use crate::scope::Scope;
use crate::verdict::{RulesSource, Verdict};

/// How much of a robots.txt is read: 500 KiB, as the REP engine.
pub const ROBOTS_TXT_MAX_BYTES: usize = robots::MAX_ROBOTS_TXT_BYTES;
/// Redirect hops followed for a robots.txt; one more is treated as unreachable (5xx).
pub const ROBOTS_TXT_MAX_REDIRECTS: usize = 5;
/// How long a robots.txt answer is used without `Cache-Control: max-age`: 24 hours.
pub const DEFAULT_CACHE_LIFETIME: Duration = Duration::from_secs(24 * 60 * 60);
/// Shortest lifetime `max-age` can set (also the lifetime for `no-cache`, `no-store` and
/// `max-age=0`): 5 minutes, so a site cannot make every page fetch cost a robots.txt fetch.
pub const MIN_CACHE_LIFETIME: Duration = Duration::from_secs(5 * 60);
/// Longest lifetime `max-age` can set: 7 days, so rule changes are seen within a week.
pub const MAX_CACHE_LIFETIME: Duration = Duration::from_secs(7 * 24 * 60 * 60);
/// Shortest wait a `Retry-After` header can ask for: 1 second.
pub const MIN_RETRY_AFTER: Duration = Duration::from_secs(1);
/// Longest wait a `Retry-After` header is honoured up to: 24 hours.
pub const MAX_RETRY_AFTER: Duration = Duration::from_secs(24 * 60 * 60);

/// What a robots.txt response means for crawling.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RobotsOutcome {
    /// 2xx: a file to apply.
    Rules,
    /// 304 to a conditional request: the cached copy is still current.
    NotModified,
    /// 4xx except 429: no robots.txt, no restrictions.
    NoFile,
    /// 5xx, a network error, a redirect loop or too many redirects: everything disallowed.
    Unreachable,
    /// 429: back off and retry later; never assume the site is open.
    BackingOff,
}

impl std::fmt::Display for RobotsOutcome {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            RobotsOutcome::Rules => "rules",
            RobotsOutcome::NotModified => "not modified",
            RobotsOutcome::NoFile => "no file",
            RobotsOutcome::Unreachable => "unreachable",
            RobotsOutcome::BackingOff => "backing off",
        })
    }
}

/// One robots.txt fetch, with everything the response said.
#[derive(Debug, Clone)]
pub struct RobotsFetch {
    /// The robots.txt URL asked for (`scheme://host[:port]/robots.txt`).
    pub robots_url: Url,
    /// What the response means.
    pub outcome: RobotsOutcome,
    /// The final status, if a response arrived.
    pub status: Option<u16>,
    /// The URL the final response came from, if a response arrived.
    pub final_url: Option<Url>,
    /// The redirects followed, in order (also when the fetch failed).
    pub redirects: Vec<RedirectHop>,
    /// Body bytes received, decompressed.
    pub bytes_read: u64,
    /// True when the file was longer than [`ROBOTS_TXT_MAX_BYTES`] and was cut.
    pub truncated: bool,
    /// Every `X-Robots-Tag` header of the final response.
    pub x_robots_tag: Vec<String>,
    /// The `Content-Type` header of the final response.
    pub content_type: Option<String>,
    /// The body as read (at most [`ROBOTS_TXT_MAX_BYTES`]); empty unless a response arrived.
    pub body: Vec<u8>,
    /// The parsed file, for [`RobotsOutcome::Rules`].
    pub robots: Option<RobotsTxt>,
    /// `Cache-Control: max-age` as sent, before bounds.
    pub max_age: Option<Duration>,
    /// How long this answer may be used: [`cache_lifetime`] of the response headers.
    pub cache_lifetime: Duration,
    /// `Retry-After` as sent (seconds or date), before bounds.
    pub retry_after: Option<Duration>,
    /// The response's `ETag` and `Last-Modified`, for the next conditional request.
    pub validators: Validators,
    /// Why the fetch failed, for network errors and redirect failures.
    pub error: Option<FetchError>,
}

impl RobotsFetch {
    /// A fetch that produced no response.
    fn failed(robots_url: Url, redirects: Vec<RedirectHop>, error: FetchError) -> RobotsFetch {
        RobotsFetch {
            robots_url,
            outcome: RobotsOutcome::Unreachable,
            status: None,
            final_url: None,
            redirects,
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
            error: Some(error),
        }
    }

    /// The answer for `url` as `tokens` (in order of preference), from this fetch alone.
    pub fn verdict(&self, url: &str, tokens: &[&str]) -> Verdict {
        let valid_for = match self.outcome {
            RobotsOutcome::Unreachable | RobotsOutcome::BackingOff => None,
            _ => Some(self.cache_lifetime),
        };
        match (&self.outcome, &self.robots) {
            (RobotsOutcome::Rules, Some(robots)) => {
                let rules = crate::verdict::rules_for(robots, tokens);
                Verdict::from_rules(&rules, url, RulesSource::Fresh, valid_for)
            }
            (RobotsOutcome::NoFile, _) => Verdict::without_rules(RulesSource::NoFile, valid_for),
            (RobotsOutcome::BackingOff, _) => {
                Verdict::without_rules(RulesSource::BackingOff, self.retry_after)
            }
            _ => Verdict::without_rules(RulesSource::Unreachable, valid_for),
        }
    }
}

/// Fetches the robots.txt governing `url`, fresh (no cache, no validators).
///
/// Fails only when `url` has no robots.txt scope (not `http`/`https`, no host); every network
/// failure is an [`RobotsOutcome::Unreachable`] result with its [`RobotsFetch::error`].
pub async fn fetch_robots_txt(fetcher: &Fetcher, url: &Url) -> Result<RobotsFetch, FetchError> {
    let scope = Scope::of(url)?;
    Ok(fetch_robots_txt_url(fetcher, scope.robots_txt_url(), None).await)
}

/// Fetches `robots_url` itself, conditionally when `validators` are given.
pub async fn fetch_robots_txt_url(
    fetcher: &Fetcher,
    robots_url: &Url,
    validators: Option<&Validators>,
) -> RobotsFetch {
    let mut request = Request::get(robots_url.clone())
        .max_body_bytes(ROBOTS_TXT_MAX_BYTES)
        .max_redirects(ROBOTS_TXT_MAX_REDIRECTS);
    if let Some(validators) = validators {
        request = request.validators(validators.clone());
    }
    let conditional = request.validators.is_some();
    let traced = fetcher.fetch_traced(request).await;
    let response = match traced.result {
        Ok(response) => response,
        Err(error) => return RobotsFetch::failed(robots_url.clone(), traced.redirects, error),
    };
    let status = response.status;
    let outcome = outcome_of(status, conditional);
    let max_age = max_age(&response.headers);
    let robots = (outcome == RobotsOutcome::Rules).then(|| RobotsTxt::parse(&response.body));
    RobotsFetch {
        robots_url: robots_url.clone(),
        outcome,
        status: Some(status),
        final_url: Some(response.url.clone()),
        x_robots_tag: response.header_values("x-robots-tag"),
        content_type: response.content_type.clone(),
        bytes_read: response.bytes_read,
        truncated: response.truncated,
        robots,
        max_age,
        cache_lifetime: cache_lifetime(&response.headers),
        retry_after: retry_after(&response.headers, SystemTime::now()),
        validators: response.validators(),
        error: None,
        redirects: response.redirects,
        body: response.body,
    }
}

/// What a final status means (redirects were already followed).
pub fn outcome_of(status: u16, conditional: bool) -> RobotsOutcome {
    match status {
        200..=299 => RobotsOutcome::Rules,
        304 if conditional => RobotsOutcome::NotModified,
        429 => RobotsOutcome::BackingOff,
        400..=499 => RobotsOutcome::NoFile,
        // 5xx, a 3xx that could not be followed, 1xx and nonsense: treat as a server error,
        // never as an open site.
        _ => RobotsOutcome::Unreachable,
    }
}

/// `Cache-Control: max-age` in seconds, if sent (the first one wins).
pub fn max_age(headers: &HeaderMap) -> Option<Duration> {
    directives(headers).find_map(|(name, value)| {
        (name == "max-age")
            .then(|| value?.parse::<u64>().ok())
            .flatten()
            .map(Duration::from_secs)
    })
}

/// How long a robots.txt answer with these response headers may be used:
/// `Cache-Control: max-age` within [[`MIN_CACHE_LIFETIME`], [`MAX_CACHE_LIFETIME`]],
/// [`MIN_CACHE_LIFETIME`] for `no-cache` or `no-store`, otherwise [`DEFAULT_CACHE_LIFETIME`].
pub fn cache_lifetime(headers: &HeaderMap) -> Duration {
    let no_cache = directives(headers).any(|(name, _)| name == "no-cache" || name == "no-store");
    let lifetime = match max_age(headers) {
        _ if no_cache => MIN_CACHE_LIFETIME,
        Some(max_age) => max_age,
        None => DEFAULT_CACHE_LIFETIME,
    };
    lifetime.clamp(MIN_CACHE_LIFETIME, MAX_CACHE_LIFETIME)
}

/// `Retry-After` as a wait from `now` (seconds or an HTTP date), unbounded; see
/// [`bounded_retry_after`].
pub fn retry_after(headers: &HeaderMap, now: SystemTime) -> Option<Duration> {
    let value = headers.get(header::RETRY_AFTER)?.to_str().ok()?.trim();
    if let Ok(seconds) = value.parse::<u64>() {
        return Some(Duration::from_secs(seconds));
    }
    let date = httpdate::parse_http_date(value).ok()?;
    Some(date.duration_since(now).unwrap_or(Duration::ZERO))
}

/// A `Retry-After` wait within [[`MIN_RETRY_AFTER`], [`MAX_RETRY_AFTER`]].
pub fn bounded_retry_after(wait: Duration) -> Duration {
    wait.clamp(MIN_RETRY_AFTER, MAX_RETRY_AFTER)
}

/// The `Cache-Control` directives, lower case, with their values unquoted.
fn directives(headers: &HeaderMap) -> impl Iterator<Item = (String, Option<String>)> + '_ {
    headers
        .get_all(header::CACHE_CONTROL)
        .iter()
        .filter_map(|value| value.to_str().ok())
        .flat_map(|value| value.split(','))
        .map(|directive| {
            let (name, value) = match directive.split_once('=') {
                Some((name, value)) => (name, Some(value.trim().trim_matches('"').to_owned())),
                None => (directive, None),
            };
            (name.trim().to_ascii_lowercase(), value)
        })
}

#[cfg(test)]
mod tests {
    use super::*;
    use reqwest::header::HeaderValue;

    fn headers(pairs: &[(&'static str, &'static str)]) -> HeaderMap {
        let mut map = HeaderMap::new();
        for (name, value) in pairs {
            map.append(*name, HeaderValue::from_static(value));
        }
        map
    }

    #[test]
    fn every_status_row_has_its_outcome() {
        use RobotsOutcome::*;
        for (status, expected) in [
            (200, Rules),
            (203, Rules),
            (299, Rules),
            (301, Unreachable),
            (304, Unreachable),
            (400, NoFile),
            (401, NoFile),
            (403, NoFile),
            (404, NoFile),
            (410, NoFile),
            (451, NoFile),
            (429, BackingOff),
            (500, Unreachable),
            (503, Unreachable),
            (599, Unreachable),
            (100, Unreachable),
            (600, Unreachable),
        ] {
            assert_eq!(outcome_of(status, false), expected, "{status}");
        }
        assert_eq!(outcome_of(304, true), NotModified);
    }

    #[test]
    fn max_age_shortens_and_extends_within_bounds() {
        assert_eq!(cache_lifetime(&headers(&[])), DEFAULT_CACHE_LIFETIME);
        assert_eq!(DEFAULT_CACHE_LIFETIME, Duration::from_secs(86_400));
        let hour = headers(&[("cache-control", "public, max-age=3600")]);
        assert_eq!(cache_lifetime(&hour), Duration::from_secs(3600));
        let two_days = headers(&[("cache-control", "max-age=\"172800\"")]);
        assert_eq!(cache_lifetime(&two_days), Duration::from_secs(172_800));
        let year = headers(&[("cache-control", "max-age=31536000")]);
        assert_eq!(cache_lifetime(&year), MAX_CACHE_LIFETIME);
        let zero = headers(&[("cache-control", "max-age=0")]);
        assert_eq!(cache_lifetime(&zero), MIN_CACHE_LIFETIME);
        let no_store = headers(&[
            ("cache-control", "no-store"),
            ("cache-control", "max-age=9000"),
        ]);
        assert_eq!(cache_lifetime(&no_store), MIN_CACHE_LIFETIME);
        let garbage = headers(&[("cache-control", "max-age=soon")]);
        assert_eq!(cache_lifetime(&garbage), DEFAULT_CACHE_LIFETIME);
        assert_eq!(max_age(&hour), Some(Duration::from_secs(3600)));
        assert_eq!(MIN_CACHE_LIFETIME, Duration::from_secs(300));
        assert_eq!(MAX_CACHE_LIFETIME, Duration::from_secs(604_800));
    }

    #[test]
    fn retry_after_reads_seconds_and_dates() {
        let now = SystemTime::UNIX_EPOCH + Duration::from_secs(1_700_000_000);
        let seconds = headers(&[("retry-after", "120")]);
        assert_eq!(retry_after(&seconds, now), Some(Duration::from_secs(120)));
        let later = httpdate::fmt_http_date(now + Duration::from_secs(90));
        let mut date = HeaderMap::new();
        date.insert("retry-after", HeaderValue::from_str(&later).unwrap());
        assert_eq!(retry_after(&date, now), Some(Duration::from_secs(90)));
        let past = headers(&[("retry-after", "Thu, 01 Jan 1970 00:00:00 GMT")]);
        assert_eq!(retry_after(&past, now), Some(Duration::ZERO));
        assert_eq!(retry_after(&headers(&[("retry-after", "soon")]), now), None);
        assert_eq!(bounded_retry_after(Duration::ZERO), MIN_RETRY_AFTER);
        assert_eq!(
            bounded_retry_after(Duration::from_secs(10 * 86_400)),
            MAX_RETRY_AFTER
        );
        assert_eq!(MAX_RETRY_AFTER, Duration::from_secs(86_400));
        assert_eq!(MIN_RETRY_AFTER, Duration::from_secs(1));
    }

    #[test]
    fn robots_limits_follow_the_specification() {
        assert_eq!(ROBOTS_TXT_MAX_BYTES, 500 * 1024);
        assert_eq!(ROBOTS_TXT_MAX_REDIRECTS, 5);
    }
}
