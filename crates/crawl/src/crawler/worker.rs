//! One leased origin's work, the loop that drives the steps: claim the origin's URLs in
//! batches and take each through fetch (`request`), settle (`settle`), extract (`page`),
//! archive (`archive`) and commit (`committer`); a sitemaps entry goes to the sitemap reader
//! (`sitemaps`) instead. Give the origin back when it has nothing queued, must wait, or the
//! crawl stops.

use std::sync::Arc;

use fetch::{OriginKey, OriginSnapshot};

use super::committer::{OriginPace, Work};
use super::config::{MAX_TURN_WAIT, URL_CLAIM_BATCH};
use super::outcome::{origin_update, requeued, skipped, Flow};
use super::parts::{Crew, Keeper, Progress, Requester};
use super::CrawlError;
use crate::normal::NormalUrl;
use crate::store::{ClaimedUrl, HostInfo, OriginId, OriginRow, Outcome, UrlId, UrlKind, UrlState};

/// Work one origin until it has no queued URLs, must wait, or the crawl stops.
pub(crate) async fn work_origin(
    crew: Crew,
    origin: OriginRow,
    lease: Arc<super::lease::LeaseWatch>,
) -> Result<(), CrawlError> {
    let Crew {
        req,
        keep,
        progress,
        ..
    } = &crew;
    let key = OriginKey::new(origin.name.0.clone());
    if !import_pacing(req, &key, &origin) {
        // The last holder may have sent requests it never recorded (killed, or its lease
        // lost): the first request waits a full pace from now.
        req.polite.pacer().unsure(&key);
    }
    if req.polite.pacer().export(&key).is_some_and(|s| s.paused)
        && !super::unreachable::probe(req, keep, progress, &key, origin.id).await?
    {
        // Still paused: give the origin back until its next probe.
        let work = Work {
            origin: Some(release_update(req, &key, origin.id)),
            release: Some(origin.id),
            ..Work::default()
        };
        keep.committer.send(work).await?;
        return Ok(());
    }
    let mut result = Ok(());
    'claims: while !progress.stopping() && lease.usable() {
        let urls = keep
            .store
            .claim_urls_skipping(origin.id, URL_CLAIM_BATCH, &req.levers.held_hosts())
            .await?;
        if urls.is_empty() {
            break;
        }
        let mut rest = urls.into_iter();
        while let Some(url) = rest.next() {
            if progress.stopping() || !lease.usable() {
                let mut back: Vec<UrlId> = vec![url.id];
                back.extend(rest.map(|u| u.id));
                keep.store.return_to_queue(&back).await?;
                break 'claims;
            }
            match process(&crew, &key, origin.id, url).await {
                Ok(Flow::Continue) => {}
                Ok(Flow::Yield) => {
                    let back: Vec<UrlId> = rest.map(|u| u.id).collect();
                    keep.store.return_to_queue(&back).await?;
                    break 'claims;
                }
                Ok(Flow::Reclaim) if rest.as_slice().first().is_some_and(is_sitemaps) => {
                    // The next claimed is another host's sitemaps entry: it comes before the
                    // URLs just listed (sitemaps entries are claimed first) and is read at
                    // once, so the batch is not handed back and claimed again for each host.
                }
                Ok(Flow::Reclaim) => {
                    let back: Vec<UrlId> = rest.map(|u| u.id).collect();
                    keep.store.return_to_queue(&back).await?;
                    continue 'claims;
                }
                Err(e) => {
                    let back: Vec<UrlId> = rest.map(|u| u.id).collect();
                    let _ = keep.store.return_to_queue(&back).await;
                    result = Err(e);
                    break 'claims;
                }
            }
        }
    }
    // The pace reached is committed, then the lease given back.
    let work = Work {
        origin: Some(release_update(req, &key, origin.id)),
        release: Some(origin.id),
        ..Work::default()
    };
    keep.committer.send(work).await?;
    result
}

/// Whether a claimed URL is a host's sitemaps entry.
fn is_sitemaps(url: &ClaimedUrl) -> bool {
    url.kind == UrlKind::Sitemaps
}

/// Takes in the origin's stored pacing; true when it is complete (its last holder gave the
/// origin back with every request it made recorded), so the last request's start is known.
fn import_pacing(req: &Requester, key: &OriginKey, origin: &OriginRow) -> bool {
    let Some(stored) = origin
        .pacer_state
        .as_deref()
        .and_then(|s| serde_json::from_str::<OriginSnapshot>(s).ok())
    else {
        return false;
    };
    let known = req.polite.pacer().export(key);
    // Another process (or an earlier run) may have paced this origin since this one did.
    if known.is_none_or(|k| stored.last_start > k.last_start || stored.not_before > k.not_before) {
        req.polite.pacer().import(key, &stored);
    }
    stored.complete
}

/// The origin's pacing as it is given back: complete, every request of this lease in it.
fn release_update(req: &Requester, key: &OriginKey, id: OriginId) -> OriginPace {
    let mut update = origin_update(req, key, id, 0, 0);
    update.snapshot.complete = true;
    update
}

/// Take one URL through the steps (HTTPS first where it may work) and hand over what came
/// of it.
async fn process(
    crew: &Crew,
    key: &OriginKey,
    origin_id: OriginId,
    url: ClaimedUrl,
) -> Result<Flow, CrawlError> {
    let Crew {
        req,
        keep,
        progress,
        ..
    } = crew;
    let Ok(https_form) = NormalUrl::from_key(&url.key, true) else {
        let outcome = skipped(&url, UrlState::Skipped, "not a crawlable URL".into());
        keep.committer
            .send(Work {
                outcome: Some(outcome),
                ..Work::default()
            })
            .await?;
        return Ok(Flow::Continue);
    };
    if req.levers.holds(https_form.host()) {
        // Its site was excluded after the claim: back to the queue, untouched.
        put_back(keep, &url).await?;
        return Ok(Flow::Continue);
    }
    let host = placed(req, progress, (key, origin_id), &https_form).await?;
    if url.kind == UrlKind::Sitemaps {
        return sitemaps_entry(crew, (key, origin_id), &url, &https_form, &host).await;
    }
    if !super::turns::wait_for_turn(req, progress, key, MAX_TURN_WAIT).await {
        // Stopping: the URL goes back to the queue unsent.
        put_back(keep, &url).await?;
        return Ok(Flow::Yield);
    }
    let before = req.polite.pacer().export(key).unwrap_or_default();
    let sent = super::request::https_first(req, keep, progress, &url, &https_form, &host).await?;
    let flow = super::settle::settle(crew, (key, origin_id), &url, sent).await?;
    progress.emit_all(req.pacing_event(key, &before));
    Ok(flow)
}

/// The host of `url`, paced with origin `key` (row `origin_id`) it was claimed under.
async fn placed(
    req: &Requester,
    progress: &Progress,
    (key, origin_id): (&OriginKey, OriginId),
    url: &NormalUrl,
) -> Result<HostInfo, CrawlError> {
    let (host, events) = req.places.host(url, req.polite.pacer()).await?;
    progress.emit_all(events);
    // The URL was claimed under this origin's lease: it is paced as part of it, even when
    // this process has not learnt yet that another process merged its host's origin here.
    if let Some(old) = req
        .places
        .adopt(url.host(), key, origin_id, req.polite.pacer())
    {
        tracing::info!(host = url.host(), from = %old, into = key.as_str(), "host paced with the origin it was claimed under");
    }
    Ok(host)
}

/// A host's sitemaps entry: sitemaps first, under this origin's lease. Their URLs are queued
/// ahead of the host's other pages, which are claimed again after them.
async fn sitemaps_entry(
    crew: &Crew,
    (key, origin_id): (&OriginKey, OriginId),
    url: &ClaimedUrl,
    https_form: &NormalUrl,
    host: &HostInfo,
) -> Result<Flow, CrawlError> {
    let Crew { req, keep, .. } = crew;
    let start = https_form.with_scheme(req.https.try_https(https_form.host(), host.https));
    if start.is_https() && host.https == Some(false) {
        super::https::retrying(&keep.store, req.polite.robots(), &start).await?;
    }
    if !super::sitemaps::read_site(crew, start, (key, origin_id)).await? {
        // Stopping: read again by the next run, from the start.
        put_back(keep, url).await?;
        return Ok(Flow::Yield);
    }
    let done = Outcome {
        state: Some(UrlState::Fetched),
        next_due: crate::store::Due::Never,
        ..Outcome::of(url.id)
    };
    keep.committer
        .send(Work {
            outcome: Some(done),
            ..Work::default()
        })
        .await?;
    Ok(Flow::Reclaim)
}

/// Hands a claimed URL back to the queue, untouched (not an attempt): through the writer,
/// so it is queued again in order with the results committed before it.
async fn put_back(keep: &Keeper, url: &ClaimedUrl) -> Result<(), CrawlError> {
    let work = Work {
        outcome: Some(requeued(url)),
        ..Work::default()
    };
    keep.committer.send(work).await
}
