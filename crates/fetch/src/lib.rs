//! The one polite request pipeline both bots share (JittyBot the crawler, RobotsTxtParser the
//! analysis), assuming the far end is hostile.
//!
//! - [`HttpClient`] is the one HTTP seam: one hop out, one response back (3xx included), the
//!   body a stream as received. [`ReqwestClient`] is the real one; `testing::ScriptedWeb`
//!   (feature `testing`) scripts a web in memory for tests on tokio's paused clock.
//! - [`Fetcher`] builds the exact request headers, applies one [`Deadline`], follows
//!   redirects through the one [`RedirectChain`] (or lets the caller drive it hop by hop:
//!   [`Fetcher::send_hop`]), and decodes bodies itself with a capped streaming decoder.
//! - [`fetch_robots_txt`] and [`outcome_of`] are the one robots.txt fetch and status table;
//!   [`RobotsCache`] is the lifecycle (an explicit state per scope on a bounded cache,
//!   single-flight, a per-entry [`RobotsStore`]), cached for JittyBot or fresh per operation
//!   for RobotsTxtParser ([`Policy`]).
//! - [`Pacer`] is the one per-origin pacer ([`OriginState`] its pure state machine).
//! - [`Polite`] puts them together: "fetch this URL as this bot".
//!
//! Set `RUST_LOG=fetch=debug` (with a `tracing` subscriber) to see a span per polite request,
//! per hop and per robots.txt fetch, and an event per robots decision and pacing wait.
//!
//! ```no_run
//! # async fn demo() -> Result<(), Box<dyn std::error::Error>> {
//! use std::sync::Arc;
//! use std::time::Duration;
//! use robots::ProductTokens;
//! use fetch::{FetchConfig, Fetcher, Operation, Outcome, Pacer, PacerConfig, Policy, Polite,
//!     PoliteRequest, Request, RobotsCache, ScopeOrigins};
//!
//! let fetcher = Fetcher::new(FetchConfig::new("JittyBot", "https://example.com/bot"))?;
//! let polite = Polite::new(
//!     RobotsCache::new(fetcher, Policy::Cached),
//!     Pacer::new(PacerConfig::default()),
//!     Arc::new(ScopeOrigins),
//! );
//! let operation = Operation::within(Duration::from_secs(60));
//! let url = "https://example.com/".parse()?;
//! let response = polite
//!     .fetch(PoliteRequest::new(Request::get(url), &ProductTokens::JITTYBOT), &operation)
//!     .await;
//! if let Outcome::Fetched(fetched) = response.outcome {
//!     let body = fetched.body.read_to_end(None).await?;
//!     println!("{} {} bytes", fetched.head.status, body.bytes.len());
//! }
//! # Ok(()) }
//! ```

pub mod address;
mod body;
mod cache;
mod config;
mod deadline;
mod error;
mod fetcher;
mod headers;
mod http;
mod net;
mod observe;
mod pacer;
mod polite;
mod redirect;
mod resolve;
mod robots_txt;
mod scope;
pub mod serde_status;
mod tap;
#[cfg(feature = "testing")]
pub mod testing;
mod verdict;

pub use ::http::{HeaderMap, HeaderValue, StatusCode, Version};
pub use address::{AddressPolicy, RefusedRange};
pub use body::{Body, BodyReader, ContentCoding, ACCEPT_ENCODING, READ_CHUNK_BYTES};
pub use cache::{
    retry_delay, CacheLimits, MemoryStore, NoStore, Policy, RobotsCache, RobotsStore, StoreError,
    StoredCopy, StoredEntry, StoredFailure, StoredState, DEFAULT_MAX_CACHED_BYTES,
    ENTRY_OVERHEAD_BYTES, FIRST_RETRY_DELAY, MAX_RETRY_DELAY, MAX_STALE, MAX_TOKEN_LISTS_PER_COPY,
};
pub use config::{
    FetchConfig, MinTransferRate, ResolvePin, ResolvePinError, Timeouts, DEFAULT_CONNECT_TIMEOUT,
    DEFAULT_FIRST_BYTE_TIMEOUT, DEFAULT_MIN_TRANSFER_BYTES, DEFAULT_MIN_TRANSFER_WINDOW,
    DEFAULT_TOTAL_TIMEOUT, IDLE_CONNECTIONS_PER_HOST, IDLE_CONNECTION_TIMEOUT, MAX_HEADER_BYTES,
    MAX_RESPONSE_HEADERS,
};
pub use deadline::Deadline;
pub use error::{Cause, ErrorKind, FetchError, TimeoutPhase};
pub use fetcher::{
    Fetcher, Hop, HopRecord, Request, Response, Validators, DEFAULT_ACCEPT, DEFAULT_MAX_BODY_BYTES,
    DEFAULT_MAX_REDIRECTS, MAX_BODY_BYTES_CEILING, MAX_REDIRECTS_CEILING, MAX_STOP_MARKER_BYTES,
};
pub use headers::{
    bounded_retry_after, cache_lifetime, max_age, retry_after, retry_after_sent,
    DEFAULT_CACHE_LIFETIME, MAX_CACHE_LIFETIME, MAX_RETRY_AFTER, MIN_CACHE_LIFETIME,
    MIN_RETRY_AFTER,
};
pub use http::{
    BoxFuture, CertificateDigest, HopRequest, HopResponse, HttpClient, Method, RawBody,
    ResponseHead,
};
pub use net::{BuildError, ReqwestClient};
pub use observe::{Observer, RequestKind};
pub use pacer::{
    shows_no_https, Learned, OriginKey, OriginSnapshot, OriginState, Overrides, PaceSkip, Pacer,
    PacerConfig, Permit, Plan, WaitBudget, WaitLimit, WaitReason, DEFAULT_BACKOFF_BASE,
    DEFAULT_BACKOFF_MAX, DEFAULT_PACE, DEFAULT_PAUSE_AFTER, MAX_CRAWL_DELAY, MAX_PROBE_INTERVAL,
};
pub use polite::{
    Fetched, Operation, OriginMap, Outcome, Polite, PoliteRequest, PoliteResponse, RobotsCheck,
    ScopeOrigins, SkipReason, Trail,
};
pub use redirect::{
    is_redirect, without_credentials, Next, RedirectChain, RedirectError, RedirectHop,
};
pub use robots_txt::{
    fetch_robots_txt, fetch_robots_txt_refusing, fetch_robots_txt_within, outcome_of, RobotsFetch,
    RobotsOutcome, ROBOTS_TXT_ACCEPT, ROBOTS_TXT_MAX_BYTES, ROBOTS_TXT_MAX_REDIRECTS,
};
pub use scope::{parse_target, robots_txt_url, Scope, TargetError, MAX_TARGET_BYTES};
pub use url::Url;
pub use verdict::{RulesSource, Verdict};
