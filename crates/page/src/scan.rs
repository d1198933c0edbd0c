//! The one head scanner: a page's body tokenized chunk by chunk with html5ever (no scripts
//! run) until its `<head>` ends, each start tag of the head handed to a collector. The head
//! readers of this crate (meta tags) and of `crates/icon` (icon links) are collectors.
//!
//! The head ends where the tokenizer says so: at a `</head>` end tag or a `<body>` start tag
//! *token*. A `</head>` written inside a `<script>`, a comment, a `<title>` or a `<style>` is
//! text to the tokenizer, so it does not end the head.

use std::cell::{Cell, Ref, RefCell};

use html5ever::tendril::StrTendril;
use html5ever::tokenizer::states::RawKind;
pub use html5ever::tokenizer::Tag;
use html5ever::tokenizer::{
    BufferQueue, TagKind, Token, TokenSink, TokenSinkResult, Tokenizer, TokenizerOpts,
};

use crate::utf8::ChunkDecoder;

/// Whether the head is still being read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HeadState {
    /// The head has not ended yet: feed more of the body.
    Open,
    /// The head has ended: the rest of the body holds no head metadata and need not be read.
    Ended,
}

/// What a head scan collects.
pub trait HeadTags {
    /// A start tag of the head, with its attributes as the tokenizer read them (names lower
    /// case, entities decoded). Called for every start tag before the head ends.
    fn start_tag(&mut self, tag: &Tag);
}

/// The value of attribute `wanted` of `tag` (`wanted` in lower case).
pub fn attribute(tag: &Tag, wanted: &str) -> Option<String> {
    tag.attrs
        .iter()
        .find(|attr| &*attr.name.local == wanted)
        .map(|attr| attr.value.to_string())
}

struct Sink<T> {
    tags: RefCell<T>,
    ended: Cell<bool>,
}

impl<T: HeadTags> Sink<T> {
    fn tag(&self, tag: &Tag) -> TokenSinkResult<()> {
        let name: &str = &tag.name;
        if matches!(
            (tag.kind, name),
            (TagKind::EndTag, "head") | (TagKind::StartTag, "body")
        ) {
            self.ended.set(true);
            return TokenSinkResult::Continue;
        }
        if tag.kind != TagKind::StartTag {
            return TokenSinkResult::Continue;
        }
        self.tags.borrow_mut().start_tag(tag);
        // The tokenizer does not know which elements hold raw text: the tree builder tells
        // it. With no tree builder, the sink does, as browsers' tree builders would.
        match name {
            "script" if !tag.self_closing => TokenSinkResult::RawData(RawKind::ScriptData),
            "style" | "noframes" | "xmp" | "iframe" | "noembed" => {
                TokenSinkResult::RawData(RawKind::Rawtext)
            }
            "title" | "textarea" => TokenSinkResult::RawData(RawKind::Rcdata),
            _ => TokenSinkResult::Continue,
        }
    }
}

impl<T: HeadTags> TokenSink for Sink<T> {
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

/// Tokenizes a body's chunks as they arrive, until the head ends, handing each start tag of
/// the head to `T`.
///
/// Invalid UTF-8 is replaced (a character split between two chunks is joined first); markup
/// errors are tolerated as browsers tolerate them. Memory is bounded by the tokenizer's
/// current token and what `T` keeps, not by the size of the page; once the head has ended,
/// further chunks are not tokenized.
pub struct HeadScanner<T: HeadTags> {
    tokenizer: Tokenizer<Sink<T>>,
    decoder: ChunkDecoder,
}

impl<T: HeadTags> HeadScanner<T> {
    /// A scanner at the start of a page, collecting into `tags`.
    pub fn new(tags: T) -> HeadScanner<T> {
        let sink = Sink {
            tags: RefCell::new(tags),
            ended: Cell::new(false),
        };
        HeadScanner {
            tokenizer: Tokenizer::new(sink, TokenizerOpts::default()),
            decoder: ChunkDecoder::new(),
        }
    }

    /// Reads the next chunk of the body. Once it answers [`HeadState::Ended`], further
    /// chunks are ignored.
    pub fn feed(&mut self, chunk: &[u8]) -> HeadState {
        if !self.has_ended() && !chunk.is_empty() {
            let text = self.decoder.decode(chunk);
            self.tokenize(text);
        }
        if self.has_ended() {
            HeadState::Ended
        } else {
            HeadState::Open
        }
    }

    /// Whether the head has ended.
    pub fn has_ended(&self) -> bool {
        self.tokenizer.sink.ended.get()
    }

    /// What was collected so far.
    pub fn tags(&self) -> Ref<'_, T> {
        self.tokenizer.sink.tags.borrow()
    }

    /// Ends the page (all of it, or as much as was read) and returns what was collected.
    pub fn finish(self) -> T {
        if !self.has_ended() {
            if self.decoder.is_pending() {
                // The page ended inside a character.
                self.tokenize(String::from(char::REPLACEMENT_CHARACTER));
            }
            self.tokenizer.end();
        }
        self.tokenizer.sink.tags.into_inner()
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
