//! The lol_html reader that [`super::read_page`]'s scanner replaced, frozen as it was: the
//! oracle of the differential test and the "before" of `examples/html_bench.rs` (which
//! includes this file; hence only `crate::` paths that the crate also exports as `crawl::`).
//! One change since: its attribute values go through the scanner's character reference
//! decoding ([`attr`]), which lol_html did not do, so that the differential test still
//! compares which tags and attributes each one sees.

use std::borrow::Cow;
use std::cell::RefCell;
use std::sync::LazyLock;

use jiff::Timestamp;
use lol_html::html_content::Element;
use lol_html::{HtmlRewriter, MemorySettings, Selector, Settings};
use url::Url;

use crate::directives::{self, Directives};
use crate::html::{Link, Page, MAX_LINKS_PER_PAGE, MAX_MEDIA_PER_PAGE, MAX_PARSER_MEMORY};
use crate::normal::NormalUrl;

/// Bytes handed to the tokenizer at once.
const FEED_BYTES: usize = 64 * 1024;

/// The selectors of [`read_page`], parsed once: parsing them for every page was a
/// measurable share of the parse time (the `selectors` crate allocates a lot).
struct Selectors {
    anchors: Selector,
    links: Selector,
    base: Selector,
    img: Selector,
    source: Selector,
    meta: Selector,
}

static SELECTORS: LazyLock<Selectors> = LazyLock::new(|| {
    // Constant selectors: `lol_html::element!` unwraps the very same parse on every page.
    let parse = |text: &str| text.parse::<Selector>().expect("a valid constant selector");
    Selectors {
        anchors: parse("a[href], area[href]"),
        links: parse("link[href][rel]"),
        base: parse("base[href]"),
        img: parse("img"),
        source: parse("picture source[srcset]"),
        meta: parse("meta[content]"),
    }
});

/// `lol_html::element!` with a selector parsed once (borrowed from [`SELECTORS`]).
macro_rules! on {
    ($selector:expr, $handler:expr) => {{
        // As in `lol_html::element!`: lets the closure's argument type be inferred.
        #[inline(always)]
        const fn type_hint<'h, T, H: lol_html::HandlerTypes>(h: T) -> T
        where
            T: FnMut(&mut Element<'_, '_, H>) -> lol_html::HandlerResult + 'h,
        {
            h
        }
        (
            Cow::Borrowed($selector),
            lol_html::ElementContentHandlers::default().element(type_hint($handler)),
        )
    }};
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

/// An attribute's value as `get_attribute` gives it, with character references decoded as
/// [`crate::html::read_page`] decodes them.
fn attr(el: &Element<'_, '_>, name: &str) -> Option<String> {
    let value = el.get_attribute(name)?;
    Some(crate::html::decode_attribute(Cow::Owned(value)).into_owned())
}

fn rel_has(el: &Element<'_, '_>, token: &str) -> bool {
    attr(el, "rel").is_some_and(|rel| {
        rel.split_ascii_whitespace()
            .any(|t| t.eq_ignore_ascii_case(token))
    })
}

/// Read a page's links, media and meta directives. `encoding` is a charset label from
/// `Content-Type` (unknown or non-ASCII-compatible labels fall back to UTF-8).
pub fn read_page(body: &[u8], page: &Url, encoding: Option<&str>, now: Timestamp) -> Page {
    let raw = RefCell::new(Raw::default());
    let encoding = encoding
        .and_then(|l| encoding_rs::Encoding::for_label(l.trim().as_bytes()))
        .and_then(lol_html::AsciiCompatibleEncoding::new)
        .unwrap_or_else(lol_html::AsciiCompatibleEncoding::utf_8);
    let sel: &'static Selectors = &SELECTORS;
    let settings = Settings {
        element_content_handlers: vec![
            on!(&sel.anchors, |el| {
                if let Some(href) = attr(el, "href") {
                    raw.borrow_mut().link(href, rel_has(el, "nofollow"));
                }
                Ok(())
            }),
            on!(&sel.links, |el| {
                let page_like = ["alternate", "next", "prev"].iter().any(|t| rel_has(el, t));
                if page_like && !rel_has(el, "stylesheet") {
                    if let Some(href) = attr(el, "href") {
                        raw.borrow_mut().link(href, rel_has(el, "nofollow"));
                    }
                }
                Ok(())
            }),
            on!(&sel.base, |el| {
                let mut r = raw.borrow_mut();
                if r.base.is_none() {
                    r.base = attr(el, "href");
                }
                Ok(())
            }),
            on!(&sel.img, |el| {
                let mut r = raw.borrow_mut();
                if let Some(src) = attr(el, "src") {
                    r.media(src);
                }
                if let Some(set) = attr(el, "srcset") {
                    srcset(&set).into_iter().for_each(|u| r.media(u));
                }
                Ok(())
            }),
            on!(&sel.source, |el| {
                if let Some(set) = attr(el, "srcset") {
                    let mut r = raw.borrow_mut();
                    srcset(&set).into_iter().for_each(|u| r.media(u));
                }
                Ok(())
            }),
            on!(&sel.meta, |el| {
                let content = attr(el, "content").unwrap_or_default();
                if let Some(name) = attr(el, "name") {
                    if let Some(d) = directives::from_meta(&name, &content, now) {
                        raw.borrow_mut().meta.add(d);
                    }
                }
                if let Some(property) = attr(el, "property") {
                    let p = property.trim().to_ascii_lowercase();
                    if matches!(
                        p.as_str(),
                        "og:image" | "og:image:url" | "og:image:secure_url"
                    ) {
                        raw.borrow_mut().media(content);
                    }
                }
                Ok(())
            }),
        ],
        encoding,
        memory_settings: MemorySettings {
            max_allowed_memory_usage: MAX_PARSER_MEMORY,
            ..MemorySettings::new()
        },
        ..Settings::new()
    };
    let mut rewriter = HtmlRewriter::new(settings, |_: &[u8]| {});
    // Fed in pieces, as a stream arrives: a tag split across pieces is buffered by the
    // tokenizer, within MAX_PARSER_MEMORY.
    let truncated = body
        .chunks(FEED_BYTES)
        .any(|piece| rewriter.write(piece).is_err())
        || rewriter.end().is_err();
    let raw = raw.take();
    resolve(raw, page, truncated)
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
    let mut seen = std::collections::HashSet::new();
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
    let mut seen = std::collections::HashSet::new();
    for src in raw.media {
        if let Ok(url) = NormalUrl::join(&base, &src) {
            if seen.insert(url.as_str().to_string()) {
                out.media.push(url);
            }
        }
    }
    out
}

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
mod tests {
    use super::*;

    #[test]
    fn the_constant_selectors_parse() {
        // `SELECTORS` panics on first use otherwise: every page would fail to parse.
        let _ = &SELECTORS.anchors;
    }
}
