//! How robots.txt was served: the findings only a fetch reveals, and the robots.txt report.

use http::StatusCode;
use robots::RobotsTxt;
use url::Url;

use crate::catalogue::CheckId;
use crate::collect::Findings;
use crate::file::{looks_like_html, summary_of, HtmlKind};
use crate::finding::{Evidence, Finding};
use crate::limits::Limits;
use crate::net::HttpResponse;
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
        url: Some(fetched.robots_url.clone()),
        requested: true,
        outcome: status,
        status: response.and_then(|response| StatusCode::from_u16(response.status).ok()),
        final_url: fetched.final_url.clone(),
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

/// What the way robots.txt was served reveals: failures, redirects, statuses, headers.
pub(crate) fn robots_fetch_findings(
    fetched: &RobotsFetched,
    target: &Url,
    limits: &Limits,
    findings: &mut Findings,
) {
    let url = fetched.robots_url.to_string();
    if let Some(error) = &fetched.error {
        findings.push(
            Finding::new(
                CheckId::FetchUnreachable,
                Evidence::text(&error.message).at_url(&url),
            )
            .with("failure", error.kind),
        );
        return;
    }
    redirect_findings(fetched, target, limits, findings);
    if fetched.too_many_redirects {
        return;
    }
    if let Some(response) = &fetched.response {
        status_findings(response, &url, limits, findings);
    }
}

fn redirect_findings(
    fetched: &RobotsFetched,
    target: &Url,
    limits: &Limits,
    findings: &mut Findings,
) {
    let Some(first) = fetched.redirects.first() else {
        return;
    };
    let chain: Vec<String> = fetched
        .redirects
        .iter()
        .map(|hop| format!("{} {} -> {}", hop.status.as_u16(), hop.url, hop.location))
        .collect();
    findings.push(
        Finding::new(
            CheckId::FetchRedirected,
            Evidence::text(chain.join("; ")).at_url(first.url.as_str()),
        )
        .with("hops", fetched.redirects.len()),
    );
    if fetched.too_many_redirects {
        let path: Vec<&str> = fetched
            .redirects
            .iter()
            .map(|hop| hop.url.as_str())
            .collect();
        findings.push(
            Finding::new(
                CheckId::FetchTooManyRedirects,
                Evidence::text(path.join(" -> ")).at_url(fetched.robots_url.as_str()),
            )
            .with("hops", fetched.redirects.len())
            .with("max_redirects", limits.robots_max_redirects)
            // Stopped before the limit: the next hop was one already made.
            .with(
                "looped",
                fetched.redirects.len() <= limits.robots_max_redirects,
            ),
        );
        return;
    }
    let host = |url: &Url| url.host_str().unwrap_or_default().to_ascii_lowercase();
    if let Some(final_url) = &fetched.final_url {
        if host(final_url) != host(target) {
            findings.push(
                Finding::new(
                    CheckId::FetchRedirectOtherHost,
                    Evidence::url(final_url.as_str()),
                )
                .with("from_host", host(target))
                .with("to_host", host(final_url)),
            );
        }
    }
}

/// The findings of the final answer's status and headers.
fn status_findings(response: &HttpResponse, url: &str, limits: &Limits, findings: &mut Findings) {
    let challenge_header = response
        .header("cf-mitigated")
        .is_some_and(|value| value.eq_ignore_ascii_case("challenge"));
    let html = looks_like_html(&response.body);
    let challenge = challenge_header || html == Some(HtmlKind::Challenge);
    let status = response.status;
    let at_status = |id: CheckId| {
        Finding::new(id, Evidence::text(format!("HTTP {status}")).at_url(url))
            .with("status", status)
    };
    let finding = match status {
        200..=299 => {
            success_findings(
                response,
                url,
                limits,
                challenge_header,
                html.is_some(),
                findings,
            );
            return;
        }
        429 => at_status(CheckId::FetchRateLimited),
        500..=599 => {
            if challenge {
                findings.push(at_status(CheckId::FetchChallenge));
            }
            at_status(CheckId::FetchServerError)
        }
        401 | 403 if challenge => at_status(CheckId::FetchChallenge),
        401 | 403 => at_status(CheckId::FetchForbidden),
        404 | 410 => at_status(CheckId::FetchNotFound),
        400..=499 => at_status(CheckId::FetchOtherClientError),
        // 3xx here has no usable Location (the run follows the others); 1xx, 6xx and above are
        // no answer a crawler can use. All of them are read as a server error.
        300..=399 => at_status(CheckId::FetchUnexpectedStatus).with("no_location", true),
        _ => at_status(CheckId::FetchUnexpectedStatus),
    };
    findings.push(finding);
}

/// The findings of a 2xx answer: challenge, size, content type, X-Robots-Tag.
fn success_findings(
    response: &HttpResponse,
    url: &str,
    limits: &Limits,
    challenge_header: bool,
    is_html: bool,
    findings: &mut Findings,
) {
    if challenge_header && !is_html {
        findings.push(
            Finding::new(
                CheckId::FetchChallenge,
                Evidence::header("cf-mitigated", "challenge"),
            )
            .with("status", response.status),
        );
    }
    if response.truncated {
        findings.push(
            Finding::new(CheckId::FetchTooLarge, Evidence::url(url))
                .with("limit", limits.robots_max_bytes),
        );
    }
    match response.header("content-type") {
        None => findings.push(Finding::new(
            CheckId::FetchNoContentType,
            Evidence::url(url),
        )),
        Some(content_type) => {
            let essence = content_type
                .split(';')
                .next()
                .unwrap_or_default()
                .trim()
                .to_ascii_lowercase();
            if essence != "text/plain" && !is_html {
                findings.push(
                    Finding::new(
                        CheckId::FetchContentType,
                        Evidence::header("Content-Type", content_type),
                    )
                    .with("content_type", essence),
                );
            }
        }
    }
    if let Some(tag) = response.header_values("x-robots-tag").first() {
        findings.push(Finding::new(
            CheckId::FetchRobotsNoindex,
            Evidence::header("X-Robots-Tag", tag),
        ));
    }
}
