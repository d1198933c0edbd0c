//! A response body's bytes as they come off the wire, before any content coding is undone:
//! counted, and the first ones kept when asked. Shared by the body reader, which feeds it, and
//! the observer's report ([`crate::observe`]), which tells the count when the reader is
//! dropped; neither of them needs the other.

use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

/// Counts (and optionally keeps) the bytes as received.
#[derive(Debug, Default)]
pub(crate) struct RawTap {
    bytes: u64,
    kept: Option<Vec<u8>>,
    keep_limit: usize,
}

/// A tap shared between the reader's stream and whoever reports its count.
pub(crate) type SharedTap = Arc<Mutex<RawTap>>;

impl RawTap {
    /// A tap keeping the first `keep` bytes (none kept when `None`).
    pub(crate) fn shared(keep: Option<usize>) -> SharedTap {
        Arc::new(Mutex::new(RawTap {
            bytes: 0,
            kept: keep.map(|_| Vec::new()),
            keep_limit: keep.unwrap_or(0),
        }))
    }

    /// The tap of `shared`; a reader that panicked while holding it leaves counts that are
    /// still worth reading.
    pub(crate) fn lock(shared: &SharedTap) -> MutexGuard<'_, RawTap> {
        shared.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// A chunk came off the wire.
    pub(crate) fn record(&mut self, chunk: &[u8]) {
        self.bytes += chunk.len() as u64;
        let limit = self.keep_limit;
        if let Some(kept) = &mut self.kept {
            let room = limit.saturating_sub(kept.len());
            kept.extend_from_slice(&chunk[..chunk.len().min(room)]);
        }
    }

    /// Bytes received so far.
    pub(crate) fn bytes(&self) -> u64 {
        self.bytes
    }

    /// The bytes kept, taken (the reader is done with them).
    pub(crate) fn take_kept(&mut self) -> Option<Vec<u8>> {
        self.kept.take()
    }
}
