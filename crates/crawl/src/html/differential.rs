//! The scanner against the lol_html reader it replaced ([`super::oracle`]): generated pages
//! made of the fragments that matter to a tokenizer must read the same.
//!
//! Left out of the generator, as they differ by design (see [`super::scan`]):
//! - `<svg>` and `<math>`: lol_html tracked foreign content (CDATA sections, `<style>` not
//!   RAWTEXT there); the scanner reads them as HTML;
//! - `<select>` and `<frameset>`: lol_html gave up (`truncated`) on a raw-text element inside
//!   a select or after a frameset; the scanner reads on;
//! - `<picture>` closed by an end tag of an element around it: lol_html's stack of open
//!   elements left the picture, the scanner's counter waits for `</picture>`;
//! - tags over [`super::MAX_PARSER_MEMORY`] (cut at slightly different lengths).

use proptest::prelude::*;
use url::Url;

use super::{oracle, read_page, Page};

/// Reads `html` both ways, asserts the pages are equal and returns it.
pub(super) fn same(html: &[u8], encoding: Option<&str>) -> Page {
    let url = Url::parse("https://example.test/dir/page.html").unwrap();
    let now = "2026-01-01T00:00:00Z".parse().unwrap();
    let new = read_page(html, &url, encoding, now);
    let old = oracle::read_page(html, &url, encoding, now);
    assert_eq!(new, old, "page: {:?}", String::from_utf8_lossy(html));
    new
}

/// Pieces of pages; `{u}` is replaced by a URL, `{s}` by whitespace.
const FRAGMENTS: &[&str] = &[
    "<a href=\"{u}\">text</a>",
    "<a href='{u}'{s}rel=nofollow>x</a>",
    "<a{s}href={u}{s}>x</a>",
    "<A HREF=\"{u}\" REL=\"NoFollow noopener\">",
    "<a/href={u}>",
    "<a href={u}/>",
    "<a href=\"{u}\" href=/dup rel=x rel=nofollow>",
    "<area href=\"{u}\">",
    "<link rel=next href=\"{u}\">",
    "<link rel=\"alternate stylesheet\" href={u}>",
    "<link{s}rel='prev nofollow'{s}href='{u}'>",
    "<LINK REL=ALTERNATE HREF={u}>",
    "<base href=\"{u}\">",
    "<img src=\"{u}\" srcset=\"{u} 1x, /b.png 2x,{u}\">",
    "<IMG SRCSET='{u}, /c.png (x, y) 100w'>",
    "<picture><source srcset=\"{u} 1x\"><img src={u}></picture>",
    "<source srcset={u}>",
    "<meta name=robots content=\"noindex\">",
    "<meta name=\"JittyBot\" content=\"nofollow\">",
    "<meta{s}property=\"og:image\"{s}content=\"{u}\">",
    "<meta property=' OG:Image:URL ' content={u}>",
    "<!-- <a href=\"{u}\"> -->",
    "<!-->",
    "<!--->",
    "<!-- x --!>",
    "<!--",
    "-->",
    "--!>",
    "<!DOCTYPE html>",
    "<!doctype html public \"a>b\">",
    "<![CDATA[ <a href={u}> ]]>",
    "<?xml version=1?>",
    "</ a>",
    "</>",
    "</p{s}class=\"a>b\">",
    "<script>",
    "</script>",
    "</SCRIPT{s}>",
    "<script><a href=\"{u}\"></script>",
    "<script><!--<script></script><a href={u}></script>--></script>",
    "<script><!-- </script>",
    "<style>",
    "</style>",
    "<title>",
    "</title>",
    "<textarea>",
    "</textarea>",
    "<noscript>",
    "</noscript>",
    "<iframe>",
    "</iframe>",
    "<xmp></xmp>",
    "<noembed></noembed>",
    "<noframes></noframes>",
    "<plaintext>",
    "&amp;",
    "&lt;a href=x&gt;",
    "<p class='x' id=\"y\" data-a=b>",
    "</p>",
    "<div{s}/>",
    "<br/>",
    "text ",
    "{s}",
    "\"",
    "'",
    "<",
    ">",
    "=",
    "/",
];

const URLS: &[&str] = &[
    "/p1.html",
    "p2.html",
    "../up.html",
    "https://other.test/x?a=1&amp;b=2",
    "/n&#38;1",
    // Character references: both readers decode them with `decode_attribute`.
    "/c?a=1&copy=2&lt&amp",
    "/x&#x2F;y&notin;&notit;&#0;&#x80&",
    "#frag",
    "",
    " /spaced ",
    "javascript:void(0)",
    "mailto:a@b",
    "/caf\u{e9}",
    "//proto.test/rel",
    "/a>b",
    "/q\"uote",
];

const SPACES: &[&str] = &[" ", "\n", "\t", "\r\n", "\x0C", "  ", " / "];

/// Bytes a tokenizer cares about, and some that are not UTF-8.
const JUNK: &[u8] = b"<>/=\"'!-?&;# aA\0\xff\xe9\xc3\n";

fn fragment() -> impl Strategy<Value = Vec<u8>> {
    let templated = (0..FRAGMENTS.len(), 0..URLS.len(), 0..SPACES.len()).prop_map(|(f, u, s)| {
        FRAGMENTS[f]
            .replace("{u}", URLS[u])
            .replace("{s}", SPACES[s])
            .into_bytes()
    });
    prop_oneof![
        6 => templated,
        1 => prop::collection::vec(prop::sample::select(JUNK), 1..6),
    ]
}

fn document() -> impl Strategy<Value = Vec<u8>> {
    prop::collection::vec(fragment(), 0..40).prop_map(|parts| parts.concat())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(3000))]

    #[test]
    fn reads_as_lol_html_did(
        html in document(),
        encoding in prop::sample::select(vec![None, Some("iso-8859-1"), Some("utf-8"), Some("utf-16")]),
    ) {
        same(&html, encoding);
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]

    /// Any bytes at all: no panic (compared with lol_html only above, where every case is
    /// one that must read the same).
    #[test]
    fn any_bytes_read_without_panic(html in prop::collection::vec(any::<u8>(), 0..300)) {
        let url = Url::parse("https://example.test/").unwrap();
        read_page(&html, &url, None, jiff::Timestamp::UNIX_EPOCH);
    }
}

/// The differences left out of the generator, pinned: if one goes away, the generator can
/// take it in.
#[test]
fn known_differences_from_lol_html() {
    let url = Url::parse("https://example.test/").unwrap();
    let now = jiff::Timestamp::UNIX_EPOCH;
    let both = |html: &str| {
        let new = read_page(html.as_bytes(), &url, None, now);
        let old = oracle::read_page(html.as_bytes(), &url, None, now);
        (new, old)
    };
    // A raw-text element inside `<select>`: lol_html gave up on the page.
    let (new, old) = both("<select><xmp></xmp></select><a href=/x>");
    assert!(old.truncated && old.links.is_empty());
    assert!(!new.truncated && new.links.len() == 1);
    // Foreign content: `<style>` in `<svg>` is markup to the tree builder (and lol_html).
    let (new, old) = both("<svg><style><a href=/in-svg></style></svg>");
    assert_eq!((new.links.len(), old.links.len()), (0, 1));
    // A picture closed by its parent's end tag (lol_html's stack of open elements).
    let (new, old) = both("<div><picture></div><source srcset=/s.webp>");
    assert_eq!((new.media.len(), old.media.len()), (1, 0));
}
