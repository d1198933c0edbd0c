//! What the rendered DOM tells a bot: its links and its robots meta tags, read from the
//! serialized DOM with a streaming tokenizer (lol_html). Nothing of the page runs here: the
//! page's script cannot change what this reads except through the DOM itself, which is the
//! point (links and meta tags added by script are found).

use std::cell::RefCell;

use lol_html::html_content::Element;
use lol_html::{element, HtmlRewriter, MemorySettings, Settings};
use url::Url;

/// Links kept per rendered page at most (the rest are counted in [`DomFacts::dropped`]).
pub const MAX_DOM_LINKS: usize = 5_000;
/// Robots meta tags kept per rendered page at most.
pub const MAX_ROBOTS_METAS: usize = 200;
/// Characters kept of a meta tag's name or content (a hostile page cannot grow the output).
pub const MAX_META_CHARS: usize = 200;
/// Memory the tokenizer may use for its buffers (a huge tag ends the read there).
pub const MAX_PARSER_MEMORY: usize = 4 * 1024 * 1024;

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
    /// Meta tags whose name is `robots` or names a crawler (`jittybot`, `googlebot` ...): every
    /// `<meta name content>` except the well-known non-robots names is kept for the caller.
    pub robots_meta: Vec<RobotsMeta>,
    /// Links or meta tags dropped over the limits.
    pub dropped: usize,
    /// The tokenizer stopped early (its memory limit): what was found before is kept.
    pub truncated: bool,
}

/// Meta names that are never robots directives (kept out of [`DomFacts::robots_meta`]).
const NOT_ROBOTS_NAMES: &[&str] = &[
    "viewport",
    "description",
    "keywords",
    "author",
    "generator",
    "theme-color",
    "referrer",
    "color-scheme",
    "application-name",
];

fn cut(text: &str) -> String {
    text.chars().take(MAX_META_CHARS).collect()
}

fn rel_has(el: &Element<'_, '_>, token: &str) -> bool {
    el.get_attribute("rel").is_some_and(|rel| {
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

/// Read the links and robots meta tags of `dom` (the serialized DOM of `page`).
pub fn read_dom(dom: &str, page: &Url) -> DomFacts {
    let raw = RefCell::new(Raw::default());
    let settings = Settings {
        element_content_handlers: vec![
            element!("base[href]", |el| {
                let mut r = raw.borrow_mut();
                if r.base.is_none() {
                    r.base = el.get_attribute("href");
                }
                Ok(())
            }),
            element!("a[href], area[href]", |el| {
                let mut r = raw.borrow_mut();
                match el.get_attribute("href") {
                    Some(href) if r.links.len() < MAX_DOM_LINKS => {
                        r.links.push((href, rel_has(el, "nofollow")))
                    }
                    Some(_) => r.dropped += 1,
                    None => {}
                }
                Ok(())
            }),
            element!("meta[name][content]", |el| {
                let name = el.get_attribute("name").unwrap_or_default();
                let name = cut(name.trim()).to_ascii_lowercase();
                if NOT_ROBOTS_NAMES.contains(&name.as_str()) || name.is_empty() {
                    return Ok(());
                }
                let mut r = raw.borrow_mut();
                if r.metas.len() >= MAX_ROBOTS_METAS {
                    r.dropped += 1;
                    return Ok(());
                }
                let content = cut(&el.get_attribute("content").unwrap_or_default());
                r.metas.push(RobotsMeta { name, content });
                Ok(())
            }),
        ],
        memory_settings: MemorySettings {
            max_allowed_memory_usage: MAX_PARSER_MEMORY,
            ..MemorySettings::default()
        },
        ..Settings::default()
    };
    let truncated = {
        let mut rewriter = HtmlRewriter::new(settings, |_: &[u8]| {});
        match rewriter.write(dom.as_bytes()) {
            Ok(()) => rewriter.end().is_err(),
            Err(_) => true,
        }
    };
    let raw = raw.into_inner();
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
    let robots_meta = raw
        .metas
        .into_iter()
        .filter(|m| !m.name.starts_with("og:") && !m.name.starts_with("twitter:"))
        .collect();
    DomFacts {
        links,
        robots_meta,
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
            <meta name="viewport" content="x"></head><body>
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
            vec![RobotsMeta {
                name: "robots".into(),
                content: "noindex".into()
            }]
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
