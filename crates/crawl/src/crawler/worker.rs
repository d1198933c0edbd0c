//! One leased origin's work: claim its URLs, fetch each politely, archive, and hand the
//! results to the writer.

use std::sync::atomic::Ordering;
use std::sync::Arc;

use fetch::{
    ErrorKind, FetchError, Operation, OriginKey, OriginSnapshot, Outcome as Polite, PaceSkip,
    PoliteRequest, Request, SkipReason, Trail, Validators,
};
use jiff::Timestamp;

use super::archive::Archive;
use super::committer::{OriginPace, Work};
use super::config::{MAX_TURN_WAIT, URL_CLAIM_BATCH, URL_DEADLINE};
use super::page::{self, Kept};
use super::{CrawlError, Ctx};
use crate::event::Event;
use crate::normal::NormalUrl;
use crate::origins::Evidence;
use crate::store::{ClaimedUrl, FetchFacts, OriginRow, OriginUpdate, Outcome, UrlKind, UrlState};

/// Whether the worker goes on with its origin.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Flow {
    Continue,
    /// Claim again: what was claimed goes back first (sitemap URLs were queued ahead of it).
    Reclaim,
    /// The origin must wait (its turn is later, it is paused, its robots.txt failed): give it
    /// back; it is claimed again when due.
    Yield,
}

/// Work one origin until it has no queued URLs, must wait, or the crawl stops.
pub(crate) async fn work_origin(
    ctx: Arc<Ctx>,
    origin: OriginRow,
    lease: Arc<super::lease::LeaseWatch>,
) -> Result<(), CrawlError> {
    let key = OriginKey::new(origin.name.0.clone());
    if !import_pacing(&ctx, &key, &origin) {
        // The last holder may have sent requests it never recorded (killed, or its lease
        // lost): the first request waits a full pace from now.
        ctx.polite.pacer().unsure(&key);
    }
    if ctx.polite.pacer().export(&key).is_some_and(|s| s.paused)
        && !super::unreachable::probe(&ctx, &key, origin.id).await?
    {
        // Still paused: give the origin back until its next probe.
        let work = Work {
            origin: Some(release_update(&ctx, &key, origin.id)),
            release: Some(origin.id),
            ..Work::default()
        };
        ctx.committer.send(work).await?;
        return Ok(());
    }
    let mut result = Ok(());
    'claims: while !ctx.stopping() && lease.usable() {
        let urls = ctx
            .store
            .claim_urls_skipping(origin.id, URL_CLAIM_BATCH, &ctx.levers.held_hosts())
            .await?;
        if urls.is_empty() {
            break;
        }
        let mut rest = urls.into_iter();
        while let Some(url) = rest.next() {
            if ctx.stopping() || !lease.usable() {
                let mut back: Vec<i64> = vec![url.id];
                back.extend(rest.map(|u| u.id));
                ctx.store.return_to_queue(&back).await?;
                break 'claims;
            }
            match process(&ctx, &key, origin.id, url).await {
                Ok(Flow::Continue) => {}
                Ok(Flow::Yield) => {
                    let back: Vec<i64> = rest.map(|u| u.id).collect();
                    ctx.store.return_to_queue(&back).await?;
                    break 'claims;
                }
                Ok(Flow::Reclaim) => {
                    let back: Vec<i64> = rest.map(|u| u.id).collect();
                    ctx.store.return_to_queue(&back).await?;
                    continue 'claims;
                }
                Err(e) => {
                    let back: Vec<i64> = rest.map(|u| u.id).collect();
                    let _ = ctx.store.return_to_queue(&back).await;
                    result = Err(e);
                    break 'claims;
                }
            }
        }
    }
    // The pace reached is committed, then the lease given back.
    let work = Work {
        origin: Some(release_update(&ctx, &key, origin.id)),
        release: Some(origin.id),
        ..Work::default()
    };
    ctx.committer.send(work).await?;
    result
}

/// Takes in the origin's stored pacing; true when it is complete (its last holder gave the
/// origin back with every request it made recorded), so the last request's start is known.
fn import_pacing(ctx: &Ctx, key: &OriginKey, origin: &OriginRow) -> bool {
    let Some(stored) = origin
        .pacer_state
        .as_deref()
        .and_then(|s| serde_json::from_str::<OriginSnapshot>(s).ok())
    else {
        return false;
    };
    let known = ctx.polite.pacer().export(key);
    // Another process (or an earlier run) may have paced this origin since this one did.
    if known.is_none_or(|k| stored.last_start > k.last_start || stored.not_before > k.not_before) {
        ctx.polite.pacer().import(key, &stored);
    }
    stored.complete
}

/// The origin's pacing as it is given back: complete, every request of this lease in it.
fn release_update(ctx: &Ctx, key: &OriginKey, id: i64) -> OriginPace {
    let mut update = origin_update(ctx, key, id, 0, 0);
    update.snapshot.complete = true;
    update
}

/// The origin's pacing for the store, with the requests and bytes of the last piece of work.
pub(crate) fn origin_update(
    ctx: &Ctx,
    key: &OriginKey,
    id: i64,
    requests: u64,
    bytes: u64,
) -> OriginPace {
    let snapshot = ctx.polite.pacer().export(key).unwrap_or_default();
    OriginPace {
        update: OriginUpdate {
            id,
            gap: ctx.config.pacer.pace,
            next_start: snapshot.next_start.unwrap_or_else(Timestamp::now),
            failures: snapshot.failures,
            paused: snapshot.paused,
            // Written out by the committer, for the last update of the origin in a commit.
            pacer_state: None,
            requests,
            bytes,
        },
        snapshot,
    }
}

/// Fetch one URL (HTTPS first where it may work) and hand over what came of it.
async fn process(
    ctx: &Arc<Ctx>,
    key: &OriginKey,
    origin_id: i64,
    url: ClaimedUrl,
) -> Result<Flow, CrawlError> {
    let Ok(https_form) = NormalUrl::from_key(&url.key, true) else {
        let outcome = skipped(&url, UrlState::Skipped, "not a crawlable URL".into());
        ctx.committer
            .send(Work {
                outcome: Some(outcome),
                ..Work::default()
            })
            .await?;
        return Ok(Flow::Continue);
    };
    if ctx.levers.holds(https_form.host()) {
        // Its site was excluded after the claim: back to the queue, untouched.
        ctx.committer
            .send(Work {
                outcome: Some(requeued(&url)),
                ..Work::default()
            })
            .await?;
        return Ok(Flow::Continue);
    }
    let (host, events) = ctx.places.host(&https_form, ctx.polite.pacer()).await?;
    ctx.emit_all(events);
    // The URL was claimed under this origin's lease: it is paced as part of it, even when
    // this process has not learnt yet that another process merged its host's origin here.
    if let Some(old) = ctx
        .places
        .adopt(https_form.host(), key, origin_id, ctx.polite.pacer())
    {
        tracing::info!(host = https_form.host(), from = %old, into = key.as_str(), "host paced with the origin it was claimed under");
    }
    if url.kind == UrlKind::Sitemaps {
        // Sitemaps first, under this origin's lease: their URLs are queued ahead of the
        // site's other pages, which are claimed again after them.
        let start = https_form.with_scheme(ctx.https.try_https(https_form.host(), host.https));
        if start.is_https() && host.https == Some(false) {
            super::https::retrying(ctx, &start).await?;
        }
        if !super::sitemaps::read_site(Arc::clone(ctx), start, (key, origin_id)).await? {
            // Stopping: read again by the next run, from the start.
            ctx.committer
                .send(Work {
                    outcome: Some(requeued(&url)),
                    ..Work::default()
                })
                .await?;
            return Ok(Flow::Yield);
        }
        let done = Outcome {
            id: url.id,
            state: Some(UrlState::Fetched),
            next_due: crate::store::NEVER,
            ..Outcome::default()
        };
        ctx.committer
            .send(Work {
                outcome: Some(done),
                ..Work::default()
            })
            .await?;
        return Ok(Flow::Reclaim);
    }
    if !super::turns::wait_for_turn(ctx, key, MAX_TURN_WAIT).await {
        // Stopping: the URL goes back to the queue unsent.
        ctx.committer
            .send(Work {
                outcome: Some(requeued(&url)),
                ..Work::default()
            })
            .await?;
        return Ok(Flow::Yield);
    }
    let before = ctx.polite.pacer().export(key).unwrap_or_default();
    let mut https = ctx.https.try_https(https_form.host(), host.https);
    if https && host.https == Some(false) {
        super::https::retrying(ctx, &https_form).await?;
    }
    // A URL that redirected is revisited where it ended (its scheme as it worked then).
    let media = url.kind == UrlKind::Media;
    let revisit_at =
        super::redirects::revisit_target(&url, |t| media || ctx.places.in_scope(t.host()));
    loop {
        let target = revisit_at
            .clone()
            .unwrap_or_else(|| https_form.with_scheme(https));
        let fetch_started = std::time::Instant::now();
        let response = fetch(ctx, &url, &target).await;
        super::StageTimes::add(&ctx.counters.time.fetch, fetch_started);
        let why_not_https = if https && revisit_at.is_none() && host.https != Some(true) {
            https_failure(&response)
        } else {
            None
        };
        if let Some(why) = why_not_https {
            // No working HTTPS on this host now: remember it, and use HTTP at once (not an
            // attempt). HTTPS is tried again in a later run, or after a day.
            ctx.https.failed(https_form.host(), &why);
            // Nor is it a sign of the origin's load.
            forget_no_https_failure(ctx, key, &before);
            if host.https != Some(false) {
                ctx.store.set_host_https(host.host_id, false).await?;
                ctx.places
                    .update_host(https_form.host(), |h| h.https = Some(false));
            }
            https = false;
            continue;
        }
        let flow = settle(
            ctx,
            key,
            origin_id,
            &url,
            &target,
            host.host_id,
            // A revisit at a chain's end learns nothing about the URL's own host.
            if revisit_at.is_some() {
                Some(target.is_https())
            } else {
                host.https
            },
            response,
        )
        .await?;
        ctx.pacing_events(key, &before);
        return Ok(flow);
    }
}

/// Why a request over HTTPS failed as a host without working HTTPS fails, if it did: the
/// request itself, or the robots.txt fetch over HTTPS before it.
fn https_failure(response: &fetch::PoliteResponse) -> Option<String> {
    match &response.outcome {
        Polite::Failed(e) if no_https(e) => Some(e.full_message()),
        Polite::Skipped {
            reason: SkipReason::RobotsUnreachable { .. },
            ..
        } => response
            .trail
            .robots_fetches
            .iter()
            .find_map(|r| r.error.as_ref().filter(|e| no_https(e)))
            .map(|e| format!("robots.txt: {}", e.full_message())),
        _ => None,
    }
}

/// Undo the back-off a first HTTPS attempt set when it showed that the host has no HTTPS
/// (a refused or reset connection, a failed handshake): that says nothing about the load of
/// the origin, whose other sites would otherwise wait out a back-off (30 s by default) for
/// each host tried, and the host's own HTTP requests with them. The pace from the attempt's
/// start stands.
pub(crate) fn forget_no_https_failure(ctx: &Ctx, key: &OriginKey, before: &OriginSnapshot) {
    let pacer = ctx.polite.pacer();
    let Some(mut after) = pacer.export(key) else {
        return;
    };
    if after.failures <= before.failures && after.paused == before.paused {
        return;
    }
    after.failures = before.failures;
    after.not_before = before.not_before;
    after.paused = before.paused;
    pacer.import(key, &after);
}

pub(crate) fn no_https(e: &FetchError) -> bool {
    matches!(
        e.kind(),
        ErrorKind::Tls
            | ErrorKind::ConnectRefused
            | ErrorKind::ConnectionReset
            | ErrorKind::MalformedResponse
    )
}

async fn fetch(ctx: &Arc<Ctx>, url: &ClaimedUrl, target: &NormalUrl) -> fetch::PoliteResponse {
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
    let places = &ctx.places;
    let follow = move |u: &fetch::Url| media || u.host_str().is_some_and(|h| places.in_scope(h));
    let polite_request = PoliteRequest {
        request,
        tokens,
        follow: Some(&follow),
        probe: false,
    };
    let operation = Operation::within(URL_DEADLINE).with_max_wait(MAX_TURN_WAIT);
    ctx.polite.fetch(polite_request, &operation).await
}

/// A claimed URL back in the queue, untouched (not an attempt).
fn requeued(url: &ClaimedUrl) -> Outcome {
    Outcome {
        id: url.id,
        state: Some(UrlState::Queued),
        attempts: url.attempts,
        ..Outcome::default()
    }
}

fn skipped(url: &ClaimedUrl, state: UrlState, reason: String) -> Outcome {
    Outcome {
        id: url.id,
        state: Some(state),
        reason: Some(reason),
        attempts: url.attempts,
        next_due: crate::store::NEVER,
        ..Outcome::default()
    }
}

pub(crate) fn requests_of(trail: &Trail) -> u64 {
    (trail.exchanges.len()
        + trail
            .robots_fetches
            .iter()
            .map(|r| r.exchanges.len())
            .sum::<usize>()) as u64
}

#[allow(clippy::too_many_arguments)]
async fn settle(
    ctx: &Arc<Ctx>,
    key: &OriginKey,
    origin_id: i64,
    url: &ClaimedUrl,
    target: &NormalUrl,
    host_id: i64,
    https_known: Option<bool>,
    response: fetch::PoliteResponse,
) -> Result<Flow, CrawlError> {
    let trail = response.trail;
    let mut archive = Archive::default();
    let fetched = matches!(response.outcome, Polite::Fetched(_));
    archive.trail(&trail, fetched);
    let requests = requests_of(&trail);
    for rf in trail
        .robots_fetches
        .iter()
        .filter(|rf| !super::unreachable::failed(rf))
    {
        super::unreachable::counted(ctx, rf).await?;
    }
    let (outcome, kept, flow, bytes) = match response.outcome {
        Polite::Fetched(f) => {
            if target.is_https() && https_known != Some(true) {
                ctx.store.set_host_https(host_id, true).await?;
                ctx.places
                    .update_host(target.host(), |h| h.https = Some(true));
            }
            observe(ctx, &f.url, &f.head).await?;
            let last = trail.exchanges.last();
            let at_end = target.key() != url.key;
            let chain = super::redirects::chain_json(
                url.redirects.as_deref(),
                at_end,
                &trail.redirects,
                &f.url,
            );
            match last {
                Some(hop) => {
                    let mut settled = page::kept(ctx, url, *f, hop, &mut archive).await?;
                    if let Some(fetch) = settled.0.fetch.as_mut() {
                        fetch.redirects = chain;
                    }
                    settled
                }
                None => (
                    failure(ctx, url, "no exchange recorded"),
                    Kept::default(),
                    Flow::Continue,
                    0,
                ),
            }
        }
        Polite::Skipped { url: at, reason } => {
            let (o, flow) =
                skip(ctx, key, url, &at, reason, !trail.robots_fetches.is_empty()).await?;
            (o, Kept::default(), flow, 0)
        }
        Polite::Failed(error) => {
            let o = failure(ctx, url, &error.full_message());
            let flow = if error.is_retryable() {
                Flow::Yield
            } else {
                Flow::Continue
            };
            (o, Kept::default(), flow, 0)
        }
    };
    let links_started = std::time::Instant::now();
    let new_urls = page::queue_found(ctx, kept.links, kept.media).await?;
    super::StageTimes::add(&ctx.counters.time.links, links_started);
    ctx.counters
        .time
        .warc_encode
        .fetch_add(archive.encode_nanos, Ordering::Relaxed);
    let work = Work {
        main: archive.main,
        members: archive.members,
        outcome: Some(outcome),
        new_urls,
        media: kept.stored_media,
        origin: Some(origin_update(ctx, key, origin_id, requests, bytes)),
        release: None,
    };
    ctx.committer.send(work).await?;
    Ok(flow)
}

/// Evidence of the origin behind a host, from a response.
async fn observe(
    ctx: &Ctx,
    url: &fetch::Url,
    head: &fetch::ResponseHead,
) -> Result<(), CrawlError> {
    let Some(host) = url.host_str() else {
        return Ok(());
    };
    let pacer = ctx.polite.pacer();
    if let Some(addr) = head.remote_addr {
        let events = ctx
            .places
            .observe(
                host,
                Evidence::Addresses(vec![addr.ip()]),
                "addresses",
                pacer,
            )
            .await?;
        ctx.emit_all(events);
    }
    if let Some(sha) = &head.tls_leaf_sha256 {
        let events = ctx
            .places
            .observe(host, Evidence::TlsLeaf(sha.0), "certificate", pacer)
            .await?;
        ctx.emit_all(events);
    }
    let ids =
        crate::origins::backend_ids(head.headers.iter().map(|(n, v)| (n.as_str(), v.as_bytes())));
    if !ids.is_empty() {
        let events = ctx
            .places
            .observe(host, Evidence::Backends(ids), "backend", pacer)
            .await?;
        ctx.emit_all(events);
    }
    Ok(())
}

/// A failed attempt: queued again, or given up after `--max-attempts`.
pub(crate) fn failure(ctx: &Ctx, url: &ClaimedUrl, error: &str) -> Outcome {
    let attempts = url.attempts + 1;
    let given_up = attempts >= ctx.config.max_attempts;
    ctx.counters.errors.fetch_add(1, Ordering::Relaxed);
    ctx.emit(Event::Error {
        url: url.key.clone(),
        error: error.to_string(),
        attempts,
        given_up,
    });
    Outcome {
        id: url.id,
        state: Some(if given_up {
            UrlState::Failed
        } else {
            UrlState::Queued
        }),
        reason: given_up.then(|| format!("gave up after {attempts} attempts")),
        attempts,
        last_error: Some(error.to_string()),
        next_due: 0,
        fetch: None,
    }
}

async fn skip(
    ctx: &Ctx,
    key: &OriginKey,
    url: &ClaimedUrl,
    at: &fetch::Url,
    reason: SkipReason,
    robots_fetched: bool,
) -> Result<(Outcome, Flow), CrawlError> {
    let (outcome, flow, label) = match reason {
        SkipReason::Pacing(PaceSkip::NotBefore { .. } | PaceSkip::Paused { .. })
        | SkipReason::Pacing(_) => {
            // Not an attempt: the URL waits for its origin's turn.
            return Ok((requeued(url), Flow::Yield));
        }
        SkipReason::Disallowed {
            robots_url,
            line,
            rule,
        } => (
            skipped(
                url,
                UrlState::Disallowed,
                format!("{robots_url} line {line}: {rule}"),
            ),
            Flow::Continue,
            "disallowed".to_string(),
        ),
        SkipReason::RobotsUnreachable { robots_url, .. } => {
            let o =
                super::unreachable::robots_unreachable(ctx, key, url, &robots_url, robots_fetched)
                    .await?;
            return Ok((o, Flow::Yield));
        }
        SkipReason::OutOfScope => (
            skipped(
                url,
                UrlState::Skipped,
                format!("redirect out of the crawl's sites: {at}"),
            ),
            Flow::Continue,
            "out_of_scope".to_string(),
        ),
        SkipReason::NotFetchable => (
            skipped(url, UrlState::Skipped, format!("not fetchable: {at}")),
            Flow::Continue,
            "not_fetchable".to_string(),
        ),
    };
    ctx.counters.skipped.fetch_add(1, Ordering::Relaxed);
    ctx.emit(Event::Skip {
        url: at.to_string(),
        reason: label,
    });
    Ok((outcome, flow))
}

/// The facts of a final response, for the store.
pub(crate) fn facts(
    head: &fetch::ResponseHead,
    sent_at: Timestamp,
    content_hash: Option<String>,
    bytes: u64,
    record_id: Option<String>,
    directives: String,
) -> FetchFacts {
    let header = |name: http::header::HeaderName| {
        head.headers
            .get(name)
            .and_then(|v| v.to_str().ok())
            .map(str::to_string)
    };
    FetchFacts {
        fetched_at: sent_at,
        status: head.status.as_u16(),
        etag: header(http::header::ETAG),
        last_modified: header(http::header::LAST_MODIFIED),
        content_hash,
        bytes,
        warc_file: None,
        warc_offset: None,
        warc_record_id: record_id,
        directives: (!directives.is_empty()).then_some(directives),
        // Set by the caller, who knows the chain's end (`redirects::chain_json`).
        redirects: None,
    }
}
