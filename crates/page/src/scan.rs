//! The one head scanner: a page's body tokenized chunk by chunk ([`crate::tokenizer`]) until
//! its `<head>` ends, each start tag of the head handed to a collector. The head readers of
//! this crate (meta tags) and of `crates/icon` (icon links) are collectors.
//!
//! The head ends where the tokenizer says so: at a `</head>` end tag or a `<body>` start tag
//! *token*. A `</head>` written inside a `<script>`, a comment, a `<title>` or a `<style>` is
//! text to the tokenizer, so it does not end the head.

use std::ops::ControlFlow;

use crate::links::MAX_PARSER_MEMORY;
pub use crate::tokenizer::{Attr, Tag};
use crate::tokenizer::{Fed, Tokenizer};

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
    /// A start tag of the head. Called for every start tag before the head ends.
    fn start_tag(&mut self, tag: &Tag<'_>);
}

/// The text of attribute `attr` of `tag` (see [`Tag::text`]).
pub fn attribute(tag: &Tag<'_>, attr: Attr) -> Option<String> {
    tag.text(attr).map(|text| text.into_owned())
}

/// Tokenizes a body's chunks as they arrive, until the head ends, handing each start tag of
/// the head to `T`.
///
/// Markup errors are tolerated as browsers tolerate them; attribute values are read as UTF-8
/// (invalid bytes replaced). Memory is bounded by the tag being read (a tag longer than
/// [`MAX_PARSER_MEMORY`] ends the head there) and what `T` keeps, not by the size of the page; once the head
/// has ended, further chunks are not tokenized. Plain data: `Send`, so a reader may be held
/// across the awaits of a download.
pub struct HeadScanner<T: HeadTags> {
    tokenizer: Tokenizer,
    /// The bytes the tokenizer asked to keep (the tag being read), then the new chunk.
    kept: Vec<u8>,
    tags: T,
    ended: bool,
}

impl<T: HeadTags> HeadScanner<T> {
    /// A scanner at the start of a page, collecting into `tags`.
    pub fn new(tags: T) -> HeadScanner<T> {
        HeadScanner {
            tokenizer: Tokenizer::new(MAX_PARSER_MEMORY),
            kept: Vec::new(),
            tags,
            ended: false,
        }
    }

    /// Reads the next chunk of the body. Once it answers [`HeadState::Ended`], further
    /// chunks are ignored.
    pub fn feed(&mut self, chunk: &[u8]) -> HeadState {
        if !self.ended && !chunk.is_empty() {
            self.kept.extend_from_slice(chunk);
            self.read(false);
        }
        if self.ended {
            HeadState::Ended
        } else {
            HeadState::Open
        }
    }

    /// Whether the head has ended.
    pub fn has_ended(&self) -> bool {
        self.ended
    }

    /// What was collected so far.
    pub fn tags(&self) -> &T {
        &self.tags
    }

    /// Ends the page (all of it, or as much as was read) and returns what was collected.
    pub fn finish(mut self) -> T {
        if !self.ended {
            self.read(true);
        }
        self.tags
    }

    fn read(&mut self, end: bool) {
        let tags = &mut self.tags;
        let fed = self.tokenizer.feed(&self.kept, end, |tag| {
            if (tag.end && tag.is(b"head")) || tag.starts(b"body") {
                return ControlFlow::Break(());
            }
            if !tag.end {
                tags.start_tag(tag);
            }
            ControlFlow::Continue(())
        });
        match fed {
            Ok(Fed::Keep(keep)) => {
                self.kept.drain(..keep);
            }
            // The head's end, or a tag past the cap: nothing after it is head metadata.
            Ok(Fed::Stopped) | Err(_) => {
                self.ended = true;
                self.kept = Vec::new();
            }
        }
    }
}
