//! What JittyBot takes from an HTML page: links, media references, robots meta
//! tags, with a tag scanner that follows the HTML tokenizer ([`scan`]; it replaced lol_html,
//! ~15 % of the crawler's CPU per page), never regexes; nothing is executed.
//!
//! - Links: `<a href>`, `<area href>`, `<link rel=alternate|next|prev href>` (not alternate
//!   stylesheets), each with whether its `rel` says `nofollow`.
//! - Media: `<img src>`, `<img srcset>` and `<picture><source srcset>` candidates, and
//!   `<meta property="og:image|og:image:url|og:image:secure_url" content>`.
//! - Robots meta tags (`robots`, `jittybot`; see [`crate::directives`]).
//! - `<base href>`: the first one sets the base URL of every relative reference in the page,
//!   also those before it (as browsers resolve them).
//!
//! Limits: at most [`MAX_LINKS_PER_PAGE`] links and [`MAX_MEDIA_PER_PAGE`] media references
//! are kept per page (the rest are dropped and counted); a tag longer than
//! [`MAX_PARSER_MEMORY`] ends the reading (`truncated`); the scanner's own memory is
//! constant. The page is read as UTF-8 unless the caller names another ASCII-compatible
//! encoding (from `Content-Type`); non-ASCII bytes in URLs are then decoded with it.
//!
//! Attribute values are text as the HTML spec makes them: after the page's encoding, their
//! character references are decoded ([`decode_attribute`]: numeric and all 2,231 named ones,
//! with the spec's rule for attributes that keeps `?a=1&copy=2` as written), so
//! `href="/q?a=1&amp;b=2"` leads to `/q?a=1&b=2` as in a browser. lol_html, which the
//! scanner replaced, left them undecoded, and so did the scanner at first: the crawler then
//! fetched URLs no browser asks for (`&amp;` in queries).

use std::borrow::Cow;

use encoding_rs::Encoding;
use jiff::Timestamp;
use url::Url;

use crate::directives::{self, Directives};
use crate::normal::NormalUrl;

use self::scan::{Attr, Tag};

pub use self::charref::decode_attribute;

mod charref;
#[cfg(test)]
mod oracle;
mod scan;
#[cfg(test)]
mod tests;

/// Links kept per page at most.
pub const MAX_LINKS_PER_PAGE: usize = 5_000;
/// Media references kept per page at most.
pub const MAX_MEDIA_PER_PAGE: usize = 1_000;
/// The longest tag (from its `<` to its `>`, attributes included) read: a longer one, as
/// only a hostile or broken page has, ends the scan and the page is `truncated`. (The name
/// is from when it capped lol_html's buffers, where such a tag had the same effect.)
pub const MAX_PARSER_MEMORY: usize = 4 * 1024 * 1024;

/// A link found on a page.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Link {
    /// Where it points, resolved and normalised.
    pub url: NormalUrl,
    /// `rel="nofollow"` on this link.
    pub nofollow: bool,
}

/// What a page offers the crawler.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Page {
    /// Its links, in document order, duplicates removed.
    pub links: Vec<Link>,
    /// Its media references, in document order, duplicates removed.
    pub media: Vec<NormalUrl>,
    /// Robots meta directives addressed to everyone or to JittyBot.
    pub meta: Directives,
    /// References dropped over the limits.
    pub dropped: usize,
    /// Whether the tokenizer gave up (a limit): what was found before is kept.
    pub truncated: bool,
}

#[derive(Default)]
struct Raw {
    base: Option<String>,
    links: Vec<(String, bool)>,
    media: Vec<String>,
    meta: Directives,
    dropped: usize,
}

impl Raw {
    fn link(&mut self, href: String, nofollow: bool) {
        if self.links.len() < MAX_LINKS_PER_PAGE {
            self.links.push((href, nofollow));
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

/// Read a page's links, media and meta directives. `encoding` is a charset label from
/// `Content-Type` (unknown or non-ASCII-compatible labels fall back to UTF-8).
pub fn read_page(body: &[u8], page: &Url, encoding: Option<&str>, now: Timestamp) -> Page {
    let encoding = encoding
        .and_then(|l| Encoding::for_label(l.trim().as_bytes()))
        .filter(|e| e.is_ascii_compatible())
        .unwrap_or(encoding_rs::UTF_8);
    let mut reader = Reader {
        raw: Raw::default(),
        encoding,
        now,
        pictures: 0,
    };
    let scanned = scan::scan(body, MAX_PARSER_MEMORY, |tag| reader.tag(tag));
    resolve(reader.raw, page, scanned.is_err())
}

/// What [`read_page`] keeps while the scanner runs.
struct Reader {
    raw: Raw,
    encoding: &'static Encoding,
    now: Timestamp,
    /// `<picture>` elements open: a `<source>` counts only inside one. Opened by
    /// `<picture>`, closed by `</picture>` and by nothing else (the tree builder would also
    /// close one left open when a parent element closes; pages rarely need that).
    pictures: usize,
}

impl Reader {
    /// An attribute's value as text: decoded as the page is (malformed bytes replaced, a
    /// leading BOM dropped, as lol_html's `get_attribute` did), then its character
    /// references ([`decode_attribute`]).
    fn text<'t>(&self, tag: &Tag<'t>, attr: Attr) -> Option<Cow<'t, str>> {
        Some(decode_attribute(self.encoding.decode(tag.attr(attr)?).0))
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
                self.raw.link(href.into_owned(), nofollow);
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
                srcset(&set).into_iter().for_each(|u| self.raw.media(u));
            }
        } else if name.eq_ignore_ascii_case(b"base") && self.raw.base.is_none() {
            self.raw.base = self.text(tag, Attr::Href).map(Cow::into_owned);
        }
    }

    /// `<link rel=alternate|next|prev href>`, not an (alternate) stylesheet.
    fn link(&mut self, tag: &Tag<'_>) {
        let page_like = self.rel_has(tag, &["alternate", "next", "prev"]);
        if page_like && !self.rel_has(tag, &["stylesheet"]) {
            if let Some(href) = self.text(tag, Attr::Href) {
                let nofollow = self.rel_has(tag, &["nofollow"]);
                self.raw.link(href.into_owned(), nofollow);
            }
        }
    }

    fn img(&mut self, tag: &Tag<'_>) {
        if let Some(src) = self.text(tag, Attr::Src) {
            self.raw.media(src.into_owned());
        }
        if let Some(set) = self.text(tag, Attr::Srcset) {
            srcset(&set).into_iter().for_each(|u| self.raw.media(u));
        }
    }

    /// `<meta content>`: robots directives by `name`, `og:image` media by `property`.
    fn meta(&mut self, tag: &Tag<'_>) {
        let Some(content) = self.text(tag, Attr::Content) else {
            return;
        };
        if let Some(name) = self.text(tag, Attr::Name) {
            if let Some(d) = directives::from_meta(&name, &content, self.now) {
                self.raw.meta.add(d);
            }
        }
        if let Some(property) = self.text(tag, Attr::Property) {
            let p = property.trim().to_ascii_lowercase();
            if matches!(
                p.as_str(),
                "og:image" | "og:image:url" | "og:image:secure_url"
            ) {
                self.raw.media(content.into_owned());
            }
        }
    }
}

fn resolve(raw: Raw, page: &Url, truncated: bool) -> Page {
    let base = raw
        .base
        .as_deref()
        .and_then(|b| page.join(b.trim()).ok())
        .filter(|b| matches!(b.scheme(), "http" | "https"))
        .unwrap_or_else(|| page.clone());
    let mut out = Page {
        meta: raw.meta,
        dropped: raw.dropped,
        truncated,
        ..Page::default()
    };
    // Sized up front: growing from empty rehashed several times per page (~10 % of a
    // bench page's reading in callgrind). foldhash: the set lives for one page, bounded by
    // MAX_LINKS_PER_PAGE, and SipHash cost more than the lookups.
    let mut seen = SeenSet::with_capacity_and_hasher(raw.links.len(), Default::default());
    for (href, nofollow) in raw.links {
        if let Ok(url) = NormalUrl::join(&base, &href) {
            if seen.insert(url.as_str().to_string()) {
                out.links.push(Link { url, nofollow });
            } else if !nofollow {
                // A followable occurrence wins over a nofollow one.
                if let Some(l) = out.links.iter_mut().find(|l| l.url == url) {
                    l.nofollow = false;
                }
            }
        }
    }
    let mut seen = SeenSet::with_capacity_and_hasher(raw.media.len(), Default::default());
    for src in raw.media {
        if let Ok(url) = NormalUrl::join(&base, &src) {
            if seen.insert(url.as_str().to_string()) {
                out.media.push(url);
            }
        }
    }
    out
}

/// The URLs already kept from one page.
type SeenSet = std::collections::HashSet<String, foldhash::fast::RandomState>;

/// The URLs of a `srcset` (HTML's "parse a srcset attribute", without the descriptors).
fn srcset(value: &str) -> Vec<String> {
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

#[cfg(test)]
mod differential;
