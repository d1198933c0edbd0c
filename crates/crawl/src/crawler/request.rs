//! The fetch step: one URL's request through fetch's polite pipeline (robots.txt, the
//! origin's turn, redirects), HTTPS first where it may work. A first HTTPS attempt at a host
//! not known to serve HTTPS is marked an HTTPS probe: when it fails as a host without HTTPS
//! fails, the host is remembered as HTTP-only and the URL fetched over HTTP at once (not an
//! attempt), and the pacer, told it was a probe, learnt nothing of the origin's load.

use fetch::{
    shows_no_https, Operation, Outcome as Polite, PoliteRequest, Request, SkipReason, Validators,
};

use super::config::{MAX_TURN_WAIT, URL_DEADLINE};
use super::parts::{Keeper, Progress, Requester};
use super::CrawlError;
use crate::normal::NormalUrl;
use crate::store::{ClaimedUrl, HostId, HostInfo, UrlKind};

/// A URL's final request: where it went, what the crawl knew of that host's HTTPS, and what
/// came of it.
pub(crate) struct Sent {
    /// The URL requested (a revisit of a redirected URL: its chain's end).
    pub(crate) target: NormalUrl,
    /// The row of the URL's own host.
    pub(crate) host_id: HostId,
    /// What was known of the target's HTTPS before (a revisit at a chain's end: the scheme
    /// it worked with).
    pub(crate) https_known: Option<bool>,
    /// The pipeline's answer.
    pub(crate) response: fetch::PoliteResponse,
}

/// Requests `url` (whose `https` form is `https_form`, on `host`), HTTPS first where it may
/// work, falling back to HTTP at once where HTTPS fails as a host without it fails.
pub(crate) async fn https_first(
    req: &Requester,
    keep: &Keeper,
    progress: &Progress,
    url: &ClaimedUrl,
    https_form: &NormalUrl,
    host: &HostInfo,
) -> Result<Sent, CrawlError> {
    let mut https = req.https.try_https(https_form.host(), host.https);
    if https && host.https == Some(false) {
        super::https::retrying(&keep.store, req.polite.robots(), https_form).await?;
    }
    // A URL that redirected is revisited where it ended (its scheme as it worked then).
    let media = url.kind == UrlKind::Media;
    let revisit_at =
        super::redirects::revisit_target(url, |t| media || req.places.in_scope(t.host()));
    loop {
        let target = revisit_at
            .clone()
            .unwrap_or_else(|| https_form.with_scheme(https));
        // The first HTTPS attempt at a host not known to serve it: failing to connect says
        // the host has no HTTPS, nothing of the origin's load (the pacer learns nothing).
        let https_probe = https && revisit_at.is_none() && host.https != Some(true);
        let fetch_started = std::time::Instant::now();
        let response = fetch(req, url, &target, https_probe).await;
        super::StageTimes::add(&progress.counters.time.fetch, fetch_started);
        if let Some(why) = https_probe.then(|| https_failure(&response)).flatten() {
            // No working HTTPS on this host now: remember it, and use HTTP at once (not an
            // attempt). HTTPS is tried again in a later run, or after a day.
            req.https.failed(https_form.host(), &why);
            if host.https != Some(false) {
                keep.store.set_host_https(host.host_id, false).await?;
                req.places
                    .update_host(https_form.host(), |h| h.https = Some(false));
            }
            https = false;
            continue;
        }
        // A revisit at a chain's end learns nothing about the URL's own host.
        let https_known = if revisit_at.is_some() {
            Some(target.is_https())
        } else {
            host.https
        };
        return Ok(Sent {
            target,
            host_id: host.host_id,
            https_known,
            response,
        });
    }
}

/// Why a request over HTTPS failed as a host without working HTTPS fails, if it did: the
/// request itself, or the robots.txt fetch over HTTPS before it.
fn https_failure(response: &fetch::PoliteResponse) -> Option<String> {
    match &response.outcome {
        Polite::Failed(e) if shows_no_https(e) => Some(e.full_message()),
        Polite::Skipped {
            reason: SkipReason::RobotsUnreachable { .. },
            ..
        } => response
            .trail
            .robots_fetches
            .iter()
            .find_map(|r| r.error.as_ref().filter(|e| shows_no_https(e)))
            .map(|e| format!("robots.txt: {}", e.full_message())),
        _ => None,
    }
}

async fn fetch(
    req: &Requester,
    url: &ClaimedUrl,
    target: &NormalUrl,
    https_probe: bool,
) -> fetch::PoliteResponse {
    let media = url.kind == UrlKind::Media;
    let mut request = Request::get(target.url().clone());
    request.max_body_bytes = if media {
        super::config::MAX_MEDIA_BYTES
    } else {
        super::config::MAX_PAGE_BYTES
    };
    request.keep_raw = true;
    if media {
        request.agent = Some(super::config::MEDIA_AGENT.to_string());
        request.kind = fetch::RequestKind::Media;
    }
    if url.fetched_at.is_some() && (url.etag.is_some() || url.last_modified.is_some()) {
        request.validators = Some(Validators {
            etag: url.etag.clone(),
            last_modified: url.last_modified.clone(),
        });
    }
    let tokens = if media {
        &super::config::MEDIA_TOKENS
    } else {
        &super::config::PAGE_TOKENS
    };
    let places = &req.places;
    let follow = move |u: &fetch::Url| media || u.host_str().is_some_and(|h| places.in_scope(h));
    let polite_request = PoliteRequest {
        request,
        tokens,
        follow: Some(&follow),
        probe: false,
        https_probe,
    };
    let operation = Operation::within(URL_DEADLINE).with_max_wait(MAX_TURN_WAIT);
    req.polite.fetch(polite_request, &operation).await
}
