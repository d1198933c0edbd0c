//! The polite request: "fetch this URL as this bot". Every hop is checked against its own
//! host's robots.txt (fetched through the same client when needed), waits for its origin's
//! turn, and runs under one deadline for the whole operation; what happened comes back as it
//! happened, with what the pacer learned. Skips are typed results, never errors.

use std::sync::Arc;
use std::time::Duration;

use robots::ProductTokens;
use tracing::Instrument;
use url::Url;

use crate::body::BodyReader;
use crate::cache::RobotsCache;
use crate::deadline::Deadline;
use crate::error::FetchError;
use crate::fetcher::{Fetcher, HopRecord, Request, MAX_REDIRECTS_CEILING};
use crate::http::{HopRequest, ResponseHead};
use crate::pacer::{Learned, OriginKey, PaceSkip, Pacer, WaitBudget, WaitLimit};
use crate::redirect::{without_credentials, Next, RedirectChain, RedirectHop};
use crate::robots_txt::{fetch_robots_txt_refusing, RobotsFetch};
use crate::scope::Scope;
use crate::verdict::{RulesSource, Verdict};

/// Which origin a URL belongs to: the caller's grouping (the crawler groups hosts; the
/// analysis takes every scope as its own origin, [`ScopeOrigins`]).
pub trait OriginMap: Send + Sync {
    /// The origin of `url` (an `http`/`https` URL with a host).
    fn origin_of(&self, url: &Url) -> OriginKey;
}

/// Every scheme + host + port is its own origin.
#[derive(Debug, Default, Clone, Copy)]
pub struct ScopeOrigins;

impl OriginMap for ScopeOrigins {
    fn origin_of(&self, url: &Url) -> OriginKey {
        OriginKey::of_scope(url).unwrap_or_else(|_| OriginKey::new(url.as_str()))
    }
}

/// One operation's limits, shared by all its requests: one deadline, and for an analysis a
/// wait budget for pacing (RobotsTxtParser: 10 s in all for crawl-delays). Clones share the
/// budget.
#[derive(Debug, Clone)]
pub struct Operation {
    /// Nothing of the operation (hops, bodies, robots.txt fetches, waits) runs past this.
    pub deadline: Deadline,
    /// The most its requests may wait for their turns, in all.
    pub budget: Option<WaitBudget>,
    /// The most one request waits for its turn: longer is [`PaceSkip::NotBefore`] (a
    /// crawler with other work does not wait out a back-off).
    pub max_wait: Option<Duration>,
}

impl Operation {
    /// An operation that must be over within `budget` from now.
    pub fn within(budget: Duration) -> Operation {
        Operation {
            deadline: Deadline::after(budget),
            budget: None,
            max_wait: None,
        }
    }

    /// Limits each wait for a turn to `max_wait`.
    pub fn with_max_wait(mut self, max_wait: Duration) -> Operation {
        self.max_wait = Some(max_wait);
        self
    }

    /// Adds a wait budget.
    pub fn with_wait_budget(mut self, limit: Duration) -> Operation {
        self.budget = Some(WaitBudget::new(limit));
        self
    }

    /// The same operation (same budget) with a deadline no later than `deadline`: a phase
    /// with its own time limit (the analysis's "no sitemap after 20 s").
    pub fn narrowed(&self, deadline: Deadline) -> Operation {
        Operation {
            deadline: self.deadline.min(deadline),
            budget: self.budget.clone(),
            max_wait: self.max_wait,
        }
    }

    fn limit(&self) -> WaitLimit<'_> {
        WaitLimit {
            deadline: Some(self.deadline),
            budget: self.budget.as_ref(),
            max_wait: self.max_wait,
        }
    }
}

/// Why a request was not made.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(tag = "reason", rename_all = "snake_case")]
pub enum SkipReason {
    /// The rules forbid it.
    Disallowed {
        /// The robots.txt whose rules decided.
        robots_url: Url,
        /// The deciding line.
        line: usize,
        /// The deciding rule as written (`Disallow: /x`).
        rule: String,
    },
    /// robots.txt is unreachable (or answered 429) and no usable copy exists: nothing is
    /// fetched from the scope.
    RobotsUnreachable {
        /// The robots.txt URL.
        robots_url: Url,
        /// Unreachable or backing off.
        source: RulesSource,
    },
    /// The pacer could not give a turn in time (budget, deadline, paused origin).
    Pacing(PaceSkip),
    /// The caller's scope check refused a redirect target.
    OutOfScope,
    /// Not an `http`/`https` URL with a host.
    NotFetchable,
}

/// What was done on the way, whatever the outcome.
#[derive(Debug, Clone, Default)]
pub struct Trail {
    /// The redirects followed, in order.
    pub redirects: Vec<RedirectHop>,
    /// Every hop sent, as sent and received.
    pub exchanges: Vec<HopRecord>,
    /// The robots.txt fetches made on the way (each also paced and under the deadline).
    pub robots_fetches: Vec<RobotsFetch>,
    /// The time spent waiting for turns.
    pub waited: Duration,
    /// The robots.txt verdict of the last URL checked.
    pub verdict: Option<Verdict>,
    /// What the pacer learned from the last request sent (success, failure with
    /// `Retry-After`), if one was sent.
    pub learned: Option<Learned>,
}

/// A robots.txt check: the verdict, the fetch made for it (if one was), the time waited.
#[derive(Debug, Clone)]
pub struct RobotsCheck {
    /// The answer.
    pub verdict: Verdict,
    /// The robots.txt fetch made for it, when one was (not when the answer was known).
    pub fetched: Option<RobotsFetch>,
    /// The time waited for the origin's turn before fetching.
    pub waited: Duration,
}

/// A fetched response: its head, and its body to be read. The body holds the origin's turn
/// (one request in flight per origin) until it is read or dropped.
#[derive(Debug)]
pub struct Fetched {
    /// The final URL.
    pub url: Url,
    /// The final request as sent.
    pub request: HopRequest,
    /// The final response head as received.
    pub head: ResponseHead,
    /// The body.
    pub body: BodyReader,
    /// What the pacer learned from the final response.
    pub learned: Learned,
}

/// What a polite request came to.
#[derive(Debug)]
pub enum Outcome {
    /// A response arrived.
    Fetched(Box<Fetched>),
    /// `url` was not requested, for `reason`.
    Skipped {
        /// The URL not requested (the start, or a redirect target).
        url: Url,
        /// Why.
        reason: SkipReason,
    },
    /// The request (or a redirect) failed.
    Failed(FetchError),
}

/// A polite request: the outcome and the trail.
#[derive(Debug)]
pub struct PoliteResponse {
    /// The outcome.
    pub outcome: Outcome,
    /// What was done on the way.
    pub trail: Trail,
}

/// A request as a bot.
pub struct PoliteRequest<'a> {
    /// The request (URL, caps, validators); `max_redirects` bounds the hops followed.
    pub request: Request,
    /// The bot's product tokens, in order of preference (`["JittyBot-Image", "JittyBot"]`).
    pub tokens: &'a ProductTokens,
    /// Called for every redirect target; `false` stops there with
    /// [`SkipReason::OutOfScope`] (the crawler's site scope).
    pub follow: Option<&'a (dyn Fn(&Url) -> bool + Send + Sync)>,
    /// True for the request that probes a paused origin.
    pub probe: bool,
    /// True for the first HTTPS attempt at a host not known to serve HTTPS: its connection
    /// failing as a host without HTTPS fails teaches the pacer nothing
    /// ([`Learned::from_failure`]), nor does its robots.txt's on the way.
    pub https_probe: bool,
}

impl<'a> PoliteRequest<'a> {
    /// A request for `url` as `tokens`.
    pub fn new(request: Request, tokens: &'a ProductTokens) -> PoliteRequest<'a> {
        PoliteRequest {
            request,
            tokens,
            follow: None,
            probe: false,
            https_probe: false,
        }
    }
}

/// The polite pipeline both bots use.
pub struct Polite {
    robots: RobotsCache,
    pacer: Pacer,
    origins: Arc<dyn OriginMap>,
}

impl std::fmt::Debug for Polite {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Polite")
            .field("robots", &self.robots)
            .field("pacer", &self.pacer)
            .finish_non_exhaustive()
    }
}

impl Polite {
    /// A pipeline over a robots.txt lifecycle (with its fetcher) and a pacer.
    pub fn new(robots: RobotsCache, pacer: Pacer, origins: Arc<dyn OriginMap>) -> Polite {
        Polite {
            robots,
            pacer,
            origins,
        }
    }

    /// The robots.txt lifecycle.
    pub fn robots(&self) -> &RobotsCache {
        &self.robots
    }

    /// The pacer.
    pub fn pacer(&self) -> &Pacer {
        &self.pacer
    }

    /// The fetcher.
    pub fn fetcher(&self) -> &Fetcher {
        self.robots.fetcher()
    }

    /// Fetches `request` as its bot within `operation`.
    pub async fn fetch(&self, request: PoliteRequest<'_>, operation: &Operation) -> PoliteResponse {
        let span = tracing::debug_span!("polite", url = %without_credentials(&request.request.url));
        self.run(request, operation).instrument(span).await
    }

    async fn run(&self, request: PoliteRequest<'_>, operation: &Operation) -> PoliteResponse {
        let mut trail = Trail::default();
        let limit = request.request.max_redirects.min(MAX_REDIRECTS_CEILING);
        let mut chain = RedirectChain::new(&request.request.url, limit);
        let mut url = without_credentials(&request.request.url);
        let outcome = loop {
            let step = self.hop(&request, &url, operation, &mut trail).await;
            let (hop, permit, learned) = match step {
                Err(outcome) => break outcome,
                Ok(sent) => sent,
            };
            match chain.next(&url, hop.head.status, &hop.head.headers) {
                Ok(Next::Final) => {
                    let mut body = hop.body;
                    body.hold(Box::new(permit));
                    break Outcome::Fetched(Box::new(Fetched {
                        url,
                        request: hop.request,
                        head: hop.head,
                        body,
                        learned,
                    }));
                }
                Ok(Next::Follow(next)) => {
                    // The redirect's body is not read; its turn ends here.
                    drop(hop);
                    drop(permit);
                    if request.follow.is_some_and(|follow| !follow(&next)) {
                        break Outcome::Skipped {
                            url: next,
                            reason: SkipReason::OutOfScope,
                        };
                    }
                    url = next;
                }
                Err(error) => {
                    break Outcome::Failed(FetchError::Redirect {
                        error,
                        chain: chain.hops().to_vec(),
                    })
                }
            }
        };
        trail.redirects = chain.into_hops();
        PoliteResponse { outcome, trail }
    }

    /// One hop: robots.txt, the origin's turn, the request.
    async fn hop(
        &self,
        request: &PoliteRequest<'_>,
        url: &Url,
        operation: &Operation,
        trail: &mut Trail,
    ) -> Result<(crate::fetcher::Hop, crate::pacer::Permit, Learned), Outcome> {
        let scope = Scope::of(url).map_err(Outcome::Failed)?;
        let verdict = self
            .verdict(url, request.tokens, operation, request.https_probe, trail)
            .await?;
        let skip = |reason| Outcome::Skipped {
            url: url.clone(),
            reason,
        };
        if !verdict.allowed {
            let reason = refusal(&scope, &verdict);
            trail.verdict = Some(verdict);
            return Err(skip(reason));
        }
        let crawl_delay = verdict.crawl_delay();
        trail.verdict = Some(verdict);
        let origin = self.origins.origin_of(url);
        let mut permit = self
            .pacer
            .acquire(
                &origin,
                scope.host(),
                crawl_delay,
                request.probe,
                operation.limit(),
            )
            .await
            .map_err(|pace| skip(SkipReason::Pacing(pace)))?;
        trail.waited += permit.waited();
        let hop = self
            .fetcher()
            .send_hop(&request.request, url, operation.deadline)
            .await;
        permit.answered();
        let hop = match hop {
            Ok(hop) => hop,
            Err(error) => {
                let learned = Learned::from_failure(&error, request.https_probe);
                permit.learn(learned);
                trail.learned = Some(learned);
                return Err(Outcome::Failed(error));
            }
        };
        let learned = Learned::from_response(hop.head.status, &hop.head.headers);
        permit.learn(learned);
        trail.learned = Some(learned);
        trail.exchanges.push(hop.record());
        Ok((hop, permit, learned))
    }

    /// The robots.txt verdict for `url` as `tokens`, fetching the robots.txt of its scope
    /// when the lifecycle says so: paced (as the probe of its origin), under the
    /// operation's deadline, counted in its wait budget. With
    /// [`Policy::FreshPerOperation`](crate::Policy) the first check of a scope fetches and
    /// later ones reuse the answer, so an analysis reads robots.txt first with this and its
    /// page fetch then costs no second robots.txt request.
    pub async fn check_robots(
        &self,
        url: &Url,
        tokens: &ProductTokens,
        operation: &Operation,
    ) -> Result<RobotsCheck, SkipReason> {
        self.check_robots_as(url, tokens, operation, false).await
    }

    /// [`Polite::check_robots`], for the first HTTPS attempt at a host not known to serve
    /// HTTPS when `https_probe` (see [`PoliteRequest::https_probe`]).
    pub async fn check_robots_as(
        &self,
        url: &Url,
        tokens: &ProductTokens,
        operation: &Operation,
        https_probe: bool,
    ) -> Result<RobotsCheck, SkipReason> {
        let scope = Scope::of(url).map_err(|_| SkipReason::NotFetchable)?;
        let host = scope.host();
        let fetcher = self.fetcher();
        let origin = self.origins.origin_of(scope.robots_txt_url());
        let waited = std::sync::Mutex::new(Duration::ZERO);
        let checked = self
            .robots
            .check_with(&scope, url, tokens, |robots_url, validators| {
                let waited = &waited;
                async move {
                    // robots.txt is the probe of a paused origin.
                    let mut permit = self
                        .pacer
                        .acquire(&origin, host, None, true, operation.limit())
                        .await?;
                    *waited
                        .lock()
                        .unwrap_or_else(std::sync::PoisonError::into_inner) = permit.waited();
                    // A redirect into a host the operator holds is not followed.
                    let held = |target: &Url| {
                        target
                            .host_str()
                            .is_some_and(|target| self.pacer.holds(target))
                    };
                    let fetched = fetch_robots_txt_refusing(
                        fetcher,
                        &robots_url,
                        validators.as_ref(),
                        operation.deadline,
                        &held,
                    )
                    .await;
                    permit.answered();
                    permit.learn(match (&fetched.error, fetched.status) {
                        (Some(error), _) => Learned::from_failure(error, https_probe),
                        (None, Some(status)) => {
                            Learned::from_robots_txt(status, fetched.retry_after)
                        }
                        (None, None) => Learned::Nothing,
                    });
                    Ok::<_, PaceSkip>(fetched)
                }
            })
            .await;
        let waited = *waited
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        match checked {
            Ok((verdict, fetched)) => Ok(RobotsCheck {
                verdict,
                fetched,
                waited,
            }),
            Err(pace) => Err(SkipReason::Pacing(pace)),
        }
    }

    async fn verdict(
        &self,
        url: &Url,
        tokens: &ProductTokens,
        operation: &Operation,
        https_probe: bool,
        trail: &mut Trail,
    ) -> Result<Verdict, Outcome> {
        match self
            .check_robots_as(url, tokens, operation, https_probe)
            .await
        {
            Ok(check) => {
                trail.waited += check.waited;
                trail.robots_fetches.extend(check.fetched);
                Ok(check.verdict)
            }
            Err(reason) => Err(Outcome::Skipped {
                url: url.clone(),
                reason,
            }),
        }
    }
}

/// Why a URL in `scope` that `verdict` disallows is not requested: the rule that disallows
/// it, or (no rule: everything is disallowed) robots.txt being unreachable.
fn refusal(scope: &Scope, verdict: &Verdict) -> SkipReason {
    let robots_url = scope.robots_txt_url().clone();
    match verdict.deciding_rule() {
        Some((line, rule)) => SkipReason::Disallowed {
            robots_url,
            line,
            rule,
        },
        None => SkipReason::RobotsUnreachable {
            robots_url,
            source: verdict.source,
        },
    }
}
