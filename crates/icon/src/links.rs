//! The icons a home page declares: `<link rel="icon">`, `shortcut icon` and
//! `apple-touch-icon` in its `<head>`, read chunk by chunk on `page`'s head scanner (no
//! script runs), then resolved against `<base href>` and ranked best first.
//!
//! The head ends where the tokenizer says so (a `</head>` end tag or a `<body>` start tag
//! token), as in `crates/page`: a `</head>` inside a script, comment or title is text.

use page::scan::{attribute, Attr, HeadScanner, HeadTags, Tag};
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

/// The icon links and the first `<base href>` of a head.
#[derive(Default)]
struct Collector {
    links: Vec<RawLink>,
    base: Option<String>,
}

impl HeadTags for Collector {
    fn start_tag(&mut self, tag: &Tag<'_>) {
        if tag.is(b"link") {
            self.link(tag);
        } else if tag.is(b"base") {
            self.base(tag);
        }
    }
}

impl Collector {
    fn link(&mut self, tag: &Tag<'_>) {
        let Some(kind) = attribute(tag, Attr::Rel).and_then(|rel| RelKind::of(&rel)) else {
            return;
        };
        let Some(href) = attribute(tag, Attr::Href) else {
            return;
        };
        let href = href.trim();
        if href.is_empty() || href.len() > MAX_HREF_BYTES {
            return;
        }
        let short = |value: Option<String>| value.filter(|v| v.len() <= MAX_ATTRIBUTE_BYTES);
        if self.links.len() < MAX_DECLARED_ICONS {
            self.links.push(RawLink {
                kind,
                href: href.to_owned(),
                sizes: short(attribute(tag, Attr::Sizes)),
                mime: short(attribute(tag, Attr::Type)),
            });
        }
    }

    /// The first `<base>` with an `href` sets the document's base URL (HTML: "the first base
    /// element with an href attribute"), wherever the links are.
    fn base(&mut self, tag: &Tag<'_>) {
        if self.base.is_none() {
            if let Some(href) = attribute(tag, Attr::Href).filter(|h| h.len() <= MAX_HREF_BYTES) {
                self.base = Some(href.trim().to_owned());
            }
        }
    }
}

/// Reads the icon links of a `<head>` from the body's chunks as they arrive, on `page`'s
/// head scanner.
///
/// Memory is bounded by the tokenizer's current token and [`MAX_DECLARED_ICONS`], not by the
/// size of the page; once the head has ended, further chunks are not tokenized.
pub struct IconLinkReader {
    scanner: HeadScanner<Collector>,
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
            scanner: HeadScanner::new(Collector::default()),
        }
    }

    /// Reads the next chunk of the body; answers whether the head has ended (then the rest
    /// of the body need not be downloaded).
    pub fn feed(&mut self, chunk: &[u8]) -> bool {
        self.scanner.feed(chunk) == page::head::HeadState::Ended
    }

    /// Whether the head has ended.
    pub fn has_ended(&self) -> bool {
        self.scanner.has_ended()
    }

    /// Ends the page (all of it or as much as was read) and returns its icons, resolved
    /// against `<base href>` (itself resolved against `page_url`, the page's final URL),
    /// `http`/`https` only, best first (see [`rank`]).
    pub fn finish(self, page_url: &Url) -> Vec<IconLink> {
        let Collector { links, base } = self.scanner.finish();
        let base = base
            .and_then(|href| page_url.join(&href).ok())
            .filter(is_web_url)
            .unwrap_or_else(|| page_url.clone());
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
