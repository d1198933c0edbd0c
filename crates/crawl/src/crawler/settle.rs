//! The settle step: what the answer to a URL's request means for it (fetched, a revisit,
//! disallowed, skipped, failed and retried later, given up, waiting for its robots.txt),
//! the origin evidence the answer carries, and the whole result handed to the writer.

use std::sync::atomic::Ordering;

use fetch::{OriginKey, Outcome as Polite, PaceSkip, SkipReason as PoliteSkip};

use super::archive::Archive;
use super::committer::Work;
use super::outcome::{failure, origin_update, requests_of, requeued, skipped, Flow};
use super::page::{self, Kept, Settled};
use super::parts::{Crew, Progress, Requester};
use super::request::Sent;
use super::CrawlError;
use crate::event::{Event, MergeEvidence, SkipReason};
use crate::normal::NormalUrl;
use crate::origins::Evidence;
use crate::store::{ClaimedUrl, OriginId, Outcome, UrlState};

/// What the answer to `url`'s request (`sent`, made under origin `key`, row `origin_id`)
/// means for it, handed to the writer with its records, the URLs it leads to and the
/// origin's pacing.
pub(crate) async fn settle(
    crew: &Crew,
    (key, origin_id): (&OriginKey, OriginId),
    url: &ClaimedUrl,
    sent: Sent,
) -> Result<Flow, CrawlError> {
    let Crew {
        req,
        keep,
        progress,
        rules,
    } = crew;
    let Sent {
        target,
        host_id,
        https_known,
        response,
    } = sent;
    let trail = response.trail;
    let mut archive = Archive::default();
    let fetched = matches!(response.outcome, Polite::Fetched(_));
    archive.trail(&trail, fetched);
    let requests = requests_of(&trail);
    let robots_fetched = !trail.robots_fetches.is_empty();
    for rf in trail
        .robots_fetches
        .iter()
        .filter(|rf| !super::unreachable::failed(rf))
    {
        super::unreachable::counted(keep, rf).await?;
    }
    let (outcome, kept, flow, bytes) = match response.outcome {
        Polite::Fetched(f) => {
            if target.is_https() && https_known != Some(true) {
                keep.store.set_host_https(host_id, true).await?;
                req.places
                    .update_host(target.host(), |h| h.https = Some(true));
            }
            received(crew, url, &target, *f, &trail, &mut archive).await?
        }
        Polite::Skipped { url: at, reason } => {
            let (o, flow) = skip(crew, key, url, &at, reason, robots_fetched).await?;
            (o, Kept::default(), flow, 0)
        }
        Polite::Failed(error) => {
            let o = failure(progress, rules, url, &error.full_message());
            let flow = if error.is_retryable() {
                Flow::Yield
            } else {
                Flow::Continue
            };
            (o, Kept::default(), flow, 0)
        }
    };
    let links_started = std::time::Instant::now();
    let new_urls = page::queue_found(req, progress, kept.links, kept.media).await?;
    super::StageTimes::add(&progress.counters.time.links, links_started);
    progress
        .counters
        .time
        .warc_encode
        .fetch_add(archive.encode_nanos, Ordering::Relaxed);
    let work = Work {
        main: archive.main,
        members: archive.members,
        outcome: Some(outcome),
        new_urls,
        media: kept.stored_media,
        origin: Some(origin_update(req, key, origin_id, requests, bytes)),
        release: None,
    };
    keep.committer.send(work).await?;
    Ok(flow)
}

/// A response received for `url` (asked of `target`): its page, media file or revisit, with
/// the redirect chain that led there.
async fn received(
    crew: &Crew,
    url: &ClaimedUrl,
    target: &NormalUrl,
    f: fetch::Fetched,
    trail: &fetch::Trail,
    archive: &mut Archive,
) -> Result<Settled, CrawlError> {
    observe(&crew.req, &crew.progress, &f.url, &f.head).await?;
    let Some(hop) = trail.exchanges.last() else {
        let o = failure(&crew.progress, &crew.rules, url, "no exchange recorded");
        return Ok((o, Kept::default(), Flow::Continue, 0));
    };
    let at_end = target.key() != url.key;
    let chain =
        super::redirects::chain_json(url.redirects.as_deref(), at_end, &trail.redirects, &f.url);
    let mut settled = page::kept(crew, url, f, hop, archive).await?;
    if let Some(fetch) = settled.0.fetch.as_mut() {
        fetch.redirects = chain;
    }
    Ok(settled)
}

/// Evidence of the origin behind a host, from a response.
async fn observe(
    req: &Requester,
    progress: &Progress,
    url: &fetch::Url,
    head: &fetch::ResponseHead,
) -> Result<(), CrawlError> {
    let Some(host) = url.host_str() else {
        return Ok(());
    };
    let pacer = req.polite.pacer();
    if let Some(addr) = head.remote_addr {
        let events = req
            .places
            .observe(
                host,
                Evidence::Addresses(vec![addr.ip()]),
                MergeEvidence::Addresses,
                pacer,
            )
            .await?;
        progress.emit_all(events);
    }
    if let Some(sha) = &head.tls_leaf_sha256 {
        let events = req
            .places
            .observe(
                host,
                Evidence::TlsLeaf(sha.0),
                MergeEvidence::Certificate,
                pacer,
            )
            .await?;
        progress.emit_all(events);
    }
    let ids =
        crate::origins::backend_ids(head.headers.iter().map(|(n, v)| (n.as_str(), v.as_bytes())));
    if !ids.is_empty() {
        let events = req
            .places
            .observe(host, Evidence::Backends(ids), MergeEvidence::Backend, pacer)
            .await?;
        progress.emit_all(events);
    }
    Ok(())
}

async fn skip(
    crew: &Crew,
    key: &OriginKey,
    url: &ClaimedUrl,
    at: &fetch::Url,
    reason: PoliteSkip,
    robots_fetched: bool,
) -> Result<(Outcome, Flow), CrawlError> {
    let (outcome, flow, label) = match reason {
        PoliteSkip::Pacing(PaceSkip::NotBefore { .. } | PaceSkip::Paused { .. })
        | PoliteSkip::Pacing(_) => {
            // Not an attempt: the URL waits for its origin's turn.
            return Ok((requeued(url), Flow::Yield));
        }
        PoliteSkip::Disallowed {
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
            SkipReason::Disallowed,
        ),
        PoliteSkip::RobotsUnreachable { robots_url, .. } => {
            let o =
                super::unreachable::robots_unreachable(crew, key, url, &robots_url, robots_fetched)
                    .await?;
            return Ok((o, Flow::Yield));
        }
        PoliteSkip::OutOfScope => (
            skipped(
                url,
                UrlState::Skipped,
                format!("redirect out of the crawl's sites: {at}"),
            ),
            Flow::Continue,
            SkipReason::OutOfScope,
        ),
        PoliteSkip::NotFetchable => (
            skipped(url, UrlState::Skipped, format!("not fetchable: {at}")),
            Flow::Continue,
            SkipReason::NotFetchable,
        ),
    };
    crew.progress
        .counters
        .skipped
        .fetch_add(1, Ordering::Relaxed);
    crew.progress.emit(Event::Skip {
        url: at.to_string(),
        reason: label,
    });
    Ok((outcome, flow))
}
