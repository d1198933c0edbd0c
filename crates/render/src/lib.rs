//! JittyBot's interactive mode: one page rendered in headless Chromium, driven over
//! the DevTools protocol, with **every request the page makes decided by JittyBot**.
//!
//! The browser never reaches the network itself. Every request of the page is paused by the
//! DevTools Fetch domain (`Fetch.enable`, pattern `*`): the page's own document is answered
//! with the response the caller already fetched; methods other than GET and HEAD are failed
//! in the browser; everything else goes to the caller's [`RequestGate`], which makes the
//! request through JittyBot's own pipeline ([`PoliteGate`]: robots.txt of the request's host,
//! the origin's pace, JittyBot's User-Agent) and whose response is handed back to the browser
//! (`Fetch.fulfillRequest`). As a guard, the browser's proxy is a closed port (loopback
//! included) and its name resolution fails: anything not intercepted fails.
//!
//! No clicks, no typing, no forms, no navigation away from the page. Each page has a time
//! budget and a request budget ([`RenderLimits`]).

mod answer;
pub mod browser;
pub mod dom;
pub mod gate;
pub mod polite_gate;
pub mod pool;
mod procs;
mod render;
pub mod timing;

use std::time::Duration;

use http::StatusCode;
use url::Url;

pub use browser::{find_chromium, Renderer, CLOSED_PROXY};
pub use dom::{DomFacts, DomLink, RobotsMeta};
pub use gate::{
    Decision, DenyReason, GateResponse, RequestGate, ResourceKind, SubMethod, SubRequest,
};
pub use polite_gate::{GateRecord, PoliteGate, PoliteSource};
pub use pool::{pool_size, retirements, BrowserPool, PoolConfig, RetireReason, Retirement};
pub use render::{PageToRender, DOM_RESERVE, NO_SERVICE_WORKER_SCRIPT};

/// Default time budget of one page: from opening its tab to reading its DOM, every
/// sub-request and wait for an origin's turn included.
pub const PAGE_TIME_BUDGET: Duration = Duration::from_secs(30);
/// Default number of sub-requests a page may have decided by the gate; later ones fail in the
/// browser.
pub const PAGE_REQUEST_BUDGET: usize = 100;
/// Default quiet spell: the DOM is taken once the load event has fired and no sub-request has
/// been pending for this long.
pub const SETTLE_TIME: Duration = Duration::from_millis(500);
/// Largest rendered DOM kept (bytes of its serialization); a longer one is cut (on a
/// character boundary) and marked truncated.
pub const MAX_DOM_BYTES: usize = 8 * 1024 * 1024;

/// One page's limits.
#[derive(Clone, Debug)]
pub struct RenderLimits {
    /// The whole render, DOM included.
    pub time_budget: Duration,
    /// Sub-requests given to the gate.
    pub max_requests: usize,
    /// The quiet spell after load before the DOM is taken.
    pub settle: Duration,
    /// Bytes of DOM kept.
    pub max_dom_bytes: usize,
}

impl Default for RenderLimits {
    fn default() -> RenderLimits {
        RenderLimits {
            time_budget: PAGE_TIME_BUDGET,
            max_requests: PAGE_REQUEST_BUDGET,
            settle: SETTLE_TIME,
            max_dom_bytes: MAX_DOM_BYTES,
        }
    }
}

/// A refusal worded by a library that gives no typed error (a DevTools parameter builder).
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct Refused(pub String);

/// Chromium's network error for a failed navigation (`net::ERR_...`).
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct NetError(pub String);

/// Why rendering failed.
#[derive(Debug, thiserror::Error)]
pub enum RenderError {
    /// The profile directory could not be made.
    #[error("cannot make a browser profile directory")]
    Profile(#[source] std::io::Error),
    /// The browser configuration was refused.
    #[error("browser configuration refused")]
    Config(#[source] Refused),
    /// The browser did not start.
    #[error("cannot launch the browser")]
    Launch(#[source] chromiumoxide::error::CdpError),
    /// The task starting the browser ended abnormally.
    #[error("the task launching the browser failed")]
    LaunchTask(#[source] tokio::task::JoinError),
    /// A DevTools command failed.
    #[error("browser failed while {step}")]
    Cdp {
        /// What was being done.
        step: &'static str,
        /// The DevTools error.
        #[source]
        source: chromiumoxide::error::CdpError,
    },
    /// The page's time ran out before the browser answered.
    #[error("the page's time ran out while {0}")]
    Timeout(&'static str),
    /// The browser answered nothing for [`browser::HUNG_AFTER`] (or the pool's own limit):
    /// it is replaced.
    #[error("the browser answered nothing for {0:?}")]
    Hung(std::time::Duration),
    /// The navigation failed (the page's document could not be loaded).
    #[error("navigation to {url} failed")]
    Navigation {
        /// The page.
        url: Url,
        /// Chromium's error.
        #[source]
        source: NetError,
    },
}

impl RenderError {
    /// A mapper from a DevTools error during `step`.
    fn cdp(step: &'static str) -> impl Fn(chromiumoxide::error::CdpError) -> RenderError {
        move |source| RenderError::Cdp { step, source }
    }
}

/// What came of one sub-request.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SubOutcome {
    /// The gate made the request; its response went to the page.
    Answered {
        /// The response's status.
        status: StatusCode,
        /// Body bytes given to the page.
        bytes: usize,
    },
    /// The gate refused it (robots.txt, scope, pace, a failure), with its reason.
    Denied(DenyReason),
    /// Not GET or HEAD: failed in the browser, never sent.
    MethodRefused,
    /// Not an `http`/`https` URL with a host: failed in the browser.
    NotHttp,
    /// The browser's own request (the tab's `/favicon.ico`), not the page's: never made.
    BrowserOwn,
    /// A script navigating the page away: not followed.
    NavigationRefused,
    /// Over the page's request budget: failed in the browser.
    OverRequestBudget,
    /// The page's time ran out before the gate answered.
    OverTimeBudget,
}

/// One request the page made, and what came of it.
#[derive(Clone, Debug)]
pub struct SubExchange {
    /// The URL as the browser asked for it.
    pub url: String,
    /// The method as the browser asked for it.
    pub method: String,
    /// The kind of resource.
    pub kind: ResourceKind,
    /// When it was settled.
    pub at: jiff::Timestamp,
    /// What came of it.
    pub outcome: SubOutcome,
}

/// A rendered page.
#[derive(Clone, Debug)]
pub struct Rendered {
    /// The page's URL.
    pub url: Url,
    /// The DOM's serialization (doctype and `documentElement.outerHTML`) after load and the
    /// quiet spell, at most [`RenderLimits::max_dom_bytes`].
    pub dom: String,
    /// The DOM was longer and cut.
    pub dom_truncated: bool,
    /// Every sub-request settled, in the order settled.
    pub exchanges: Vec<SubExchange>,
    /// Links and robots meta tags of the rendered DOM.
    pub facts: DomFacts,
    /// The load event fired.
    pub loaded: bool,
    /// The time budget ran out (the DOM is what it was then).
    pub out_of_time: bool,
}

impl Rendered {
    fn new(
        url: Url,
        mut dom: String,
        exchanges: Vec<SubExchange>,
        loaded: bool,
        out_of_time: bool,
        limits: &RenderLimits,
    ) -> Rendered {
        let dom_truncated = dom.len() > limits.max_dom_bytes;
        if dom_truncated {
            let mut end = limits.max_dom_bytes;
            while !dom.is_char_boundary(end) {
                end -= 1;
            }
            dom.truncate(end);
        }
        let facts = dom::read_dom(&dom, &url);
        Rendered {
            url,
            dom,
            dom_truncated,
            exchanges,
            facts,
            loaded,
            out_of_time,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_long_dom_is_cut_on_a_character_boundary() {
        let limits = RenderLimits {
            max_dom_bytes: 5,
            ..RenderLimits::default()
        };
        let url = Url::parse("https://example.test/").unwrap();
        let r = Rendered::new(url, "abcdéf".into(), Vec::new(), true, false, &limits);
        assert_eq!(r.dom, "abcd");
        assert!(r.dom_truncated);
    }
}
