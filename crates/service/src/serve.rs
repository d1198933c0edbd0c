//! Running the service: the HTTP server, the workers, the scheduler and the hourly
//! maintenance, stopped together on shutdown.

use std::future::Future;
use std::net::SocketAddr;
use std::time::Duration;

use axum::Router;
use db::{Holder, Lease};
use tokio::sync::watch;
use tower_http::trace::TraceLayer;

use crate::error::ServiceError;
use crate::limits::{MAINTENANCE_EVERY, MAINTENANCE_LEASE, WORKERS};
use crate::schedule::Scheduler;
use crate::service::Service;
use crate::store::retention::RetentionOutcome;

/// The maintenance lease's name.
pub const MAINTENANCE_LEASE_NAME: &str = "service.maintenance";
/// How long background tasks get to finish after the server stops; an analysis still
/// running then is abandoned, and its job is taken again once its lease expires.
pub const SHUTDOWN_GRACE: Duration = Duration::from_secs(5);

/// What runs beside the HTTP server.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ServeOptions {
    /// Run the scheduler (`--no-scheduler` turns it off).
    pub scheduler: bool,
    /// Run the retention pass every hour.
    pub maintenance: bool,
}

impl Service {
    /// Run the retention pass now, if no other process is running it (a lease): `None` when
    /// another holds it.
    pub async fn maintain(
        &self,
        holder: &Holder,
    ) -> Result<Option<RetentionOutcome>, ServiceError> {
        let now = self.inner.clock.now();
        let lease = Lease {
            holder,
            now,
            ttl: MAINTENANCE_LEASE,
        };
        let db = self.store().db();
        if !db.try_lease(MAINTENANCE_LEASE_NAME, &lease).await? {
            return Ok(None);
        }
        let outcome = self.store().retention(now, false).await;
        db.release_lease(MAINTENANCE_LEASE_NAME, holder).await?;
        outcome.map(Some)
    }

    async fn maintenance_loop(self, mut stop: watch::Receiver<bool>) {
        let holder = Holder::new();
        while !*stop.borrow() {
            match self.maintain(&holder).await {
                Ok(Some(done)) => tracing::info!(
                    folded = done.folded,
                    pastes = done.pastes_deleted,
                    "retention pass"
                ),
                Ok(None) => {}
                Err(error) => tracing::warn!(error = %error, "retention pass failed"),
            }
            tokio::select! {
                _ = tokio::time::sleep(MAINTENANCE_EVERY) => {}
                changed = stop.changed() => if changed.is_err() { break },
            }
        }
    }
}

/// Serve `app` (the API's [`crate::api::router`], with the pages merged in) on `listener` until
/// `shutdown` completes, with [`WORKERS`] workers, and the scheduler and maintenance as
/// `options` say; then stop them, giving them [`SHUTDOWN_GRACE`].
pub async fn serve(
    service: Service,
    app: Router,
    listener: tokio::net::TcpListener,
    options: ServeOptions,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> std::io::Result<()> {
    let (stop_tx, stop_rx) = watch::channel(false);
    let mut tasks = tokio::task::JoinSet::new();
    for _ in 0..WORKERS {
        let (service, stop) = (service.clone(), stop_rx.clone());
        tasks.spawn(async move { service.worker(stop).await });
    }
    if options.scheduler {
        tasks.spawn(Scheduler::new(service.clone()).run(stop_rx.clone()));
    }
    if options.maintenance {
        tasks.spawn(service.clone().maintenance_loop(stop_rx.clone()));
    }
    let app = app
        .layer(TraceLayer::new_for_http())
        .into_make_service_with_connect_info::<SocketAddr>();
    let served = axum::serve(listener, app)
        .with_graceful_shutdown(shutdown)
        .await;
    let _ = stop_tx.send(true);
    let drained = tokio::time::timeout(SHUTDOWN_GRACE, async {
        while tasks.join_next().await.is_some() {}
    })
    .await;
    if drained.is_err() {
        tracing::info!("background tasks still running at shutdown: abandoned");
        tasks.abort_all();
    }
    served
}
