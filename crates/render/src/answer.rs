//! Answering a paused request: fulfilled with a response the caller made, or failed in the
//! browser. Answers are best effort: a tab closing meanwhile makes them fail harmlessly.

use base64::Engine;
use chromiumoxide::cdp::browser_protocol::fetch::{
    FailRequestParams, FulfillRequestParams, HeaderEntry, RequestId,
};
use chromiumoxide::cdp::browser_protocol::network::ErrorReason;
use chromiumoxide::Page;
use tokio::time::Instant;

use crate::gate::GateResponse;

/// Response headers never handed to the browser: the body is given decoded and whole, so
/// its coding, length and framing no longer apply.
const DROPPED_HEADERS: &[&str] = &[
    "content-encoding",
    "content-length",
    "transfer-encoding",
    "connection",
    "keep-alive",
];

/// The headers given to the browser (values that are not visible ASCII are left out).
pub(crate) fn browser_headers(response: &GateResponse) -> Vec<HeaderEntry> {
    response
        .headers
        .iter()
        .filter(|(name, _)| !DROPPED_HEADERS.contains(&name.as_str()))
        .filter_map(|(name, value)| Some(HeaderEntry::new(name.as_str(), value.to_str().ok()?)))
        .collect()
}

/// Fulfil request `id` with `response` (waiting for the browser at most until `until`).
pub(crate) async fn fulfill(page: &Page, id: RequestId, response: &GateResponse, until: Instant) {
    let mut params = FulfillRequestParams::new(id, i64::from(response.status.as_u16()));
    params.response_headers = Some(browser_headers(response));
    params.body = Some(
        base64::prelude::BASE64_STANDARD
            .encode(&response.body)
            .into(),
    );
    params.response_phrase = Some(
        response
            .status
            .canonical_reason()
            .unwrap_or("Unknown")
            .to_string(),
    );
    match tokio::time::timeout_at(until, page.execute(params)).await {
        Ok(Ok(_)) => {}
        Ok(Err(e)) => tracing::debug!(error = %e, "fulfilling a request"),
        Err(_) => tracing::debug!("fulfilling a request: the page's time ran out"),
    }
}

/// Fail request `id` in the browser (nothing is sent anywhere; waiting for the browser at
/// most until `until`).
pub(crate) async fn fail(page: &Page, id: RequestId, until: Instant) {
    let params = FailRequestParams::new(id, ErrorReason::BlockedByClient);
    match tokio::time::timeout_at(until, page.execute(params)).await {
        Ok(Ok(_)) => {}
        Ok(Err(e)) => tracing::debug!(error = %e, "failing a request"),
        Err(_) => tracing::debug!("failing a request: the page's time ran out"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn coding_and_length_headers_are_not_given_to_the_browser() {
        let mut headers = http::HeaderMap::new();
        headers.insert("content-encoding", "gzip".parse().unwrap());
        headers.insert("content-length", "12".parse().unwrap());
        headers.insert("content-type", "text/html".parse().unwrap());
        headers.insert("x-bin", http::HeaderValue::from_bytes(b"\xff").unwrap());
        let response = GateResponse {
            status: http::StatusCode::OK,
            headers,
            body: Vec::new(),
        };
        let given: Vec<(String, String)> = browser_headers(&response)
            .into_iter()
            .map(|h| (h.name, h.value))
            .collect();
        assert_eq!(given, vec![("content-type".into(), "text/html".into())]);
    }
}
