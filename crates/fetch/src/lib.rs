//! JittyBot's HTTP layer: safe fetching and the robots.txt lifecycle.
//!
//! Both bots fetch from servers they do not control, and RobotsTxtParser fetches whatever
//! address a stranger types in. Everything here assumes the far end is hostile:
//!
//! - [`Fetcher`] sends only GET and HEAD, identifies the bot, caps every body (after
//!   decompression), bounds every phase in time, follows redirects itself (recording each hop
//!   and checking each hop's addresses), and refuses private addresses unless told otherwise.
//! - [`fetch_robots_txt`] fetches one robots.txt fresh and reads the answer by the status
//!   table of JittyBot's documentation.
//! - [`RobotsCache`] keeps one copy per [`Scope`], refreshes it conditionally, falls back to
//!   the old copy when refreshing fails, backs off on 429, and shares one fetch between
//!   concurrent callers.
//!
//! ```no_run
//! # async fn demo() -> Result<(), Box<dyn std::error::Error>> {
//! use fetch::{FetchConfig, Fetcher, Request};
//!
//! let fetcher = Fetcher::new(FetchConfig::new("JittyBot", "https://example.com/bot"))?;
//! let url = url::Url::parse("https://example.com/")?;
//! let page = fetcher
//!     .fetch(Request::get(url.clone()).max_body_bytes(1 << 20).stop_at(b"</head>"))
//!     .await?;
//! println!("{} {} bytes", page.status, page.body.len());
//!
//! let robots = fetch::fetch_robots_txt(&fetcher, &url).await?;
//! println!("{}: {}", robots.robots_url, robots.outcome);
//! # Ok(()) }
//! ```

#![forbid(unsafe_code)]
#![warn(missing_docs)]

pub mod address;
mod cache;
mod client;
mod config;
mod error;
mod resolve;
mod robots_txt;
mod scope;
mod verdict;

pub use address::{AddressPolicy, RefusedRange};
pub use cache::{
    retry_delay, CacheLimits, RobotsCache, RobotsSource, SavedCopy, SavedEntry, SavedFailure,
    DEFAULT_MAX_CACHED_BYTES, DEFAULT_MAX_ENTRIES, FIRST_RETRY_DELAY, MAX_RETRY_DELAY, MAX_STALE,
    MAX_TOKEN_LISTS_PER_COPY,
};
pub use client::{
    BuildError, Fetcher, Method, RedirectHop, Request, Response, Validators,
    DEFAULT_MAX_BODY_BYTES, DEFAULT_MAX_REDIRECTS, MAX_BODY_BYTES_CEILING, MAX_REDIRECTS_CEILING,
    MAX_STOP_MARKER_BYTES,
};
pub use config::{
    FetchConfig, MinTransferRate, ResolvePin, ResolvePinError, Timeouts, DEFAULT_CONNECT_TIMEOUT,
    DEFAULT_FIRST_BYTE_TIMEOUT, DEFAULT_MIN_TRANSFER_BYTES, DEFAULT_MIN_TRANSFER_WINDOW,
    DEFAULT_TOTAL_TIMEOUT,
};
pub use error::{FetchError, TimeoutPhase};
pub use reqwest::header::{HeaderMap, HeaderValue};
pub use robots_txt::{
    bounded_retry_after, cache_lifetime, fetch_robots_txt, fetch_robots_txt_url, max_age,
    outcome_of, retry_after, RobotsFetch, RobotsOutcome, DEFAULT_CACHE_LIFETIME,
    MAX_CACHE_LIFETIME, MAX_RETRY_AFTER, MIN_CACHE_LIFETIME, MIN_RETRY_AFTER, ROBOTS_TXT_MAX_BYTES,
    ROBOTS_TXT_MAX_REDIRECTS,
};
pub use scope::{parse_target, robots_txt_url, Scope};
pub use url::Url;
pub use verdict::{RulesSource, Verdict};
