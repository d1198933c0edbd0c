//! The one writer: appends each URL's WARC records, flushes them, then commits the URL states
//! in batches (group commit). A URL's state is committed only after its records are written.

use std::collections::HashSet;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, PoisonError};

use db::Holder;
use tokio::sync::mpsc;

use super::config::{COMMIT_BATCH, COMMIT_INTERVAL, STORE_RETRIES};
use super::CrawlError;
use crate::store::{Batch, NewUrl, OriginId, OriginUpdate, Outcome, Store, UrlId};
use warc::WarcWriter;

/// One URL's (or one sitemap's) results.
#[derive(Debug, Default)]
pub(crate) struct Work {
    /// Encoded WARC records.
    pub(crate) members: Vec<Vec<u8>>,
    /// Which member's location the outcome records.
    pub(crate) main: Option<usize>,
    /// The URL's outcome (none for sitemap fetches).
    pub(crate) outcome: Option<Outcome>,
    /// URLs found.
    pub(crate) new_urls: Vec<NewUrl>,
    /// Media stored.
    pub(crate) media: Vec<(String, UrlId, Option<String>, u64)>,
    /// The origin's pacing after it.
    pub(crate) origin: Option<OriginPace>,
    /// Give the origin's lease back once this is committed.
    pub(crate) release: Option<OriginId>,
}

/// An origin's pacing as a worker saw it after a piece of work. The pacer's state is kept as
/// it is and written out (JSON) only for the last piece of each origin in a commit: a commit
/// holds several pages of each origin, and serialising the state after every page (with a
/// timestamp per host) was 2.5 % of the crawler's CPU.
#[derive(Debug)]
pub(crate) struct OriginPace {
    /// The row's update, `pacer_state` left empty.
    pub(crate) update: OriginUpdate,
    /// The pacer's exported state.
    pub(crate) snapshot: fetch::OriginSnapshot,
}

impl OriginPace {
    fn into_update(self) -> OriginUpdate {
        OriginUpdate {
            pacer_state: serde_json::to_string(&self.snapshot).ok(),
            ..self.update
        }
    }
}

pub(crate) struct Committer {
    pub(crate) tx: mpsc::Sender<Work>,
    pub(crate) pending: Arc<AtomicUsize>,
    /// Origins this process works, or whose results it has not committed and released yet.
    in_hand: InHand,
}

/// Origin ids in hand (see [`Committer::in_hand`]).
type InHand = Arc<Mutex<HashSet<OriginId>>>;

impl Committer {
    /// Start the writer task.
    pub(crate) fn start(
        store: Store,
        warc: WarcWriter,
        holder: Holder,
        counters: Arc<super::LiveCounters>,
    ) -> (Committer, tokio::task::JoinHandle<Result<(), CrawlError>>) {
        let (tx, rx) = mpsc::channel(COMMIT_BATCH * 2);
        let pending = Arc::new(AtomicUsize::new(0));
        let in_hand = InHand::default();
        let task = tokio::spawn(run(
            rx,
            (store, holder),
            warc,
            (Arc::clone(&pending), Arc::clone(&in_hand)),
            counters,
        ));
        (
            Committer {
                tx,
                pending,
                in_hand,
            },
            task,
        )
    }

    /// An origin's lease was claimed: it is in hand until its release is committed.
    pub(crate) fn hold(&self, origin_id: OriginId) {
        self.in_hand
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .insert(origin_id);
    }

    /// The origins in hand: not to be claimed again yet. A worker that gave its origin up
    /// (its lease renewal came late) may have fetched URLs whose outcomes are still on their
    /// way to the store; claiming the origin again would put those URLs, still in flight in
    /// the store, back in the queue, and they would be fetched twice.
    pub(crate) fn in_hand(&self) -> Vec<OriginId> {
        self.in_hand
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .iter()
            .copied()
            .collect()
    }

    /// Hand work over (waits when the writer is behind: back-pressure on the workers).
    pub(crate) async fn send(&self, work: Work) -> Result<(), CrawlError> {
        self.pending.fetch_add(1, Ordering::SeqCst);
        self.tx.send(work).await.map_err(|_| CrawlError::WriterGone)
    }
}

async fn run(
    mut rx: mpsc::Receiver<Work>,
    (store, holder): (Store, Holder),
    mut warc: WarcWriter,
    (pending, in_hand): (Arc<AtomicUsize>, InHand),
    counters: Arc<super::LiveCounters>,
) -> Result<(), CrawlError> {
    let mut queue: Vec<Work> = Vec::with_capacity(COMMIT_BATCH);
    loop {
        let first = rx.recv().await;
        let Some(first) = first else { break };
        queue.push(first);
        let until = tokio::time::Instant::now() + COMMIT_INTERVAL;
        while queue.len() < COMMIT_BATCH {
            match tokio::time::timeout_at(until, rx.recv()).await {
                Ok(Some(w)) => queue.push(w),
                Ok(None) | Err(_) => break,
            }
        }
        let n = queue.len();
        let result = commit(&store, &mut warc, &holder, &mut queue, &counters).await;
        if let Ok(released) = &result {
            let mut held = in_hand.lock().unwrap_or_else(PoisonError::into_inner);
            for id in released {
                held.remove(id);
            }
        }
        pending.fetch_sub(n, Ordering::SeqCst);
        result?;
    }
    warc.close()?;
    Ok(())
}

async fn commit(
    store: &Store,
    warc: &mut WarcWriter,
    holder: &Holder,
    queue: &mut Vec<Work>,
    counters: &super::LiveCounters,
) -> Result<Vec<OriginId>, CrawlError> {
    let write_started = std::time::Instant::now();
    let mut batch = Batch::default();
    let mut releases = Vec::new();
    let mut paces: Vec<OriginPace> = Vec::new();
    for work in queue.drain(..) {
        let mut outcome = work.outcome;
        if !work.members.is_empty() {
            let locations = warc.write_encoded(&work.members)?;
            let bytes: usize = work.members.iter().map(Vec::len).sum();
            counters
                .warc_bytes
                .fetch_add(bytes as u64, std::sync::atomic::Ordering::Relaxed);
            if let (Some(o), Some(i)) = (outcome.as_mut(), work.main) {
                if let (Some(fetch), Some(loc)) = (o.fetch.as_mut(), locations.get(i)) {
                    fetch.warc_file = Some(loc.file.clone());
                    fetch.warc_offset = Some(loc.offset);
                }
            }
        }
        batch.outcomes.extend(outcome);
        batch.new_urls.extend(work.new_urls);
        batch.media.extend(work.media);
        if let Some(mut o) = work.origin {
            // The latest state of an origin wins within a batch; its counts add up.
            if let Some(i) = paces
                .iter()
                .position(|x: &OriginPace| x.update.id == o.update.id)
            {
                let earlier = paces.swap_remove(i);
                o.update.requests += earlier.update.requests;
                o.update.bytes += earlier.update.bytes;
            }
            paces.push(o);
        }
        releases.extend(work.release);
    }
    batch.origins = paces.into_iter().map(OriginPace::into_update).collect();
    // Records first, then the states that point at them.
    warc.flush()?;
    super::StageTimes::add(&counters.time.warc_write, write_started);
    let store_started = std::time::Instant::now();
    retrying(|| store.commit(&batch, holder)).await?;
    if !releases.is_empty() {
        retrying(|| store.release_origins(&releases, holder)).await?;
    }
    super::StageTimes::add(&counters.time.store, store_started);
    counters.commit_latency.observe(store_started.elapsed());
    Ok(releases)
}

/// Run a store operation again when it failed in a way that may pass (a deadlock another
/// process's transaction caused, a busy database, a lost connection): at most
/// [`STORE_RETRIES`] more times, 50 ms more apart each time. Each try is one whole
/// transaction, rolled back when it failed.
pub(crate) async fn retrying<T, F, Fut>(mut operation: F) -> Result<T, db::DbError>
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = Result<T, db::DbError>>,
{
    let mut tries = 0;
    loop {
        match operation().await {
            Err(e) if e.is_retryable() && tries < STORE_RETRIES => {
                tries += 1;
                tracing::warn!(error = %e, tries, "store operation failed, trying again");
                tokio::time::sleep(std::time::Duration::from_millis(50 * u64::from(tries))).await;
            }
            other => return other,
        }
    }
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::AtomicU32;

    use super::*;

    fn passing_failure() -> db::DbError {
        db::DbError::Query {
            context: "test",
            source: sqlx::Error::PoolTimedOut,
        }
    }

    #[tokio::test(start_paused = true)]
    async fn a_failure_that_may_pass_is_tried_again_a_bounded_number_of_times() {
        let tries = AtomicU32::new(0);
        let ok = retrying(|| async {
            match tries.fetch_add(1, Ordering::SeqCst) {
                0 | 1 => Err(passing_failure()),
                _ => Ok(7),
            }
        })
        .await;
        assert_eq!(ok.unwrap(), 7);
        assert_eq!(tries.load(Ordering::SeqCst), 3);
        let tries = AtomicU32::new(0);
        let failed: Result<(), _> = retrying(|| async {
            tries.fetch_add(1, Ordering::SeqCst);
            Err(passing_failure())
        })
        .await;
        assert!(failed.is_err());
        assert_eq!(tries.load(Ordering::SeqCst), 1 + STORE_RETRIES);
        // A failure that will not pass is not tried again.
        let tries = AtomicU32::new(0);
        let failed: Result<(), _> = retrying(|| async {
            tries.fetch_add(1, Ordering::SeqCst);
            Err(db::DbError::Query {
                context: "test",
                source: sqlx::Error::RowNotFound,
            })
        })
        .await;
        assert!(failed.is_err());
        assert_eq!(tries.load(Ordering::SeqCst), 1);
    }
}
