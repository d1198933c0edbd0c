//! The icons a home page declares: `<link rel="icon">`, `shortcut icon` and
//! `apple-touch-icon` in its `<head>`, read chunk by chunk with html5ever's tokenizer (no
//! script runs), then resolved against `<base href>` and ranked best first.
//!
//! The head ends where the tokenizer says so (a `</head>` end tag or a `<body>` start tag
//! token), as in `crates/page`: a `</head>` inside a script, comment or title is text.

use std::cell::{Cell, RefCell};

use html5ever::tendril::StrTendril;
use html5ever::tokenizer::states::RawKind;
use html5ever::tokenizer::{
    BufferQueue, Tag, TagKind, Token, TokenSink, TokenSinkResult, Tokenizer, TokenizerOpts,
};
use url::Url;

use crate::rank::{rank, IconLink, RelKind};

/// At most this many icon links are kept from one page (a hostile page may declare
/// thousands; a real one declares a handful).
pub const MAX_DECLARED_ICONS: usize = 32;

/// Longest `href` kept, in bytes: a longer one is skipped (the fetcher refuses longer URLs,
/// `fetch::MAX_TARGET_BYTES`).
pub const MAX_HREF_BYTES: usize = fetch::MAX_TARGET_BYTES;

/// Longest `sizes` or `type` attribute kept, in bytes; a longer one is read as absent.
pub const MAX_ATTRIBUTE_BYTES: usize = 256;

/// An icon link as written, before `<base href>` is known.
#[derive(Debug, Clone)]
struct RawLink {
    kind: RelKind,
    href: String,
    sizes: Option<String>,
    mime: Option<String>,
}

#[derive(Default)]
struct Collector {
    links: RefCell<Vec<RawLink>>,
    base: RefCell<Option<String>>,
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
            (TagKind::StartTag, "link") => {
                self.link(tag);
                TokenSinkResult::Continue
            }
            (TagKind::StartTag, "base") => {
                self.base(tag);
                TokenSinkResult::Continue
            }
            // With no tree builder, the sink tells the tokenizer which elements hold raw
            // text, as a browser's tree builder would (see crates/page).
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

    fn link(&self, tag: &Tag) {
        let Some(kind) = attribute(tag, "rel").and_then(|rel| RelKind::of(&rel)) else {
            return;
        };
        let Some(href) = attribute(tag, "href") else {
            return;
        };
        let href = href.trim();
        if href.is_empty() || href.len() > MAX_HREF_BYTES {
            return;
        }
        let short = |value: Option<String>| value.filter(|v| v.len() <= MAX_ATTRIBUTE_BYTES);
        let mut links = self.links.borrow_mut();
        if links.len() < MAX_DECLARED_ICONS {
            links.push(RawLink {
                kind,
                href: href.to_owned(),
                sizes: short(attribute(tag, "sizes")),
                mime: short(attribute(tag, "type")),
            });
        }
    }

    /// The first `<base>` with an `href` sets the document's base URL (HTML: "the first base
    /// element with an href attribute"), wherever the links are.
    fn base(&self, tag: &Tag) {
        let mut base = self.base.borrow_mut();
        if base.is_none() {
            if let Some(href) = attribute(tag, "href").filter(|h| h.len() <= MAX_HREF_BYTES) {
                *base = Some(href.trim().to_owned());
            }
        }
    }
}

/// The value of attribute `wanted` (names are lower case from the tokenizer).
fn attribute(tag: &Tag, wanted: &str) -> Option<String> {
    tag.attrs
        .iter()
        .find(|attr| &*attr.name.local == wanted)
        .map(|attr| attr.value.to_string())
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

/// Reads the icon links of a `<head>` from the body's chunks as they arrive.
///
/// Memory is bounded by the tokenizer's current token and [`MAX_DECLARED_ICONS`], not by the
/// size of the page; once the head has ended, further chunks are not tokenized.
pub struct IconLinkReader {
    tokenizer: Tokenizer<Collector>,
    /// The chunks as text (a character split between two chunks kept whole).
    decoder: page::utf8::ChunkDecoder,
}

impl Default for IconLinkReader {
    fn default() -> IconLinkReader {
        IconLinkReader::new()
    }
}

impl IconLinkReader {
    /// A reader at the start of a page.
    pub fn new() -> IconLinkReader {
        IconLinkReader {
            tokenizer: Tokenizer::new(Collector::default(), TokenizerOpts::default()),
            decoder: Default::default(),
        }
    }

    /// Reads the next chunk of the body; answers whether the head has ended (then the rest
    /// of the body need not be downloaded).
    pub fn feed(&mut self, chunk: &[u8]) -> bool {
        if !self.has_ended() && !chunk.is_empty() {
            let text = self.decoder.decode(chunk);
            self.tokenize(text);
        }
        self.has_ended()
    }

    /// Whether the head has ended.
    pub fn has_ended(&self) -> bool {
        self.tokenizer.sink.ended.get()
    }

    /// Ends the page (all of it or as much as was read) and returns its icons, resolved
    /// against `<base href>` (itself resolved against `page_url`, the page's final URL),
    /// `http`/`https` only, best first (see [`rank`]).
    pub fn finish(self, page_url: &Url) -> Vec<IconLink> {
        if !self.has_ended() {
            if self.decoder.is_pending() {
                self.tokenize(String::from(char::REPLACEMENT_CHARACTER));
            }
            self.tokenizer.end();
        }
        let base = self
            .tokenizer
            .sink
            .base
            .take()
            .and_then(|href| page_url.join(&href).ok())
            .filter(is_web_url)
            .unwrap_or_else(|| page_url.clone());
        let links = self.tokenizer.sink.links.take();
        let resolved = links.into_iter().filter_map(|raw| {
            let url = base.join(&raw.href).ok().filter(is_web_url)?;
            Some(IconLink::new(
                url,
                raw.kind,
                raw.sizes.as_deref(),
                raw.mime.as_deref(),
            ))
        });
        rank(resolved.collect())
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

/// An `http` or `https` URL with a host: the only icons fetched (no `data:`, `file:`,
/// `javascript:`).
fn is_web_url(url: &Url) -> bool {
    matches!(url.scheme(), "http" | "https") && url.host_str().is_some_and(|h| !h.is_empty())
}

/// The icons the page at `page_url` (its final URL, after redirects) declares in the head of
/// `html`, best first.
pub fn declared_icons(html: &[u8], page_url: &Url) -> Vec<IconLink> {
    let mut reader = IconLinkReader::new();
    reader.feed(html);
    reader.finish(page_url)
}
