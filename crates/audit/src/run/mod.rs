//! The network run of one analysis: robots.txt first, then each request only where the rules of
//! its host allow it, paced by the crawl-delay, redirects followed hop by hop.

mod pacer;

use std::collections::HashMap;
use std::time::Duration;

use http::StatusCode;
use robots::{AgentRules, RobotsTxt};
use tokio::time::Instant;
use url::Url;

use crate::crawlers;
use crate::limits::Limits;
use crate::net::{GetRequest, HttpResponse, Transport, TransportError};
use crate::report::{Hop, Purpose, RequestRecord, RobotsStatus, SkipReason};

pub(crate) use pacer::{millis, Pacer};

/// The rules of one origin, as read during the analysis.
#[derive(Debug, Clone)]
pub(crate) enum HostRules {
    Rules(Box<RobotsTxt>),
    NoFile,
    Unreachable,
}

/// A robots.txt fetch, following redirects.
pub(crate) struct RobotsFetched {
    pub(crate) robots_url: Url,
    pub(crate) response: Option<HttpResponse>,
    pub(crate) final_url: Option<Url>,
    pub(crate) redirects: Vec<Hop>,
    pub(crate) error: Option<TransportError>,
    pub(crate) too_many_redirects: bool,
}

impl RobotsFetched {
    pub(crate) fn status(&self) -> RobotsStatus {
        match &self.response {
            _ if self.too_many_redirects || self.error.is_some() => RobotsStatus::Unreachable,
            Some(response) => match response.status {
                200..=299 => RobotsStatus::Rules,
                429 => RobotsStatus::RateLimited,
                400..=499 => RobotsStatus::NoFile,
                _ => RobotsStatus::Unreachable,
            },
            None => RobotsStatus::Unreachable,
        }
    }
}

/// A request made through the rules, following redirects hop by hop.
pub(crate) struct Obeyed {
    pub(crate) response: Option<HttpResponse>,
    pub(crate) final_url: Option<Url>,
    pub(crate) redirects: Vec<Hop>,
    pub(crate) error: Option<TransportError>,
    pub(crate) skipped: Option<SkipReason>,
}

pub(crate) struct Run<'a, T: Transport> {
    pub(crate) transport: &'a T,
    pub(crate) limits: &'a Limits,
    pub(crate) started: Instant,
    pub(crate) pacer: Pacer,
    pub(crate) requests: Vec<RequestRecord>,
    pub(crate) hosts: HashMap<String, HostRules>,
}

pub(crate) fn origin_key(url: &Url) -> String {
    url.origin().ascii_serialization()
}

/// The robots.txt that governs `url` (its scheme, host and port), as the fetcher scopes it.
pub(crate) fn robots_url_of(url: &Url) -> Option<Url> {
    fetch::robots_txt_url(url).ok()
}

pub(crate) fn bot_rules(rules: &HostRules) -> Option<AgentRules> {
    match rules {
        HostRules::Rules(robots) => Some(robots.rules_for(&crawlers::BOT_TOKENS)),
        _ => None,
    }
}

impl<'a, T: Transport> Run<'a, T> {
    fn at_ms(&self, at: Instant) -> u64 {
        millis(at.saturating_duration_since(self.started))
    }

    /// The skip of a request that would start past the deadline (the sitemap budget's).
    fn time_budget(&self) -> SkipReason {
        SkipReason::TimeBudget {
            budget_ms: millis(self.limits.sitemap_time_budget),
        }
    }

    pub(crate) fn record_skip(&mut self, url: &Url, purpose: Purpose, reason: SkipReason) {
        let at_ms = self.at_ms(Instant::now());
        self.requests.push(RequestRecord {
            url: url.clone(),
            purpose,
            at_ms,
            waited_ms: 0,
            status: None,
            error: None,
            skipped: Some(reason),
        });
    }

    /// One GET, recorded.
    async fn get(
        &mut self,
        url: &Url,
        purpose: Purpose,
        max_body_bytes: usize,
        stop_marker: Option<&[u8]>,
        waited: Duration,
    ) -> Result<HttpResponse, TransportError> {
        let at_ms = self.at_ms(Instant::now());
        let result = self
            .transport
            .get(GetRequest {
                url: url.clone(),
                max_body_bytes,
                stop_marker: stop_marker.map(<[u8]>::to_vec),
            })
            .await;
        self.requests.push(RequestRecord {
            url: url.clone(),
            purpose,
            at_ms,
            waited_ms: millis(waited),
            status: result.as_ref().ok().and_then(HttpResponse::status_code),
            error: result.as_ref().err().map(ToString::to_string),
            skipped: None,
        });
        result
    }

    /// Fetches a robots.txt fresh, following up to the redirect limit.
    pub(crate) async fn fetch_robots(
        &mut self,
        robots_url: Url,
        purpose: Purpose,
    ) -> RobotsFetched {
        let mut url = robots_url.clone();
        let mut redirects = Vec::new();
        let start = Instant::now();
        self.pacer.record(&origin_key(&url), Duration::ZERO, start);
        loop {
            match self
                .get(
                    &url,
                    purpose,
                    self.limits.robots_max_bytes,
                    None,
                    Duration::ZERO,
                )
                .await
            {
                Err(error) => {
                    return RobotsFetched {
                        robots_url,
                        response: None,
                        final_url: None,
                        redirects,
                        error: Some(error),
                        too_many_redirects: false,
                    }
                }
                Ok(response) => {
                    let next = response
                        .redirect_location()
                        .and_then(|location| url.join(location.trim()).ok())
                        .filter(|next| matches!(next.scheme(), "http" | "https"));
                    let Some(next) = next else {
                        return RobotsFetched {
                            robots_url,
                            response: Some(response),
                            final_url: Some(url),
                            redirects,
                            error: None,
                            too_many_redirects: false,
                        };
                    };
                    redirects.push(Hop {
                        url: url.clone(),
                        status: response.status_code().unwrap_or(StatusCode::FOUND),
                        location: response.redirect_location().unwrap_or_default().to_owned(),
                    });
                    let looped = redirects.iter().any(|hop| hop.url == next);
                    if redirects.len() > self.limits.robots_max_redirects || looped {
                        return RobotsFetched {
                            robots_url,
                            response: Some(response),
                            final_url: Some(url),
                            redirects,
                            error: None,
                            too_many_redirects: true,
                        };
                    }
                    url = next;
                }
            }
        }
    }

    /// The rules of `url`'s origin, reading that origin's robots.txt first if need be.
    async fn host_rules(
        &mut self,
        url: &Url,
        deadline: Option<Instant>,
    ) -> Result<HostRules, SkipReason> {
        let key = origin_key(url);
        if let Some(rules) = self.hosts.get(&key) {
            return Ok(rules.clone());
        }
        let Some(robots_url) = robots_url_of(url) else {
            return Err(SkipReason::InvalidUrl);
        };
        if deadline.is_some_and(|deadline| Instant::now() >= deadline) {
            let reason = self.time_budget();
            self.record_skip(&robots_url, Purpose::HostRobots, reason.clone());
            return Err(reason);
        }
        let fetched = self.fetch_robots(robots_url, Purpose::HostRobots).await;
        let rules = match fetched.status() {
            RobotsStatus::Rules => HostRules::Rules(Box::new(RobotsTxt::parse(
                fetched
                    .response
                    .as_ref()
                    .map_or(&[][..], |r| r.body.as_slice()),
            ))),
            RobotsStatus::NoFile => HostRules::NoFile,
            _ => HostRules::Unreachable,
        };
        self.hosts.insert(key, rules.clone());
        Ok(rules)
    }

    /// Requests `url` only where the rules allow, waiting for the crawl-delay, following
    /// redirects hop by hop (each hop checked against its own host's rules).
    pub(crate) async fn obey(
        &mut self,
        url: Url,
        purpose: Purpose,
        max_body_bytes: usize,
        stop_marker: Option<&[u8]>,
        deadline: Option<Instant>,
    ) -> Obeyed {
        let mut url = url;
        let mut redirects = Vec::new();
        let mut result = Obeyed {
            response: None,
            final_url: None,
            redirects: Vec::new(),
            error: None,
            skipped: None,
        };
        loop {
            let skip = match self.host_rules(&url, deadline).await {
                Err(reason) => Some(reason),
                Ok(HostRules::Unreachable) => Some(
                    robots_url_of(&url).map_or(SkipReason::InvalidUrl, |robots_url| {
                        SkipReason::RobotsUnreachable { robots_url }
                    }),
                ),
                Ok(rules) => {
                    let agent = bot_rules(&rules);
                    let decision = agent
                        .as_ref()
                        .map(|agent| agent.check(url.as_str()).explain());
                    match decision {
                        Some(decision) if !decision.allowed => Some(SkipReason::Disallowed {
                            robots_url: robots_url_of(&url).unwrap_or_else(|| url.clone()),
                            line: decision.rule.as_ref().map_or(0, |rule| rule.line),
                            rule: decision
                                .rule
                                .as_ref()
                                .map(|rule| format!("{}: {}", rule.kind, rule.pattern))
                                .unwrap_or_default(),
                        }),
                        _ => {
                            let delay = agent
                                .and_then(|agent| agent.crawl_delay())
                                .map(|delay| delay.duration());
                            let now = Instant::now();
                            match self.pacer.plan(&origin_key(&url), delay, now) {
                                Err(reason) => Some(reason),
                                Ok(wait) => {
                                    let late = deadline.is_some_and(|deadline| {
                                        now.checked_add(wait).is_none_or(|start| start > deadline)
                                    });
                                    if late {
                                        Some(self.time_budget())
                                    } else {
                                        tokio::time::sleep(wait).await;
                                        let start = Instant::now();
                                        self.pacer.record(&origin_key(&url), wait, start);
                                        let response = self
                                            .get(&url, purpose, max_body_bytes, stop_marker, wait)
                                            .await;
                                        match response {
                                            Err(error) => {
                                                result.error = Some(error);
                                                result.final_url = Some(url.clone());
                                                None
                                            }
                                            Ok(response) => {
                                                let next = response
                                                    .redirect_location()
                                                    .and_then(|location| {
                                                        url.join(location.trim()).ok()
                                                    })
                                                    .filter(|next| {
                                                        matches!(next.scheme(), "http" | "https")
                                                    });
                                                match next {
                                                    Some(next)
                                                        if redirects.len()
                                                            < self.limits.max_redirects =>
                                                    {
                                                        redirects.push(Hop {
                                                            url: url.clone(),
                                                            status: response
                                                                .status_code()
                                                                .unwrap_or(StatusCode::FOUND),
                                                            location: response
                                                                .redirect_location()
                                                                .unwrap_or_default()
                                                                .to_owned(),
                                                        });
                                                        url = next;
                                                        continue;
                                                    }
                                                    _ => {
                                                        result.response = Some(response);
                                                        result.final_url = Some(url.clone());
                                                        None
                                                    }
                                                }
                                            }
                                        }
                                    }
                                }
                            }
                        }
                    }
                }
            };
            if let Some(reason) = skip {
                if !matches!(reason, SkipReason::TimeBudget { .. }) || redirects.is_empty() {
                    self.record_skip(&url, purpose, reason.clone());
                }
                result.skipped = Some(reason);
                if !redirects.is_empty() {
                    result.final_url = Some(url.clone());
                }
            }
            result.redirects = redirects;
            return result;
        }
    }
}
