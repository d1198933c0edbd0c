//! What response headers say about time: `Cache-Control` lifetimes and `Retry-After`.

use std::time::Duration;

use http::header::{self, HeaderMap};

/// How long a robots.txt answer is used without `Cache-Control: max-age`: 24 hours.
pub const DEFAULT_CACHE_LIFETIME: Duration = Duration::from_secs(24 * 60 * 60);
/// Shortest lifetime `max-age` can set (also the lifetime for `no-cache`, `no-store` and
/// `max-age=0`): 5 minutes, so a site cannot make every page fetch cost a robots.txt fetch.
pub const MIN_CACHE_LIFETIME: Duration = Duration::from_secs(5 * 60);
/// Longest lifetime `max-age` can set: 7 days, so rule changes are seen within a week.
pub const MAX_CACHE_LIFETIME: Duration = Duration::from_secs(7 * 24 * 60 * 60);
/// Shortest wait a `Retry-After` header can ask for: 1 second.
pub const MIN_RETRY_AFTER: Duration = Duration::from_secs(1);
/// Longest wait a `Retry-After` header is honoured up to: 24 hours. Longer values (up to
/// `18446744073709551615` seconds, as one hostile server sent) are stored and shown as this.
pub const MAX_RETRY_AFTER: Duration = Duration::from_secs(24 * 60 * 60);

/// `Cache-Control: max-age` in seconds, if sent (the first one wins), at most
/// [`MAX_CACHE_LIFETIME`] so no absurd value is stored.
pub fn max_age(headers: &HeaderMap) -> Option<Duration> {
    directives(headers).find_map(|(name, value)| {
        (name == "max-age")
            .then(|| value?.parse::<u64>().ok())
            .flatten()
            .map(|seconds| Duration::from_secs(seconds).min(MAX_CACHE_LIFETIME))
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

/// `Retry-After` (delay seconds or an HTTP date, relative to `now`) as the wait honoured:
/// within [[`MIN_RETRY_AFTER`], [`MAX_RETRY_AFTER`]]. `None` when absent or unreadable.
pub fn retry_after(headers: &HeaderMap, now: jiff::Timestamp) -> Option<Duration> {
    retry_after_sent(headers, now).map(bounded_retry_after)
}

/// `Retry-After` (delay seconds or an HTTP date, relative to `now`) as the server asked,
/// without the crawler's bounds: callers with a longer horizon than the crawler's (a
/// schedule measured in days) apply their own limit. A date in the past is zero; more
/// digits than fit in 64 bits is [`Duration::MAX`]. `None` when absent or unreadable.
pub fn retry_after_sent(headers: &HeaderMap, now: jiff::Timestamp) -> Option<Duration> {
    let value = headers.get(header::RETRY_AFTER)?.to_str().ok()?.trim();
    let wait = if !value.is_empty() && value.bytes().all(|b| b.is_ascii_digit()) {
        // Any number of digits: too many for u64 is simply "very long".
        value
            .parse::<u64>()
            .map_or(Duration::MAX, Duration::from_secs)
    } else {
        let date = httpdate::parse_http_date(value).ok()?;
        let date = jiff::Timestamp::try_from(date).ok()?;
        let wait = date.duration_since(now);
        Duration::try_from(wait).unwrap_or(Duration::ZERO)
    };
    Some(wait)
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
    use http::HeaderValue;

    fn headers(pairs: &[(&'static str, &str)]) -> HeaderMap {
        let mut map = HeaderMap::new();
        for (name, value) in pairs {
            map.append(*name, HeaderValue::from_str(value).unwrap());
        }
        map
    }

    #[test]
    fn max_age_shortens_and_extends_within_bounds() {
        assert_eq!(cache_lifetime(&headers(&[])), DEFAULT_CACHE_LIFETIME);
        let hour = headers(&[("cache-control", "public, max-age=3600")]);
        assert_eq!(cache_lifetime(&hour), Duration::from_secs(3600));
        let two_days = headers(&[("cache-control", "max-age=\"172800\"")]);
        assert_eq!(cache_lifetime(&two_days), Duration::from_secs(172_800));
        let year = headers(&[("cache-control", "max-age=31536000")]);
        assert_eq!(cache_lifetime(&year), MAX_CACHE_LIFETIME);
        assert_eq!(max_age(&year), Some(MAX_CACHE_LIFETIME));
        let zero = headers(&[("cache-control", "max-age=0")]);
        assert_eq!(cache_lifetime(&zero), MIN_CACHE_LIFETIME);
        let no_store = headers(&[
            ("cache-control", "no-store"),
            ("cache-control", "max-age=9000"),
        ]);
        assert_eq!(cache_lifetime(&no_store), MIN_CACHE_LIFETIME);
        let garbage = headers(&[("cache-control", "max-age=soon")]);
        assert_eq!(cache_lifetime(&garbage), DEFAULT_CACHE_LIFETIME);
    }

    #[test]
    fn retry_after_reads_seconds_and_dates_and_is_bounded() {
        let now = jiff::Timestamp::from_second(1_700_000_000).unwrap();
        let after = |value: &str| retry_after(&headers(&[("retry-after", value)]), now);
        assert_eq!(after("120"), Some(Duration::from_secs(120)));
        let later = httpdate::fmt_http_date(
            std::time::SystemTime::UNIX_EPOCH + Duration::from_secs(1_700_000_090),
        );
        assert_eq!(after(&later), Some(Duration::from_secs(90)));
        assert_eq!(
            after("Thu, 01 Jan 1970 00:00:00 GMT"),
            Some(MIN_RETRY_AFTER)
        );
        assert_eq!(after("0"), Some(MIN_RETRY_AFTER));
        assert_eq!(after("soon"), None);
        assert_eq!(after("-5"), None);
        // The hostile values: never shown as 18446744073709551615 s.
        assert_eq!(after("18446744073709551615"), Some(MAX_RETRY_AFTER));
        assert_eq!(after("99999999999999999999999999"), Some(MAX_RETRY_AFTER));
        assert_eq!(after("864000"), Some(MAX_RETRY_AFTER));
        let sent = |value: &str| retry_after_sent(&headers(&[("retry-after", value)]), now);
        assert_eq!(
            sent("259200"),
            Some(Duration::from_secs(259_200)),
            "not capped"
        );
        assert_eq!(sent("0"), Some(Duration::ZERO));
        assert_eq!(sent("99999999999999999999999999"), Some(Duration::MAX));
        assert_eq!(sent("soon"), None);
    }
}
