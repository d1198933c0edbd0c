//! The limits of one analysis: every byte, hop, count and time budget it allows itself.

use std::time::Duration;

/// How much of robots.txt is read: 500 KiB, as the engine reads.
pub const ROBOTS_MAX_BYTES: usize = robots::MAX_ROBOTS_TXT_BYTES;
/// Redirects followed for robots.txt.
pub const ROBOTS_MAX_REDIRECTS: usize = 5;
/// How much of the page is read, at most. The whole of it goes to the HTML tokenizer, which
/// decides where the head ends.
pub const PAGE_MAX_BYTES: usize = 1024 * 1024;
/// Redirects followed for the page and for each sitemap (each hop checked against the rules).
pub const MAX_REDIRECTS: usize = 5;
/// At most this many declared sitemaps are requested.
pub const MAX_SITEMAPS_CHECKED: usize = 10;
/// No sitemap request starts later than this after the first sitemap request could start.
pub const SITEMAP_TIME_BUDGET: Duration = Duration::from_secs(20);
/// How much of each sitemap is read: enough to recognise one.
pub const SITEMAP_READ_BYTES: usize = 2 * 1024;
/// The most the bot waits in all to honour a crawl-delay within one analysis.
pub const CRAWL_DELAY_BUDGET: Duration = Duration::from_secs(10);

/// The limits of one analysis; [`Limits::default`] is the published set.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Limits {
    /// See [`ROBOTS_MAX_BYTES`].
    pub robots_max_bytes: usize,
    /// See [`ROBOTS_MAX_REDIRECTS`].
    pub robots_max_redirects: usize,
    /// See [`PAGE_MAX_BYTES`].
    pub page_max_bytes: usize,
    /// See [`MAX_REDIRECTS`].
    pub max_redirects: usize,
    /// See [`MAX_SITEMAPS_CHECKED`].
    pub max_sitemaps: usize,
    /// See [`SITEMAP_TIME_BUDGET`].
    pub sitemap_time_budget: Duration,
    /// See [`SITEMAP_READ_BYTES`].
    pub sitemap_read_bytes: usize,
    /// See [`CRAWL_DELAY_BUDGET`].
    pub crawl_delay_budget: Duration,
}

impl Default for Limits {
    fn default() -> Limits {
        Limits {
            robots_max_bytes: ROBOTS_MAX_BYTES,
            robots_max_redirects: ROBOTS_MAX_REDIRECTS,
            page_max_bytes: PAGE_MAX_BYTES,
            max_redirects: MAX_REDIRECTS,
            max_sitemaps: MAX_SITEMAPS_CHECKED,
            sitemap_time_budget: SITEMAP_TIME_BUDGET,
            sitemap_read_bytes: SITEMAP_READ_BYTES,
            crawl_delay_budget: CRAWL_DELAY_BUDGET,
        }
    }
}
