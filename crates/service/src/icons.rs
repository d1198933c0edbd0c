//! The seam for site icons: the service decides *when* a domain's icon is looked
//! for ([`ICON_REFRESH`](crate::limits::ICON_REFRESH) once it has one,
//! [`ICON_RETRY`](crate::limits::ICON_RETRY) while it has none) and stores the 64×64 PNG;
//! an [`IconSource`] (the `icon` crate: declared icons of the home page, then
//! `/favicon.ico`, robots.txt honoured, decoded and shrunk with bomb limits) finds it.
//! Without a source, no icon is looked for and nothing is recorded. [`FetchedIcons`] is the
//! real source: `icon::find_icon` on the service's fetcher.

use std::future::Future;
use std::pin::Pin;

use fetch::Fetcher;
use tokio::sync::oneshot;
use url::Url;

/// A boxed, sendable future.
pub type BoxFuture<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

/// Finds a site's icon: the 64×64 PNG, or `None` when there is none (or it is broken).
pub trait IconSource: Send + Sync {
    /// Look for the icon of the site whose home page is `home`.
    fn find<'a>(&'a self, home: &'a Url) -> BoxFuture<'a, Option<Vec<u8>>>;
}

/// Icons found by `icon::find_icon` (declared icons of the home page, best first, then
/// `/favicon.ico`, each only where robots.txt allows it; decoded within the icon crate's bomb
/// limits and under its 30 s deadline). Its future is not `Send` (the HTML tokenizer), so each
/// search runs on a thread of its own with a single-threaded runtime: searches are rare (at
/// most one per scheduled check).
#[derive(Clone, Debug)]
pub struct FetchedIcons {
    fetcher: Fetcher,
    decoder: icon::IconDecoder,
}

impl FetchedIcons {
    /// Icons fetched with `fetcher` (the service's, identifying as RobotsTxtParser) and
    /// decoded by `decoder` (the serving binary: `IconDecoder::Sandboxed`, a helper process
    /// with memory and CPU-time limits).
    pub fn new(fetcher: Fetcher, decoder: icon::IconDecoder) -> FetchedIcons {
        FetchedIcons { fetcher, decoder }
    }
}

impl IconSource for FetchedIcons {
    fn find<'a>(&'a self, home: &'a Url) -> BoxFuture<'a, Option<Vec<u8>>> {
        let (fetcher, home) = (self.fetcher.clone(), home.clone());
        let decoder = self.decoder.clone();
        Box::pin(async move {
            let (tx, rx) = oneshot::channel();
            let spawned = std::thread::Builder::new()
                .name("icon-search".into())
                .spawn(move || {
                    let runtime = tokio::runtime::Builder::new_current_thread()
                        .enable_all()
                        .build();
                    let Ok(runtime) = runtime else {
                        return;
                    };
                    let search = runtime.block_on(icon::find_icon(&fetcher, &home, None, &decoder));
                    let _ = tx.send(search.icon.map(|found| found.png.as_bytes().to_vec()));
                });
            if spawned.is_err() {
                return None;
            }
            rx.await.ok().flatten()
        })
    }
}
