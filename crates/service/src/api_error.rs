//! An error of the JSON API: a status and a message, sent as `{"error": "message"}` (with
//! `Retry-After` on a 429). Below the API's routes and the middleware that refuses
//! cross-site posts (`origin`), which both answer with it.

use axum::http::{header, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::Json;
use serde::Serialize;

use crate::submit::SubmitError;

/// An API error: a status and a message, sent as JSON.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ApiError {
    /// The status.
    pub status: StatusCode,
    /// What went wrong, in words.
    pub message: String,
    /// Seconds to wait (429).
    pub retry_after: Option<u64>,
}

impl ApiError {
    /// An error with a status and a message.
    pub fn new(status: StatusCode, message: impl Into<String>) -> ApiError {
        ApiError {
            status,
            message: message.into(),
            retry_after: None,
        }
    }

    fn internal(error: &dyn std::error::Error) -> ApiError {
        tracing::error!(error = %error, "internal error");
        ApiError::new(
            StatusCode::INTERNAL_SERVER_ERROR,
            "internal error; try again later",
        )
    }
}

#[derive(Serialize)]
struct ErrorBody<'a> {
    error: &'a str,
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let mut response = (
            self.status,
            Json(ErrorBody {
                error: &self.message,
            }),
        )
            .into_response();
        if let Some(seconds) = self.retry_after {
            response
                .headers_mut()
                .insert(header::RETRY_AFTER, HeaderValue::from(seconds));
        }
        response
    }
}

impl From<SubmitError> for ApiError {
    fn from(error: SubmitError) -> ApiError {
        if let SubmitError::Store(source) = &error {
            return ApiError::internal(source);
        }
        ApiError {
            status: error.status(),
            message: error.explain(),
            retry_after: error.retry_after().map(|wait| wait.as_secs().max(1)),
        }
    }
}

impl From<crate::error::ServiceError> for ApiError {
    fn from(error: crate::error::ServiceError) -> ApiError {
        if error.is_bad_row() {
            // One damaged report: it says so; nothing else depends on it.
            tracing::warn!(error = %error, "a stored report cannot be read");
            return ApiError::new(
                StatusCode::INTERNAL_SERVER_ERROR,
                "this report's stored data is damaged and cannot be shown",
            );
        }
        ApiError::internal(&error)
    }
}
