//! The network run of one analysis, on the fetcher's polite pipeline (`fetch::Polite`, the
//! one both bots use): robots.txt first, fresh and memoised for the analysis
//! (`Policy::FreshPerOperation`); then each request only where the rules of its host allow it
//! (another host's robots.txt is read first), paced by the bot's crawl-delay within the wait
//! budget, redirects followed hop by hop, all under one deadline for the whole analysis.

pub(crate) mod records;

use std::sync::Arc;
use std::time::Duration;

use fetch::{
    ContentCoding, ErrorKind, FetchError, Fetched, Fetcher, Operation, Outcome, PaceSkip, Pacer,
    PacerConfig, Policy, Polite, PoliteRequest, Request, RobotsCache, RobotsFetch, ScopeOrigins,
    TimeoutPhase,
};
use jiff::Timestamp;
use robots::ProductTokens;
use tokio::time::Instant;
use tracing::Instrument;
use url::Url;

use crate::crawlers::BOT_TOKENS;
use crate::error::{AnalysisError, RequestFailed};
use crate::limits::Limits;
use crate::report::{Hop, Purpose, RequestRecord, SkipReason};

use records::End;

/// The bot's product tokens, as every request of the analysis names them.
const BOT: &ProductTokens = &BOT_TOKENS;

/// `duration` in whole milliseconds, as reports store durations.
pub(crate) fn millis(duration: Duration) -> u64 {
    u64::try_from(duration.as_millis()).unwrap_or(u64::MAX)
}

/// What one request of the analysis came to.
pub(crate) struct Obtained {
    /// The final response, its body still to be read.
    pub(crate) response: Option<Box<Fetched>>,
    /// Whether anything was sent.
    pub(crate) requested: bool,
    /// Where the request ended: the answer's URL, the redirect target not followed, or the
    /// URL whose request failed.
    pub(crate) final_url: Option<Url>,
    /// The redirects, in order (the last one may be the one that could not be followed).
    pub(crate) redirects: Vec<Hop>,
    /// Why it failed.
    pub(crate) failure: Option<RequestFailed>,
    /// Why it (or a redirect of it) was not requested, or not finished.
    pub(crate) skipped: Option<SkipReason>,
}

/// One analysis's network run.
pub(crate) struct Run<'a> {
    polite: Polite,
    /// The whole analysis: its deadline and its crawl-delay wait budget.
    pub(crate) operation: Operation,
    pub(crate) limits: &'a Limits,
    /// When the analysis started, on tokio's clock (the budgets run on it).
    pub(crate) started: Instant,
    /// When the analysis started, by the wall clock (the request log's origin).
    pub(crate) analysed_at: Timestamp,
    pub(crate) requests: Vec<RequestRecord>,
}

impl<'a> Run<'a> {
    /// A run on `fetcher` with a fresh robots.txt lifecycle and pacer of its own.
    pub(crate) fn new(fetcher: &Fetcher, limits: &'a Limits) -> Run<'a> {
        let polite = Polite::new(
            RobotsCache::new(fetcher.clone(), Policy::FreshPerOperation),
            Pacer::new(PacerConfig::analysis()),
            Arc::new(ScopeOrigins),
        );
        Run {
            polite,
            operation: Operation::within(limits.analysis_budget)
                .with_wait_budget(limits.crawl_delay_budget),
            limits,
            started: Instant::now(),
            analysed_at: Timestamp::now(),
            requests: Vec::new(),
        }
    }

    /// Milliseconds since the analysis started, by the wall clock.
    pub(crate) fn now_ms(&self) -> u64 {
        records::ms_since(self.analysed_at, Timestamp::now())
    }

    /// Step 1: the robots.txt governing `target`, fetched fresh through the pipeline (so the
    /// page's request reuses it). Fails only when the site was never contacted.
    pub(crate) async fn robots(
        &mut self,
        target: &Url,
        robots_url: &Url,
    ) -> Result<RobotsFetch, AnalysisError> {
        let no_time = || AnalysisError::NoTime {
            url: robots_url.clone(),
            budget: self.limits.analysis_budget,
        };
        let check = self
            .polite
            .check_robots(target, BOT, &self.operation)
            .await
            .map_err(|_| no_time())?;
        // The first check of a fresh lifecycle always fetches; without a fetch there was no
        // time for one.
        let fetched = check.fetched.ok_or_else(no_time)?;
        if let Some(error) = refused_before_contact(&fetched) {
            return Err(AnalysisError::NotContacted {
                url: robots_url.clone(),
                source: error.clone(),
            });
        }
        tracing::debug!(outcome = %fetched.outcome, status = ?fetched.status, "robots.txt");
        let records = records::robots(&fetched, Purpose::Robots, self.analysed_at);
        self.requests.extend(records);
        Ok(fetched)
    }

    /// Requests `url` as the bot within `operation` (the analysis's, or a narrower phase of
    /// it), reading at most `max_body_bytes`, and records every request made or not made.
    pub(crate) async fn request(
        &mut self,
        url: &Url,
        purpose: Purpose,
        max_body_bytes: usize,
        operation: &Operation,
    ) -> Obtained {
        let request = Request::get(url.clone())
            .max_body_bytes(max_body_bytes)
            .max_redirects(self.limits.max_redirects);
        let span = tracing::debug_span!("request", %url, ?purpose);
        let response = self
            .polite
            .fetch(PoliteRequest::new(request, BOT), operation)
            .instrument(span)
            .await;
        let (obtained, records) = self.conclude(url, purpose, response, operation);
        self.requests.extend(records);
        tracing::debug!(
            %url,
            ?purpose,
            answered = obtained.response.is_some(),
            skipped = ?obtained.skipped,
            failed = ?obtained.failure.as_ref().map(RequestFailed::kind),
            "request"
        );
        obtained
    }

    /// What a polite request came to, and its records.
    fn conclude(
        &self,
        url: &Url,
        purpose: Purpose,
        response: fetch::PoliteResponse,
        operation: &Operation,
    ) -> (Obtained, Vec<RequestRecord>) {
        let trail = response.trail;
        let origin = self.analysed_at;
        let mut obtained = Obtained {
            response: None,
            requested: !trail.exchanges.is_empty(),
            final_url: None,
            redirects: trail.redirects.iter().map(Hop::from).collect(),
            failure: None,
            skipped: None,
        };
        let records = match response.outcome {
            Outcome::Fetched(fetched) => {
                obtained.final_url = Some(fetched.url.clone());
                obtained.response = Some(fetched);
                records::polite(&trail, purpose, End::Answered, origin)
            }
            Outcome::Skipped {
                url: skipped,
                reason,
            } => {
                let reason = if robots_cut(&trail, &reason, operation) {
                    self.deadline_reason(operation)
                } else {
                    self.skip_reason(reason, operation)
                };
                let end = End::Skipped {
                    url: &skipped,
                    reason: &reason,
                };
                let records = records::polite(&trail, purpose, end, origin);
                if !obtained.redirects.is_empty() {
                    obtained.final_url = Some(skipped);
                }
                obtained.skipped = Some(reason);
                records
            }
            Outcome::Failed(error) => {
                let failed_url = records::after_hops(url, &trail.redirects);
                let end = End::Failed {
                    url: &failed_url,
                    error: &error,
                };
                let records = records::polite(&trail, purpose, end, origin);
                self.failed(&mut obtained, failed_url, error, operation);
                records
            }
        };
        (obtained, records)
    }

    /// A request that failed at `failed_url`: a fault of the site, or only the analysis's
    /// own deadline cutting it (then reported as not checked for that budget).
    fn failed(
        &self,
        obtained: &mut Obtained,
        failed_url: Url,
        error: FetchError,
        operation: &Operation,
    ) {
        obtained.requested = true;
        match self.budget_cut(&error, operation) {
            Some(reason) => obtained.skipped = Some(reason),
            None => {
                obtained.failure = Some(RequestFailed {
                    url: failed_url.clone(),
                    source: error,
                })
            }
        }
        obtained.final_url = Some(failed_url);
    }

    /// Records a request not made (the caps and budgets the analysis checks itself).
    pub(crate) fn record_skip(&mut self, url: &Url, purpose: Purpose, reason: &SkipReason) {
        let at_ms = self.now_ms();
        self.requests
            .push(records::skipped(url, purpose, at_ms, reason));
    }

    /// The budget that stops requests within `operation`: the sitemap phase's own, when it
    /// ends first, else the whole analysis's.
    pub(crate) fn deadline_reason(&self, operation: &Operation) -> SkipReason {
        if operation.deadline.instant() < self.operation.deadline.instant() {
            SkipReason::TimeBudget {
                budget_ms: millis(self.limits.sitemap_time_budget),
            }
        } else {
            SkipReason::AnalysisBudget {
                budget_ms: millis(self.limits.analysis_budget),
            }
        }
    }

    /// A failure that is only the analysis's own deadline cutting a request: reported as
    /// not checked for that budget, not as a fault of the site.
    pub(crate) fn budget_cut(
        &self,
        error: &FetchError,
        operation: &Operation,
    ) -> Option<SkipReason> {
        matches!(
            error,
            FetchError::Timeout {
                phase: TimeoutPhase::Deadline
            }
        )
        .then(|| self.deadline_reason(operation))
    }

    /// The fetcher's reason for not making a request, in the report's words.
    fn skip_reason(&self, reason: fetch::SkipReason, operation: &Operation) -> SkipReason {
        match reason {
            fetch::SkipReason::Disallowed {
                robots_url,
                line,
                rule,
            } => SkipReason::Disallowed {
                robots_url,
                line,
                rule,
            },
            fetch::SkipReason::RobotsUnreachable { robots_url, .. } => {
                SkipReason::RobotsUnreachable { robots_url }
            }
            fetch::SkipReason::Pacing(PaceSkip::WaitBudget { needed, .. }) => {
                SkipReason::CrawlDelayBudget {
                    wait_ms: millis(needed),
                    budget_ms: millis(self.limits.crawl_delay_budget),
                }
            }
            // The analysis's pacer never pauses an origin and sets no longest wait, so only
            // the deadline is left.
            fetch::SkipReason::Pacing(_) => self.deadline_reason(operation),
            fetch::SkipReason::OutOfScope | fetch::SkipReason::NotFetchable => {
                SkipReason::InvalidUrl
            }
        }
    }
}

/// Whether a request skipped because its host's robots.txt is unreachable was only cut by
/// the deadline of `operation`: that robots.txt fetch ran out of the analysis's time (not a
/// fault of the site), or the time was up anyway.
fn robots_cut(trail: &fetch::Trail, reason: &fetch::SkipReason, operation: &Operation) -> bool {
    let out_of_time = |fetched: &RobotsFetch| {
        matches!(
            fetched.error,
            Some(FetchError::Timeout {
                phase: TimeoutPhase::Deadline
            })
        )
    };
    matches!(reason, fetch::SkipReason::RobotsUnreachable { .. })
        && (operation.deadline.is_expired() || trail.robots_fetches.iter().any(out_of_time))
}

/// The failure of a body in a content coding that was not asked for (`zstd`, unknown): it
/// is not read as HTML or as a sitemap, where its bytes would be garbage.
pub(crate) fn unreadable(fetched: &Fetched) -> Option<RequestFailed> {
    match fetched.body.coding() {
        ContentCoding::Unsupported(encoding) => Some(RequestFailed {
            url: fetched.url.clone(),
            source: FetchError::UnsupportedEncoding {
                encoding: encoding.clone(),
            },
        }),
        _ => None,
    }
}

/// The address policy's refusal of the site's own address, when that stopped the first
/// request: nothing was sent to the site.
fn refused_before_contact(fetched: &RobotsFetch) -> Option<&FetchError> {
    fetched
        .error
        .as_ref()
        .filter(|error| error.kind() == ErrorKind::AddressRefused && fetched.redirects.is_empty())
}
