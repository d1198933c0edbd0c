//! The gate on JittyBot's own pipeline (`fetch::Polite`): each request the page makes is
//! checked against the robots.txt of its own host (fetched first when not known, through the
//! normal lifecycle), waits for its origin's turn (the crawler's pacer and back-off), and is
//! sent with JittyBot's User-Agent; images and media as JittyBot-Image under its rules.
//! Every request made is recorded (trail and body) for the caller's archive.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use fetch::{Body, Operation, Outcome, Polite, PoliteRequest, Request, Trail};
use robots::ProductTokens;

use crate::gate::{Decision, DenyReason, GateResponse, RequestGate, SubMethod, SubRequest};

/// Largest body read for a document, script, stylesheet or data request (as pages).
pub const MAX_SUB_BODY_BYTES: usize = 8 * 1024 * 1024;
/// Largest body read for an image or other media (as the crawler's media).
pub const MAX_SUB_MEDIA_BYTES: usize = 16 * 1024 * 1024;
/// Body bytes one page's sub-requests may read in all; later requests are denied. With the
/// request budget this bounds the memory one render holds.
pub const PAGE_BYTE_BUDGET: usize = 64 * 1024 * 1024;
/// Redirect hops a sub-request follows (each checked against its own robots.txt).
pub const SUB_MAX_REDIRECTS: usize = 5;

/// A check of the caller's made before any request (scope, "media go elsewhere"): a reason
/// to deny, or `None`.
pub type PreCheck = dyn Fn(&SubRequest) -> Option<DenyReason> + Send + Sync;

/// One sub-request that went through the pipeline: what was done on the way (robots.txt
/// fetches, redirect hops, the final exchange) and the final body, for the archive.
#[derive(Debug)]
pub struct GateRecord {
    /// The request as the page made it.
    pub request: SubRequest,
    /// The trail of the polite fetch.
    pub trail: Trail,
    /// The final response's body, when one was read.
    pub body: Option<Body>,
    /// The final URL, when a response arrived.
    pub final_url: Option<url::Url>,
}

/// Where the gate finds the pipeline: a `Polite` itself, or a caller's shared state holding
/// one (the crawler's).
pub trait PoliteSource: Send + Sync + 'static {
    /// The pipeline.
    fn polite(&self) -> &Polite;
}

impl PoliteSource for Polite {
    fn polite(&self) -> &Polite {
        self
    }
}

/// A [`RequestGate`] on [`fetch::Polite`].
pub struct PoliteGate {
    polite: Arc<dyn PoliteSource>,
    page_tokens: ProductTokens,
    media_tokens: ProductTokens,
    media_agent: Option<String>,
    pre_check: Option<Box<PreCheck>>,
    bytes: AtomicUsize,
    records: Mutex<Vec<GateRecord>>,
}

impl std::fmt::Debug for PoliteGate {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PoliteGate")
            .field("bytes", &self.bytes)
            .finish_non_exhaustive()
    }
}

impl PoliteGate {
    /// A gate fetching documents, scripts and data as `page_tokens` and media as
    /// `media_tokens`, sent with the User-Agent token `media_agent` (`JittyBot-Image`).
    pub fn new(
        polite: Arc<dyn PoliteSource>,
        page_tokens: ProductTokens,
        media_tokens: ProductTokens,
        media_agent: Option<String>,
    ) -> PoliteGate {
        PoliteGate {
            polite,
            page_tokens,
            media_tokens,
            media_agent,
            pre_check: None,
            bytes: AtomicUsize::new(0),
            records: Mutex::new(Vec::new()),
        }
    }

    /// Adds a check made before any request.
    pub fn with_pre_check(mut self, check: Box<PreCheck>) -> PoliteGate {
        self.pre_check = Some(check);
        self
    }

    /// The requests made so far, taken out of the gate.
    pub fn take_records(&self) -> Vec<GateRecord> {
        match self.records.lock() {
            Ok(mut r) => std::mem::take(&mut *r),
            Err(poisoned) => std::mem::take(&mut *poisoned.into_inner()),
        }
    }

    fn record(&self, record: GateRecord) {
        match self.records.lock() {
            Ok(mut r) => r.push(record),
            Err(poisoned) => poisoned.into_inner().push(record),
        }
    }

    async fn fetch(&self, sub: SubRequest) -> Decision {
        let media = sub.kind.is_media();
        let mut request = match sub.method {
            SubMethod::Get => Request::get(sub.url.clone()),
            SubMethod::Head => Request::head(sub.url.clone()),
        };
        request.max_body_bytes = if media {
            MAX_SUB_MEDIA_BYTES
        } else {
            MAX_SUB_BODY_BYTES
        };
        request.max_redirects = SUB_MAX_REDIRECTS;
        request.keep_raw = true;
        if media {
            request.agent = self.media_agent.clone();
        }
        let tokens = if media {
            &self.media_tokens
        } else {
            &self.page_tokens
        };
        // One deadline: the page's. A request waits for its origin's turn until then.
        let left = sub
            .deadline
            .saturating_duration_since(tokio::time::Instant::now());
        if left.is_zero() {
            return Decision::Deny(DenyReason::TimeBudget);
        }
        let operation = Operation::within(left).with_max_wait(left.max(Duration::from_millis(1)));
        let response = self
            .polite
            .polite()
            .fetch(PoliteRequest::new(request, tokens), &operation)
            .await;
        let trail = response.trail;
        let (decision, body, final_url) = match response.outcome {
            Outcome::Fetched(fetched) => {
                let status = fetched.head.status;
                let headers = fetched.head.headers.clone();
                let final_url = fetched.url.clone();
                match fetched.body.read_to_end(None).await {
                    Ok(body) => {
                        self.bytes.fetch_add(body.bytes.len(), Ordering::Relaxed);
                        let answer = GateResponse {
                            status,
                            headers,
                            body: body.bytes.clone(),
                        };
                        (Decision::Allow(answer), Some(body), Some(final_url))
                    }
                    Err(e) => (Decision::Deny(failed(e)), None, Some(final_url)),
                }
            }
            Outcome::Skipped { url, reason } => (
                Decision::Deny(DenyReason::NotRequested { url, reason }),
                None,
                None,
            ),
            Outcome::Failed(error) => (Decision::Deny(failed(error)), None, None),
        };
        self.record(GateRecord {
            request: sub,
            trail,
            body,
            final_url,
        });
        decision
    }
}

/// A failed request's reason: the error with its causes.
fn failed(error: fetch::FetchError) -> DenyReason {
    DenyReason::Failed {
        error: std::sync::Arc::new(error),
    }
}

impl RequestGate for PoliteGate {
    async fn decide(&self, request: SubRequest) -> Decision {
        if let Some(reason) = self.pre_check.as_ref().and_then(|check| check(&request)) {
            return Decision::Deny(reason);
        }
        if self.bytes.load(Ordering::Relaxed) >= PAGE_BYTE_BUDGET {
            return Decision::Deny(DenyReason::ByteBudget);
        }
        self.fetch(request).await
    }
}
