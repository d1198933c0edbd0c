//! The routes: each handler asks the service for what its page shows and hands it to `pages`.

use std::net::{IpAddr, Ipv4Addr, SocketAddr};

use axum::extract::{ConnectInfo, DefaultBodyLimit, Form, Multipart, Path, RawQuery, State};
use axum::http::{header, HeaderMap, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Redirect, Response};
use axum::routing::{get, post};
use axum::Extension;
use axum::Router;
use serde::Deserialize;
use service::client::ClientKey;
use service::limits::MAX_PASTE_BYTES;
use service::{paths, ReportId, ReportLookup, Service, ServiceError, SubmitError};

use crate::html::{stylesheet_path, STYLESHEET};
use crate::pages::{self, Html};
use crate::{security, sitemap};

/// The largest request body the paste form may send: the file twice (the text box and the
/// upload) and room for the multipart framing.
pub const PASTE_FORM_BODY_LIMIT: usize = 2 * MAX_PASTE_BYTES + 16 * 1024;

/// The largest request body of the analyse form (a URL of at most 2,048 bytes, encoded).
pub const ANALYZE_FORM_BODY_LIMIT: usize = 16 * 1024;

/// How long icons and the stylesheet may be cached: a year (the stylesheet's address changes
/// with its content; an icon changes at most every 30 days and a stale one is harmless).
pub const LONG_CACHE: &str = "public, max-age=31536000, immutable";

/// How long browsers may keep an icon: a week.
pub const ICON_CACHE: &str = "public, max-age=604800";

type St = State<Service>;

pub(crate) fn router(service: Service) -> Router {
    let router = Router::new()
        .route("/", get(home))
        .route(
            "/analyze",
            post(analyze).layer(DefaultBodyLimit::max(ANALYZE_FORM_BODY_LIMIT)),
        )
        .route(
            "/paste",
            post(paste_submit).layer(DefaultBodyLimit::max(PASTE_FORM_BODY_LIMIT)),
        )
        .route("/paste/{id}", get(paste_page))
        .route("/score/{domain}", get(domain_page))
        .route("/score/{domain}/{id}", get(report_page))
        .route("/scoring", get(scoring))
        .route("/bot", get(bot))
        .route("/stats", get(stats_page))
        .route("/icon/{domain}", get(icon))
        .route("/robots.txt", get(robots_txt))
        .route("/sitemap.xml", get(sitemap_root))
        .route("/sitemaps/{file}", get(sitemap_part))
        .route(&stylesheet_path(), get(stylesheet))
        .fallback(not_found)
        .layer(axum::middleware::from_fn_with_state(
            service.clone(),
            service::origin::refuse_cross_site_posts,
        ))
        .with_state(service);
    security::with_security_headers(router)
}

/// A page could not be made.
pub(crate) enum PageError {
    NotFound,
    Service(ServiceError),
}

impl From<ServiceError> for PageError {
    fn from(error: ServiceError) -> PageError {
        PageError::Service(error)
    }
}

impl IntoResponse for PageError {
    fn into_response(self) -> Response {
        match self {
            PageError::NotFound => pages::errors::not_found().into_response(),
            // One damaged row: its own page says so; nothing else depends on it.
            PageError::Service(error) if error.is_bad_row() => {
                tracing::warn!(%error, "a stored report cannot be read");
                pages::errors::unreadable().into_response()
            }
            PageError::Service(error) => {
                tracing::error!(%error, "page failed");
                pages::errors::server_error().into_response()
            }
        }
    }
}

type PageResult = Result<Response, PageError>;

/// Why a form was not accepted, in words for the person who sent it.
pub(crate) enum FormError {
    /// The form was not sent as the page sends it, or is empty: what to do instead.
    Form(&'static str),
    /// The file is larger than [`MAX_PASTE_BYTES`].
    FileTooLarge,
    /// The service refused the submission.
    Submit(SubmitError),
}

impl FormError {
    /// The message shown above the form, as a sentence.
    pub(crate) fn message(&self) -> String {
        let text = match self {
            FormError::Form(text) => (*text).to_owned(),
            FormError::FileTooLarge => format!(
                "The file is larger than {} KB, the most the audit reads.",
                MAX_PASTE_BYTES / 1024
            ),
            FormError::Submit(error) => error.explain(),
        };
        sentence(&text)
    }

    fn status(&self) -> StatusCode {
        match self {
            FormError::Form(_) | FormError::FileTooLarge => StatusCode::BAD_REQUEST,
            FormError::Submit(error) => error.status(),
        }
    }
}

/// `text` with a capital first letter and a full stop.
fn sentence(text: &str) -> String {
    let mut chars = text.chars();
    let mut out: String = chars
        .next()
        .map(|first| first.to_uppercase().chain(chars).collect())
        .unwrap_or_default();
    if !out.ends_with(['.', '!', '?']) {
        out.push('.');
    }
    out
}

async fn not_found() -> Response {
    PageError::NotFound.into_response()
}

async fn home(State(service): St) -> PageResult {
    let ranking = service.ranking().await?;
    Ok(pages::home::page(&ranking, None).into_response())
}

#[derive(Deserialize)]
struct AnalyzeForm {
    url: String,
}

/// The client, by the address the server recorded (`ConnectInfo`) and, from a trusted
/// proxy, `X-Forwarded-For`; unknown clients share one address, and so one rate limit.
fn client_of(
    service: &Service,
    info: Option<Extension<ConnectInfo<SocketAddr>>>,
    headers: &HeaderMap,
) -> ClientKey {
    let peer = info.map_or(
        IpAddr::V4(Ipv4Addr::UNSPECIFIED),
        |Extension(ConnectInfo(addr))| addr.ip(),
    );
    service.client(peer, headers)
}

async fn analyze(
    State(service): St,
    info: Option<Extension<ConnectInfo<SocketAddr>>>,
    headers: HeaderMap,
    form: Result<Form<AnalyzeForm>, axum::extract::rejection::FormRejection>,
) -> PageResult {
    let Ok(Form(form)) = form else {
        let error = FormError::Form("Enter the address of a page to analyse.");
        return home_with_error(&service, error, "").await;
    };
    match service
        .submit_analysis(form.url.trim(), client_of(&service, info, &headers))
        .await
    {
        Ok(submitted) => Ok(Redirect::to(&submitted.path).into_response()),
        Err(error) => home_with_error(&service, FormError::Submit(error), &form.url).await,
    }
}

async fn home_with_error(service: &Service, error: FormError, url: &str) -> PageResult {
    if let FormError::Submit(SubmitError::Store(source)) = &error {
        tracing::error!(error = %source, "submission failed");
    }
    let ranking = service.ranking().await?;
    let status = error.status();
    let retry_after = match &error {
        FormError::Submit(error) => error.retry_after(),
        _ => None,
    };
    let page = pages::home::page(&ranking, Some((&error.message(), url)));
    let mut response = (status, page).into_response();
    if let Some(wait) = retry_after {
        response.headers_mut().insert(
            header::RETRY_AFTER,
            HeaderValue::from(wait.as_secs().max(1)),
        );
    }
    Ok(response)
}

async fn paste_submit(
    State(service): St,
    info: Option<Extension<ConnectInfo<SocketAddr>>>,
    headers: HeaderMap,
    multipart: Result<Multipart, axum::extract::multipart::MultipartRejection>,
) -> PageResult {
    let body = match multipart {
        Ok(multipart) => read_paste(multipart).await,
        Err(_) => Err(FormError::Form("Send the file with the paste form.")),
    };
    let submitted = match body {
        Ok(body) => service
            .submit_paste(&body, client_of(&service, info, &headers))
            .await
            .map_err(FormError::Submit),
        Err(error) => Err(error),
    };
    match submitted {
        Ok(submitted) => Ok(Redirect::to(&submitted.path).into_response()),
        Err(error) => home_with_error(&service, error, "").await,
    }
}

/// The file from the upload field, else the text box: at most [`MAX_PASTE_BYTES`].
async fn read_paste(mut multipart: Multipart) -> Result<Vec<u8>, FormError> {
    let broken = |_| FormError::Form("The upload could not be read.");
    let (mut text, mut file) = (Vec::new(), Vec::new());
    while let Some(mut field) = multipart.next_field().await.map_err(broken)? {
        let target = match field.name() {
            Some("file") => &mut file,
            Some("robots") => &mut text,
            _ => continue,
        };
        while let Some(chunk) = field.chunk().await.map_err(broken)? {
            if target.len() + chunk.len() > MAX_PASTE_BYTES {
                return Err(FormError::FileTooLarge);
            }
            target.extend_from_slice(&chunk);
        }
    }
    let body = if file.is_empty() { text } else { file };
    if body.iter().all(u8::is_ascii_whitespace) {
        return Err(FormError::Form(
            "Paste a robots.txt or choose a file to upload.",
        ));
    }
    Ok(body)
}

async fn paste_page(State(service): St, Path(id): Path<String>) -> PageResult {
    let id: ReportId = id.parse().map_err(|_| PageError::NotFound)?;
    let report = service.paste(&id).await?.ok_or(PageError::NotFound)?;
    Ok(pages::report::paste(&report).into_response())
}

async fn domain_page(
    State(service): St,
    Path(domain): Path<String>,
    RawQuery(query): RawQuery,
) -> PageResult {
    let page = pages::domain::page_number(query.as_deref()).ok_or(PageError::NotFound)?;
    let view = service
        .domain_page(&domain, page)
        .await?
        .ok_or(PageError::NotFound)?;
    let next_check = service.next_check(&view.domain).await?;
    Ok(pages::domain::page(&view, page, next_check).into_response())
}

async fn report_page(State(service): St, Path((domain, id)): Path<(String, String)>) -> PageResult {
    let id: ReportId = id.parse().map_err(|_| PageError::NotFound)?;
    match service.report_page(&domain, &id).await? {
        ReportLookup::Found(page) => Ok(pages::report::page(&page).into_response()),
        ReportLookup::Folded => {
            let domain = service::ids::normalize_domain(&domain);
            Ok(Redirect::permanent(&paths::domain(&domain)).into_response())
        }
        ReportLookup::Missing => Err(PageError::NotFound),
    }
}

async fn scoring() -> Html {
    pages::about::scoring()
}

async fn bot(State(service): St) -> Html {
    pages::about::bot(&service.config().public_url)
}

async fn stats_page(State(service): St) -> PageResult {
    let stats = service.stats().await?;
    Ok(pages::stats::page(&stats).into_response())
}

async fn icon(State(service): St, Path(domain): Path<String>) -> PageResult {
    let png = service.icon(&domain).await?.ok_or(PageError::NotFound)?;
    Ok((
        [
            (header::CONTENT_TYPE, "image/png"),
            (header::CACHE_CONTROL, ICON_CACHE),
        ],
        png,
    )
        .into_response())
}

async fn stylesheet() -> Response {
    (
        [
            (header::CONTENT_TYPE, "text/css; charset=utf-8"),
            (header::CACHE_CONTROL, LONG_CACHE),
        ],
        STYLESHEET,
    )
        .into_response()
}

/// The service's own robots.txt: everything may be crawled except the forms' targets and
/// pastes (never published), and the sitemap is declared.
async fn robots_txt(State(service): St) -> Response {
    let body = format!(
        "User-agent: *\nDisallow: /analyze\nDisallow: /paste\nDisallow: /api/\n\nSitemap: {}\n",
        service.public("/sitemap.xml")
    );
    ([(header::CONTENT_TYPE, "text/plain; charset=utf-8")], body).into_response()
}

async fn sitemap_root(State(service): St) -> PageResult {
    let entries = service.published().await?;
    let xml = sitemap::root(&entries, &service.config().public_url);
    Ok(xml_response(xml))
}

async fn sitemap_part(State(service): St, Path(file): Path<String>) -> PageResult {
    let n = file
        .strip_suffix(".xml")
        .and_then(|n| n.parse::<usize>().ok())
        .ok_or(PageError::NotFound)?;
    let entries = service.published().await?;
    let xml =
        sitemap::part(&entries, &service.config().public_url, n).ok_or(PageError::NotFound)?;
    Ok(xml_response(xml))
}

fn xml_response(xml: String) -> Response {
    (
        [(header::CONTENT_TYPE, "application/xml; charset=utf-8")],
        xml,
    )
        .into_response()
}
