//! Running the service: the HTTP server, the workers, the scheduler and the hourly
//! maintenance, stopped together on shutdown.

use std::future::Future;
use std::time::Duration;

use axum::Router;
use db::{Db, Holder, Lease};
use tokio::sync::watch;
use tower_http::timeout::RequestBodyTimeoutLayer;
use tower_http::trace::TraceLayer;

use crate::clock::Clock;
use crate::connections::accept_loop;

use crate::error::ServiceError;
use crate::limits::{MAINTENANCE_EVERY, MAINTENANCE_LEASE, REQUEST_BODY_TIMEOUT, WORKERS};
use crate::schedule::Scheduler;
use crate::service::Service;
use crate::store::retention::RetentionOutcome;

/// The maintenance lease's name.
pub const MAINTENANCE_LEASE_NAME: &str = "service.maintenance";
/// How often a process waiting for the maintenance lease (data removal during a retention
/// pass) asks again.
pub const LEASE_WAIT_POLL: Duration = Duration::from_secs(1);
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

/// Run `work` holding the maintenance lease (one retention pass or data removal at a time,
/// across processes) for `holder`, renewed every third of `ttl` while `work` runs, then
/// released. `wait`: how long to wait for another holder to finish (none: do not wait);
/// `Ok(None)` when the lease stayed with another. Losing the lease midway (the store
/// unreachable for a whole `ttl`) stops `work` between two of its transactions:
/// [`ServiceError::LeaseLost`].
pub async fn under_maintenance_lease<T>(
    db: &Db,
    clock: &dyn Clock,
    holder: &Holder,
    ttl: Duration,
    wait: Option<Duration>,
    work: impl Future<Output = Result<T, ServiceError>>,
) -> Result<Option<T>, ServiceError> {
    let take = || async {
        let lease = Lease {
            holder,
            now: clock.now(),
            ttl,
        };
        db.try_lease(MAINTENANCE_LEASE_NAME, &lease).await
    };
    let started = std::time::Instant::now();
    while !take().await? {
        match wait {
            Some(wait) if started.elapsed() < wait => tokio::time::sleep(LEASE_WAIT_POLL).await,
            _ => return Ok(None),
        }
    }
    let renew = async {
        loop {
            tokio::time::sleep(ttl / 3).await;
            match take().await {
                Ok(true) => {}
                Ok(false) => return,
                Err(error) => tracing::warn!(error = %error, "cannot renew the maintenance lease"),
            }
        }
    };
    let outcome = tokio::select! {
        outcome = work => outcome,
        () = renew => Err(ServiceError::LeaseLost { name: MAINTENANCE_LEASE_NAME }),
    };
    db.release_lease(MAINTENANCE_LEASE_NAME, holder).await?;
    outcome.map(Some)
}

impl Service {
    /// Run the retention pass now, if no other process is running it (a lease, renewed while
    /// the pass runs): `None` when another holds it.
    pub async fn maintain(
        &self,
        holder: &Holder,
    ) -> Result<Option<RetentionOutcome>, ServiceError> {
        let now = self.inner.clock.now();
        let db = self.store().db();
        let pass = self.store().retention(now, false);
        let clock = self.inner.clock.as_ref();
        under_maintenance_lease(db, clock, holder, MAINTENANCE_LEASE, None, pass).await
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
/// `shutdown` completes, within the configuration's connection limits
/// ([`crate::connections`]), with [`WORKERS`] workers, and the scheduler and maintenance as
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
        .layer(RequestBodyTimeoutLayer::new(REQUEST_BODY_TIMEOUT))
        .layer(TraceLayer::new_for_http());
    let (server_stop, server_stopped) = watch::channel(false);
    let signal = tokio::spawn(async move {
        shutdown.await;
        let _ = server_stop.send(true);
    });
    let config = service.config();
    accept_loop(
        listener,
        app,
        config.connections.clone(),
        config.trusted_proxies.clone(),
        server_stopped,
    )
    .await;
    signal.abort();
    let _ = stop_tx.send(true);
    let drained = tokio::time::timeout(SHUTDOWN_GRACE, async {
        while tasks.join_next().await.is_some() {}
    })
    .await;
    if drained.is_err() {
        tracing::info!("background tasks still running at shutdown: abandoned");
        tasks.abort_all();
    }
    Ok(())
}
