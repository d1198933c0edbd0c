//! The scheduler: lease due origins from the store and work each in a task of its own (up
//! to `active_origins` at once), renew their leases, refresh the progress figures and the
//! operator's levers, and tell when the crawl is over: nothing left, only URLs that must wait
//! for a later run, `--max-pages`, or a stop.

use std::collections::HashMap;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::Duration;

use jiff::Timestamp;
use tokio::task::JoinSet;

use super::lease::LeaseWatch;
use super::parts::{Crew, Keeper, Progress, Requester};
use super::{committer, worker, CrawlError, EndReason, PROGRESS_REFRESH, SCHEDULER_TICK};
use crate::event::Event;
use crate::store::OriginId;

type Workers = JoinSet<Result<(), CrawlError>>;
/// The origin (row) each running worker holds, and its view of the lease.
type Active = HashMap<tokio::task::Id, (OriginId, Arc<LeaseWatch>)>;

/// Lease due origins and work them until nothing is left (or a stop).
pub(super) async fn schedule(crew: &Crew, active_origins: usize) -> Result<EndReason, CrawlError> {
    let Crew {
        req,
        keep,
        progress,
        ..
    } = crew;
    let mut workers: Workers = JoinSet::new();
    let mut active: Active = HashMap::new();
    let mut last_renewal = tokio::time::Instant::now();
    let mut last_progress: Option<tokio::time::Instant> = None;
    let mut last_levers: Option<tokio::time::Instant> = None;
    let mut first_error = None;
    loop {
        if progress.stopping() {
            break;
        }
        if last_progress.is_none_or(|t| t.elapsed() >= PROGRESS_REFRESH) {
            refresh_progress(keep, progress).await?;
            last_progress = Some(tokio::time::Instant::now());
        }
        if last_levers.is_none_or(|t| t.elapsed() >= crate::control::LEVERS_REFRESH) {
            req.levers.refresh(&keep.store, req.polite.robots()).await?;
            last_levers = Some(tokio::time::Instant::now());
        }
        let room = active_origins.saturating_sub(workers.len());
        claim_due(crew, room, &mut workers, &mut active).await?;
        progress
            .counters
            .active_origins
            .store(workers.len() as u64, Ordering::Relaxed);
        if last_renewal.elapsed() >= keep.store.origin_lease() / 3 {
            renew(keep, &active).await?;
            last_renewal = tokio::time::Instant::now();
        }
        if workers.is_empty() && keep.committer.pending.load(Ordering::SeqCst) == 0 {
            if let Some(end) = idle(req, keep, progress).await? {
                return Ok(end);
            }
            continue;
        }
        tokio::select! {
            done = workers.join_next_with_id(), if !workers.is_empty() => {
                if let Some(done) = done {
                    let (id, result) = match done {
                        Ok((id, r)) => (id, r),
                        Err(e) => (e.id(), Err(CrawlError::Task(e))),
                    };
                    active.remove(&id);
                    if let Err(e) = result {
                        first_error.get_or_insert(e);
                        progress.stop.store(true, Ordering::SeqCst);
                    }
                }
            }
            _ = tokio::time::sleep(SCHEDULER_TICK) => {}
        }
    }
    stopped(progress, workers, first_error).await
}

/// Lease as many due origins as there is `room` for, each worked by a task of its own.
async fn claim_due(
    crew: &Crew,
    room: usize,
    workers: &mut Workers,
    active: &mut Active,
) -> Result<(), CrawlError> {
    let Crew { req, keep, .. } = crew;
    if room == 0 {
        return Ok(());
    }
    let claim_started = tokio::time::Instant::now();
    // Origins whose only work is of excluded sites are left alone.
    let mut except = keep.committer.in_hand();
    except.extend(req.levers.parked_origins());
    let claimed = keep
        .store
        .claim_origins_except(
            &keep.holder,
            Timestamp::now(),
            u32::try_from(room).unwrap_or(u32::MAX),
            &except,
        )
        .await?;
    for origin in claimed {
        keep.committer.hold(origin.id);
        let lost = Arc::new(LeaseWatch::new(claim_started, keep.store.origin_lease()));
        let id = origin.id;
        let handle = workers.spawn(worker::work_origin(crew.clone(), origin, Arc::clone(&lost)));
        active.insert(handle.id(), (id, lost));
    }
    Ok(())
}

/// Nothing is being worked: the end of the crawl when nothing is left that this run can do,
/// else a wait for the earliest origin to be due (or for another process's work).
async fn idle(
    req: &Requester,
    keep: &Keeper,
    progress: &Progress,
) -> Result<Option<EndReason>, CrawlError> {
    let (left, next) = keep.store.pending_work().await?;
    if left == 0 {
        return Ok(Some(EndReason::Finished));
    }
    let behind_robots = keep.store.pending_behind_robots().await?;
    if behind_robots >= left {
        tracing::warn!(
            urls = behind_robots,
            "only URLs of sites whose robots.txt is unreachable are left: they stay queued for a later run"
        );
        progress.emit(Event::RobotsWaiting {
            urls: behind_robots,
        });
        return Ok(Some(EndReason::Finished));
    }
    if let Some(held) = req.levers.only_held_left(&keep.store, left).await? {
        tracing::warn!(
            urls = held,
            "only URLs of excluded sites are left: they stay queued for a later run"
        );
        return Ok(Some(EndReason::Finished));
    }
    let wait = next
        .map(|t| t.duration_since(Timestamp::now()).unsigned_abs())
        .unwrap_or(SCHEDULER_TICK)
        .clamp(SCHEDULER_TICK, Duration::from_secs(1));
    tokio::time::sleep(wait).await;
    Ok(None)
}

/// The crawl was stopped (a stop, `--max-pages`, a worker's error): every worker ends, and
/// the first error, if any, is the crawl's.
async fn stopped(
    progress: &Progress,
    mut workers: Workers,
    mut first_error: Option<CrawlError>,
) -> Result<EndReason, CrawlError> {
    while let Some(done) = workers.join_next().await {
        if let Ok(Err(e)) | Err(e) = done.map_err(CrawlError::Task) {
            first_error.get_or_insert(e);
        }
    }
    if let Some(e) = first_error {
        return Err(e);
    }
    Ok(if progress.max_pages_hit.load(Ordering::SeqCst) {
        EndReason::MaxPages
    } else {
        EndReason::Interrupted
    })
}

/// The whole crawl's figures for the progress display.
async fn refresh_progress(keep: &Keeper, progress: &Progress) -> Result<(), CrawlError> {
    let p = keep.store.progress(Timestamp::now()).await?;
    progress.counters.queued.store(p.queued, Ordering::Relaxed);
    progress
        .counters
        .backing_off
        .store(p.backing_off, Ordering::Relaxed);
    progress.counters.paused.store(p.paused, Ordering::Relaxed);
    Ok(())
}

/// Renew the leases of the origins being worked; a worker whose lease another process took
/// over stops.
async fn renew(keep: &Keeper, active: &Active) -> Result<(), CrawlError> {
    let ids: Vec<OriginId> = active.values().map(|(id, _)| *id).collect();
    let started = tokio::time::Instant::now();
    let kept = committer::retrying(|| {
        keep.store
            .renew_origins(&ids, &keep.holder, Timestamp::now())
    })
    .await?;
    for (id, lease) in active.values() {
        if kept.contains(id) {
            lease.renewed(started);
        } else {
            // Another process took it over (or it was merged): stop working it.
            lease.lose();
        }
    }
    Ok(())
}
