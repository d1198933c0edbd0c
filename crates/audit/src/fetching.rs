//! How robots.txt was served: the findings only a fetch reveals, and the robots.txt report.

use robots::RobotsTxt;
use url::Url;

use crate::collect::Findings;
use crate::file::{looks_like_html, summary_of, HtmlKind};
use crate::finding::{CheckId, Evidence, Finding};
use crate::limits::{ROBOTS_MAX_BYTES, ROBOTS_MAX_REDIRECTS};
use crate::net::FailureKind;
use crate::report::{RobotsReport, RobotsStatus};
use crate::run::{bot_rules, HostRules, RobotsFetched};

pub(crate) fn robots_report(
    fetched: &RobotsFetched,
    status: RobotsStatus,
    robots: &RobotsTxt,
    rules: &HostRules,
) -> RobotsReport {
    let response = fetched.response.as_ref();
    let body = response.map_or(&[][..], |response| response.body.as_slice());
    RobotsReport {
        url: fetched.robots_url.to_string(),
        requested: true,
        outcome: status,
        status: response.map(|response| response.status),
        final_url: fetched.final_url.as_ref().map(ToString::to_string),
        redirects: fetched.redirects.clone(),
        content_type: response
            .and_then(|r| r.header("content-type"))
            .map(str::to_owned),
        size: body.len(),
        truncated: response.is_some_and(|response| response.truncated),
        body: String::from_utf8_lossy(body).into_owned(),
        body_is_utf8: std::str::from_utf8(body).is_ok(),
        x_robots_tag: response
            .map(|r| r.header_values("x-robots-tag"))
            .unwrap_or_default(),
        error: fetched.error.as_ref().map(ToString::to_string),
        summary: (status == RobotsStatus::Rules).then(|| summary_of(robots)),
        crawl_delay: bot_rules(rules)
            .and_then(|agent| agent.crawl_delay())
            .map(|delay| delay.seconds),
    }
}

pub(crate) fn robots_fetch_findings(
    fetched: &RobotsFetched,
    target: &Url,
    findings: &mut Findings,
) {
    let url = fetched.robots_url.to_string();
    let at = |text: String| Evidence {
        url: Some(url.clone()),
        ..Evidence::text(text)
    };
    if let Some(error) = &fetched.error {
        let what = match error.kind {
            FailureKind::Dns => "the host name does not resolve",
            FailureKind::Timeout => "the request timed out",
            FailureKind::Connect => "the connection failed",
            FailureKind::Tls => "TLS failed",
            FailureKind::AddressRefused => "the address is private and was not contacted",
            FailureKind::Malformed => "the answer is not valid HTTP",
            FailureKind::InvalidUrl | FailureKind::Other => "the request failed",
        };
        findings.push(Finding::new(
            CheckId::FetchUnreachable,
            format!("robots.txt could not be fetched: {what}"),
            at(error.message.clone()),
        ));
        return;
    }
    let target_host = target.host_str().unwrap_or_default().to_ascii_lowercase();
    if let Some(hop) = fetched.redirects.first() {
        let chain: Vec<String> = fetched
            .redirects
            .iter()
            .map(|hop| format!("{} {} -> {}", hop.status, hop.url, hop.location))
            .collect();
        findings.push(Finding::new(
            CheckId::FetchRedirected,
            format!("robots.txt redirects ({} hop(s))", fetched.redirects.len()),
            Evidence {
                url: Some(hop.url.clone()),
                ..Evidence::text(chain.join("; "))
            },
        ));
    }
    if fetched.too_many_redirects {
        findings.push(Finding::new(
            CheckId::FetchTooManyRedirects,
            format!(
                "robots.txt redirects more than {ROBOTS_MAX_REDIRECTS} times (or loops); it is treated as unreachable"
            ),
            at(fetched
                .redirects
                .iter()
                .map(|hop| hop.url.as_str())
                .collect::<Vec<_>>()
                .join(" -> ")),
        ));
        return;
    }
    if let Some(final_url) = &fetched.final_url {
        let final_host = final_url
            .host_str()
            .unwrap_or_default()
            .to_ascii_lowercase();
        if !fetched.redirects.is_empty() && final_host != target_host {
            findings.push(Finding::new(
                CheckId::FetchRedirectOtherHost,
                format!("robots.txt of {target_host} redirects to {final_host}"),
                Evidence::url(final_url.to_string()),
            ));
        }
    }
    let Some(response) = &fetched.response else {
        return;
    };
    let challenge_header = response
        .header("cf-mitigated")
        .is_some_and(|value| value.eq_ignore_ascii_case("challenge"));
    let html = looks_like_html(&response.body);
    let status = response.status;
    match status {
        200..=299 => {
            if challenge_header && html.is_none() {
                findings.push(Finding::new(
                    CheckId::FetchChallenge,
                    "robots.txt is answered with a bot challenge",
                    Evidence::header("cf-mitigated", "challenge"),
                ));
            }
            if response.truncated {
                findings.push(Finding::new(
                    CheckId::FetchTooLarge,
                    format!(
                        "robots.txt is larger than {ROBOTS_MAX_BYTES} bytes; the rest is ignored"
                    ),
                    Evidence::url(url.clone()),
                ));
            }
            match response.header("content-type") {
                None => findings.push(Finding::new(
                    CheckId::FetchNoContentType,
                    "robots.txt is served without a Content-Type",
                    Evidence::url(url.clone()),
                )),
                Some(content_type) => {
                    let essence = content_type
                        .split(';')
                        .next()
                        .unwrap_or_default()
                        .trim()
                        .to_ascii_lowercase();
                    if essence != "text/plain" && html.is_none() {
                        findings.push(Finding::new(
                            CheckId::FetchContentType,
                            format!("robots.txt is served as {essence}"),
                            Evidence::header("Content-Type", content_type),
                        ));
                    }
                }
            }
            let tags = response.header_values("x-robots-tag");
            if let Some(tag) = tags.first() {
                findings.push(Finding::new(
                    CheckId::FetchRobotsNoindex,
                    "robots.txt is sent with an X-Robots-Tag header",
                    Evidence::header("X-Robots-Tag", tag),
                ));
            }
        }
        429 => findings.push(Finding::new(
            CheckId::FetchRateLimited,
            "robots.txt answers 429: every path is treated as disallowed",
            at(format!("HTTP {status}")),
        )),
        500..=599 => {
            findings.push(Finding::new(
                CheckId::FetchServerError,
                format!("robots.txt answers {status}: every path is treated as disallowed"),
                at(format!("HTTP {status}")),
            ));
            if challenge_header || html == Some(HtmlKind::Challenge) {
                findings.push(Finding::new(
                    CheckId::FetchChallenge,
                    "robots.txt is answered with a bot challenge",
                    Evidence::url(url.clone()),
                ));
            }
        }
        401 | 403 if challenge_header || html == Some(HtmlKind::Challenge) => {
            findings.push(Finding::new(
                CheckId::FetchChallenge,
                format!("robots.txt answers {status} with a bot challenge; crawlers get no rules"),
                at(format!("HTTP {status}")),
            ))
        }
        401 | 403 => findings.push(Finding::new(
            CheckId::FetchForbidden,
            format!("robots.txt answers {status}: major crawlers read that as no rules at all"),
            at(format!("HTTP {status}")),
        )),
        404 | 410 => findings.push(Finding::new(
            CheckId::FetchNotFound,
            format!("robots.txt answers {status}: no rules, every path may be crawled"),
            at(format!("HTTP {status}")),
        )),
        400..=499 => findings.push(Finding::new(
            CheckId::FetchOtherClientError,
            format!("robots.txt answers {status}: crawlers read that as no rules"),
            at(format!("HTTP {status}")),
        )),
        _ => findings.push(Finding::new(
            CheckId::FetchUnexpectedStatus,
            format!("robots.txt answers {status}; it is treated as unreachable"),
            at(format!("HTTP {status}")),
        )),
    }
}
