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
use super::{committer, worker, CrawlError, Ctx, EndReason, PROGRESS_REFRESH, SCHEDULER_TICK};
use crate::event::Event;
use crate::store::OriginId;

type Workers = JoinSet<Result<(), CrawlError>>;
/// The origin (row) each running worker holds, and its view of the lease.
type Active = HashMap<tokio::task::Id, (OriginId, Arc<LeaseWatch>)>;

/// Lease due origins and work them until nothing is left (or a stop).
pub(super) async fn schedule(ctx: &Arc<Ctx>) -> Result<EndReason, CrawlError> {
    let mut workers: Workers = JoinSet::new();
    let mut active: Active = HashMap::new();
    let mut last_renewal = tokio::time::Instant::now();
    let mut last_progress: Option<tokio::time::Instant> = None;
    let mut last_levers: Option<tokio::time::Instant> = None;
    let mut first_error = None;
    loop {
        if ctx.stopping() {
            break;
        }
        if last_progress.is_none_or(|t| t.elapsed() >= PROGRESS_REFRESH) {
            refresh_progress(ctx).await?;
            last_progress = Some(tokio::time::Instant::now());
        }
        if last_levers.is_none_or(|t| t.elapsed() >= crate::control::LEVERS_REFRESH) {
            ctx.levers.refresh(&ctx.store, ctx.polite.robots()).await?;
            last_levers = Some(tokio::time::Instant::now());
        }
        claim_due(ctx, &mut workers, &mut active).await?;
        ctx.counters
            .active_origins
            .store(workers.len() as u64, Ordering::Relaxed);
        if last_renewal.elapsed() >= ctx.store.origin_lease() / 3 {
            renew(ctx, &active).await?;
            last_renewal = tokio::time::Instant::now();
        }
        if workers.is_empty() && ctx.committer.pending.load(Ordering::SeqCst) == 0 {
            if let Some(end) = idle(ctx).await? {
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
                        ctx.stop.store(true, Ordering::SeqCst);
                    }
                }
            }
            _ = tokio::time::sleep(SCHEDULER_TICK) => {}
        }
    }
    stopped(ctx, workers, first_error).await
}

/// Lease as many due origins as there is room for, each worked by a task of its own.
async fn claim_due(
    ctx: &Arc<Ctx>,
    workers: &mut Workers,
    active: &mut Active,
) -> Result<(), CrawlError> {
    let room = ctx.config.active_origins.saturating_sub(workers.len());
    if room == 0 {
        return Ok(());
    }
    let claim_started = tokio::time::Instant::now();
    // Origins whose only work is of excluded sites are left alone.
    let mut except = ctx.committer.in_hand();
    except.extend(ctx.levers.parked_origins());
    let claimed = ctx
        .store
        .claim_origins_except(
            &ctx.holder,
            Timestamp::now(),
            u32::try_from(room).unwrap_or(u32::MAX),
            &except,
        )
        .await?;
    for origin in claimed {
        ctx.committer.hold(origin.id);
        let lost = Arc::new(LeaseWatch::new(claim_started, ctx.store.origin_lease()));
        let id = origin.id;
        let handle = workers.spawn(worker::work_origin(
            Arc::clone(ctx),
            origin,
            Arc::clone(&lost),
        ));
        active.insert(handle.id(), (id, lost));
    }
    Ok(())
}

/// Nothing is being worked: the end of the crawl when nothing is left that this run can do,
/// else a wait for the earliest origin to be due (or for another process's work).
async fn idle(ctx: &Ctx) -> Result<Option<EndReason>, CrawlError> {
    let (left, next) = ctx.store.pending_work().await?;
    if left == 0 {
        return Ok(Some(EndReason::Finished));
    }
    let behind_robots = ctx.store.pending_behind_robots().await?;
    if behind_robots >= left {
        tracing::warn!(
            urls = behind_robots,
            "only URLs of sites whose robots.txt is unreachable are left: they stay queued for a later run"
        );
        ctx.emit(Event::RobotsWaiting {
            urls: behind_robots,
        });
        return Ok(Some(EndReason::Finished));
    }
    if let Some(held) = ctx.levers.only_held_left(&ctx.store, left).await? {
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
    ctx: &Ctx,
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
    Ok(if ctx.max_pages_hit.load(Ordering::SeqCst) {
        EndReason::MaxPages
    } else {
        EndReason::Interrupted
    })
}

/// The whole crawl's figures for the progress display.
async fn refresh_progress(ctx: &Ctx) -> Result<(), CrawlError> {
    let p = ctx.store.progress(Timestamp::now()).await?;
    ctx.counters.queued.store(p.queued, Ordering::Relaxed);
    ctx.counters
        .backing_off
        .store(p.backing_off, Ordering::Relaxed);
    ctx.counters.paused.store(p.paused, Ordering::Relaxed);
    Ok(())
}

/// Renew the leases of the origins being worked; a worker whose lease another process took
/// over stops.
async fn renew(ctx: &Ctx, active: &Active) -> Result<(), CrawlError> {
    let ids: Vec<OriginId> = active.values().map(|(id, _)| *id).collect();
    let started = tokio::time::Instant::now();
    let kept = committer::retrying(|| ctx.store.renew_origins(&ids, &ctx.holder, Timestamp::now()))
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
