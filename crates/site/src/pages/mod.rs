//! The pages. Each takes what it shows and returns an [`Html`] answer; none reads the store.

pub(crate) mod about;
pub(crate) mod changes;
pub(crate) mod domain;
pub(crate) mod errors;
pub(crate) mod home;
pub(crate) mod report;
pub(crate) mod report_parts;
pub(crate) mod stats;

use axum::http::{header, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use maud::Markup;
use service::indexing::Indexing;

/// An HTML answer with its status and its page-specific headers.
pub(crate) struct Html {
    pub(crate) status: StatusCode,
    pub(crate) markup: Markup,
    /// `X-Robots-Tag` values (`noindex`, `googlebot: noindex`).
    pub(crate) robots: Vec<String>,
    /// A `Cache-Control` value.
    pub(crate) cache: Option<&'static str>,
}

impl Html {
    pub(crate) fn ok(markup: Markup) -> Html {
        Html {
            status: StatusCode::OK,
            markup,
            robots: Vec::new(),
            cache: None,
        }
    }
}

/// The `X-Robots-Tag` values that tell search engines `indexing`: `noindex`, or one
/// `token: noindex` per crawler named by the page.
pub(crate) fn robots_header(indexing: &Indexing) -> Vec<String> {
    if indexing.noindex.is_some() {
        return vec!["noindex".to_owned()];
    }
    indexing
        .named
        .iter()
        .map(|token| format!("{token}: noindex"))
        .collect()
}

/// The robots meta tags `(name, content)` that tell search engines `indexing`.
pub(crate) fn robots_meta(indexing: &Indexing) -> Vec<(String, &'static str)> {
    if indexing.noindex.is_some() {
        return vec![("robots".to_owned(), "noindex")];
    }
    indexing
        .named
        .iter()
        .map(|token| (token.clone(), "noindex"))
        .collect()
}

/// The `noindex` of a page that is not published (a paste, a page in progress, an error).
pub(crate) fn unpublished() -> Indexing {
    Indexing::forbidden(service::indexing::NoindexReason::NotPublished)
}

impl IntoResponse for Html {
    fn into_response(self) -> Response {
        let mut response = (self.status, self.markup).into_response();
        let headers = response.headers_mut();
        for value in &self.robots {
            // The values are built from vetted tokens (`service::indexing`), so this never
            // drops one.
            if let Ok(value) = HeaderValue::from_str(value) {
                headers.append("x-robots-tag", value);
            }
        }
        if let Some(cache) = self.cache {
            headers.insert(header::CACHE_CONTROL, HeaderValue::from_static(cache));
        }
        response
    }
}
