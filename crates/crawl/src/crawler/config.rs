//! The crawl's settings, with the command's defaults.

use std::path::PathBuf;
use std::time::Duration;

use fetch::PacerConfig;
use robots::ProductTokens;

use crate::input::OriginRule;
use warc::WarcOptions;

/// JittyBot's product token.
pub const PAGE_TOKENS: ProductTokens = ProductTokens::from_static(&["JittyBot"]);
/// The tokens media are fetched as: the JittyBot-Image group, else JittyBot's, else `*`.
pub const MEDIA_TOKENS: ProductTokens = ProductTokens::from_static(&["JittyBot-Image", "JittyBot"]);
/// The product token media requests present in their User-Agent.
pub const MEDIA_AGENT: &str = "JittyBot-Image";

/// Default `--max-attempts`.
pub const DEFAULT_MAX_ATTEMPTS: u32 = 5;
/// Default `--revisit-after`.
pub const DEFAULT_REVISIT_AFTER: Duration = Duration::from_secs(7 * 24 * 3600);
/// Largest page read (decoded); longer pages are cut and archived as truncated.
pub const MAX_PAGE_BYTES: usize = 8 * 1024 * 1024;
/// Largest media file read (decoded); a longer one is not stored.
pub const MAX_MEDIA_BYTES: usize = 16 * 1024 * 1024;
/// The deadline of one URL's fetch: robots.txt on the way, every redirect hop and the body.
pub const URL_DEADLINE: Duration = Duration::from_secs(120);
/// The longest a worker waits for its origin's turn before giving the origin back (it is
/// claimed again when its next start comes).
pub const MAX_TURN_WAIT: Duration = Duration::from_secs(5);
/// Origins worked on at once by one process.
pub const DEFAULT_ACTIVE_ORIGINS: usize = 64;
/// URLs claimed from an origin at once.
pub const URL_CLAIM_BATCH: u32 = 32;
/// Results committed in one transaction at most.
pub const COMMIT_BATCH: usize = 512;
/// The longest a result waits to be committed.
pub const COMMIT_INTERVAL: Duration = Duration::from_millis(50);
/// Keys remembered as already queued (skips a store round trip for links seen again); the
/// set is cleared when full, so memory stays bounded.
pub const SEEN_KEYS: usize = 2_000_000;

/// The WARC files a crawl writes: `JITTYBOT-...warc.gz`, by `JittyBot/<version>`.
pub fn warc_options() -> WarcOptions {
    WarcOptions::named("JITTYBOT", concat!("JittyBot/", env!("CARGO_PKG_VERSION")))
}

/// When links are followed.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum FollowLinks {
    /// Only on sites without a usable sitemap.
    #[default]
    Auto,
    /// On every site.
    Always,
}

/// Everything a crawl is run with (the fetcher is given separately).
#[derive(Clone, Debug)]
pub struct CrawlConfig {
    /// Pace, back-off, pause: fetch's pacer.
    pub pacer: PacerConfig,
    /// Attempts before a URL is given up.
    pub max_attempts: u32,
    /// Stop after this many responses.
    pub max_pages: Option<u64>,
    /// When links are followed.
    pub follow_links: FollowLinks,
    /// When a fetched page not governed by a sitemap `lastmod` is due again.
    pub revisit_after: Duration,
    /// The WARC directory.
    pub warc_dir: PathBuf,
    /// WARC file options.
    pub warc: WarcOptions,
    /// The operator's origin rules.
    pub origin_rules: Vec<OriginRule>,
    /// Origins worked on at once.
    pub active_origins: usize,
    /// How long an origin lease lasts unless renewed (renewed every third of it).
    pub origin_lease: Duration,
    /// Which sites' pages are rendered in a browser.
    pub interactive: super::Interactive,
    /// The operator's levers kept in a file (`--control`), applied at the start and again
    /// whenever the file changes.
    pub control_file: Option<PathBuf>,
}

impl CrawlConfig {
    /// The defaults of `jittybot crawl`, writing WARC files to `warc_dir`.
    pub fn new(warc_dir: impl Into<PathBuf>) -> CrawlConfig {
        CrawlConfig {
            pacer: PacerConfig::default(),
            max_attempts: DEFAULT_MAX_ATTEMPTS,
            max_pages: None,
            follow_links: FollowLinks::Auto,
            revisit_after: DEFAULT_REVISIT_AFTER,
            warc_dir: warc_dir.into(),
            warc: warc_options(),
            origin_rules: Vec::new(),
            active_origins: DEFAULT_ACTIVE_ORIGINS,
            origin_lease: crate::store::ORIGIN_LEASE,
            interactive: super::Interactive::Off,
            control_file: None,
        }
    }
}

/// How many more times a store transaction that failed in a way that may pass (a deadlock, a
/// busy database, a lost connection) is tried before the crawl stops with the error.
pub const STORE_RETRIES: u32 = 3;
