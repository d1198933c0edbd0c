//! What a page's markup points to: links, media references, `<base href>`, read with the
//! workspace's tokenizer ([`crate::tokenizer`]), never regexes; nothing is executed. The
//! crawler reads every page it fetches with it (and resolves and normalises what it finds).
//!
//! - Links: `<a href>`, `<area href>`, `<link rel=alternate|next|prev href>` (not alternate
//!   stylesheets), each with whether its `rel` says `nofollow`.
//! - Media: `<img src>`, `<img srcset>` and `<picture><source srcset>` candidates, and
//!   `<meta property="og:image|og:image:url|og:image:secure_url" content>`.
//! - Meta tags with a `name` and a `content`, handed to the caller as they come (the robots
//!   directives among them are read by [`crate::directives`]).
//! - `<base href>`: the first one sets the base URL of every relative reference in the page,
//!   also those before it (as browsers resolve them): [`PageLinks::base_url`].
//!
//! Limits: at most [`MAX_LINKS_PER_PAGE`] links and [`MAX_MEDIA_PER_PAGE`] media references
//! are kept per page (the rest are dropped and counted); a tag longer than
//! [`MAX_PARSER_MEMORY`] ends the reading (`truncated`); the tokenizer's own memory is
//! constant. The page is read as UTF-8 unless the caller names another ASCII-compatible
//! encoding (from `Content-Type`); non-ASCII bytes in URLs are then decoded with it.
//!
//! Attribute values are text as the HTML spec makes them ([`crate::tokenizer::attribute_text`]:
//! after the page's encoding, character references decoded, numeric and all 2,231 named
//! ones, with the spec's rule for attributes that keeps `?a=1&copy=2` as written), so
//! `href="/q?a=1&amp;b=2"` leads to `/q?a=1&b=2` as in a browser.

use std::borrow::Cow;

use encoding_rs::Encoding;
use url::Url;

use crate::tokenizer::{self, attribute_text, Attr, Tag};

#[cfg(test)]
mod tests;

/// Links kept per page at most.
pub const MAX_LINKS_PER_PAGE: usize = 5_000;
/// Media references kept per page at most.
pub const MAX_MEDIA_PER_PAGE: usize = 1_000;
/// The longest tag (from its `<` to its `>`, attributes included) read: a longer one, as
/// only a hostile or broken page has, ends the reading and the page is `truncated`.
pub const MAX_PARSER_MEMORY: usize = 4 * 1024 * 1024;

/// A link as written on a page.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RawLink {
    /// The `href`, as text (not yet resolved).
    pub href: String,
    /// `rel="nofollow"` on this link.
    pub nofollow: bool,
}

/// What a page points to, as written, in document order.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PageLinks {
    /// The first `<base href>`.
    pub base: Option<String>,
    /// Its links, up to [`MAX_LINKS_PER_PAGE`].
    pub links: Vec<RawLink>,
    /// Its media references, up to [`MAX_MEDIA_PER_PAGE`].
    pub media: Vec<String>,
    /// References dropped over the limits.
    pub dropped: usize,
    /// Whether the reading stopped early (a tag over [`MAX_PARSER_MEMORY`]): what was found
    /// before is kept.
    pub truncated: bool,
}

impl PageLinks {
    /// The URL relative references of the page at `page` resolve against: its `<base href>`
    /// (an `http` or `https` one) or the page's own URL.
    pub fn base_url(&self, page: &Url) -> Url {
        self.base
            .as_deref()
            .and_then(|b| page.join(b.trim()).ok())
            .filter(|b| matches!(b.scheme(), "http" | "https"))
            .unwrap_or_else(|| page.clone())
    }

    fn link(&mut self, href: String, nofollow: bool) {
        if self.links.len() < MAX_LINKS_PER_PAGE {
            self.links.push(RawLink { href, nofollow });
        } else {
            self.dropped += 1;
        }
    }

    fn media(&mut self, src: String) {
        if self.media.len() < MAX_MEDIA_PER_PAGE {
            self.media.push(src);
        } else {
            self.dropped += 1;
        }
    }
}

/// Reads a page's links, media and `<base href>`, handing each `<meta name content>` to
/// `on_meta` (name and content as text, untrimmed). `encoding` is a charset label from
/// `Content-Type` (unknown or non-ASCII-compatible labels fall back to UTF-8).
pub fn read_links(
    body: &[u8],
    encoding: Option<&str>,
    on_meta: impl FnMut(&str, &str),
) -> PageLinks {
    let encoding = encoding
        .and_then(|l| Encoding::for_label(l.trim().as_bytes()))
        .filter(|e| e.is_ascii_compatible())
        .unwrap_or(encoding_rs::UTF_8);
    let mut reader = Reader {
        found: PageLinks::default(),
        encoding,
        on_meta,
        pictures: 0,
    };
    let read = tokenizer::scan(body, MAX_PARSER_MEMORY, |tag| reader.tag(tag));
    reader.found.truncated = read.is_err();
    reader.found
}

/// What [`read_links`] keeps while the tokenizer runs.
struct Reader<M> {
    found: PageLinks,
    encoding: &'static Encoding,
    on_meta: M,
    /// `<picture>` elements open: a `<source>` counts only inside one. Opened by
    /// `<picture>`, closed by `</picture>` and by nothing else (the tree builder would also
    /// close one left open when a parent element closes; pages rarely need that).
    pictures: usize,
}

impl<M: FnMut(&str, &str)> Reader<M> {
    /// An attribute's value as text, decoded as the page is.
    fn text<'t>(&self, tag: &Tag<'t>, attr: Attr) -> Option<Cow<'t, str>> {
        Some(attribute_text(tag.attr(attr)?, self.encoding))
    }

    fn rel_has(&self, tag: &Tag<'_>, tokens: &[&str]) -> bool {
        self.text(tag, Attr::Rel).is_some_and(|rel| {
            rel.split_ascii_whitespace()
                .any(|t| tokens.iter().any(|w| t.eq_ignore_ascii_case(w)))
        })
    }

    fn tag(&mut self, tag: &Tag<'_>) {
        if tag.end {
            if tag.is(b"picture") {
                self.pictures = self.pictures.saturating_sub(1);
            }
            return;
        }
        // Tag names are ASCII-case-insensitive; sorted by how often pages have them.
        let name = tag.name;
        if name.eq_ignore_ascii_case(b"a") || name.eq_ignore_ascii_case(b"area") {
            if let Some(href) = self.text(tag, Attr::Href) {
                let nofollow = self.rel_has(tag, &["nofollow"]);
                self.found.link(href.into_owned(), nofollow);
            }
        } else if name.eq_ignore_ascii_case(b"img") {
            self.img(tag);
        } else if name.eq_ignore_ascii_case(b"link") {
            self.link(tag);
        } else if name.eq_ignore_ascii_case(b"meta") {
            self.meta(tag);
        } else if name.eq_ignore_ascii_case(b"picture") {
            self.pictures += 1;
        } else if name.eq_ignore_ascii_case(b"source") && self.pictures > 0 {
            if let Some(set) = self.text(tag, Attr::Srcset) {
                srcset(&set).into_iter().for_each(|u| self.found.media(u));
            }
        } else if name.eq_ignore_ascii_case(b"base") && self.found.base.is_none() {
            self.found.base = self.text(tag, Attr::Href).map(Cow::into_owned);
        }
    }

    /// `<link rel=alternate|next|prev href>`, not an (alternate) stylesheet.
    fn link(&mut self, tag: &Tag<'_>) {
        let page_like = self.rel_has(tag, &["alternate", "next", "prev"]);
        if page_like && !self.rel_has(tag, &["stylesheet"]) {
            if let Some(href) = self.text(tag, Attr::Href) {
                let nofollow = self.rel_has(tag, &["nofollow"]);
                self.found.link(href.into_owned(), nofollow);
            }
        }
    }

    fn img(&mut self, tag: &Tag<'_>) {
        if let Some(src) = self.text(tag, Attr::Src) {
            self.found.media(src.into_owned());
        }
        if let Some(set) = self.text(tag, Attr::Srcset) {
            srcset(&set).into_iter().for_each(|u| self.found.media(u));
        }
    }

    /// `<meta content>`: to the caller by `name`, `og:image` media by `property`.
    fn meta(&mut self, tag: &Tag<'_>) {
        let Some(content) = self.text(tag, Attr::Content) else {
            return;
        };
        if let Some(name) = self.text(tag, Attr::Name) {
            (self.on_meta)(&name, &content);
        }
        if let Some(property) = self.text(tag, Attr::Property) {
            let p = property.trim().to_ascii_lowercase();
            if matches!(
                p.as_str(),
                "og:image" | "og:image:url" | "og:image:secure_url"
            ) {
                self.found.media(content.into_owned());
            }
        }
    }
}

/// The URLs of a `srcset` (HTML's "parse a srcset attribute", without the descriptors).
pub fn srcset(value: &str) -> Vec<String> {
    let mut urls = Vec::new();
    let mut rest = value;
    loop {
        rest = rest.trim_start_matches(|c: char| c.is_ascii_whitespace() || c == ',');
        if rest.is_empty() {
            return urls;
        }
        let end = rest
            .find(|c: char| c.is_ascii_whitespace())
            .unwrap_or(rest.len());
        let (url, after) = rest.split_at(end);
        if let Some(trimmed) = url.strip_suffix(',') {
            // "a.png," : the candidate ends here, without descriptors.
            urls.push(trimmed.trim_end_matches(',').to_string());
            rest = after;
            continue;
        }
        urls.push(url.to_string());
        // Skip descriptors up to the next comma outside parentheses.
        let mut depth = 0usize;
        let mut next = after.len();
        for (i, c) in after.char_indices() {
            match c {
                '(' => depth += 1,
                ')' => depth = depth.saturating_sub(1),
                ',' if depth == 0 => {
                    next = i + 1;
                    break;
                }
                _ => {}
            }
        }
        rest = &after[next.min(after.len())..];
    }
}
