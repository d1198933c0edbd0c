//! The limits of one analysis: every byte, hop, count and time budget it allows itself.
//!
//! robots.txt itself is read with the fetcher's one set of robots.txt limits, the same for
//! both bots and for `jittybot robots`: [`fetch::ROBOTS_TXT_MAX_BYTES`] (500 KiB) and
//! [`fetch::ROBOTS_TXT_MAX_REDIRECTS`] (5).

use std::time::Duration;

use crate::cost::AuditLimits;

/// The budget of one whole analysis: every request (robots.txt, the page, the sitemaps, the
/// robots.txt of other hosts), every redirect hop, every body and every crawl-delay wait
/// counts against it, and nothing of the analysis runs past it. It equals the fetcher's
/// default limit for one fetch ([`fetch::DEFAULT_TOTAL_TIMEOUT`]), so the analysis gives
/// robots.txt exactly the time `jittybot robots` gives it, and both reach the same verdict
/// on the same server; what robots.txt leaves of it goes to the page and the sitemaps.
pub const ANALYSIS_BUDGET: Duration = fetch::DEFAULT_TOTAL_TIMEOUT;
/// How much of the page is read, at most. The body goes to the HTML tokenizer as it arrives,
/// and the download stops where the tokenizer ends the head.
pub const PAGE_MAX_BYTES: usize = 1024 * 1024;
/// Redirects followed for the page and for each sitemap (each hop checked against the rules).
pub const MAX_REDIRECTS: usize = 5;
/// At most this many declared sitemaps are requested.
pub const MAX_SITEMAPS_CHECKED: usize = 10;
/// No sitemap request starts, nor runs on, later than this after the sitemap phase began.
pub const SITEMAP_TIME_BUDGET: Duration = Duration::from_secs(20);
/// How much of each sitemap is read: enough to recognise one.
pub const SITEMAP_READ_BYTES: usize = 2 * 1024;
/// The most the bot waits in all to honour a crawl-delay within one analysis.
pub const CRAWL_DELAY_BUDGET: Duration = Duration::from_secs(10);
/// How much of the page's body is read when it answers 401, 403, 429 or 5xx, to recognise a
/// bot challenge page (its markers sit in the head or the first script).
pub const CHALLENGE_READ_BYTES: usize = 64 * 1024;

/// The limits of one analysis; [`Limits::default`] is the published set.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Limits {
    /// See [`ANALYSIS_BUDGET`].
    pub analysis_budget: Duration,
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
    /// What auditing the robots.txt may cost: its CPU-time and comparison budgets
    /// ([`crate::AUDIT_CPU_BUDGET`], [`crate::COMPARISON_BUDGET`]).
    pub audit: AuditLimits,
}

impl Default for Limits {
    fn default() -> Limits {
        Limits {
            analysis_budget: ANALYSIS_BUDGET,
            page_max_bytes: PAGE_MAX_BYTES,
            max_redirects: MAX_REDIRECTS,
            max_sitemaps: MAX_SITEMAPS_CHECKED,
            sitemap_time_budget: SITEMAP_TIME_BUDGET,
            sitemap_read_bytes: SITEMAP_READ_BYTES,
            crawl_delay_budget: CRAWL_DELAY_BUDGET,
            audit: AuditLimits::default(),
        }
    }
}
