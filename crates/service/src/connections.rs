//! Accepting and serving connections, bounded.
//!
//! A public server meets clients that open connections and never finish a request, keep them
//! idle, trickle a body, or open thousands at once. Each connection holds a file descriptor;
//! when the process runs out of them, nobody is served. So:
//!
//! - a request's head must arrive within [`HEADER_READ_TIMEOUT`] of the server starting to
//!   read it, which also bounds how long a kept-alive connection may sit idle between two
//!   requests (hyper's header-read timer starts when it waits for a head);
//! - a request's body within [`REQUEST_BODY_TIMEOUT`] (the router's layer, in `serve`);
//! - no connection lives past [`CONNECTION_MAX_AGE`] (+ [`CONNECTION_CLOSE_GRACE`]);
//! - at most [`ConnectionLimits::max_connections`] are open at once (kept [`FD_RESERVE`]
//!   under the file limit), at most [`MAX_CONNECTIONS_PER_CLIENT`] from one client
//!   ([`ClientKey`]; trusted proxies are not limited); a connection beyond either is answered
//!   `503` and closed at once, before it can take the descriptors others need.
//!
//! [`raise_fd_limit`] lifts the process's soft file limit to its hard limit at start.

use std::collections::HashMap;
use std::net::{IpAddr, SocketAddr};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::extract::ConnectInfo;
use axum::Router;
use hyper::body::Incoming;
use hyper_util::rt::{TokioIo, TokioTimer};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{watch, Notify};
use tower::ServiceExt;

use crate::client::{ClientKey, TrustedProxies};
use crate::limits::{
    ACCEPT_BACKOFF, CONNECTION_CLOSE_GRACE, CONNECTION_MAX_AGE, FD_RESERVE, HEADER_READ_TIMEOUT,
    MAX_CONNECTIONS, MAX_CONNECTIONS_PER_CLIENT,
};

/// What a connection over the limits is told before it is closed.
const BUSY_RESPONSE: &[u8] = b"HTTP/1.1 503 Service Unavailable\r\nRetry-After: 10\r\n\
    Content-Type: text/plain; charset=utf-8\r\nContent-Length: 28\r\nConnection: close\r\n\r\n\
    too many connections; retry\n";

/// The limits on connections (see the module's documentation).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConnectionLimits {
    /// Connections open at once.
    pub max_connections: usize,
    /// Connections open at once from one client.
    pub per_client: usize,
    /// See [`HEADER_READ_TIMEOUT`].
    pub header_read_timeout: Duration,
    /// See [`CONNECTION_MAX_AGE`].
    pub max_age: Duration,
}

impl Default for ConnectionLimits {
    /// The published limits, [`MAX_CONNECTIONS`] lowered to fit the process's file limit now.
    fn default() -> ConnectionLimits {
        ConnectionLimits {
            max_connections: connections_fitting(fd_limit()),
            per_client: MAX_CONNECTIONS_PER_CLIENT,
            header_read_timeout: HEADER_READ_TIMEOUT,
            max_age: CONNECTION_MAX_AGE,
        }
    }
}

/// The connections a process with `fd_limit` descriptors may hold: [`MAX_CONNECTIONS`], or
/// the limit less [`FD_RESERVE`] (at least 16, so a tiny limit still serves someone).
pub fn connections_fitting(fd_limit: Option<u64>) -> usize {
    let Some(limit) = fd_limit else {
        return MAX_CONNECTIONS;
    };
    let usable = usize::try_from(limit)
        .unwrap_or(usize::MAX)
        .saturating_sub(FD_RESERVE);
    usable.clamp(16, MAX_CONNECTIONS)
}

/// The process's soft file limit now (`None`: unlimited).
pub fn fd_limit() -> Option<u64> {
    rustix::process::getrlimit(rustix::process::Resource::Nofile).current
}

/// Raise the process's soft file limit to its hard limit; the soft limit now. Services are
/// often started with a soft limit of 1,024 and a much higher hard one.
pub fn raise_fd_limit() -> std::io::Result<Option<u64>> {
    use rustix::process::{getrlimit, setrlimit, Resource, Rlimit};
    let limit = getrlimit(Resource::Nofile);
    if limit.current != limit.maximum {
        setrlimit(
            Resource::Nofile,
            Rlimit {
                current: limit.maximum,
                maximum: limit.maximum,
            },
        )?;
    }
    Ok(fd_limit())
}

/// Counts open connections, overall and per client.
#[derive(Debug)]
struct Tracker {
    limits: ConnectionLimits,
    proxies: TrustedProxies,
    open: Mutex<(usize, HashMap<ClientKey, usize>)>,
    closed: Notify,
}

/// One admitted connection: counted until dropped.
struct Admitted {
    tracker: Arc<Tracker>,
    client: Option<ClientKey>,
}

impl Tracker {
    fn admit(self: &Arc<Self>, peer: IpAddr) -> Option<Admitted> {
        let client = (!self.proxies.contains(peer)).then(|| ClientKey::of(peer));
        let mut open = self.open.lock().unwrap_or_else(|p| p.into_inner());
        if open.0 >= self.limits.max_connections {
            return None;
        }
        if let Some(client) = client {
            let count = open.1.entry(client).or_insert(0);
            if *count >= self.limits.per_client {
                return None;
            }
            *count += 1;
        }
        open.0 += 1;
        Some(Admitted {
            tracker: self.clone(),
            client,
        })
    }

    fn open(&self) -> usize {
        self.open.lock().map(|open| open.0).unwrap_or(0)
    }
}

impl Drop for Admitted {
    fn drop(&mut self) {
        let mut open = self.tracker.open.lock().unwrap_or_else(|p| p.into_inner());
        open.0 = open.0.saturating_sub(1);
        if let Some(client) = self.client {
            if let Some(count) = open.1.get_mut(&client) {
                *count = count.saturating_sub(1);
                if *count == 0 {
                    open.1.remove(&client);
                }
            }
        }
        drop(open);
        self.tracker.closed.notify_waiters();
    }
}

/// Serve `app` on `listener` within `limits` until `stop` turns true; then ask every
/// connection to close and wait up to [`CONNECTION_CLOSE_GRACE`] for them.
pub async fn accept_loop(
    listener: TcpListener,
    app: Router,
    limits: ConnectionLimits,
    proxies: TrustedProxies,
    mut stop: watch::Receiver<bool>,
) {
    let tracker = Arc::new(Tracker {
        limits,
        proxies,
        open: Mutex::new((0, HashMap::new())),
        closed: Notify::new(),
    });
    while !*stop.borrow() {
        let accepted = tokio::select! {
            accepted = listener.accept() => accepted,
            changed = stop.changed() => if changed.is_err() { break } else { continue },
        };
        let (stream, peer) = match accepted {
            Ok(accepted) => accepted,
            Err(error) => {
                // Out of descriptors (or another transient failure): the error repeats
                // until a connection closes, so wait instead of spinning.
                tracing::warn!(error = %error, "accept failed");
                tokio::time::sleep(ACCEPT_BACKOFF).await;
                continue;
            }
        };
        let Some(admitted) = tracker.admit(peer.ip()) else {
            tracing::debug!(peer = %peer.ip(), "connection shed");
            // Best effort: a full socket buffer just gets the close.
            let _ = stream.try_write(BUSY_RESPONSE);
            continue;
        };
        let (app, limits, stop) = (app.clone(), tracker.limits.clone(), stop.clone());
        tokio::spawn(async move {
            serve_connection(stream, peer, app, &limits, stop).await;
            drop(admitted);
        });
    }
    let drained = tokio::time::timeout(CONNECTION_CLOSE_GRACE, async {
        loop {
            let closed = tracker.closed.notified();
            if tracker.open() == 0 {
                break;
            }
            closed.await;
        }
    })
    .await;
    if drained.is_err() {
        tracing::info!(
            open = tracker.open(),
            "connections still open at shutdown: cut"
        );
    }
}

async fn serve_connection(
    stream: TcpStream,
    peer: SocketAddr,
    app: Router,
    limits: &ConnectionLimits,
    mut stop: watch::Receiver<bool>,
) {
    let service = hyper::service::service_fn(move |mut request: hyper::Request<Incoming>| {
        request.extensions_mut().insert(ConnectInfo(peer));
        app.clone().oneshot(request)
    });
    let mut builder = hyper::server::conn::http1::Builder::new();
    builder
        .timer(TokioTimer::new())
        .header_read_timeout(limits.header_read_timeout)
        .keep_alive(true);
    let connection = builder.serve_connection(TokioIo::new(stream), service);
    tokio::pin!(connection);
    let too_old = tokio::time::sleep(limits.max_age);
    tokio::pin!(too_old);
    if !*stop.borrow() {
        tokio::select! {
            _ = connection.as_mut() => return,
            () = &mut too_old => {}
            _ = stop.changed() => {}
        }
    }
    connection.as_mut().graceful_shutdown();
    let _ = tokio::time::timeout(CONNECTION_CLOSE_GRACE, connection).await;
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tracker(max: usize, per_client: usize, proxies: TrustedProxies) -> Arc<Tracker> {
        Arc::new(Tracker {
            limits: ConnectionLimits {
                max_connections: max,
                per_client,
                ..ConnectionLimits::default()
            },
            proxies,
            open: Mutex::new((0, HashMap::new())),
            closed: Notify::new(),
        })
    }

    #[test]
    fn connections_are_capped_overall_and_per_client() {
        let tracker = tracker(5, 2, TrustedProxies::default());
        let a: IpAddr = "192.0.2.1".parse().unwrap();
        let a_too: IpAddr = "2001:db8::1".parse().unwrap();
        let a_too_again: IpAddr = "2001:db8::2".parse().unwrap();
        let first = tracker.admit(a).unwrap();
        let _second = tracker.admit(a).unwrap();
        assert!(tracker.admit(a).is_none(), "the client's cap");
        let _v6 = tracker.admit(a_too).unwrap();
        let _v6b = tracker.admit(a_too_again).unwrap();
        assert!(tracker.admit(a_too).is_none(), "one /64 is one client");
        let _other = tracker.admit("192.0.2.9".parse().unwrap()).unwrap();
        assert!(
            tracker.admit("192.0.2.10".parse().unwrap()).is_none(),
            "the overall cap"
        );
        drop(first);
        assert!(
            tracker.admit(a).is_some(),
            "a closed connection frees its place"
        );
    }

    #[test]
    fn trusted_proxies_have_no_per_client_cap() {
        let proxies = TrustedProxies::new(vec!["10.0.0.0/8".parse().unwrap()]);
        let tracker = tracker(10, 1, proxies);
        let proxy: IpAddr = "10.1.2.3".parse().unwrap();
        let held: Vec<_> = (0..5).map(|_| tracker.admit(proxy).unwrap()).collect();
        assert_eq!(tracker.open(), 5);
        drop(held);
        assert_eq!(tracker.open(), 0);
    }

    #[test]
    fn the_cap_keeps_descriptors_in_reserve() {
        assert_eq!(connections_fitting(Some(1024)), 1024 - FD_RESERVE);
        assert_eq!(connections_fitting(Some(100)), 16);
        assert_eq!(connections_fitting(Some(1 << 40)), MAX_CONNECTIONS);
        assert_eq!(connections_fitting(None), MAX_CONNECTIONS);
    }
}
