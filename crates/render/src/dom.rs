//! What the rendered DOM tells a bot: its links and its robots meta tags, read from the
//! serialized DOM with the workspace's HTML tokenizer (`page::tokenizer`), the robots meta
//! tags as the workspace's directive parser counts them (`page::directives`). Nothing of the
//! page runs here: the page's script cannot change what this reads except through the DOM
//! itself, which is the point (links and meta tags added by script are found).

use page::directives::PageDirectives;
use page::tokenizer::{self, Attr, Tag};
use url::Url;

/// Links kept per rendered page at most (the rest are counted in [`DomFacts::dropped`]).
pub const MAX_DOM_LINKS: usize = 5_000;
/// Robots meta tags kept per rendered page at most.
pub const MAX_ROBOTS_METAS: usize = 200;
/// Characters kept of a meta tag's name or content (a hostile page cannot grow the output).
pub const MAX_META_CHARS: usize = 200;
/// The longest tag read (from its `<` to its `>`): a longer one ends the reading there.
pub const MAX_PARSER_MEMORY: usize = page::links::MAX_PARSER_MEMORY;
/// JittyBot's meta name: interactive mode renders pages for JittyBot, so
/// `<meta name="jittybot">` is a robots meta tag here, beside `robots` and the crawler names
/// the directive parser knows (`googlebot`, `bingbot`...).
pub const BOT_META_NAME: &str = "jittybot";

/// A link of the rendered DOM.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DomLink {
    /// Where it points, resolved against the page (and its `<base href>`), fragment removed.
    pub url: Url,
    /// `rel="nofollow"` on this link.
    pub nofollow: bool,
}

/// A robots meta tag of the rendered DOM: `<meta name="robots|jittybot|..." content="...">`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RobotsMeta {
    /// The `name`, lower case (`robots`, `jittybot`, another crawler's name).
    pub name: String,
    /// The `content`, as written.
    pub content: String,
}

/// Links and robots meta tags of a rendered DOM.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct DomFacts {
    /// `<a href>` and `<area href>` links (http and https only), document order, no duplicates.
    pub links: Vec<DomLink>,
    /// Meta tags whose name is `robots`, [`BOT_META_NAME`] or a crawler name the directive
    /// parser knows (`PageDirectives::is_robots_meta`).
    pub robots_meta: Vec<RobotsMeta>,
    /// Links or meta tags dropped over the limits.
    pub dropped: usize,
    /// The tokenizer stopped early (a tag over [`MAX_PARSER_MEMORY`]): what was found before
    /// is kept.
    pub truncated: bool,
}

fn cut(text: &str) -> String {
    text.chars().take(MAX_META_CHARS).collect()
}

fn rel_has(tag: &Tag<'_>, token: &str) -> bool {
    tag.text(Attr::Rel).is_some_and(|rel| {
        rel.split_ascii_whitespace()
            .any(|t| t.eq_ignore_ascii_case(token))
    })
}

#[derive(Default)]
struct Raw {
    base: Option<String>,
    links: Vec<(String, bool)>,
    metas: Vec<RobotsMeta>,
    dropped: usize,
}

impl Raw {
    fn tag(&mut self, tag: &Tag<'_>) {
        if tag.end {
            return;
        }
        if tag.is(b"a") || tag.is(b"area") {
            match tag.text(Attr::Href) {
                Some(href) if self.links.len() < MAX_DOM_LINKS => self
                    .links
                    .push((href.into_owned(), rel_has(tag, "nofollow"))),
                Some(_) => self.dropped += 1,
                None => {}
            }
        } else if tag.is(b"base") && self.base.is_none() {
            self.base = tag.text(Attr::Href).map(|href| href.into_owned());
        } else if tag.is(b"meta") {
            self.meta(tag);
        }
    }

    fn meta(&mut self, tag: &Tag<'_>) {
        let (Some(name), Some(content)) = (tag.text(Attr::Name), tag.text(Attr::Content)) else {
            return;
        };
        if !PageDirectives::is_robots_meta(&name, |name| name == BOT_META_NAME) {
            return;
        }
        if self.metas.len() >= MAX_ROBOTS_METAS {
            self.dropped += 1;
            return;
        }
        self.metas.push(RobotsMeta {
            name: cut(name.trim()).to_ascii_lowercase(),
            content: cut(&content),
        });
    }
}

/// Read the links and robots meta tags of `dom` (the serialized DOM of `page`).
pub fn read_dom(dom: &str, page: &Url) -> DomFacts {
    let mut raw = Raw::default();
    let truncated = tokenizer::scan(dom.as_bytes(), MAX_PARSER_MEMORY, |tag| raw.tag(tag)).is_err();
    resolve(raw, page, truncated)
}

fn resolve(raw: Raw, page: &Url, truncated: bool) -> DomFacts {
    let base = raw
        .base
        .as_deref()
        .and_then(|b| page.join(b.trim()).ok())
        .unwrap_or_else(|| page.clone());
    let mut seen = std::collections::HashSet::new();
    let mut links = Vec::new();
    for (href, nofollow) in raw.links {
        let Ok(mut url) = base.join(href.trim()) else {
            continue;
        };
        if !matches!(url.scheme(), "http" | "https") || url.host_str().is_none() {
            continue;
        }
        url.set_fragment(None);
        if seen.insert(url.to_string()) {
            links.push(DomLink { url, nofollow });
        }
    }
    DomFacts {
        links,
        robots_meta: raw.metas,
        dropped: raw.dropped,
        truncated,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn page() -> Url {
        Url::parse("https://example.test/dir/page.html").unwrap()
    }

    #[test]
    fn links_resolve_against_base_and_keep_nofollow() {
        let dom = r#"<html><head><base href="/b/"><meta name="robots" content="noindex">
            <meta name="viewport" content="x"><meta name="og:title" content="t">
            <meta name=JittyBot content=nofollow><meta name=examplebot content=noindex>
            </head><body>
            <a href="x.html#frag">x</a><a rel="nofollow" href="https://other.test/">o</a>
            <a href="javascript:alert(1)">js</a><a href="x.html">again</a>
            <area href="mailto:a@b.test"></body></html>"#;
        let facts = read_dom(dom, &page());
        let urls: Vec<(String, bool)> = facts
            .links
            .iter()
            .map(|l| (l.url.to_string(), l.nofollow))
            .collect();
        assert_eq!(
            urls,
            vec![
                ("https://example.test/b/x.html".to_string(), false),
                ("https://other.test/".to_string(), true),
            ]
        );
        assert_eq!(
            facts.robots_meta,
            vec![
                RobotsMeta {
                    name: "robots".into(),
                    content: "noindex".into()
                },
                RobotsMeta {
                    name: "jittybot".into(),
                    content: "nofollow".into()
                }
            ]
        );
    }

    #[test]
    fn links_and_metas_are_capped() {
        let mut dom = String::new();
        for i in 0..MAX_DOM_LINKS + 10 {
            dom.push_str(&format!("<a href=/p{i}>p</a>"));
        }
        for _ in 0..MAX_ROBOTS_METAS + 5 {
            dom.push_str(&format!(
                "<meta name=robots content=\"{}\">",
                "n".repeat(MAX_META_CHARS * 2)
            ));
        }
        let facts = read_dom(&dom, &page());
        assert_eq!(facts.links.len(), MAX_DOM_LINKS);
        assert_eq!(facts.robots_meta.len(), MAX_ROBOTS_METAS);
        assert_eq!(facts.robots_meta[0].content.chars().count(), MAX_META_CHARS);
        assert_eq!(facts.dropped, 15);
    }
}
