//! The JSON API (documented in the crate's README). Every error is JSON:
//! `{"error": "message"}`, with `Retry-After` on a 429.

use std::net::SocketAddr;

use axum::body::Bytes;
use axum::extract::rejection::JsonRejection;
use axum::extract::{ConnectInfo, FromRequest, Multipart, Path, Request, State};
use axum::http::{header, HeaderMap, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::{any, get, post};
use axum::{Json, Router};
use serde::{Deserialize, Serialize};
use tower_http::limit::RequestBodyLimitLayer;
use tower_http::set_header::SetResponseHeaderLayer;

pub use crate::api_error::ApiError;
use crate::ids::ReportId;
use crate::limits::{ANALYZE_BODY_LIMIT, MAX_PASTE_BYTES, PASTE_BODY_LIMIT};
use crate::model::StoredReport;
use crate::service::Service;
use crate::submit::SubmitError;

/// Pastes are private (reachable by their id only): no cache keeps them.
const NO_STORE: (header::HeaderName, HeaderValue) = (
    header::CACHE_CONTROL,
    HeaderValue::from_static("private, no-store"),
);

/// The body of `POST /api/analyze`.
#[derive(Debug, Deserialize)]
pub struct AnalyzeRequest {
    /// The URL to analyse.
    pub url: String,
}

/// A report as the API sends it: its columns, its page, its document when done.
#[derive(Serialize)]
struct ReportJson {
    #[serde(flatten)]
    stored: StoredReport,
    address: String,
}

/// The API's routes, with the service as their state: merge the site's routes into it and
/// serve with `into_make_service_with_connect_info::<SocketAddr>()` (the per-client limit
/// needs the client's address).
pub fn router(service: Service) -> Router {
    Router::new()
        .route(
            "/api/analyze",
            post(analyze).layer(RequestBodyLimitLayer::new(ANALYZE_BODY_LIMIT)),
        )
        .route(
            "/api/paste",
            post(paste)
                .layer::<_, std::convert::Infallible>(axum::extract::DefaultBodyLimit::max(
                    PASTE_BODY_LIMIT,
                ))
                .layer(RequestBodyLimitLayer::new(PASTE_BODY_LIMIT)),
        )
        .route("/api/report/{id}", get(report))
        .route("/api/score/{domain}", get(score))
        .route("/api/ranking", get(ranking))
        .route("/api/health", get(health))
        .route("/api/{*rest}", any(not_found))
        .layer(axum::middleware::map_response(json_errors))
        .layer(axum::middleware::from_fn_with_state(
            service.clone(),
            crate::origin::refuse_cross_site_posts,
        ))
        .layer(SetResponseHeaderLayer::if_not_present(
            header::X_CONTENT_TYPE_OPTIONS,
            HeaderValue::from_static("nosniff"),
        ))
        .with_state(service)
}

/// Errors made by layers and extractors (a body over the limit, a bad method) as JSON too.
async fn json_errors(response: Response) -> Response {
    let status = response.status();
    let is_json = response
        .headers()
        .get(header::CONTENT_TYPE)
        .is_some_and(|v| v.as_bytes().starts_with(b"application/json"));
    if !(status.is_client_error() || status.is_server_error()) || is_json {
        return response;
    }
    let message = match status {
        StatusCode::PAYLOAD_TOO_LARGE => "the request body is too large".to_owned(),
        StatusCode::METHOD_NOT_ALLOWED => "method not allowed".to_owned(),
        other => other.canonical_reason().unwrap_or("error").to_lowercase(),
    };
    ApiError::new(status, message).into_response()
}

async fn analyze(
    State(service): State<Service>,
    ConnectInfo(peer): ConnectInfo<SocketAddr>,
    headers: HeaderMap,
    body: Result<Json<AnalyzeRequest>, JsonRejection>,
) -> Result<Response, ApiError> {
    let Json(request) = body.map_err(|e| {
        let status = match e.status() {
            StatusCode::PAYLOAD_TOO_LARGE => StatusCode::PAYLOAD_TOO_LARGE,
            _ => StatusCode::BAD_REQUEST,
        };
        ApiError::new(
            status,
            format!("send JSON {{\"url\": \"https://...\"}}: {}", e.body_text()),
        )
    })?;
    let client = service.client(peer.ip(), &headers);
    let submitted = service.submit_analysis(&request.url, client).await?;
    let status = if submitted.reused {
        StatusCode::OK
    } else {
        StatusCode::ACCEPTED
    };
    Ok((status, Json(submitted)).into_response())
}

async fn paste(
    State(service): State<Service>,
    ConnectInfo(peer): ConnectInfo<SocketAddr>,
    request: Request,
) -> Result<Response, ApiError> {
    let client = service.client(peer.ip(), request.headers());
    let multipart = request
        .headers()
        .get(header::CONTENT_TYPE)
        .is_some_and(|v| v.as_bytes().starts_with(b"multipart/form-data"));
    let body = if multipart {
        let form = Multipart::from_request(request, &())
            .await
            .map_err(|e| ApiError::new(e.status(), e.body_text()))?;
        first_file(form).await?
    } else {
        Bytes::from_request(request, &())
            .await
            .map_err(|e| ApiError::new(e.status(), e.body_text()))?
    };
    let submitted = service.submit_paste(&body, client).await?;
    Ok((StatusCode::CREATED, [NO_STORE], Json(submitted)).into_response())
}

/// The first part of an upload (`file` or any other name): the robots.txt.
async fn first_file(mut form: Multipart) -> Result<Bytes, ApiError> {
    let bad =
        |e: axum::extract::multipart::MultipartError| ApiError::new(e.status(), e.body_text());
    let Some(field) = form.next_field().await.map_err(bad)? else {
        return Err(ApiError::new(
            StatusCode::BAD_REQUEST,
            "the upload has no file",
        ));
    };
    let bytes = field.bytes().await.map_err(bad)?;
    if bytes.len() > MAX_PASTE_BYTES {
        return Err(SubmitError::TooLarge {
            len: bytes.len(),
            max: MAX_PASTE_BYTES,
        }
        .into());
    }
    Ok(bytes)
}

async fn report(
    State(service): State<Service>,
    Path(id): Path<String>,
) -> Result<Response, ApiError> {
    let missing = || ApiError::new(StatusCode::NOT_FOUND, "no such report");
    let id: ReportId = id.parse().map_err(|_| missing())?;
    let stored = service.report(&id).await?.ok_or_else(missing)?;
    let address = service.public(&stored.row.path());
    let is_paste = stored.row.is_paste;
    let mut response = Json(ReportJson { stored, address }).into_response();
    if is_paste {
        response.headers_mut().extend([NO_STORE]);
    }
    Ok(response)
}

async fn score(
    State(service): State<Service>,
    Path(domain): Path<String>,
) -> Result<Response, ApiError> {
    let view = service
        .domain(&domain)
        .await?
        .ok_or_else(|| ApiError::new(StatusCode::NOT_FOUND, "no reports of this domain"))?;
    Ok(Json(view).into_response())
}

async fn ranking(State(service): State<Service>) -> Result<Response, ApiError> {
    let ranking = service.ranking().await?;
    Ok(Json(ranking.as_ref()).into_response())
}

#[derive(Serialize)]
struct Health {
    status: &'static str,
    jobs: i64,
}

async fn health(State(service): State<Service>) -> Result<Response, ApiError> {
    let store = service.store();
    store.ping().await?;
    let jobs = store.job_count().await?;
    Ok(Json(Health { status: "ok", jobs }).into_response())
}

async fn not_found() -> ApiError {
    ApiError::new(StatusCode::NOT_FOUND, "no such API endpoint")
}
