//! RobotsTxtParser's web site: server-rendered pages (maud), one stylesheet, no script.
//!
//! [`router`] serves every page from a [`SiteData`] (the store's reads and submissions), so
//! `jittybot serve` merges it beside the JSON API. Pages: `/` (analyse and paste forms, the
//! ranking, totals), `/score/{domain}`, `/score/{domain}/{report}`, `/paste/{id}`,
//! `/scoring`, `/bot`, `/stats`, `/icon/{domain}`, `/robots.txt`, `/sitemap.xml`.
//!
//! Modules depend downwards: `routes` uses the pages, the pages use `html`, `svg` and the pure
//! decisions (`indexing`, `ranking`, `sitemap`, `stats`), which use only `data`'s types.

mod cache;
pub mod data;
pub mod html;
pub mod indexing;
#[cfg(feature = "testing")]
pub mod memory;
mod pages;
pub mod ranking;
mod routes;
pub mod security;
pub mod sitemap;
pub mod stats;
pub mod svg;

use std::sync::Arc;
use std::time::Duration;

use url::Url;

pub use data::{
    CurrentReport, DataError, DomainHistory, MonthlySummary, ReportId, ReportLookup, ReportState,
    ReportSummary, SiteData, StoredReport, SubmitError, Submitted,
};
pub use indexing::{Indexing, NoindexReason};

/// The largest robots.txt accepted from the paste and upload form (500 KB, what the audit
/// reads of a file).
pub const MAX_PASTE_BYTES: usize = 500 * 1024;

/// How long the list of current reports (ranking, totals, sitemap) is reused before it is
/// read again: the pick itself changes every [`ranking::WINDOW_SECONDS`], this only bounds
/// how late a new site shows up.
pub const DATA_REFRESH: Duration = Duration::from_secs(60);

/// How long `/stats` is reused before the aggregates are read again.
pub const STATS_REFRESH: Duration = Duration::from_secs(600);

/// How the site is set up.
#[derive(Debug, Clone)]
pub struct SiteConfig {
    /// The address the public reaches the service at (absolute links, sitemap.xml).
    pub public_url: Url,
    /// See [`DATA_REFRESH`].
    pub data_refresh: Duration,
    /// See [`STATS_REFRESH`].
    pub stats_refresh: Duration,
}

impl SiteConfig {
    /// The published defaults for `public_url`.
    pub fn new(public_url: Url) -> SiteConfig {
        SiteConfig {
            public_url,
            data_refresh: DATA_REFRESH,
            stats_refresh: STATS_REFRESH,
        }
    }
}

/// Every page of the site, with the security headers, over `data`.
pub fn router<D: SiteData>(data: Arc<D>, config: SiteConfig) -> axum::Router {
    routes::router(data, config)
}
