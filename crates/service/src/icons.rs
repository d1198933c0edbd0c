//! Site icons: the service decides *when* a domain's icon is looked for
//! ([`ICON_REFRESH`](crate::limits::ICON_REFRESH) once it has one,
//! [`ICON_RETRY`](crate::limits::ICON_RETRY) while it has none) and from what, and stores the
//! 64×64 PNG; an [`IconSource`] (the `icon` crate: declared icons of the home page, then
//! `/favicon.ico`, robots.txt honoured, decoded and shrunk with bomb limits) finds it.
//!
//! The search follows an analysis, a person's or a scheduled one, and makes no request the
//! analysis already made: it uses the robots.txt the analysis read (not fetched again) and,
//! when the analysed URL is the home page, the head the analysis read (its icon links); it
//! waits the site's Crawl-delay before its first request and is paced like the analysis. It
//! runs only after an analysis whose site answered: never after a refusal, a challenge, a 429
//! or any failure, nor when the Crawl-delay is longer than the wait budget
//! ([`icon::CRAWL_DELAY_BUDGET`]). Without a source, no icon is looked for and nothing is
//! recorded. [`FetchedIcons`] is the real source: `icon::find_icon_after_analysis` on the
//! service's fetcher.

use std::time::Duration;

use audit::report::RobotsStatus;
use audit::Analyzed;
use fetch::Fetcher;
use icon::{HomePage, KnownRobots};
use url::Url;

use crate::error::ServiceError;
use crate::ids::registrable_domain;
use crate::schedule::{classify, CheckOutcome};
use crate::service::Service;

pub use crate::icon_source::{BoxFuture, IconRequest, IconSource};

/// Icons found by `icon::find_icon_after_analysis` (declared icons of the home page, best
/// first, then `/favicon.ico`, each only where robots.txt allows it; decoded by the given
/// decoder within the icon crate's limits and under its 30 s deadline).
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
    fn find<'a>(&'a self, request: IconRequest<'a>) -> BoxFuture<'a, Option<Vec<u8>>> {
        Box::pin(async move {
            let search = icon::find_icon_after_analysis(
                &self.fetcher,
                request.home,
                request.home_page,
                request.robots,
                request.crawl_delay,
                &self.decoder,
            )
            .await;
            search.icon.map(|found| found.png.as_bytes().to_vec())
        })
    }
}

/// The home page of `url`'s site.
fn home_of(url: &Url) -> Url {
    let mut home = url.clone();
    home.set_path("/");
    home.set_query(None);
    home.set_fragment(None);
    home
}

impl Service {
    /// After an analysis of `url`: look for its domain's icon when it is due, from what the
    /// analysis read, if the site answered (see the module's text).
    pub async fn icon_after_analysis(
        &self,
        url: &Url,
        analyzed: &Analyzed,
    ) -> Result<(), ServiceError> {
        let Some(source) = self.inner.icons.get() else {
            return Ok(());
        };
        let analysis = &analyzed.analysis;
        if classify(Ok(analysis)) != CheckOutcome::Ok {
            return Ok(());
        }
        let robots = match analysis.robots.outcome {
            RobotsStatus::Rules => KnownRobots::Rules(analysis.robots.body_bytes()),
            RobotsStatus::NoFile => KnownRobots::NoFile,
            _ => return Ok(()),
        };
        let crawl_delay = match analysis.robots.crawl_delay {
            None => None,
            Some(seconds) => match Duration::try_from_secs_f64(seconds) {
                Ok(wait) if wait <= icon::CRAWL_DELAY_BUDGET => Some(wait),
                // Waiting it out is more than the search may wait: no request at all.
                _ => return Ok(()),
            },
        };
        let Some(domain) = registrable_domain(url) else {
            return Ok(());
        };
        let now = self.inner.clock.now();
        if !self.inner.store.icon_due(&domain, now).await? {
            return Ok(());
        }
        let home = home_of(url);
        // The analysed URL was the home page and was requested: what it answered is all
        // there is (a page that is not 2xx HTML declares no icon), never a second request.
        let home_page = if *url == home && analysis.page.requested {
            Some(match &analyzed.head {
                Some(head) => HomePage {
                    url: &head.url,
                    html: &head.html,
                },
                None => HomePage {
                    url: analysis.page.final_url.as_ref().unwrap_or(url),
                    html: &[],
                },
            })
        } else {
            None
        };
        let request = IconRequest {
            home: &home,
            robots,
            home_page,
            crawl_delay,
        };
        let png = source.find(request).await;
        self.inner
            .store
            .set_icon(&domain, png.as_deref(), now)
            .await
    }
}
