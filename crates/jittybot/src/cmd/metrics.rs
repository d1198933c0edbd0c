//! The metrics endpoint of a long-running command (`jittybot crawl --metrics-listen`): one
//! route, `GET /metrics`, answering the exposition the crate renders.

use std::net::SocketAddr;
use std::sync::Arc;

use anyhow::Context;
use axum::extract::State;
use axum::http::header;
use axum::response::IntoResponse;
use axum::routing::get;
use crawl::metrics::{CrawlMetrics, CONTENT_TYPE};

/// Listens on `addr` (an error now, before the crawl starts, if it cannot) and serves
/// `metrics` at `/metrics` until the returned task is aborted.
pub async fn serve(
    addr: SocketAddr,
    metrics: Arc<CrawlMetrics>,
) -> anyhow::Result<tokio::task::JoinHandle<()>> {
    let listener = tokio::net::TcpListener::bind(addr)
        .await
        .with_context(|| format!("cannot listen on {addr} for --metrics-listen"))?;
    let app = axum::Router::new()
        .route("/metrics", get(exposition))
        .with_state(metrics);
    Ok(tokio::spawn(async move {
        if let Err(e) = axum::serve(listener, app).await {
            tracing::warn!(error = %e, "the metrics endpoint stopped");
        }
    }))
}

async fn exposition(State(metrics): State<Arc<CrawlMetrics>>) -> impl IntoResponse {
    (
        [(header::CONTENT_TYPE, CONTENT_TYPE)],
        metrics.render().await,
    )
}
