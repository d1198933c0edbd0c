//! One robots.txt fetch and what its answer means: the one status table and the one set of
//! robots.txt limits of both bots (JittyBot's documented "Errors and status codes"; RobotsTxtParser uses the
//! same table with its "always fresh" policy).
//!
//! | response | outcome |
//! |---|---|
//! | 2xx | [`RobotsOutcome::Rules`]: the first [`ROBOTS_TXT_MAX_BYTES`] are parsed and applied |
//! | 301, 302, 303, 307, 308 with a usable `Location` | followed, up to [`ROBOTS_TXT_MAX_REDIRECTS`] hops |
//! | a loop, a 6th hop, a 3xx without `Location`, a `Location` that is not http(s) | [`RobotsOutcome::Unreachable`] |
//! | 304 to a conditional request | [`RobotsOutcome::NotModified`] |
//! | 4xx except 429 | [`RobotsOutcome::NoFile`]: no restrictions |
//! | 429 | [`RobotsOutcome::BackingOff`], honouring `Retry-After` |
//! | 5xx, 1xx, other 3xx, any other status (999) | [`RobotsOutcome::Unreachable`]: everything disallowed |
//! | network error, malformed answer, undecodable or unsupported body coding | [`RobotsOutcome::Unreachable`] |

use std::time::Duration;

use http::StatusCode;
use robots::{ProductTokens, RobotsTxt};
use url::Url;

use tracing::Instrument;

use crate::body::ContentCoding;
use crate::deadline::Deadline;
use crate::error::FetchError;
use crate::fetcher::{Fetcher, HopRecord, Request, Response, Validators};
use crate::headers::{
    cache_lifetime, max_age, retry_after, retry_after_sent, DEFAULT_CACHE_LIFETIME,
};
use crate::observe::RequestKind;
use crate::redirect::RedirectHop;
use crate::scope::Scope;
use crate::verdict::{RulesSource, Verdict};

/// How much of a robots.txt is read: 500 KiB, as the REP engine.
pub const ROBOTS_TXT_MAX_BYTES: usize = robots::MAX_ROBOTS_TXT_BYTES;
/// Redirect hops followed for a robots.txt; one more is treated as unreachable (5xx).
pub const ROBOTS_TXT_MAX_REDIRECTS: usize = 5;
/// The `Accept` header of robots.txt requests.
pub const ROBOTS_TXT_ACCEPT: &str = "text/plain, */*;q=0.8";

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
    /// 5xx, a network error, a redirect failure, any other status: everything disallowed.
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

/// What a final status means (redirects were already followed): the status table.
pub fn outcome_of(status: StatusCode, conditional: bool) -> RobotsOutcome {
    match status.as_u16() {
        200..=299 => RobotsOutcome::Rules,
        304 if conditional => RobotsOutcome::NotModified,
        429 => RobotsOutcome::BackingOff,
        400..=499 => RobotsOutcome::NoFile,
        // 5xx, a 3xx that could not be followed, 1xx and nonsense (999): treat as a server
        // error, never as an open site.
        _ => RobotsOutcome::Unreachable,
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
    pub status: Option<StatusCode>,
    /// The URL the final response came from, if a response arrived.
    pub final_url: Option<Url>,
    /// The redirects followed, in order (also when the fetch failed).
    pub redirects: Vec<RedirectHop>,
    /// Every hop as sent and received (for archiving).
    pub exchanges: Vec<HopRecord>,
    /// Body bytes received, decoded.
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
    /// `Cache-Control: max-age` as sent (at most 7 days).
    pub max_age: Option<Duration>,
    /// How long this answer may be used: [`cache_lifetime`] of the response headers.
    pub cache_lifetime: Duration,
    /// `Retry-After` as honoured: bounded by [`MAX_RETRY_AFTER`](crate::MAX_RETRY_AFTER).
    pub retry_after: Option<Duration>,
    /// `Retry-After` as the server sent it ([`retry_after_sent`](crate::retry_after_sent)),
    /// for callers whose own limit is longer than the crawler's.
    pub retry_after_sent: Option<Duration>,
    /// The response's `ETag` and `Last-Modified`, for the next conditional request.
    pub validators: Validators,
    /// Why the fetch failed, for network errors and redirect failures.
    pub error: Option<FetchError>,
    /// When the fetch started (wall clock).
    pub fetched_at: jiff::Timestamp,
}

impl RobotsFetch {
    /// A fetch that produced no usable response.
    pub(crate) fn failed(
        robots_url: Url,
        redirects: Vec<RedirectHop>,
        error: FetchError,
    ) -> RobotsFetch {
        RobotsFetch {
            robots_url,
            outcome: RobotsOutcome::Unreachable,
            status: None,
            final_url: None,
            redirects,
            exchanges: Vec::new(),
            bytes_read: 0,
            truncated: false,
            x_robots_tag: Vec::new(),
            content_type: None,
            body: Vec::new(),
            robots: None,
            max_age: None,
            cache_lifetime: DEFAULT_CACHE_LIFETIME,
            retry_after: None,
            retry_after_sent: None,
            validators: Validators::default(),
            error: Some(error),
            fetched_at: jiff::Timestamp::now(),
        }
    }

    /// The answer for `url` as `tokens` (in order of preference), from this fetch alone.
    pub fn verdict(&self, url: &str, tokens: &ProductTokens) -> Verdict {
        let valid_for = match self.outcome {
            RobotsOutcome::Unreachable | RobotsOutcome::BackingOff => None,
            _ => Some(self.cache_lifetime),
        };
        match (&self.outcome, &self.robots) {
            (RobotsOutcome::Rules, Some(robots)) => {
                let rules = robots.rules_for(tokens);
                Verdict::from_rules(
                    &rules,
                    url,
                    RulesSource::Fresh,
                    valid_for,
                    Some(&self.robots_url),
                )
            }
            (RobotsOutcome::NoFile, _) => {
                Verdict::without_rules(RulesSource::NoFile, valid_for, Some(&self.robots_url))
            }
            (RobotsOutcome::BackingOff, _) => Verdict::without_rules(
                RulesSource::BackingOff,
                self.retry_after,
                Some(&self.robots_url),
            ),
            _ => {
                Verdict::without_rules(RulesSource::Unreachable, valid_for, Some(&self.robots_url))
            }
        }
    }
}

/// Fetches the robots.txt governing `url`, fresh (no cache, no validators), under the
/// fetcher's total limit. Every command that asks about one server uses this (or
/// [`fetch_robots_txt_within`]), so they apply the same limits and reach the same verdict.
///
/// Fails only when `url` has no robots.txt scope (not `http`/`https`, no host); every network
/// failure is an [`RobotsOutcome::Unreachable`] result with its [`RobotsFetch::error`].
pub async fn fetch_robots_txt(fetcher: &Fetcher, url: &Url) -> Result<RobotsFetch, FetchError> {
    let scope = Scope::of(url)?;
    Ok(fetch_robots_txt_within(
        fetcher,
        scope.robots_txt_url(),
        None,
        fetcher.deadline(None),
    )
    .await)
}

/// Fetches `robots_url` itself, conditionally when `validators` are given, under `deadline`
/// (and the fetcher's total limit).
pub async fn fetch_robots_txt_within(
    fetcher: &Fetcher,
    robots_url: &Url,
    validators: Option<&Validators>,
    deadline: Deadline,
) -> RobotsFetch {
    fetch_robots_txt_refusing(fetcher, robots_url, validators, deadline, &|_| false).await
}

/// [`fetch_robots_txt_within`], not following a redirect to a URL `refuse` names (a host the
/// operator holds): the file is then unreachable, as for any redirect that cannot be followed.
pub async fn fetch_robots_txt_refusing(
    fetcher: &Fetcher,
    robots_url: &Url,
    validators: Option<&Validators>,
    deadline: Deadline,
    refuse: &(dyn Fn(&Url) -> bool + Send + Sync),
) -> RobotsFetch {
    let span = tracing::debug_span!("robots_txt", url = %robots_url);
    fetch_robots(fetcher, robots_url, validators, deadline, refuse)
        .instrument(span)
        .await
}

async fn fetch_robots(
    fetcher: &Fetcher,
    robots_url: &Url,
    validators: Option<&Validators>,
    deadline: Deadline,
    refuse: &(dyn Fn(&Url) -> bool + Send + Sync),
) -> RobotsFetch {
    let fetched_at = jiff::Timestamp::now();
    let mut request = Request::get(robots_url.clone())
        .max_body_bytes(ROBOTS_TXT_MAX_BYTES)
        .max_redirects(ROBOTS_TXT_MAX_REDIRECTS)
        .accept(http::HeaderValue::from_static(ROBOTS_TXT_ACCEPT))
        .kind(RequestKind::Robots);
    if let Some(validators) = validators {
        request = request.validators(validators.clone());
    }
    let conditional = request.validators.is_some();
    let traced = fetcher
        .fetch_traced_refusing(request, fetcher.deadline(Some(deadline)), refuse)
        .await;
    let response = match traced.result.and_then(readable) {
        Ok(response) => response,
        Err(error) => {
            tracing::debug!(error = %error.full_message(), outcome = "unreachable", "robots.txt");
            let mut failed = RobotsFetch::failed(robots_url.clone(), traced.redirects, error);
            failed.fetched_at = fetched_at;
            return failed;
        }
    };
    answered(robots_url, response, conditional, fetched_at)
}

/// `response`, if its body can be read as text: a content coding that was not asked for is
/// never parsed (an empty or garbled "file" would allow everything).
fn readable(response: Response) -> Result<Response, FetchError> {
    match &response.coding {
        ContentCoding::Unsupported(encoding) => Err(FetchError::UnsupportedEncoding {
            encoding: encoding.clone(),
        }),
        _ => Ok(response),
    }
}

/// The robots.txt fetch that `response` (to a request made at `fetched_at`) answered, by the
/// status table.
fn answered(
    robots_url: &Url,
    response: Response,
    conditional: bool,
    fetched_at: jiff::Timestamp,
) -> RobotsFetch {
    let status = response.status;
    let outcome = outcome_of(status, conditional);
    tracing::debug!(status = status.as_u16(), %outcome, bytes = response.body.len(), "robots.txt");
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
        max_age: max_age(&response.headers),
        cache_lifetime: cache_lifetime(&response.headers),
        retry_after: retry_after(&response.headers, jiff::Timestamp::now()),
        retry_after_sent: retry_after_sent(&response.headers, jiff::Timestamp::now()),
        validators: response.validators(),
        error: None,
        redirects: response.redirects,
        exchanges: response.exchanges,
        body: response.body,
        fetched_at,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_status_row_has_its_outcome() {
        use RobotsOutcome::*;
        for (status, expected) in [
            (200, Rules),
            (203, Rules),
            (299, Rules),
            (300, Unreachable),
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
            (999, Unreachable),
        ] {
            let code = StatusCode::from_u16(status).unwrap();
            assert_eq!(outcome_of(code, false), expected, "{status}");
        }
        assert_eq!(outcome_of(StatusCode::NOT_MODIFIED, true), NotModified);
    }
}
