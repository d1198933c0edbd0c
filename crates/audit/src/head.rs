//! Reading the `<meta>` tags of a page's `<head>` with an HTML tokenizer (no scripts run).

use std::cell::RefCell;

use html5ever::tendril::StrTendril;
use html5ever::tokenizer::states::RawKind;
use html5ever::tokenizer::{
    BufferQueue, Tag, TagKind, Token, TokenSink, TokenSinkResult, Tokenizer, TokenizerOpts,
};
use serde::{Deserialize, Serialize};

/// At most this many meta tags are kept from one page.
pub const MAX_META_TAGS: usize = 200;

/// A `<meta name=... content=...>` tag.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct MetaTag {
    /// The `name` attribute, lowercase.
    pub name: String,
    /// The `content` attribute as written (empty when missing).
    pub content: String,
}

#[derive(Default)]
struct Collector {
    metas: RefCell<Vec<MetaTag>>,
    done: std::cell::Cell<bool>,
}

impl Collector {
    fn tag(&self, tag: &Tag) -> TokenSinkResult<()> {
        let name: &str = &tag.name;
        match (tag.kind, name) {
            (TagKind::EndTag, "head") | (TagKind::StartTag, "body") => {
                self.done.set(true);
                TokenSinkResult::Continue
            }
            (TagKind::StartTag, "meta") => {
                let attribute = |wanted: &str| {
                    tag.attrs
                        .iter()
                        .find(|attr| &*attr.name.local == wanted)
                        .map(|attr| attr.value.to_string())
                };
                if let Some(name) = attribute("name") {
                    let mut metas = self.metas.borrow_mut();
                    if metas.len() < MAX_META_TAGS {
                        metas.push(MetaTag {
                            name: name.trim().to_ascii_lowercase(),
                            content: attribute("content").unwrap_or_default(),
                        });
                    }
                }
                TokenSinkResult::Continue
            }
            (TagKind::StartTag, "script") if !tag.self_closing => {
                TokenSinkResult::RawData(RawKind::ScriptData)
            }
            (TagKind::StartTag, "style" | "noframes" | "xmp" | "iframe" | "noembed") => {
                TokenSinkResult::RawData(RawKind::Rawtext)
            }
            (TagKind::StartTag, "title" | "textarea") => TokenSinkResult::RawData(RawKind::Rcdata),
            _ => TokenSinkResult::Continue,
        }
    }
}

impl TokenSink for Collector {
    type Handle = ();

    fn process_token(&self, token: Token, _line_number: u64) -> TokenSinkResult<()> {
        if self.done.get() {
            return TokenSinkResult::Continue;
        }
        match token {
            Token::TagToken(tag) => self.tag(&tag),
            _ => TokenSinkResult::Continue,
        }
    }
}

/// The meta tags with a `name` in the head of `html` (up to `</head>` or `<body>`).
/// Invalid UTF-8 is replaced; markup errors are tolerated as browsers tolerate them.
pub fn meta_tags(html: &[u8]) -> Vec<MetaTag> {
    let text = String::from_utf8_lossy(html);
    let input = BufferQueue::default();
    input.push_back(StrTendril::from(text.as_ref()));
    let tokenizer = Tokenizer::new(Collector::default(), TokenizerOpts::default());
    let _ = tokenizer.feed(&input);
    tokenizer.end();
    tokenizer.sink.metas.take()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_metas_until_the_head_ends() {
        let html = br#"<!doctype html><html><head>
            <META NAME="Robots" CONTENT="noindex, nofollow">
            <meta name=googlebot content=noarchive>
            <meta charset="utf-8"><meta property="og:title" content="x">
            <script>document.write('<meta name="robots" content="none">')</script>
            <title><meta name="robots" content="all"></title>
            <style>/* <meta name="robots" content="all"> */</style>
            </head><body><meta name="robots" content="index"></body></html>"#;
        let metas = meta_tags(html);
        assert_eq!(
            metas,
            vec![
                MetaTag {
                    name: "robots".into(),
                    content: "noindex, nofollow".into()
                },
                MetaTag {
                    name: "googlebot".into(),
                    content: "noarchive".into()
                },
            ]
        );
    }

    #[test]
    fn stops_at_body_without_head_end_and_survives_garbage() {
        assert!(meta_tags(b"<body><meta name=robots content=noindex>").is_empty());
        assert!(meta_tags(b"\xff\xfe<<<>>>").is_empty());
        let truncated = meta_tags(b"<head><meta name=robots content=noindex><meta name=robots con");
        assert_eq!(truncated.len(), 1);
    }

    #[test]
    fn meta_count_is_capped() {
        assert_eq!(MAX_META_TAGS, 200);
        let html = "<meta name=a content=b>".repeat(MAX_META_TAGS + 10);
        assert_eq!(meta_tags(html.as_bytes()).len(), MAX_META_TAGS);
    }
}
