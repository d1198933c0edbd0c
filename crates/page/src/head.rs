//! Reading the `<meta>` tags of a page's `<head>` with the workspace's HTML tokenizer (no
//! scripts run), chunk by chunk as the body arrives, on the one head scanner
//! ([`crate::scan`]).
//!
//! The head ends where the tokenizer says so: at a `</head>` end tag or a `<body>` start tag
//! *token*. A `</head>` written inside a `<script>`, a comment, a `<title>` or a `<style>` is
//! text to the tokenizer, so it does not end the head (a byte search for `</head>` would stop
//! there and miss the meta tags after it). A `<noscript>` is raw text, as browsers read it
//! with scripts enabled: a meta tag inside one is not a meta tag.

use serde::{Deserialize, Serialize};

pub use crate::scan::HeadState;
use crate::scan::{attribute, Attr, HeadScanner, HeadTags, Tag};

/// At most this many meta tags are kept from one page.
pub const MAX_META_TAGS: usize = 200;

/// A `<meta name=... content=...>` tag.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct MetaTag {
    /// The `name` attribute, trimmed and lowercase.
    pub name: String,
    /// The `content` attribute as written, entities decoded (empty when missing).
    pub content: String,
}

/// The meta tags of a head, up to [`MAX_META_TAGS`].
#[derive(Default)]
struct Metas(Vec<MetaTag>);

impl HeadTags for Metas {
    fn start_tag(&mut self, tag: &Tag<'_>) {
        if !tag.is(b"meta") || self.0.len() >= MAX_META_TAGS {
            return;
        }
        let Some(name) = attribute(tag, Attr::Name) else {
            return;
        };
        self.0.push(MetaTag {
            name: name.trim().to_ascii_lowercase(),
            content: attribute(tag, Attr::Content).unwrap_or_default(),
        });
    }
}

/// Reads the meta tags of a `<head>` from the body's chunks, as they arrive.
///
/// Invalid UTF-8 is replaced (a character split between two chunks is read whole); markup
/// errors are tolerated as browsers tolerate them. Memory is bounded by the tag being read
/// and [`MAX_META_TAGS`], not by the size of the page.
pub struct HeadReader {
    scanner: HeadScanner<Metas>,
}

impl Default for HeadReader {
    fn default() -> HeadReader {
        HeadReader::new()
    }
}

impl HeadReader {
    /// A reader at the start of a page.
    pub fn new() -> HeadReader {
        HeadReader {
            scanner: HeadScanner::new(Metas::default()),
        }
    }

    /// Reads the next chunk of the body. Once it answers [`HeadState::Ended`], further
    /// chunks are ignored.
    pub fn feed(&mut self, chunk: &[u8]) -> HeadState {
        self.scanner.feed(chunk)
    }

    /// Whether the head has ended.
    pub fn has_ended(&self) -> bool {
        self.scanner.has_ended()
    }

    /// The meta tags read so far.
    pub fn metas(&self) -> Vec<MetaTag> {
        self.scanner.tags().0.clone()
    }

    /// Ends the page (all of it, or as much as was read) and returns its head's meta tags.
    pub fn finish(self) -> Vec<MetaTag> {
        self.scanner.finish().0
    }
}

/// The meta tags with a `name` in the head of a whole `html` body (see [`HeadReader`]).
pub fn meta_tags(html: &[u8]) -> Vec<MetaTag> {
    let mut reader = HeadReader::new();
    reader.feed(html);
    reader.finish()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn meta(name: &str, content: &str) -> MetaTag {
        MetaTag {
            name: name.into(),
            content: content.into(),
        }
    }

    #[test]
    fn reads_metas_until_the_head_ends() {
        let html = br#"<!doctype html><html><head>
            <META NAME="Robots" CONTENT="noindex, nofollow">
            <meta name=googlebot content=noarchive>
            <meta charset="utf-8"><meta property="og:title" content="x">
            <script>document.write('<meta name="robots" content="none">')</script>
            <title><meta name="robots" content="all"></title>
            <style>/* <meta name="robots" content="all"> */</style>
            </head><body><meta name="robots" content="index"></body></html>"#;
        assert_eq!(
            meta_tags(html),
            vec![
                meta("robots", "noindex, nofollow"),
                meta("googlebot", "noarchive")
            ]
        );
    }

    #[test]
    fn a_head_end_inside_script_comment_or_title_is_text() {
        let html = br#"<html><head>
            <script>var s = "</head><body>";</script>
            <!-- </head> -->
            <title>A </head> in a title</title>
            <meta name="robots" content="noindex">
            </head><body>"#;
        assert_eq!(meta_tags(html), vec![meta("robots", "noindex")]);
    }

    #[test]
    fn stops_at_body_without_head_end_and_survives_garbage() {
        assert!(meta_tags(b"<body><meta name=robots content=noindex>").is_empty());
        assert!(meta_tags(b"\xff\xfe<<<>>>").is_empty());
        let truncated = meta_tags(b"<head><meta name=robots content=noindex><meta name=robots con");
        assert_eq!(truncated, vec![meta("robots", "noindex")]);
    }

    #[test]
    fn chunks_give_the_same_tags_and_say_when_the_head_ended() {
        let html = "<head><meta name=\"robots\" content=\"noindex, café\"><script>x='</head>'\
                    </script><meta name=googlebot content=nosnippet></head><body>x</body>"
            .as_bytes();
        let whole = meta_tags(html);
        assert_eq!(whole.len(), 2);
        assert_eq!(whole[0].content, "noindex, café");
        let marker = b"</head><body>";
        let end = html
            .windows(marker.len())
            .position(|window| window == marker)
            .expect("the real end")
            + b"</head>".len();
        // Every split, including inside the two bytes of "é" and inside the tags.
        for split in 1..html.len() {
            let mut reader = HeadReader::new();
            let first = reader.feed(&html[..split]);
            let second = reader.feed(&html[split..]);
            assert_eq!(first == HeadState::Ended, split >= end, "split at {split}");
            assert_eq!(second, HeadState::Ended, "split at {split}");
            assert_eq!(reader.finish(), whole, "split at {split}");
        }
    }

    #[test]
    fn after_the_end_nothing_more_is_read() {
        let mut reader = HeadReader::new();
        assert_eq!(reader.feed(b"<head></head>"), HeadState::Ended);
        assert_eq!(
            reader.feed(b"<meta name=robots content=noindex>"),
            HeadState::Ended
        );
        assert!(reader.finish().is_empty());
    }

    #[test]
    fn meta_count_is_capped() {
        let html = "<meta name=a content=b>".repeat(MAX_META_TAGS + 10);
        assert_eq!(meta_tags(html.as_bytes()).len(), MAX_META_TAGS);
    }
}
