//! Cross-site posts are refused.
//!
//! A page on another site can make a visitor's browser post a form here (a paste, an analysis
//! of any URL) under the visitor's address, spending the visitor's quota. Browsers say where a
//! request comes from: `Sec-Fetch-Site` (every current browser) and `Origin` (on every post).
//! A `POST` whose `Sec-Fetch-Site` is `cross-site`, or whose `Origin` is neither the service's
//! public address nor the `Host` it was sent to, is answered `403`. Requests without either
//! header (curl, scripts: the API's clients) are not browsers' cross-site posts and pass.

use axum::extract::{Request, State};
use axum::http::{header, HeaderMap, Method, StatusCode};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use url::Url;

use crate::service::Service;

/// Whether a request with `headers` was sent by a browser from another site
/// (`public`: the service's public address).
pub fn is_cross_site(headers: &HeaderMap, public: &Url) -> bool {
    if let Some(site) = headers.get("sec-fetch-site") {
        // `same-origin`, `same-site` (a subdomain of the operator's) and `none` (typed or
        // bookmarked) are the visitor's own doing.
        return site.as_bytes().eq_ignore_ascii_case(b"cross-site");
    }
    let Some(origin) = headers.get(header::ORIGIN) else {
        return false;
    };
    let Ok(origin) = origin.to_str() else {
        return true;
    };
    // `null` (a sandboxed frame, a file, a redirect across sites) is no origin of ours.
    let Ok(origin) = Url::parse(origin) else {
        return true;
    };
    if origin.origin() == public.origin() {
        return false;
    }
    let host = headers.get(header::HOST).and_then(|h| h.to_str().ok());
    let origin_host = match (origin.host_str(), origin.port()) {
        (Some(host), Some(port)) => format!("{host}:{port}"),
        (Some(host), None) => host.to_owned(),
        (None, _) => return true,
    };
    host.is_none_or(|host| !host.eq_ignore_ascii_case(&origin_host))
}

/// Middleware: a cross-site `POST` is answered `403` (see the module's documentation).
pub async fn refuse_cross_site_posts(
    State(service): State<Service>,
    request: Request,
    next: Next,
) -> Response {
    if request.method() == Method::POST
        && is_cross_site(request.headers(), &service.config().public_url)
    {
        tracing::info!("cross-site post refused");
        let message = "posts from other sites are refused: use the form on this site";
        if request.uri().path().starts_with("/api/") {
            return crate::api_error::ApiError::new(StatusCode::FORBIDDEN, message).into_response();
        }
        return (StatusCode::FORBIDDEN, message).into_response();
    }
    next.run(request).await
}

#[cfg(test)]
mod tests {
    use super::*;
    use axum::http::HeaderValue;

    fn headers(pairs: &[(&'static str, &'static str)]) -> HeaderMap {
        let mut map = HeaderMap::new();
        for (name, value) in pairs {
            map.insert(*name, HeaderValue::from_static(value));
        }
        map
    }

    #[test]
    fn only_browsers_posting_from_elsewhere_are_cross_site() {
        let public = Url::parse("https://robotstxtparser.example/").unwrap();
        let cases: &[(&[(&str, &str)], bool)] = &[
            (&[], false),
            (&[("sec-fetch-site", "same-origin")], false),
            (&[("sec-fetch-site", "none")], false),
            (&[("sec-fetch-site", "cross-site")], true),
            (&[("origin", "https://robotstxtparser.example")], false),
            (&[("origin", "https://evil.example")], true),
            (&[("origin", "null")], true),
            (
                &[
                    ("origin", "http://127.0.0.1:8080"),
                    ("host", "127.0.0.1:8080"),
                ],
                false,
            ),
            (
                &[
                    ("origin", "http://127.0.0.1:9999"),
                    ("host", "127.0.0.1:8080"),
                ],
                true,
            ),
        ];
        for (pairs, cross) in cases {
            assert_eq!(is_cross_site(&headers(pairs), &public), *cross, "{pairs:?}");
        }
    }
}
