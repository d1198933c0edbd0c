//! What JittyBot takes from an HTML page (issue 9): links, media references, robots meta
//! tags, with a streaming tokenizer (lol_html), never regexes; nothing is executed.
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
//! are kept per page (the rest are dropped and counted); the tokenizer's own buffers are
//! capped at [`MAX_PARSER_MEMORY`]. The page is read as UTF-8 unless the caller names another
//! ASCII-compatible encoding (from `Content-Type`); non-ASCII bytes in URLs are then decoded
//! with it.

use std::borrow::Cow;
use std::cell::RefCell;
use std::sync::LazyLock;

use jiff::Timestamp;
use lol_html::html_content::Element;
use lol_html::{HtmlRewriter, MemorySettings, Selector, Settings};
use url::Url;

use crate::directives::{self, Directives};
use crate::normal::NormalUrl;

/// Links kept per page at most.
pub const MAX_LINKS_PER_PAGE: usize = 5_000;
/// Media references kept per page at most.
pub const MAX_MEDIA_PER_PAGE: usize = 1_000;
/// Memory the HTML tokenizer may use for its buffers (a huge tag fails the parse there).
pub const MAX_PARSER_MEMORY: usize = 4 * 1024 * 1024;

/// Bytes handed to the tokenizer at once.
const FEED_BYTES: usize = 64 * 1024;

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

fn rel_has(el: &Element<'_, '_>, token: &str) -> bool {
    el.get_attribute("rel").is_some_and(|rel| {
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
                if let Some(href) = el.get_attribute("href") {
                    raw.borrow_mut().link(href, rel_has(el, "nofollow"));
                }
                Ok(())
            }),
            on!(&sel.links, |el| {
                let page_like = ["alternate", "next", "prev"].iter().any(|t| rel_has(el, t));
                if page_like && !rel_has(el, "stylesheet") {
                    if let Some(href) = el.get_attribute("href") {
                        raw.borrow_mut().link(href, rel_has(el, "nofollow"));
                    }
                }
                Ok(())
            }),
            on!(&sel.base, |el| {
                let mut r = raw.borrow_mut();
                if r.base.is_none() {
                    r.base = el.get_attribute("href");
                }
                Ok(())
            }),
            on!(&sel.img, |el| {
                let mut r = raw.borrow_mut();
                if let Some(src) = el.get_attribute("src") {
                    r.media(src);
                }
                if let Some(set) = el.get_attribute("srcset") {
                    srcset(&set).into_iter().for_each(|u| r.media(u));
                }
                Ok(())
            }),
            on!(&sel.source, |el| {
                if let Some(set) = el.get_attribute("srcset") {
                    let mut r = raw.borrow_mut();
                    srcset(&set).into_iter().for_each(|u| r.media(u));
                }
                Ok(())
            }),
            on!(&sel.meta, |el| {
                let content = el.get_attribute("content").unwrap_or_default();
                if let Some(name) = el.get_attribute("name") {
                    if let Some(d) = directives::from_meta(&name, &content, now) {
                        raw.borrow_mut().meta.add(d);
                    }
                }
                if let Some(property) = el.get_attribute("property") {
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

    fn read(html: &str) -> Page {
        let url = Url::parse("https://example.test/dir/page.html").unwrap();
        read_page(
            html.as_bytes(),
            &url,
            None,
            "2026-01-01T00:00:00Z".parse().unwrap(),
        )
    }

    fn urls(p: &Page) -> Vec<(&str, bool)> {
        p.links
            .iter()
            .map(|l| (l.url.as_str(), l.nofollow))
            .collect()
    }

    #[test]
    fn the_constant_selectors_parse() {
        // `SELECTORS` panics on first use otherwise: every page would fail to parse.
        let _ = &SELECTORS.anchors;
    }

    #[test]
    fn links_with_base_and_nofollow() {
        let p = read(
            r#"<html><head><link rel="next" href="p2.html"><link rel="alternate stylesheet" href="s.css">
            <link rel=stylesheet href=x.css><link rel="Alternate" hreflang=fr href="/fr/">
            <base href="https://example.test/other/"></head><body>
            <a href="a.html#top">a</a> <a href="b.html" rel="NoFollow noopener">b</a>
            <a href="javascript:void(0)">js</a><a href="mailto:x@y">m</a><a>no href</a>
            <map><area href="/area"></map><a href="a.html">again</a>
            <script>document.write('<a href="/from-script">')</script>
            <form action="/form"></form></body></html>"#,
        );
        assert_eq!(
            urls(&p),
            [
                ("https://example.test/other/p2.html", false),
                ("https://example.test/fr/", false),
                ("https://example.test/other/a.html", false),
                ("https://example.test/other/b.html", true),
                ("https://example.test/area", false),
            ]
        );
        assert!(!p.truncated);
    }

    #[test]
    fn media_references() {
        let p = read(
            r#"<head><meta property="og:image" content="/og.png"></head>
            <img src="a.png" srcset="a-1x.png 1x, a-2x.png 2x,b.png, c.png 100w">
            <picture><source srcset="d.webp 1x, e.webp 2x"><img src="a.png"></picture>
            <img data-src="lazy.png">"#,
        );
        let m: Vec<&str> = p.media.iter().map(|u| u.as_str()).collect();
        assert_eq!(
            m,
            [
                "https://example.test/og.png",
                "https://example.test/dir/a.png",
                "https://example.test/dir/a-1x.png",
                "https://example.test/dir/a-2x.png",
                "https://example.test/dir/b.png",
                "https://example.test/dir/c.png",
                "https://example.test/dir/d.webp",
                "https://example.test/dir/e.webp",
            ]
        );
    }

    #[test]
    fn meta_robots_for_us_only() {
        let p = read(
            r#"<meta name="googlebot" content="noindex"><meta name="robots" content="nofollow">"#,
        );
        assert_eq!(
            p.meta,
            Directives {
                noindex: false,
                nofollow: true
            }
        );
        let p = read(r#"<meta name="JittyBot" content="none">"#);
        assert_eq!(
            p.meta,
            Directives {
                noindex: true,
                nofollow: true
            }
        );
        // A meta tag after a `</head>` inside a script still counts: the tokenizer, not bytes.
        let p = read(
            r#"<head><script>var s = "</head>";</script><meta name="robots" content="noindex"></head>"#,
        );
        assert!(p.meta.noindex);
    }

    #[test]
    fn limits_hold() {
        let many: String = (0..MAX_LINKS_PER_PAGE + 10)
            .map(|i| format!("<a href=/{i}>x</a>"))
            .collect();
        let p = read(&many);
        assert_eq!(p.links.len(), MAX_LINKS_PER_PAGE);
        assert_eq!(p.dropped, 10);
        let huge = format!("<a href=\"/{}\">", "x".repeat(MAX_PARSER_MEMORY * 2));
        let p = read(&format!("<a href=/first>f</a>{huge}"));
        assert!(p.truncated);
        assert_eq!(p.links.len(), 1);
    }

    #[test]
    fn srcset_candidates() {
        assert_eq!(srcset("a.png 1x, b.png 2x"), ["a.png", "b.png"]);
        assert_eq!(srcset(" a.png, b.png"), ["a.png", "b.png"]);
        // Per HTML, a comma inside a URL without whitespace is part of it.
        assert_eq!(srcset("a.png,b.png 2x"), ["a.png,b.png"]);
        assert_eq!(srcset("a.png (x, y) 1x, c.png"), ["a.png", "c.png"]);
        assert!(srcset("  ,  ").is_empty());
    }
}
