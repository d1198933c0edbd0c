//! How robots.txt was served: the findings only a fetch reveals, and the robots.txt report.

use fetch::{
    FetchError, RedirectError, RobotsFetch, ROBOTS_TXT_MAX_BYTES, ROBOTS_TXT_MAX_REDIRECTS,
};
use http::HeaderMap;
use robots::RobotsTxt;
use url::Url;

use crate::catalogue::CheckId;
use crate::collect::Findings;
use crate::crawlers;
use crate::file::{looks_like_html, summary_of, HtmlKind};
use crate::finding::{Evidence, Finding};
use crate::report::{Hop, RobotsReport, RobotsStatus};

/// The robots.txt part of the report.
pub(crate) fn robots_report(fetched: &RobotsFetch, robots: &RobotsTxt) -> RobotsReport {
    let status = RobotsStatus::from(fetched.outcome);
    let body = fetched.body.as_slice();
    let (text, body_is_utf8, raw_body) = crate::report::body_fields(body);
    RobotsReport {
        url: Some(fetched.robots_url.clone()),
        requested: true,
        outcome: status,
        status: fetched.status,
        final_url: fetched.final_url.clone(),
        redirects: fetched.redirects.iter().map(Hop::from).collect(),
        content_type: fetched.content_type.clone(),
        size: body.len(),
        truncated: fetched.truncated,
        body: text,
        body_is_utf8,
        raw_body,
        x_robots_tag: fetched.x_robots_tag.clone(),
        error: fetched.error.as_ref().map(FetchError::full_message),
        error_kind: fetched.error.as_ref().map(FetchError::kind),
        retry_after_s: fetched.retry_after.map(|after| after.as_secs()),
        retry_after_sent_s: fetched.retry_after_sent.map(|after| after.as_secs()),
        summary: (status == RobotsStatus::Rules).then(|| summary_of(robots)),
        crawl_delay: (status == RobotsStatus::Rules)
            .then(|| robots.rules_for(&crawlers::BOT_TOKENS).crawl_delay())
            .flatten()
            .map(|delay| delay.seconds),
    }
}

/// The headers of the final answer, as received.
fn final_headers(fetched: &RobotsFetch) -> Option<&HeaderMap> {
    fetched
        .exchanges
        .last()
        .map(|exchange| &exchange.head.headers)
}

/// The first value of header `name`, lossily decoded.
fn header(headers: Option<&HeaderMap>, name: &str) -> Option<String> {
    headers
        .and_then(|headers| headers.get(name))
        .map(|value| String::from_utf8_lossy(value.as_bytes()).into_owned())
}

/// What the way robots.txt was served reveals: failures, redirects, statuses, headers.
pub(crate) fn robots_fetch_findings(fetched: &RobotsFetch, target: &Url, findings: &mut Findings) {
    let url = fetched.robots_url.to_string();
    redirect_findings(fetched, target, findings);
    match &fetched.error {
        Some(FetchError::Redirect { error, .. }) => {
            redirect_failure(error, fetched, &url, findings)
        }
        Some(error) => findings.push(
            Finding::new(
                CheckId::FetchUnreachable,
                Evidence::text(error.full_message()).at_url(&url),
            )
            .with("failure", error.kind()),
        ),
        None => status_findings(fetched, &url, findings),
    }
}

/// A redirect chain that led nowhere: too long, a loop, or a redirect the bot cannot follow.
fn redirect_failure(
    error: &RedirectError,
    fetched: &RobotsFetch,
    url: &str,
    findings: &mut Findings,
) {
    let hops = fetched.redirects.len();
    let looped = matches!(error, RedirectError::Loop { .. });
    if matches!(error, RedirectError::TooMany { .. }) || looped {
        let path: Vec<&str> = fetched
            .redirects
            .iter()
            .map(|hop| hop.url.as_str())
            .collect();
        findings.push(
            Finding::new(
                CheckId::FetchTooManyRedirects,
                Evidence::text(path.join(" -> ")).at_url(url),
            )
            .with("hops", hops)
            .with("max_redirects", ROBOTS_TXT_MAX_REDIRECTS)
            .with("looped", looped),
        );
        return;
    }
    // No Location, or one the bot cannot follow: the 3xx is the answer, read as a 5xx.
    let status = fetched.redirects.last().map(|hop| hop.status.as_u16());
    let finding = Finding::new(
        CheckId::FetchUnexpectedStatus,
        Evidence::text(error.to_string()).at_url(url),
    )
    .with("no_location", true);
    findings.push(match status {
        Some(status) => finding.with("status", status),
        None => finding,
    });
}

fn redirect_findings(fetched: &RobotsFetch, target: &Url, findings: &mut Findings) {
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
fn status_findings(fetched: &RobotsFetch, url: &str, findings: &mut Findings) {
    let Some(status) = fetched.status.map(|status| status.as_u16()) else {
        return;
    };
    let headers = final_headers(fetched);
    let challenge_header =
        header(headers, "cf-mitigated").is_some_and(|v| v.eq_ignore_ascii_case("challenge"));
    let html = looks_like_html(&fetched.body);
    let challenge = challenge_header || html == Some(HtmlKind::Challenge);
    let at_status = |id: CheckId| {
        Finding::new(id, Evidence::text(format!("HTTP {status}")).at_url(url))
            .with("status", status)
    };
    let finding = match status {
        200..=299 => {
            success_findings(fetched, url, challenge_header, html.is_some(), findings);
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
        // 1xx, 3xx that do not redirect (300, 304...), 6xx and above: no answer a crawler can
        // use, read as a server error.
        _ => at_status(CheckId::FetchUnexpectedStatus),
    };
    findings.push(finding);
}

/// The findings of a 2xx answer: challenge, size, content type, X-Robots-Tag.
fn success_findings(
    fetched: &RobotsFetch,
    url: &str,
    challenge_header: bool,
    is_html: bool,
    findings: &mut Findings,
) {
    if challenge_header && !is_html {
        let status = fetched.status.map_or(0, |status| status.as_u16());
        findings.push(
            Finding::new(
                CheckId::FetchChallenge,
                Evidence::header("cf-mitigated", "challenge"),
            )
            .with("status", status),
        );
    }
    if fetched.truncated {
        findings.push(
            Finding::new(CheckId::FetchTooLarge, Evidence::url(url))
                .with("limit", ROBOTS_TXT_MAX_BYTES),
        );
    }
    match &fetched.content_type {
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
    if let Some(tag) = fetched.x_robots_tag.first() {
        findings.push(Finding::new(
            CheckId::FetchRobotsNoindex,
            Evidence::header("X-Robots-Tag", tag),
        ));
    }
}
