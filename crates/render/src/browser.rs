//! One headless Chromium with a fresh profile, driven over the DevTools protocol
//! (chromiumoxide), unable to reach the network by itself.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use chromiumoxide::browser::{Browser, BrowserConfig};
use futures::StreamExt;
use tokio::task::JoinHandle;

use crate::RenderError;

/// Where the browser's own network traffic goes: a closed port. Every request of a page is
/// answered through the DevTools Fetch domain; anything that escapes interception (a service
/// worker, a browser-initiated request) fails here instead of reaching a site.
pub const CLOSED_PROXY: &str = "127.0.0.1:9";

/// The longest wait for a launched browser to open its DevTools endpoint.
pub const LAUNCH_TIMEOUT: Duration = Duration::from_secs(20);

/// The longest wait for a DevTools command outside a page's time: closing a browser (a
/// page's own commands wait until its deadline instead, however long that is).
pub const COMMAND_TIMEOUT: Duration = Duration::from_secs(10);

/// A browser that answers nothing for this long (no command of a page's closing, no
/// `Browser.getVersion`) is hung: it is replaced. A browser that is merely late (a loaded
/// machine, a page keeping it busy) answers within this and is kept.
pub const HUNG_AFTER: Duration = Duration::from_secs(20);

/// When the DevTools client forgets a command that got no answer (its caller has given up
/// long before: at its page's deadline or after [`HUNG_AFTER`]); bounds what unanswered
/// commands hold.
pub const FORGET_COMMAND_AFTER: Duration = Duration::from_secs(300);

/// Attempts at removing a closed browser's profile directory, [`PROFILE_REMOVAL_PAUSE`] apart.
pub const PROFILE_REMOVAL_TRIES: usize = 20;
/// The pause between two attempts at removing a profile directory.
pub const PROFILE_REMOVAL_PAUSE: Duration = Duration::from_millis(100);

/// Where Chromium is looked for, in order, when `JITTYBOT_CHROMIUM` is not set.
pub const CHROMIUM_PATHS: &[&str] = &[
    "/usr/bin/chromium",
    "/usr/bin/chromium-browser",
    "/usr/bin/google-chrome",
];

/// The Chromium to use: `JITTYBOT_CHROMIUM` if set, else the first of [`CHROMIUM_PATHS`]
/// that exists; `None` when there is none.
pub fn find_chromium() -> Option<PathBuf> {
    if let Some(path) = std::env::var_os("JITTYBOT_CHROMIUM") {
        return Some(PathBuf::from(path));
    }
    CHROMIUM_PATHS
        .iter()
        .map(PathBuf::from)
        .find(|p| p.exists())
}

/// Chromium features turned off (`--disable-features`), each for work done per page that
/// a render never uses:
/// - `SpareRendererForSitePerProcess`: a spare renderer process is started ahead for the
///   context last used; every page has a context of its own, so each spare was started for
///   nothing and thrown away.
/// - `WebUIOmniboxPopup`, `WebUIOmniboxAimPopup`: every browser context opens a window, and
///   each window preloads its address bar's suggestion popup as a WebUI page in a renderer
///   of its own (`chrome://omnibox-popup.top-chrome/`); nobody types in a headless window.
///   That renderer cost more CPU than the page's own renderer and browser-side set-up
///   together (interactive benchmark, `docs/benchmarks.md`).
/// - `Translate`, `OptimizationHints`, `MediaRouter`: background services (network traffic
///   of their own, which the closed proxy would fail anyway).
pub const DISABLED_FEATURES: &str = "SpareRendererForSitePerProcess,WebUIOmniboxPopup,\
    WebUIOmniboxAimPopup,Translate,OptimizationHints,MediaRouter";

/// The command-line flags of the browser (besides the profile directory and DevTools port,
/// which chromiumoxide adds): headless, no background traffic of its own, and the network
/// closed (a proxy on a closed port, loopback included, and no name resolution).
pub fn browser_flags() -> Vec<(&'static str, Option<&'static str>)> {
    vec![
        ("headless", None),
        ("no-sandbox", None),
        ("disable-gpu", None),
        ("disable-quic", None),
        ("no-first-run", None),
        ("no-default-browser-check", None),
        ("disable-background-networking", None),
        ("disable-component-update", None),
        ("disable-sync", None),
        ("disable-extensions", None),
        ("disable-dev-shm-usage", None),
        ("mute-audio", None),
        ("hide-scrollbars", None),
        ("disable-features", Some(DISABLED_FEATURES)),
        ("proxy-server", Some(CLOSED_PROXY)),
        // Chromium never proxies loopback unless told so: without this a page on a loopback
        // test web could be reached directly.
        ("proxy-bypass-list", Some("<-loopback>")),
        ("host-resolver-rules", Some("MAP * ~NOTFOUND")),
        // WebRTC may not send UDP around the (closed) proxy: no peer connection, no STUN
        // request, no local address leaked.
        (
            "force-webrtc-ip-handling-policy",
            Some("disable_non_proxied_udp"),
        ),
        ("webrtc-ip-handling-policy", Some("disable_non_proxied_udp")),
        // chromiumoxide speaks DevTools over a WebSocket only (no pipe transport): the
        // endpoint is on loopback, on a port chosen by the system at each launch.
        ("remote-debugging-address", Some("127.0.0.1")),
    ]
}

/// Browsers launched by this process so far.
static LAUNCHES: AtomicUsize = AtomicUsize::new(0);

/// How many browsers this process has launched (started or not), for tests and benchmarks.
pub fn launches() -> usize {
    LAUNCHES.load(Ordering::Relaxed)
}

/// A running browser with its own fresh profile directory (removed when it closes).
pub struct Renderer {
    pub(crate) browser: Browser,
    handler: JoinHandle<()>,
    /// The browser's main process.
    pid: Option<u32>,
    _profile: tempfile::TempDir,
}

impl std::fmt::Debug for Renderer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Renderer")
            .field("profile", &self._profile.path())
            .finish_non_exhaustive()
    }
}

impl Renderer {
    /// Launch `executable` headless with a fresh profile and every page's requests
    /// intercepted.
    pub async fn launch(executable: &Path) -> Result<Renderer, RenderError> {
        let profile = tempfile::Builder::new()
            .prefix("jittybot-profile-")
            .tempdir()
            .map_err(RenderError::Profile)?;
        let mut builder = BrowserConfig::builder()
            .chrome_executable(executable)
            .disable_default_args()
            .with_head() // `headless` is among our own flags
            .user_data_dir(profile.path())
            .enable_request_intercept()
            .disable_cache()
            .launch_timeout(LAUNCH_TIMEOUT)
            // A late answer is waited for up to the caller's own deadline, not a fixed time:
            // a slow browser is not a broken one.
            .request_timeout(FORGET_COMMAND_AFTER)
            .viewport(None);
        for (key, value) in browser_flags() {
            builder = match value {
                Some(v) => builder.arg((key, v)),
                None => builder.arg(key),
            };
        }
        let config = builder
            .build()
            .map_err(|reason| RenderError::Config(crate::Refused(reason)))?;
        LAUNCHES.fetch_add(1, Ordering::Relaxed);
        let (mut browser, mut handler) =
            Browser::launch(config).await.map_err(RenderError::Launch)?;
        let pid = browser.get_mut_child().and_then(|c| c.inner.id());
        let handler = tokio::spawn(async move {
            // The handler drives the DevTools connection; it ends when the browser goes.
            while let Some(event) = handler.next().await {
                if let Err(e) = event {
                    tracing::debug!(error = %e, "browser connection");
                }
            }
        });
        Ok(Renderer {
            browser,
            handler,
            pid,
            _profile: profile,
        })
    }

    /// The browser's main process id.
    pub fn pid(&self) -> Option<u32> {
        self.pid
    }

    /// False once the browser's main process is gone (crashed, killed, closed) or its
    /// DevTools connection ended.
    pub fn is_alive(&self) -> bool {
        !self.handler.is_finished() && self.pid.is_none_or(crate::procs::running)
    }

    /// Memory of the browser's processes together (its main process and every descendant:
    /// renderers, GPU and network services), as proportional set sizes from `/proc` (what
    /// they share counted once); 0 where unknown.
    pub fn memory_bytes(&self) -> u64 {
        self.pid.map_or(0, crate::procs::tree_memory_bytes)
    }

    /// Close a browser shared with pages: waits (up to [`COMMAND_TIMEOUT`]) for the other
    /// holders to let go, then closes it; if they never do, it is left to be killed when the
    /// last one drops it.
    pub async fn shut_down(self: std::sync::Arc<Self>) {
        let mut shared = self;
        let until = tokio::time::Instant::now() + COMMAND_TIMEOUT;
        loop {
            match std::sync::Arc::try_unwrap(shared) {
                Ok(renderer) => return renderer.close().await,
                Err(again) if tokio::time::Instant::now() < until => {
                    shared = again;
                    tokio::time::sleep(PROFILE_REMOVAL_PAUSE).await;
                }
                Err(_) => {
                    tracing::debug!("browser still held: killed when dropped");
                    return;
                }
            }
        }
    }

    /// Close a browser shared with pages that answers nothing: no polite close (it would
    /// not be answered), the process is killed once the other holders let go (see
    /// [`Renderer::shut_down`]).
    pub async fn kill_when_free(self: std::sync::Arc<Self>) {
        let mut shared = self;
        let until = tokio::time::Instant::now() + COMMAND_TIMEOUT;
        loop {
            match std::sync::Arc::try_unwrap(shared) {
                Ok(renderer) => return renderer.end(false).await,
                Err(again) if tokio::time::Instant::now() < until => {
                    shared = again;
                    tokio::time::sleep(PROFILE_REMOVAL_PAUSE).await;
                }
                Err(again) => {
                    // Its pages are still being closed: the process goes now, they fail.
                    if let Some(pid) = again.pid {
                        crate::procs::kill(pid);
                    }
                    return;
                }
            }
        }
    }

    /// Close the browser and wait for its process to end; the profile is removed.
    pub async fn close(self) {
        self.end(true).await
    }

    /// End the browser: asked to close first when `politely`, killed in any case.
    async fn end(mut self, politely: bool) {
        if politely
            && tokio::time::timeout(COMMAND_TIMEOUT, self.browser.close())
                .await
                .is_err()
        {
            tracing::debug!("browser did not close in time: killed");
        }
        let _ = self.browser.kill().await;
        let _ = tokio::time::timeout(COMMAND_TIMEOUT, self.browser.wait()).await;
        self.handler.abort();
        // Chromium's helper processes may still write to the profile for a moment after the
        // main process ended: removing it once can leave a half-removed directory behind.
        // It is gone once it stays gone for a pause.
        let path = self._profile.path();
        for _ in 0..PROFILE_REMOVAL_TRIES {
            let _ = std::fs::remove_dir_all(path);
            tokio::time::sleep(PROFILE_REMOVAL_PAUSE).await;
            if !path.exists() {
                break;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_browser_cannot_reach_the_network_by_itself() {
        let flags = browser_flags();
        assert!(flags.contains(&("proxy-server", Some(CLOSED_PROXY))));
        assert!(flags.contains(&("proxy-bypass-list", Some("<-loopback>"))));
        assert!(flags.contains(&("host-resolver-rules", Some("MAP * ~NOTFOUND"))));
        assert!(flags.contains(&("disable-background-networking", None)));
        assert!(flags.contains(&(
            "force-webrtc-ip-handling-policy",
            Some("disable_non_proxied_udp")
        )));
        assert!(flags.contains(&("remote-debugging-address", Some("127.0.0.1"))));
    }
}
