//! The tokenizer against html5ever's (a dev-dependency only): generated documents made of
//! the fragments that matter to a tokenizer must give the same tags, with the same kept
//! attributes, read whole and read in chunks.
//!
//! html5ever's tokenizer is given, by its sink, the tree builder's switches into script
//! data, RAWTEXT, RCDATA and PLAINTEXT, as this tokenizer makes them ([`super::mode_after`]).
//! Compared: every tag's lowercase name and whether it ends, and for start tags the text of
//! each [`Attr`] (decoded as [`Tag::text`] decodes it). What html5ever does to the input
//! stream before tokenizing (invalid UTF-8 replaced, CR LF turned into LF) is done to both.

use std::cell::RefCell;
use std::ops::ControlFlow;

use html5ever::tendril::StrTendril;
use html5ever::tokenizer::states::RawKind;
use html5ever::tokenizer::{
    BufferQueue, TagKind, Token, TokenSink, TokenSinkResult, Tokenizer as Html5ever, TokenizerOpts,
};
use proptest::prelude::*;

use super::{Attr, Fed, Tag, Tokenizer};

const ALL: [(Attr, &str); super::ATTRS] = [
    (Attr::Href, "href"),
    (Attr::Rel, "rel"),
    (Attr::Src, "src"),
    (Attr::Srcset, "srcset"),
    (Attr::Content, "content"),
    (Attr::Name, "name"),
    (Attr::Property, "property"),
    (Attr::Sizes, "sizes"),
    (Attr::Type, "type"),
];

/// A tag as compared: name, end, and (start tags) each kept attribute's text.
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct Seen {
    name: String,
    end: bool,
    attrs: Vec<(&'static str, String)>,
}

fn seen(tag: &Tag<'_>) -> Seen {
    let name = String::from_utf8_lossy(tag.name)
        .to_ascii_lowercase()
        .replace('\0', "\u{FFFD}");
    let attrs = if tag.end {
        Vec::new()
    } else {
        ALL.iter()
            .filter_map(|(attr, name)| Some((*name, tag.text(*attr)?.into_owned())))
            .collect()
    };
    Seen {
        name,
        end: tag.end,
        attrs,
    }
}

/// The tags of `html`, read whole by this tokenizer.
pub(crate) fn ours(html: &[u8]) -> Vec<Seen> {
    let mut tags = Vec::new();
    let _ = super::scan(html, usize::MAX, |tag| tags.push(seen(tag)));
    tags
}

/// The tags of `html` fed in chunks at `splits` (offsets, ascending), keeping what each call
/// says to keep.
fn ours_in_chunks(html: &[u8], splits: &[usize]) -> Vec<Seen> {
    let mut tags = Vec::new();
    let mut tokenizer = Tokenizer::new(usize::MAX);
    let mut kept: Vec<u8> = Vec::new();
    let mut from = 0;
    for &to in splits.iter().chain([&html.len()]) {
        let to = to.clamp(from, html.len());
        kept.extend_from_slice(&html[from..to]);
        from = to;
        let end = to == html.len();
        let fed = tokenizer.feed(&kept, end, |tag| {
            tags.push(seen(tag));
            ControlFlow::Continue(())
        });
        match fed {
            Ok(Fed::Keep(keep)) => {
                kept.drain(..keep);
            }
            Ok(Fed::Stopped) | Err(_) => break,
        }
        if end {
            break;
        }
    }
    tags
}

struct Oracle {
    tags: RefCell<Vec<Seen>>,
}

impl TokenSink for Oracle {
    type Handle = ();

    fn process_token(&self, token: Token, _line_number: u64) -> TokenSinkResult<()> {
        let Token::TagToken(tag) = token else {
            return TokenSinkResult::Continue;
        };
        let end = tag.kind == TagKind::EndTag;
        let attrs = if end {
            Vec::new()
        } else {
            ALL.iter()
                .filter_map(|(_, name)| {
                    let attr = tag.attrs.iter().find(|a| &*a.name.local == *name)?;
                    Some((*name, attr.value.to_string()))
                })
                .collect()
        };
        let name = tag.name.to_string();
        self.tags.borrow_mut().push(Seen {
            name: name.clone(),
            end,
            attrs,
        });
        if end {
            return TokenSinkResult::Continue;
        }
        match name.as_str() {
            "script" => TokenSinkResult::RawData(RawKind::ScriptData),
            "style" | "xmp" | "iframe" | "noembed" | "noframes" | "noscript" => {
                TokenSinkResult::RawData(RawKind::Rawtext)
            }
            "title" | "textarea" => TokenSinkResult::RawData(RawKind::Rcdata),
            "plaintext" => TokenSinkResult::Plaintext,
            _ => TokenSinkResult::Continue,
        }
    }
}

/// The tags of `html` as html5ever's tokenizer reads them.
pub(crate) fn html5ever(html: &[u8]) -> Vec<Seen> {
    let sink = Oracle {
        tags: RefCell::new(Vec::new()),
    };
    let tokenizer = Html5ever::new(sink, TokenizerOpts::default());
    let input = BufferQueue::default();
    input.push_back(StrTendril::from(String::from_utf8_lossy(html).into_owned()));
    let _ = tokenizer.feed(&input);
    tokenizer.end();
    tokenizer.sink.tags.into_inner()
}

/// Asserts that this tokenizer reads `html` as html5ever does.
pub(crate) fn same_tags(html: &[u8]) {
    // html5ever reads text: invalid UTF-8 replaced (by both), CR LF already LF.
    let text = String::from_utf8_lossy(html).replace("\r\n", "\n");
    assert_eq!(
        ours(text.as_bytes()),
        html5ever(text.as_bytes()),
        "page: {text:?}"
    );
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
    "<link rel=icon href={u} sizes=\"32x32\" type=image/png>",
    "<base href=\"{u}\">",
    "<img src=\"{u}\" srcset=\"{u} 1x, /b.png 2x,{u}\">",
    "<IMG SRCSET='{u}, /c.png (x, y) 100w'>",
    "<picture><source srcset=\"{u} 1x\"><img src={u}></picture>",
    "<source srcset={u}>",
    "<meta name=robots content=\"noindex\">",
    "<meta name=\"JittyBot\" content=\"nofollow\">",
    "<meta{s}property=\"og:image\"{s}content=\"{u}\">",
    "<meta property=' OG:Image:URL ' content={u}>",
    "<head>",
    "</head>",
    "<body>",
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
    "<script/>",
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
    "-",
    "!",
];

const URLS: &[&str] = &[
    "/p1.html",
    "p2.html",
    "../up.html",
    "https://other.test/x?a=1&amp;b=2",
    "/n&#38;1",
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
const JUNK: &[u8] = b"<>/=\"'!-?&;# aA\0\xff\xe9\xc3\n\r";

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
    fn reads_as_html5ever_does(html in document()) {
        same_tags(&html);
    }

    /// Read in chunks, split anywhere (inside tags, comments, end tags, `<!--`), a page
    /// gives the same tags as read whole.
    #[test]
    fn chunks_read_as_the_whole(
        html in document(),
        mut splits in prop::collection::vec(0usize..2_000, 0..12),
    ) {
        splits.sort_unstable();
        prop_assert_eq!(ours_in_chunks(&html, &splits), ours(&html));
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]

    /// Any bytes at all: no panic, and html5ever's tags.
    #[test]
    fn any_bytes_read_as_html5ever_does(html in prop::collection::vec(any::<u8>(), 0..300)) {
        same_tags(&html);
    }
}

/// Every split point of pages whose constructs end right at a chunk's edge.
#[test]
fn every_split_reads_as_the_whole() {
    let pages: [&[u8]; 6] = [
        b"<a href=/1><!-- <a href=/no> --!><a href=/2><script>x='</scr'+'ipt>'</script><a href=/3>",
        b"<title>a</titlex></title ><a href=/t><style>p{}</STYLE\n><a href=/s>",
        b"<script><!--<script></script><a href=/in></script>--></script><a href=/out>",
        b"<!DOCTYPE html><?pi x><![CDATA[<a href=/cd>]]></ <a href=/b>><a href=/e></><!--->",
        b"<noscript><a href=/ns></noscript><plaintext><a href=/no>",
        b"<a href='/q?a=1&amp;b=2' rel=\"next nofollow\"><meta name=robots content=noindex>",
    ];
    for page in pages {
        let whole = ours(page);
        assert_eq!(whole, html5ever(page), "{}", String::from_utf8_lossy(page));
        for split in 0..=page.len() {
            assert_eq!(ours_in_chunks(page, &[split]), whole, "split at {split}");
        }
        let bytes: Vec<usize> = (1..page.len()).collect();
        assert_eq!(ours_in_chunks(page, &bytes), whole, "byte by byte");
    }
}
