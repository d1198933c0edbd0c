//! What a page tells bots: the robots directives of its `X-Robots-Tag` headers and of the
//! robots meta tags in its `<head>`.
//!
//! - [`head::HeadReader`] reads the `<meta name content>` tags of a `<head>` from the body's
//!   chunks as they arrive, with html5ever's tokenizer (no scripts run), and says when the head
//!   has ended, so a caller can stop the download there. The end is the tokenizer's: a
//!   `</head>` inside a script, a comment or a title is text, not the end.
//! - [`scan::HeadScanner`] is the one head scanner under it: the body tokenized chunk by chunk
//!   until the head ends, each start tag handed to a collector ([`scan::HeadTags`]); the
//!   icon links of `crates/icon` are another collector.
//! - [`directives::PageDirectives`] reads the directives of the headers and meta tags:
//!   `noindex`, `none`, `max-snippet:20`, scoped ones (`googlebot: noindex`), conflicts and
//!   invalid values.
//!
//! Used by RobotsTxtParser's analysis (`crates/audit`) and meant for the crawler, which will
//! add link and media extraction here.
//!
//! ```
//! use page::directives::PageDirectives;
//! use page::head::{HeadReader, HeadState};
//!
//! let mut reader = HeadReader::new();
//! assert_eq!(reader.feed(b"<html><head><script>var s = '</head>';</script>"), HeadState::Open);
//! assert_eq!(reader.feed(b"<meta name=robots content=noindex></head><body>"), HeadState::Ended);
//! let metas = reader.finish();
//! let page = PageDirectives::read(
//!     ["googlebot: noarchive"],
//!     metas.iter().map(|meta| (meta.name.as_str(), meta.content.as_str())),
//!     |name| name == "googlebot",
//! );
//! assert!(page.noindex_for_all());
//! ```

pub mod directives;
pub mod head;
pub mod scan;
pub mod utf8;

/// The longest header value, meta content or directive text kept, in characters.
pub const MAX_SOURCE_CHARS: usize = 200;

/// Cuts `text` to [`MAX_SOURCE_CHARS`] characters: what is kept of a header value or meta
/// content once its directives are read.
pub fn excerpt(text: &str) -> String {
    text.chars().take(MAX_SOURCE_CHARS).collect()
}
