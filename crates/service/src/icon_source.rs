//! What finds a site's icon, as the service sees it: a trait the service holds
//! ([`crate::Service::set_icon_source`]) and [`crate::icons::FetchedIcons`] implements, below
//! both so that neither needs the other to name it.

use std::future::Future;
use std::pin::Pin;
use std::time::Duration;

use icon::{HomePage, KnownRobots};
use url::Url;

/// A boxed, sendable future.
pub type BoxFuture<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

/// What a search for a site's icon starts from: what the analysis before it read.
#[derive(Debug, Clone, Copy)]
pub struct IconRequest<'a> {
    /// The site's home page (`https://example.com/`).
    pub home: &'a Url,
    /// The site's robots.txt as the analysis read it.
    pub robots: KnownRobots<'a>,
    /// The home page's head, when the analysed URL was the home page.
    pub home_page: Option<HomePage<'a>>,
    /// The site's Crawl-delay for the bot (at most [`icon::CRAWL_DELAY_BUDGET`]).
    pub crawl_delay: Option<Duration>,
}

/// Finds a site's icon: the 64×64 PNG, or `None` when there is none (or it is broken).
pub trait IconSource: Send + Sync {
    /// Look for the icon of the site `request` names.
    fn find<'a>(&'a self, request: IconRequest<'a>) -> BoxFuture<'a, Option<Vec<u8>>>;
}
