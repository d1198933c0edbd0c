//! What a page tells bots, read from its bytes and headers. Pure: no I/O, no async.
//!
//! - [`tokenizer`] is the workspace's one HTML tokenizer: the WHATWG tokenizer's states on
//!   bytes, whole or chunk by chunk, `Send`, checked against html5ever's in a differential
//!   test. Every HTML reader below (and `crates/render`'s reading of a rendered DOM) runs on
//!   it.
//! - [`links::read_links`] reads what a page points to: links with their `nofollow`, media,
//!   `<base href>`, and hands its meta tags to the caller (the crawler's reading of a page).
//! - [`head::HeadReader`] reads the `<meta name content>` tags of a `<head>` from the body's
//!   chunks as they arrive and says when the head has ended, so a caller can stop the
//!   download there. The end is the tokenizer's: a `</head>` inside a script, a comment or a
//!   title is text, not the end. [`scan::HeadScanner`] is the scanner under it (each start
//!   tag of the head handed to a collector); the icon links of `crates/icon` are another
//!   collector.
//! - [`directives`] is the one robots-directive parser (meta tags and `X-Robots-Tag`, for
//!   every crawler or named for one): [`directives::PageDirectives`] keeps every directive
//!   for a report (RobotsTxtParser's analysis), [`directives::ForBot`] says what applies to
//!   one bot (the crawler's decisions).
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

pub mod charref;
pub mod directives;
pub mod head;
pub mod links;
pub mod scan;
pub mod tokenizer;

/// The longest header value, meta content or directive text kept, in characters.
pub const MAX_SOURCE_CHARS: usize = 200;

/// Cuts `text` to [`MAX_SOURCE_CHARS`] characters: what is kept of a header value or meta
/// content once its directives are read.
pub fn excerpt(text: &str) -> String {
    text.chars().take(MAX_SOURCE_CHARS).collect()
}
