//! Site icons for RobotsTxtParser (the bot page: "the site's icon, shrunk to 64 pixels and shown
//! beside its name").
//!
//! - [`declared_icons`] / [`IconLinkReader`]: the icons a home page declares
//!   (`<link rel="icon">`, `shortcut icon`, `apple-touch-icon`, with `sizes` and `type`),
//!   read from its `<head>` with html5ever's tokenizer, `<base href>` honoured, `http`/`https`
//!   only, best size first ([`rank`]).
//! - [`decode_icon`]: ICO, PNG, GIF, JPEG and WebP with the `image` crate under
//!   [`image::Limits`], SVG with resvg (nothing external loaded), to a [`Png64`]: 64×64,
//!   aspect kept, centred on transparency. A broken or hostile image is an [`IconError`].
//! - [`Sandbox`] / [`IconDecoder`]: the same decoding in a helper process (the `icon-decode`
//!   binary, or a program calling [`run_helper`]) that limits its memory and CPU time with
//!   `setrlimit` first: any bomb stops only the helper ([`IconError::OverBudget`]).
//! - [`find_icon`]: the polite search as RobotsTxtParser: declared icons, then
//!   `/favicon.ico`, each skipped when robots.txt forbids it, one deadline for all.
//! - [`icon_due`]: when to look again (30 days with an icon, 7 days without).
//!
//! ```
//! use icon::{declared_icons, DeclaredSize};
//! let page: url::Url = "https://example.com/a/".parse().unwrap();
//! let html = br#"<head><link rel="icon" href="/16.png" sizes="16x16">
//!     <link rel="apple-touch-icon" href="touch.png"></head>"#;
//! let icons = declared_icons(html, &page);
//! assert_eq!(icons[0].url.as_str(), "https://example.com/a/touch.png");
//! assert_eq!(icons[0].size, DeclaredSize::Pixels(180));
//! assert_eq!(icons[1].url.as_str(), "https://example.com/16.png");
//! ```

mod decode;
mod error;
mod find;
mod home;
mod limits;
mod links;
mod png;
mod rank;
mod refresh;
mod sandbox;
mod svg;

pub use decode::decode_icon;
pub use error::{IconError, IconErrorKind};
pub use find::{
    find_icon, find_icon_after_analysis, find_icon_within, Attempt, AttemptResult, FoundIcon,
    HomePage, HomePageRead, IconSearch, IconSource, KnownRobots, BOT_TOKEN, CRAWL_DELAY_BUDGET,
    FIND_ICON_DEADLINE, HOME_PAGE_MAX_BYTES, ICON_ACCEPT, MAX_DECLARED_TRIED,
};
pub use home::MAX_HEAD_CHECKS;
pub use limits::{ICON_SIZE, MAX_DECODE_ALLOC, MAX_DIMENSION, MAX_ICON_BYTES};
pub use links::{
    declared_icons, IconLinkReader, MAX_ATTRIBUTE_BYTES, MAX_DECLARED_ICONS, MAX_HREF_BYTES,
};
pub use png::Png64;
pub use rank::{parse_sizes, rank, DeclaredSize, IconLink, RelKind, APPLE_TOUCH_DEFAULT_SIZE};
pub use refresh::{icon_due, next_icon_check, ICON_REFRESH_AGE, NO_ICON_RETRY_AGE};
pub use sandbox::{
    run_helper, Budget, IconDecoder, Sandbox, SandboxError, DECODE_SUBCOMMAND, SANDBOX_CPU_TIME,
    SANDBOX_MAX_HELPERS, SANDBOX_MAX_INPUT_BYTES, SANDBOX_MAX_OUTPUT_BYTES,
    SANDBOX_MAX_OUTPUT_PIXELS, SANDBOX_MAX_STDERR_BYTES, SANDBOX_MEMORY_BUDGET, SANDBOX_WALL_TIME,
};
pub use svg::{MAX_SVG_DEPTH, MAX_SVG_NODES, SVG_LAYER_COST};
