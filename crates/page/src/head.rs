//! Reading the `<meta>` tags of a page's `<head>` with an HTML tokenizer (no scripts run),
//! chunk by chunk as the body arrives.
//!
//! The head ends where the tokenizer says so: at a `</head>` end tag or a `<body>` start tag
//! *token*. A `</head>` written inside a `<script>`, a comment, a `<title>` or a `<style>` is
//! text to the tokenizer, so it does not end the head (a byte search for `</head>` would stop
//! there and miss the meta tags after it).

use std::cell::{Cell, RefCell};

use html5ever::tendril::StrTendril;
use html5ever::tokenizer::states::RawKind;
use html5ever::tokenizer::{
    BufferQueue, Tag, TagKind, Token, TokenSink, TokenSinkResult, Tokenizer, TokenizerOpts,
};
use serde::{Deserialize, Serialize};

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

/// Whether the head is still being read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HeadState {
    /// The head has not ended yet: feed more of the body.
    Open,
    /// The head has ended: the rest of the body holds no head metadata and need not be read.
    Ended,
}

#[derive(Default)]
struct Collector {
    metas: RefCell<Vec<MetaTag>>,
    ended: Cell<bool>,
}

impl Collector {
    fn tag(&self, tag: &Tag) -> TokenSinkResult<()> {
        let name: &str = &tag.name;
        match (tag.kind, name) {
            (TagKind::EndTag, "head") | (TagKind::StartTag, "body") => {
                self.ended.set(true);
                TokenSinkResult::Continue
            }
            (TagKind::StartTag, "meta") => {
                self.meta(tag);
                TokenSinkResult::Continue
            }
            // The tokenizer does not know which elements hold raw text: the tree builder tells
            // it. With no tree builder, the sink does, as browsers' tree builders would.
            (TagKind::StartTag, "script") if !tag.self_closing => {
                TokenSinkResult::RawData(RawKind::ScriptData)
            }
            (TagKind::StartTag, "style" | "noframes" | "xmp" | "iframe" | "noembed") => {
                TokenSinkResult::RawData(RawKind::Rawtext)
            }
            (TagKind::StartTag, "title" | "textarea") => TokenSinkResult::RawData(RawKind::Rcdata),
            _ => TokenSinkResult::Continue,
        }
    }

    fn meta(&self, tag: &Tag) {
        let attribute = |wanted: &str| {
            tag.attrs
                .iter()
                .find(|attr| &*attr.name.local == wanted)
                .map(|attr| attr.value.to_string())
        };
        let Some(name) = attribute("name") else {
            return;
        };
        let mut metas = self.metas.borrow_mut();
        if metas.len() < MAX_META_TAGS {
            metas.push(MetaTag {
                name: name.trim().to_ascii_lowercase(),
                content: attribute("content").unwrap_or_default(),
            });
        }
    }
}

impl TokenSink for Collector {
    type Handle = ();

    fn process_token(&self, token: Token, _line_number: u64) -> TokenSinkResult<()> {
        if self.ended.get() {
            return TokenSinkResult::Continue;
        }
        match token {
            Token::TagToken(tag) => self.tag(&tag),
            _ => TokenSinkResult::Continue,
        }
    }
}

/// Reads the meta tags of a `<head>` from the body's chunks, as they arrive.
///
/// Invalid UTF-8 is replaced (a character split between two chunks is joined first); markup
/// errors are tolerated as browsers tolerate them. Memory is bounded by the tokenizer's
/// current token and [`MAX_META_TAGS`], not by the size of the page.
pub struct HeadReader {
    tokenizer: Tokenizer<Collector>,
    /// The chunks as text (a character split between two chunks kept whole).
    decoder: crate::utf8::ChunkDecoder,
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
            tokenizer: Tokenizer::new(Collector::default(), TokenizerOpts::default()),
            decoder: Default::default(),
        }
    }

    /// Reads the next chunk of the body. Once it answers [`HeadState::Ended`], further
    /// chunks are ignored.
    pub fn feed(&mut self, chunk: &[u8]) -> HeadState {
        if !self.has_ended() && !chunk.is_empty() {
            let text = self.decoder.decode(chunk);
            self.tokenize(text);
        }
        self.state()
    }

    /// Whether the head has ended.
    pub fn has_ended(&self) -> bool {
        self.tokenizer.sink.ended.get()
    }

    /// The meta tags read so far.
    pub fn metas(&self) -> Vec<MetaTag> {
        self.tokenizer.sink.metas.borrow().clone()
    }

    /// Ends the page (all of it, or as much as was read) and returns its head's meta tags.
    pub fn finish(self) -> Vec<MetaTag> {
        if !self.has_ended() {
            if self.decoder.is_pending() {
                // The page ended inside a character.
                self.tokenize(String::from(char::REPLACEMENT_CHARACTER));
            }
            self.tokenizer.end();
        }
        self.tokenizer.sink.metas.take()
    }

    fn state(&self) -> HeadState {
        if self.has_ended() {
            HeadState::Ended
        } else {
            HeadState::Open
        }
    }

    fn tokenize(&self, text: String) {
        if text.is_empty() {
            return;
        }
        let input = BufferQueue::default();
        input.push_back(StrTendril::from(text));
        // The sink never asks to stop for a script, so one call reads the whole chunk.
        let _ = self.tokenizer.feed(&input);
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
