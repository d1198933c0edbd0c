//! What JittyBot takes from an HTML page: its links and media, resolved and normalised
//! ([`crate::normal`]), and the robots directives of its meta tags for JittyBot. The page is
//! read by the workspace's HTML reader ([`page::links`], on `page`'s tokenizer) and its
//! directives by the workspace's one directive parser ([`page::directives::ForBot`]).
//!
//! Limits ([`MAX_LINKS_PER_PAGE`], [`MAX_MEDIA_PER_PAGE`], [`MAX_PARSER_MEMORY`]) are the
//! reader's; see `crates/page`.

use jiff::Timestamp;
use page::directives::ForBot;
use page::links::{read_links, PageLinks};
pub use page::links::{MAX_LINKS_PER_PAGE, MAX_MEDIA_PER_PAGE, MAX_PARSER_MEMORY};
use url::Url;

use crate::normal::NormalUrl;

/// JittyBot's name as matched in meta names (`<meta name="jittybot">`) and `X-Robots-Tag`
/// values (`jittybot: noindex`).
pub const BOT_NAME: &str = "jittybot";

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
    pub meta: ForBot,
    /// References dropped over the limits.
    pub dropped: usize,
    /// Whether the reader gave up (a limit): what was found before is kept.
    pub truncated: bool,
}

/// The directives of a response's `X-Robots-Tag` headers for JittyBot, as of `now`.
pub fn header_directives<'a>(values: impl IntoIterator<Item = &'a str>, now: Timestamp) -> ForBot {
    ForBot::read(values, [], BOT_NAME, now)
}

/// Read a page's links, media and meta directives. `encoding` is a charset label from
/// `Content-Type` (unknown or non-ASCII-compatible labels fall back to UTF-8).
pub fn read_page(body: &[u8], page: &Url, encoding: Option<&str>, now: Timestamp) -> Page {
    let mut meta = ForBot::default();
    let found = read_links(body, encoding, |name, content| {
        meta.add_meta(name, content, BOT_NAME, now)
    });
    resolve(found, page, meta)
}

fn resolve(found: PageLinks, page: &Url, meta: ForBot) -> Page {
    let base = found.base_url(page);
    let mut out = Page {
        meta,
        dropped: found.dropped,
        truncated: found.truncated,
        ..Page::default()
    };
    // Sized up front: growing from empty rehashed several times per page (~10 % of a
    // bench page's reading in callgrind). foldhash: the set lives for one page, bounded by
    // MAX_LINKS_PER_PAGE, and SipHash cost more than the lookups.
    let mut seen = SeenSet::with_capacity_and_hasher(found.links.len(), Default::default());
    for link in found.links {
        if let Ok(url) = NormalUrl::join(&base, &link.href) {
            if seen.insert(url.as_str().to_string()) {
                out.links.push(Link {
                    url,
                    nofollow: link.nofollow,
                });
            } else if !link.nofollow {
                // A followable occurrence wins over a nofollow one.
                if let Some(l) = out.links.iter_mut().find(|l| l.url == url) {
                    l.nofollow = false;
                }
            }
        }
    }
    let mut seen = SeenSet::with_capacity_and_hasher(found.media.len(), Default::default());
    for src in found.media {
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

    #[test]
    fn links_are_normalised_and_kept_once() {
        let p = read(
            r#"<base href="https://EXAMPLE.test./b/"><a href="x.html#top" rel=nofollow>
            <a href="x.html">again</a><a href="https://u:p@example.test/%7e/">u</a>
            <a href="mailto:a@b">m</a><img src="i.png"><img src="i.png#x">"#,
        );
        let links: Vec<(&str, bool)> = p
            .links
            .iter()
            .map(|l| (l.url.as_str(), l.nofollow))
            .collect();
        assert_eq!(
            links,
            [
                ("https://example.test/b/x.html", false),
                ("https://example.test/~/", false),
            ]
        );
        assert_eq!(p.media.len(), 1);
    }

    #[test]
    fn meta_and_header_directives_for_jittybot() {
        let p = read(
            r#"<meta name="googlebot" content="noindex"><meta name="JittyBot" content="nofollow">"#,
        );
        assert_eq!((p.meta.noindex, p.meta.nofollow), (false, true));
        let now = "2026-01-01T00:00:00Z".parse().unwrap();
        let headers = header_directives(
            [
                "googlebot: noindex",
                "jittybot: nofollow, max-snippet:20",
                "max-image-preview:large, noindex",
            ],
            now,
        );
        assert_eq!(headers.label(), "noindex,nofollow");
        assert_eq!(header_directives(["googlebot: none"], now).label(), "");
    }
}
