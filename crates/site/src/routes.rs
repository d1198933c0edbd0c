//! The routes: each handler reads what its page needs and hands it to `pages`.

use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::sync::Arc;

use axum::extract::{ConnectInfo, DefaultBodyLimit, Form, Multipart, Path, State};
use axum::http::{header, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Redirect, Response};
use axum::routing::{get, post};
use axum::Extension;
use axum::Router;
use jiff::Timestamp;
use serde::Deserialize;

use crate::cache::Cached;
use crate::data::{CurrentReport, DataError, ReportId, ReportLookup, SiteData, SubmitError};
use crate::html::{domain_href, report_href, stylesheet_path, STYLESHEET};
use crate::pages::{self, Html};
use crate::ranking::{self, Ranking};
use crate::stats::Stats;
use crate::{security, sitemap, SiteConfig, MAX_PASTE_BYTES};

/// The largest request body the paste form may send: the file twice (the text box and the
/// upload) and room for the multipart framing.
pub const PASTE_BODY_LIMIT: usize = 2 * MAX_PASTE_BYTES + 16 * 1024;

/// The largest request body of the analyse form (a URL of at most 2,048 bytes, encoded).
pub const ANALYZE_BODY_LIMIT: usize = 16 * 1024;

/// How long icons and the stylesheet may be cached: a year (the stylesheet's address changes
/// with its content; an icon changes at most every 30 days and a stale one is harmless).
pub const LONG_CACHE: &str = "public, max-age=31536000, immutable";

/// How long browsers may keep an icon: a week.
pub const ICON_CACHE: &str = "public, max-age=604800";

pub(crate) struct AppState<D> {
    pub(crate) data: Arc<D>,
    pub(crate) config: SiteConfig,
    current: Cached<Vec<CurrentReport>>,
    /// The ranking made from the list in `current` (the same `Arc`) for one window.
    ranking: RankingSlot,
    stats: Cached<Stats>,
}

type St<D> = State<Arc<AppState<D>>>;

/// A ranking with what it was made from: the list of current reports and the window.
type MadeRanking = (Arc<Vec<CurrentReport>>, i64, Arc<Ranking>);

impl<D: SiteData> AppState<D> {
    async fn current(&self) -> Result<Arc<Vec<CurrentReport>>, DataError> {
        self.current
            .get(self.config.data_refresh, self.data.current_reports())
            .await
    }

    /// The ranking of this window, made once per list of current reports and window. When
    /// only the list changed (a refresh within the window), the ranking made from the previous
    /// list is answered while a blocking task makes the new one: no home request waits for a
    /// ranking of every current report, except the first of each window.
    async fn ranking(&self) -> Result<Arc<Ranking>, DataError> {
        let current = self.current().await?;
        let now = Timestamp::now();
        let window = ranking::window_of(now);
        let held = lock(&self.ranking.slot).clone();
        // With no refresh period (tests), every request sees the list it read.
        let background = !self.config.data_refresh.is_zero();
        match held {
            Some((list, at, made)) if at == window && Arc::ptr_eq(&list, &current) => Ok(made),
            Some((_, at, made)) if at == window && background => {
                self.ranking.refresh(current, now, window);
                Ok(made)
            }
            _ => {
                // A new window (or none yet): made here, once; concurrent requests wait for it.
                let _making = self.ranking.first.lock().await;
                if let Some((list, at, made)) = lock(&self.ranking.slot).as_ref() {
                    if *at == window && Arc::ptr_eq(list, &current) {
                        return Ok(Arc::clone(made));
                    }
                }
                let made = Arc::new(ranking::rank(&current, now));
                *lock(&self.ranking.slot) = Some((current, window, Arc::clone(&made)));
                Ok(made)
            }
        }
    }
}

/// A poisoned lock only means a panic elsewhere while it was held: the value is whole.
fn lock<T>(mutex: &std::sync::Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// The home page's ranking, made once per window and list (see [`AppState::ranking`]).
#[derive(Default)]
struct RankingSlot {
    /// The ranking made last, with its list and window.
    slot: Arc<std::sync::Mutex<Option<MadeRanking>>>,
    /// Whether a background refresh is running (at most one).
    refreshing: Arc<std::sync::atomic::AtomicBool>,
    /// Held while the first ranking of a window is made.
    first: tokio::sync::Mutex<()>,
}

impl RankingSlot {
    /// Make the ranking of `current` on a blocking thread, unless a refresh already runs.
    fn refresh(&self, current: Arc<Vec<CurrentReport>>, now: Timestamp, window: i64) {
        use std::sync::atomic::Ordering;
        if self.refreshing.swap(true, Ordering::AcqRel) {
            return;
        }
        let (slot, refreshing) = (Arc::clone(&self.slot), Arc::clone(&self.refreshing));
        tokio::task::spawn_blocking(move || {
            let made = Arc::new(ranking::rank(&current, now));
            let mut held = lock(&slot);
            // Never replace a ranking of a later window made meanwhile.
            if held.as_ref().is_none_or(|(_, at, _)| *at <= window) {
                *held = Some((current, window, made));
            }
            drop(held);
            refreshing.store(false, Ordering::Release);
        });
    }
}

pub(crate) fn router<D: SiteData>(data: Arc<D>, config: SiteConfig) -> Router {
    let state = Arc::new(AppState {
        data,
        config,
        current: Cached::new(),
        ranking: RankingSlot::default(),
        stats: Cached::new(),
    });
    let router = Router::new()
        .route("/", get(home::<D>))
        .route(
            "/analyze",
            post(analyze::<D>).layer(DefaultBodyLimit::max(ANALYZE_BODY_LIMIT)),
        )
        .route(
            "/paste",
            post(paste_submit::<D>).layer(DefaultBodyLimit::max(PASTE_BODY_LIMIT)),
        )
        .route("/paste/{id}", get(paste_page::<D>))
        .route("/score/{domain}", get(domain_page::<D>))
        .route("/score/{domain}/{id}", get(report_page::<D>))
        .route("/scoring", get(scoring))
        .route("/bot", get(bot::<D>))
        .route("/stats", get(stats_page::<D>))
        .route("/icon/{domain}", get(icon::<D>))
        .route("/robots.txt", get(robots_txt::<D>))
        .route("/sitemap.xml", get(sitemap_root::<D>))
        .route("/sitemaps/{file}", get(sitemap_part::<D>))
        .route(&stylesheet_path(), get(stylesheet))
        .fallback(not_found)
        .with_state(state);
    security::with_security_headers(router)
}

/// A page could not be made.
pub(crate) enum PageError {
    NotFound,
    Data(DataError),
}

impl From<DataError> for PageError {
    fn from(error: DataError) -> PageError {
        PageError::Data(error)
    }
}

impl IntoResponse for PageError {
    fn into_response(self) -> Response {
        match self {
            PageError::NotFound => pages::errors::not_found().into_response(),
            PageError::Data(error) => {
                tracing::error!(%error, "page failed");
                pages::errors::server_error().into_response()
            }
        }
    }
}

type PageResult = Result<Response, PageError>;

async fn not_found() -> Response {
    PageError::NotFound.into_response()
}

async fn home<D: SiteData>(State(state): St<D>) -> PageResult {
    let ranking = state.ranking().await?;
    Ok(pages::home::page(&ranking, None).into_response())
}

#[derive(Deserialize)]
struct AnalyzeForm {
    url: String,
}

/// The client's address, as the server recorded it (`into_make_service_with_connect_info`);
/// unknown clients share one address, and so one rate limit.
fn client_of(info: Option<Extension<ConnectInfo<SocketAddr>>>) -> IpAddr {
    info.map_or(
        IpAddr::V4(Ipv4Addr::UNSPECIFIED),
        |Extension(ConnectInfo(addr))| addr.ip(),
    )
}

async fn analyze<D: SiteData>(
    State(state): St<D>,
    info: Option<Extension<ConnectInfo<SocketAddr>>>,
    form: Result<Form<AnalyzeForm>, axum::extract::rejection::FormRejection>,
) -> PageResult {
    let Ok(Form(form)) = form else {
        let error = SubmitError::Invalid("Enter the address of a page to analyse.".into());
        return home_with_error(&state, error, "").await;
    };
    match state
        .data
        .submit_url(form.url.trim(), client_of(info))
        .await
    {
        Ok(submitted) => {
            Ok(Redirect::to(&report_href(&submitted.domain, &submitted.id)).into_response())
        }
        Err(error) => home_with_error(&state, error, &form.url).await,
    }
}

async fn home_with_error<D: SiteData>(
    state: &AppState<D>,
    error: SubmitError,
    url: &str,
) -> PageResult {
    let ranking = state.ranking().await?;
    let status = match &error {
        SubmitError::Invalid(_) => StatusCode::BAD_REQUEST,
        SubmitError::TooMany { .. } => StatusCode::TOO_MANY_REQUESTS,
        SubmitError::Unavailable(_) => StatusCode::SERVICE_UNAVAILABLE,
    };
    let mut response = (status, pages::home::page(&ranking, Some((&error, url)))).into_response();
    if let SubmitError::TooMany { retry_after } = error {
        if let Ok(value) = HeaderValue::from_str(&retry_after.as_secs().max(1).to_string()) {
            response.headers_mut().insert(header::RETRY_AFTER, value);
        }
    }
    Ok(response)
}

async fn paste_submit<D: SiteData>(
    State(state): St<D>,
    info: Option<Extension<ConnectInfo<SocketAddr>>>,
    multipart: Result<Multipart, axum::extract::multipart::MultipartRejection>,
) -> PageResult {
    let body = match multipart {
        Ok(multipart) => read_paste(multipart).await,
        Err(_) => Err(SubmitError::Invalid(
            "Send the file with the paste form.".into(),
        )),
    };
    let submitted = match body {
        Ok(body) => state.data.submit_paste(body, client_of(info)).await,
        Err(error) => Err(error),
    };
    match submitted {
        Ok(id) => Ok(Redirect::to(&format!("/paste/{id}")).into_response()),
        Err(error) => home_with_error(&state, error, "").await,
    }
}

/// The file from the upload field, else the text box: at most [`MAX_PASTE_BYTES`].
async fn read_paste(mut multipart: Multipart) -> Result<Vec<u8>, SubmitError> {
    let broken = |_| SubmitError::Invalid("The upload could not be read.".into());
    let (mut text, mut file) = (Vec::new(), Vec::new());
    while let Some(mut field) = multipart.next_field().await.map_err(broken)? {
        let target = match field.name() {
            Some("file") => &mut file,
            Some("robots") => &mut text,
            _ => continue,
        };
        while let Some(chunk) = field.chunk().await.map_err(broken)? {
            if target.len() + chunk.len() > MAX_PASTE_BYTES {
                return Err(SubmitError::Invalid(format!(
                    "The file is larger than {} KB, the most the audit reads.",
                    MAX_PASTE_BYTES / 1024
                )));
            }
            target.extend_from_slice(&chunk);
        }
    }
    let body = if file.is_empty() { text } else { file };
    if body.iter().all(u8::is_ascii_whitespace) {
        return Err(SubmitError::Invalid(
            "Paste a robots.txt or choose a file to upload.".into(),
        ));
    }
    Ok(body)
}

async fn paste_page<D: SiteData>(State(state): St<D>, Path(id): Path<String>) -> PageResult {
    let id = ReportId::parse(&id).ok_or(PageError::NotFound)?;
    let report = state.data.paste(&id).await?.ok_or(PageError::NotFound)?;
    Ok(pages::report::paste(&report).into_response())
}

async fn domain_page<D: SiteData>(State(state): St<D>, Path(domain): Path<String>) -> PageResult {
    let domain = domain.to_ascii_lowercase();
    let history = state
        .data
        .domain(&domain)
        .await?
        .ok_or(PageError::NotFound)?;
    Ok(pages::domain::page(&domain, &history).into_response())
}

async fn report_page<D: SiteData>(
    State(state): St<D>,
    Path((domain, id)): Path<(String, String)>,
) -> PageResult {
    let domain = domain.to_ascii_lowercase();
    let id = ReportId::parse(&id).ok_or(PageError::NotFound)?;
    let report = match state.data.report(&domain, &id).await? {
        ReportLookup::Found(report) => report,
        ReportLookup::Folded => {
            return Ok(Redirect::permanent(&domain_href(&domain)).into_response())
        }
        ReportLookup::Missing => return Err(PageError::NotFound),
    };
    let context = pages::report::Context::load(state.data.as_ref(), &report).await?;
    Ok(pages::report::page(&report, &context).into_response())
}

async fn scoring() -> Html {
    pages::about::scoring()
}

async fn bot<D: SiteData>(State(state): St<D>) -> Html {
    pages::about::bot(&state.config.public_url)
}

async fn stats_page<D: SiteData>(State(state): St<D>) -> PageResult {
    let stats = state
        .stats
        .get(state.config.stats_refresh, state.data.stats())
        .await?;
    Ok(pages::stats::page(&stats).into_response())
}

async fn icon<D: SiteData>(State(state): St<D>, Path(domain): Path<String>) -> PageResult {
    let domain = domain.to_ascii_lowercase();
    let png = state.data.icon(&domain).await?.ok_or(PageError::NotFound)?;
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
async fn robots_txt<D: SiteData>(State(state): St<D>) -> Response {
    let body = format!(
        "User-agent: *\nDisallow: /analyze\nDisallow: /paste\nDisallow: /api/\n\nSitemap: {}\n",
        sitemap::absolute(&state.config.public_url, "/sitemap.xml")
    );
    ([(header::CONTENT_TYPE, "text/plain; charset=utf-8")], body).into_response()
}

async fn sitemap_root<D: SiteData>(State(state): St<D>) -> PageResult {
    let current = state.current().await?;
    let entries = sitemap::entries(&current);
    let xml = sitemap::root(&entries, &state.config.public_url);
    Ok(xml_response(xml))
}

async fn sitemap_part<D: SiteData>(State(state): St<D>, Path(file): Path<String>) -> PageResult {
    let n = file
        .strip_suffix(".xml")
        .and_then(|n| n.parse::<usize>().ok())
        .ok_or(PageError::NotFound)?;
    let current = state.current().await?;
    let entries = sitemap::entries(&current);
    let xml = sitemap::part(&entries, &state.config.public_url, n).ok_or(PageError::NotFound)?;
    Ok(xml_response(xml))
}

fn xml_response(xml: String) -> Response {
    (
        [(header::CONTENT_TYPE, "application/xml; charset=utf-8")],
        xml,
    )
        .into_response()
}
