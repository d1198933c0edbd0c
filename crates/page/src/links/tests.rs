//! `read_links`'s tests: pages read as the crawler reads them (links resolved against the
//! base, fragments dropped, duplicates removed, the robots meta tags for JittyBot), then the
//! tokenizer's states, each with a page html5ever reads the same way.

use url::Url;

use super::*;
use crate::directives::ForBot;
use crate::tokenizer::differential;

/// A page as the crawler keeps it.
#[derive(Debug)]
struct Page {
    links: Vec<(String, bool)>,
    media: Vec<String>,
    meta: ForBot,
    dropped: usize,
    truncated: bool,
}

/// `href` resolved against `base` as the crawler does: `http` and `https` only, no fragment.
fn resolve(base: &Url, href: &str) -> Option<String> {
    let mut url = base.join(href.trim()).ok()?;
    url.set_fragment(None);
    matches!(url.scheme(), "http" | "https").then(|| url.to_string())
}

fn read_with(html: &[u8], encoding: Option<&str>) -> Page {
    let url = Url::parse("https://example.test/dir/page.html").unwrap();
    let now = "2026-01-01T00:00:00Z".parse().unwrap();
    let mut meta = ForBot::default();
    let found = read_links(html, encoding, |name, content| {
        meta.add_meta(name, content, "jittybot", now)
    });
    let base = found.base_url(&url);
    let mut links: Vec<(String, bool)> = Vec::new();
    for link in &found.links {
        let Some(url) = resolve(&base, &link.href) else {
            continue;
        };
        match links.iter_mut().find(|(seen, _)| *seen == url) {
            // A followable occurrence wins over a nofollow one.
            Some(seen) => seen.1 &= link.nofollow,
            None => links.push((url, link.nofollow)),
        }
    }
    let mut media: Vec<String> = Vec::new();
    for src in &found.media {
        if let Some(url) = resolve(&base, src).filter(|url| !media.contains(url)) {
            media.push(url);
        }
    }
    Page {
        links,
        media,
        meta,
        dropped: found.dropped,
        truncated: found.truncated,
    }
}

fn read(html: &str) -> Page {
    read_with(html.as_bytes(), None)
}

fn urls(p: &Page) -> Vec<(&str, bool)> {
    p.links
        .iter()
        .map(|(url, nofollow)| (url.as_str(), *nofollow))
        .collect()
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
    let m: Vec<&str> = p.media.iter().map(String::as_str).collect();
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
    let p =
        read(r#"<meta name="googlebot" content="noindex"><meta name="robots" content="nofollow">"#);
    assert_eq!(
        p.meta,
        ForBot {
            noindex: false,
            nofollow: true
        }
    );
    let p = read(r#"<meta name="JittyBot" content="none">"#);
    assert_eq!(
        p.meta,
        ForBot {
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

// The tokenizer's states, each with a page html5ever reads the same way.

/// Reads `html` after checking that html5ever sees the same tags in it.
fn same(html: &[u8], encoding: Option<&str>) -> Page {
    differential::same_tags(html);
    read_with(html, encoding)
}

fn links(html: &[u8], encoding: Option<&str>) -> Vec<String> {
    let page = same(html, encoding);
    page.links.into_iter().map(|(url, _)| url).collect()
}

fn paths(html: &str) -> Vec<String> {
    links(html.as_bytes(), None)
        .into_iter()
        .map(|u| u.trim_start_matches("https://example.test").to_string())
        .collect()
}

#[test]
fn comments_hide_tags() {
    assert_eq!(paths("<!-- <a href=/c> --><a href=/v>"), ["/v"]);
    assert_eq!(paths("<!--><a href=/a1><!---><a href=/a2>"), ["/a1", "/a2"]);
    assert_eq!(
        paths("<!-- x --!><a href=/a3><!-- -- > <a href=/no> --><a href=/a4>"),
        ["/a3", "/a4"]
    );
    assert_eq!(
        paths("<!-- <!-- nested --> <a href=/a5> <!-- never closed <a href=/no>"),
        ["/a5"]
    );
    assert_eq!(
        paths("<!----!><a href=/a6><!--- -><a href=/no> --->"),
        ["/a6"]
    );
}

#[test]
fn declarations_and_bogus_comments() {
    assert_eq!(paths("<!DOCTYPE html PUBLIC \"a>b\"><a href=/d>"), ["/d"]);
    // A bogus comment ends at the first `>`, wherever it is.
    assert_eq!(paths("<?php <a href=/q> ?><a href=/r>"), ["/r"]);
    assert_eq!(paths("</ <a href=/b>><a href=/e></>"), ["/e"]);
    assert_eq!(
        paths("<![CDATA[<a href=/cd>]]><a href=/f><!x><a href=/g>"),
        ["/f", "/g"]
    );
    assert_eq!(paths("< a href=/sp><a href=/h>"), ["/h"]);
}

#[test]
fn script_hides_links_until_its_end_tag() {
    assert_eq!(
        paths("<script><a href=/s></script><a href=/after>"),
        ["/after"]
    );
    assert_eq!(
        paths("<script>x</script ><a href=/1><SCRIPT>y</SCRIPT\n><a href=/2>"),
        ["/1", "/2"]
    );
    assert_eq!(
        paths("<script>'</scripty><a href=/no>'</script/><a href=/3>"),
        ["/3"]
    );
    assert_eq!(paths("<script/><a href=/no></script><a href=/4>"), ["/4"]);
    assert_eq!(
        paths("<script>never closed <a href=/no>"),
        Vec::<String>::new()
    );
}

#[test]
fn script_escapes() {
    // `<!--` then `<script>`: the first `</script>` does not end the script (double escaped).
    let page = "<script><!--<script></script><a href=/in></script>--></script><a href=/out>";
    assert_eq!(paths(page), ["/out"]);
    // Escaped only: `</script>` ends it.
    assert_eq!(paths("<script><!-- </script><a href=/x>"), ["/x"]);
    // `-->` ends the escape, so a later `<script>` is text again.
    assert_eq!(
        paths("<script><!-- --><script></script><a href=/y>"),
        ["/y"]
    );
    assert_eq!(paths("<script><!--><script></script><a href=/z>"), ["/z"]);
    assert_eq!(paths("<script><!--<script>--></script><a href=/w>"), ["/w"]);
}

#[test]
fn raw_text_elements_hide_links() {
    for name in [
        "style", "title", "textarea", "xmp", "iframe", "noembed", "noframes", "noscript",
    ] {
        let page = format!(
            "<{name}><a href=/no></{}  ><a href=/yes>",
            name.to_uppercase()
        );
        assert_eq!(paths(&page), ["/yes"], "{name}");
    }
    assert_eq!(
        paths("<title></titlex><a href=/no></title/><a href=/t>"),
        ["/t"]
    );
}

#[test]
fn plaintext_ends_the_markup() {
    assert_eq!(
        paths("<a href=/before><plaintext><a href=/no></plaintext>"),
        ["/before"]
    );
}

#[test]
fn attribute_quoting() {
    assert_eq!(
        paths(
            r#"<a href=/u1><a href='/s1'><a href="/d1"><a title="a>b" href=/q1><a title='>' href = "/q2" >"#
        ),
        ["/u1", "/s1", "/d1", "/q1", "/q2"]
    );
    // An unquoted value ends at whitespace or `>`; quotes in it are its own.
    assert_eq!(paths("<a href=/x\"y\tid=1><a href=/z>"), ["/x%22y", "/z"]);
    // `=` starting a name, missing values.
    assert_eq!(
        paths("<a =x href><a href= ><a =href=/e>"),
        ["/dir/page.html"]
    );
}

#[test]
fn character_references_are_decoded_as_the_spec_says() {
    // As a browser reads the value: `&amp;` is `&`, `&#47;` is `/`; a legacy name without
    // `;` before `=` stays (the attribute rule), so the query keeps its `copy` parameter.
    assert_eq!(
        paths(
            r#"<a href="/q?a=1&amp;b=2"><a href="/n&#38;1"><a href=/x&#47;y&#x2F;z>
            <a href='/c?a=1&copy=2'><a href="/d?&lt=1&amp">"#
        ),
        ["/q?a=1&b=2", "/n&1", "/x/y/z", "/c?a=1&copy=2", "/d?&lt=1&"]
    );
    // After the page's encoding: the windows-1252 byte and the reference both are `é`.
    assert_eq!(
        links(
            b"<a href=\"/caf\xe9&eacute;&#233;?x=1&amp;y\">",
            Some("windows-1252")
        ),
        ["https://example.test/caf%C3%A9%C3%A9%C3%A9?x=1&y"]
    );
    // Every attribute read: `rel`, `src`, `srcset`, `<meta>`'s `name` and `content`.
    let p = read(
        r#"<a href="f" rel="&#110;ofollow"><img src="i.png?w=1&amp;h=2" srcset="s.png?a&amp;b 2x">
        <meta name="&#114;obots" content="&#110;oindex"><base href="/b&#47;">"#,
    );
    assert_eq!(urls(&p), [("https://example.test/b/f", true)]);
    let media: Vec<&str> = p.media.iter().map(String::as_str).collect();
    assert_eq!(
        media,
        [
            "https://example.test/b/i.png?w=1&h=2",
            "https://example.test/b/s.png?a&b"
        ]
    );
    assert!(p.meta.noindex);
}

#[test]
fn uppercase_tags_and_attributes() {
    assert_eq!(
        paths("<A HREF=/u rel=NOFOLLOW><AREA Href=/v><Base HREF=/b/>"),
        ["/u", "/v"]
    );
    let p = read("<IMG SRC=a.png><META NAME=ROBOTS CONTENT=NOINDEX>");
    assert_eq!(p.media.len(), 1);
    assert!(p.meta.noindex);
}

#[test]
fn slashes_inside_tags() {
    assert_eq!(
        paths("<a/href=/s1><a href=/s2/><a / href = /s3 / ><a href=/s4//>"),
        ["/s1", "/s2/", "/s3", "/s4//"]
    );
}

#[test]
fn duplicate_attributes_first_wins() {
    let p = read("<a href=/first href=/second rel=nofollow rel=x>");
    assert_eq!(urls(&p), [("https://example.test/first", true)]);
}

#[test]
fn end_of_input_inside_a_tag() {
    for cut in [
        "<a href=\"/cut",
        "<a href='/cut",
        "<a href=/cut",
        "<a href=",
        "<a href",
        "<a ",
        "<a",
        "<",
        "</",
        "</a",
        "<!",
        "<!--",
        "<!-- x --",
        "<?x",
        "<a href=/cut/",
    ] {
        assert_eq!(paths(&format!("<a href=/ok>{cut}")), ["/ok"], "{cut}");
    }
}

#[test]
fn base_after_links() {
    assert_eq!(
        paths("<a href=x.html><base href=/b/><base href=/c/>"),
        ["/b/x.html"]
    );
}

#[test]
fn latin1_page() {
    let page = b"<a href=\"/caf\xe9\"><img src=\xe9.png>";
    assert_eq!(
        links(page, Some("ISO-8859-1")),
        ["https://example.test/caf%C3%A9"]
    );
    // Read as UTF-8, the byte is malformed and replaced, as before.
    assert_eq!(links(page, None), ["https://example.test/caf%EF%BF%BD"]);
    // UTF-16 is not ASCII-compatible: UTF-8 it is.
    assert_eq!(
        links(page, Some("utf-16le")),
        ["https://example.test/caf%EF%BF%BD"]
    );
}

#[test]
fn nul_bytes() {
    // `a\0` is another element's name; a NUL elsewhere is just a byte.
    assert_eq!(
        paths("<a\0 href=/no>\0<a href=/yes><a h\0ref=/no2>"),
        ["/yes"]
    );
    let _ = same(b"<a href=\"/x\0y\"><img src=\0>\0<\0/\0", None);
}

#[test]
fn picture_sources_only_inside_a_picture() {
    let p = read("<source srcset=/no.webp><picture><source srcset=/yes.webp></picture><source srcset=/no2.webp>");
    let m: Vec<&str> = p.media.iter().map(String::as_str).collect();
    assert_eq!(m, ["https://example.test/yes.webp"]);
    // `<picture/>` opens one all the same (not a void element); nested pictures count.
    let p = same(
        b"<picture/><source srcset=/a.webp><picture></picture><source srcset=/b.webp>",
        None,
    );
    assert_eq!(p.media.len(), 2);
}
