//! The seam for site icons (seed 004): the service decides *when* a domain's icon is looked
//! for ([`ICON_REFRESH`](crate::limits::ICON_REFRESH) once it has one,
//! [`ICON_RETRY`](crate::limits::ICON_RETRY) while it has none) and stores the 64×64 PNG;
//! an [`IconSource`] (the `icon` crate: declared icons of the home page, then
//! `/favicon.ico`, robots.txt honoured, decoded and shrunk with bomb limits) finds it.
//! Without a source, no icon is looked for and nothing is recorded.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

use url::Url;

use crate::error::ServiceError;
use crate::service::Service;

/// A boxed, sendable future.
pub type BoxFuture<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

/// Finds a site's icon: the 64×64 PNG, or `None` when there is none (or it is broken).
pub trait IconSource: Send + Sync {
    /// Look for the icon of the site whose home page is `home`.
    fn find<'a>(&'a self, home: &'a Url) -> BoxFuture<'a, Option<Vec<u8>>>;
}

impl Service {
    /// Use `source` to find icons (once; later calls are ignored).
    pub fn set_icon_source(&self, source: Arc<dyn IconSource>) {
        let _ = self.inner.icons.set(source);
    }

    /// Look for `domain`'s icon if it is due, from the home page of `url`'s site.
    pub async fn refresh_icon(&self, domain: &str, url: &Url) -> Result<(), ServiceError> {
        let Some(source) = self.inner.icons.get() else {
            return Ok(());
        };
        let now = self.inner.clock.now();
        if !self.inner.store.icon_due(domain, now).await? {
            return Ok(());
        }
        let mut home = url.clone();
        home.set_path("/");
        home.set_query(None);
        home.set_fragment(None);
        let png = source.find(&home).await;
        self.inner.store.set_icon(domain, png.as_deref(), now).await
    }
}
