//! Where the time of rendered pages goes, summed over every page of this process (for the
//! interactive benchmark and for tuning): waiting for a browser, opening the page's context
//! and tab, the page running until its DOM is taken (its sub-requests' turns included),
//! reading the DOM, and disposing of the context.

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

/// A step of a page's render.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Phase {
    /// Waiting for a browser with room (the pool's).
    WaitBrowser,
    /// Making the page's incognito context.
    OpenContext,
    /// Opening its tab (the DevTools session's set-up included).
    OpenTab,
    /// From navigating to the load event.
    Load,
    /// From the load event to the quiet spell's end (sub-requests still pending, settle).
    Settle,
    /// Serialising the DOM.
    ReadDom,
    /// Disposing of the context (after the page's result is returned, in the pool).
    Close,
    /// Sub-requests waiting in the gate (their origin's turn and the response), summed.
    Gate,
}

/// Every phase, in a page's order.
pub const PHASES: [Phase; 8] = [
    Phase::WaitBrowser,
    Phase::OpenContext,
    Phase::OpenTab,
    Phase::Load,
    Phase::Settle,
    Phase::ReadDom,
    Phase::Close,
    Phase::Gate,
];

impl Phase {
    /// A short label.
    pub fn label(self) -> &'static str {
        match self {
            Phase::WaitBrowser => "wait for a browser",
            Phase::OpenContext => "open context",
            Phase::OpenTab => "open tab",
            Phase::Load => "navigate to load",
            Phase::Settle => "load to quiet",
            Phase::ReadDom => "read DOM",
            Phase::Close => "dispose context",
            Phase::Gate => "sub-request in gate",
        }
    }

    fn index(self) -> usize {
        self as usize
    }
}

static COUNT: [AtomicU64; 8] = [const { AtomicU64::new(0) }; 8];
static MICROS: [AtomicU64; 8] = [const { AtomicU64::new(0) }; 8];

/// Count `took` for `phase`.
pub(crate) fn add(phase: Phase, took: Duration) {
    let i = phase.index();
    COUNT[i].fetch_add(1, Ordering::Relaxed);
    let micros = u64::try_from(took.as_micros()).unwrap_or(u64::MAX);
    MICROS[i].fetch_add(micros, Ordering::Relaxed);
}

/// How many times `phase` was timed, and its time summed, in this process so far.
pub fn total(phase: Phase) -> (u64, Duration) {
    let i = phase.index();
    (
        COUNT[i].load(Ordering::Relaxed),
        Duration::from_micros(MICROS[i].load(Ordering::Relaxed)),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn phases_add_up() {
        let (n, t) = total(Phase::ReadDom);
        add(Phase::ReadDom, Duration::from_millis(3));
        let (n2, t2) = total(Phase::ReadDom);
        assert_eq!(n2, n + 1);
        assert!(t2 >= t + Duration::from_millis(3));
        for (i, p) in PHASES.iter().enumerate() {
            assert_eq!(p.index(), i);
        }
    }
}
