//! The one writer: appends each URL's WARC records, flushes them, then commits the URL states
//! in batches (group commit). A URL's state is committed only after its records are written.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use db::Holder;
use tokio::sync::mpsc;

use super::config::{COMMIT_BATCH, COMMIT_INTERVAL};
use super::CrawlError;
use crate::store::{Batch, NewUrl, OriginUpdate, Outcome, Store};
use crate::warc::WarcWriter;

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
    pub(crate) media: Vec<(String, i64, Option<String>, u64)>,
    /// The origin's pacing after it.
    pub(crate) origin: Option<OriginUpdate>,
    /// Give the origin's lease back once this is committed.
    pub(crate) release: Option<i64>,
}

pub(crate) struct Committer {
    pub(crate) tx: mpsc::Sender<Work>,
    pub(crate) pending: Arc<AtomicUsize>,
}

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
        let task = tokio::spawn(run(rx, store, warc, holder, Arc::clone(&pending), counters));
        (Committer { tx, pending }, task)
    }

    /// Hand work over (waits when the writer is behind: back-pressure on the workers).
    pub(crate) async fn send(&self, work: Work) -> Result<(), CrawlError> {
        self.pending.fetch_add(1, Ordering::SeqCst);
        self.tx.send(work).await.map_err(|_| CrawlError::WriterGone)
    }
}

async fn run(
    mut rx: mpsc::Receiver<Work>,
    store: Store,
    mut warc: WarcWriter,
    holder: Holder,
    pending: Arc<AtomicUsize>,
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
        let result = commit(&store, &mut warc, &holder, &mut queue, &counters);
        let result = result.await;
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
) -> Result<(), CrawlError> {
    let write_started = std::time::Instant::now();
    let mut batch = Batch::default();
    let mut releases = Vec::new();
    for work in queue.drain(..) {
        let mut outcome = work.outcome;
        if !work.members.is_empty() {
            let locations = warc.write_encoded(&work.members)?;
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
            if let Some(i) = batch
                .origins
                .iter()
                .position(|x: &OriginUpdate| x.id == o.id)
            {
                let earlier = batch.origins.swap_remove(i);
                o.requests += earlier.requests;
                o.bytes += earlier.bytes;
            }
            batch.origins.push(o);
        }
        releases.extend(work.release);
    }
    // Records first, then the states that point at them.
    warc.flush()?;
    super::StageTimes::add(&counters.time.warc_write, write_started);
    let store_started = std::time::Instant::now();
    store.commit(&batch, holder).await?;
    if !releases.is_empty() {
        store.release_origins(&releases, holder).await?;
    }
    super::StageTimes::add(&counters.time.store, store_started);
    Ok(())
}
