//! The workspace's one HTML tokenizer: the WHATWG HTML tokenizer's states that decide which
//! tags and attributes are seen, on bytes, without building text, comment or doctype tokens
//! and without allocating. Nothing is executed. Every HTML reader of the workspace runs on it:
//! the crawler's links and media ([`crate::links`]), the head readers of the analysis and of
//! the icon search ([`crate::head`]), the rendered DOM of interactive mode (`crates/render`).
//!
//! Covered as the spec says: the data state (`memchr` for `<`); tag open, end tag open, tag
//! name (ASCII case-insensitive), the attribute name and value states (double-, single-quoted,
//! unquoted), self-closing, `/` between attributes; comments (with `<!-->`, `<!--->` and
//! `--!>` endings), `<!DOCTYPE>`, bogus comments (`<?...>`, `</ ...>`, `<![CDATA[...>`:
//! this tokenizer never is in foreign content); RAWTEXT and RCDATA elements up to their
//! appropriate end tag; script data with its escaped and double-escaped states (`<!--` inside
//! a script); `<plaintext>`, after which nothing is a tag. The switches into those text
//! states are the tree builder's, made here for the HTML namespace: there is no tree.
//!
//! Simplified, on purpose:
//! - attribute values are ranges of the input: character references are decoded when a
//!   value is read as text ([`Tag::text`], [`crate::charref`]);
//! - `<noscript>` is RAWTEXT (the scripting-enabled parse, as browsers and search engines
//!   read pages): tags inside it are not seen;
//! - no tree construction: a raw-text start tag that the tree builder would ignore (`<xmp>`
//!   inside `<select>`, anything after `<frameset>`) still switches to RAWTEXT, and
//!   `<svg>`/`<math>` content is tokenized as HTML (so `<svg><style>` is RAWTEXT, and CDATA
//!   sections are bogus comments). Both are rare on real pages.
//!
//! Only the attributes [`Attr`] names are kept (the first of each name, as the spec drops
//! duplicates), as ranges into the input: the tokenizer's memory is constant. A tag longer
//! than the caller's cap ends the reading ([`Stop::TooLong`]).
//!
//! Input may come whole ([`scan`]) or in chunks as a body downloads ([`Tokenizer::feed`]):
//! the tokenizer keeps its state between chunks (inside a script, a comment, a raw-text
//! element) and tells the caller which bytes to keep for the next call, at most the tag
//! being read. It is plain data: `Send`, so a reader may live across an `.await`.

use std::borrow::Cow;
use std::ops::ControlFlow;

use encoding_rs::Encoding;
use memchr::memchr;

use self::states::{after_lt, comment_end, raw_text_end, script_end, Lt, Script};

#[cfg(test)]
pub(crate) mod differential;
mod states;
#[cfg(test)]
mod tests;

/// The attributes the workspace's readers use; all others are skipped unrecorded.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Attr {
    /// `href` of `<a>`, `<area>`, `<link>`, `<base>`.
    Href,
    /// `rel` of `<a>`, `<area>`, `<link>`.
    Rel,
    /// `src` of `<img>`.
    Src,
    /// `srcset` of `<img>`, `<source>`.
    Srcset,
    /// `content` of `<meta>`.
    Content,
    /// `name` of `<meta>`.
    Name,
    /// `property` of `<meta>` (Open Graph).
    Property,
    /// `sizes` of `<link>` (icons).
    Sizes,
    /// `type` of `<link>` (icons).
    Type,
}

/// How many [`Attr`] there are: the size of [`Tag`]'s table.
const ATTRS: usize = 9;

impl Attr {
    /// The attribute this (ASCII case-insensitive) name is, if one we keep.
    fn of(name: &[u8]) -> Option<Attr> {
        // By length first: most names on a page (class, id, style) then fail at one compare.
        let (attr, want): (Attr, &[u8]) = match (name.len(), name.first().map(|c| c | 0x20)) {
            (3, Some(b'r')) => (Attr::Rel, b"rel"),
            (3, _) => (Attr::Src, b"src"),
            (4, Some(b'h')) => (Attr::Href, b"href"),
            (4, Some(b't')) => (Attr::Type, b"type"),
            (4, _) => (Attr::Name, b"name"),
            (5, _) => (Attr::Sizes, b"sizes"),
            (6, _) => (Attr::Srcset, b"srcset"),
            (7, _) => (Attr::Content, b"content"),
            (8, _) => (Attr::Property, b"property"),
            _ => return None,
        };
        name.eq_ignore_ascii_case(want).then_some(attr)
    }
}

/// A start or end tag as the tokenizer emits it.
#[derive(Debug, Default)]
pub struct Tag<'a> {
    /// The tag's name as written (compare ASCII case-insensitively, or use [`Tag::is`]).
    pub name: &'a [u8],
    /// An end tag (`</name>`).
    pub end: bool,
    /// The first value of each kept [`Attr`], as a range of the input.
    values: [Option<(usize, usize)>; ATTRS],
    input: &'a [u8],
}

impl<'a> Tag<'a> {
    /// The raw bytes of attribute `attr` (its first occurrence), if present.
    pub fn attr(&self, attr: Attr) -> Option<&'a [u8]> {
        self.values[attr as usize].map(|(start, end)| &self.input[start..end])
    }

    /// Attribute `attr` as text, as a browser reads it from a UTF-8 page (see
    /// [`attribute_text`]).
    pub fn text(&self, attr: Attr) -> Option<Cow<'a, str>> {
        self.attr(attr)
            .map(|raw| attribute_text(raw, encoding_rs::UTF_8))
    }

    /// Whether this tag's name is `name` (given in lowercase).
    pub fn is(&self, name: &[u8]) -> bool {
        self.name.eq_ignore_ascii_case(name)
    }

    /// Whether this is a start tag named `name` (given in lowercase).
    pub fn starts(&self, name: &[u8]) -> bool {
        !self.end && self.is(name)
    }

    /// Records an attribute if it is kept and the first of its name.
    fn record(&mut self, name: (usize, usize), value: (usize, usize)) {
        if let Some(attr) = Attr::of(&self.input[name.0..name.1]) {
            self.values[attr as usize].get_or_insert(value);
        }
    }
}

/// An attribute value's bytes as text, as the HTML spec makes it: decoded from the page's
/// `encoding` (malformed bytes replaced; a BOM means something only at the start of a
/// document, so one here is a character), line breaks normalised (CR
/// LF and CR become LF, as the input stream does), NUL replaced by U+FFFD, and its character
/// references decoded ([`crate::charref::decode_attribute`]). A value with nothing to change
/// (nearly every one) is borrowed, not copied.
pub fn attribute_text<'a>(raw: &'a [u8], encoding: &'static Encoding) -> Cow<'a, str> {
    let mut text = encoding.decode_without_bom_handling(raw).0;
    if memchr::memchr2(b'\r', b'\0', text.as_bytes()).is_some() {
        let fixed = text
            .replace("\r\n", "\n")
            .replace('\r', "\n")
            .replace('\0', "\u{FFFD}");
        text = Cow::Owned(fixed);
    }
    crate::charref::decode_attribute(text)
}

/// Why a reading ended before the end of its input.
#[derive(Debug, PartialEq, Eq)]
pub enum Stop {
    /// A tag longer than the cap: what was read before it stands, the rest is not read.
    TooLong,
}

/// What a call to [`Tokenizer::feed`] left.
#[derive(Debug, PartialEq, Eq)]
pub enum Fed {
    /// The input was read up to this offset: keep the bytes from there on (at most the tag
    /// being read) and pass them, followed by the next chunk, to the next call.
    Keep(usize),
    /// The caller's `on_tag` asked to stop.
    Stopped,
}

/// Where the next byte is read: the data state, or inside text the tokenizer skips.
#[derive(Clone, Copy, Debug)]
enum Mode {
    Markup,
    /// A comment's text (after `<!--` and its special starts `>` and `->`).
    Comment,
    /// A bogus comment, DOCTYPE or CDATA section: text up to the next `>`.
    Bogus,
    /// RAWTEXT or RCDATA (the same here: no character references are decoded) up to the end
    /// tag of the element named `name[..len]`.
    Raw {
        name: [u8; MAX_RAW_NAME],
        len: u8,
    },
    Script(Script),
    /// `<plaintext>`: the rest of the input is text.
    Plain,
}

/// The longest name of an element whose content is raw text (`noscript`, `textarea`).
const MAX_RAW_NAME: usize = 9;

/// What follows a start tag, by its name: the tree builder's switches of the tokenizer state
/// (HTML namespace only).
fn mode_after(tag: &Tag<'_>) -> Mode {
    const RAW: [&[u8]; 8] = [
        b"style",
        b"xmp",
        b"iframe",
        b"noembed",
        b"noframes",
        b"noscript",
        b"textarea",
        b"title",
    ];
    // The names switching are 3 and 5 to 9 bytes long: `a`, `p`, `li`, `div`... pass at once.
    if tag.end || !matches!(tag.name.len(), 3 | 5..=MAX_RAW_NAME) {
        Mode::Markup
    } else if tag.is(b"script") {
        Mode::Script(Script::default())
    } else if let Some(raw) = RAW.iter().find(|n| tag.is(n)) {
        let mut name = [0; MAX_RAW_NAME];
        name[..raw.len()].copy_from_slice(raw);
        Mode::Raw {
            name,
            len: raw.len() as u8,
        }
    } else if tag.is(b"plaintext") {
        Mode::Plain
    } else {
        Mode::Markup
    }
}

/// The tokenizer's state between chunks of one input.
#[derive(Debug)]
pub struct Tokenizer {
    max_tag: usize,
    mode: Mode,
}

impl Tokenizer {
    /// A tokenizer at the start of a document; a tag longer than `max_tag` bytes (from its
    /// `<` to its `>`) ends the reading.
    pub fn new(max_tag: usize) -> Tokenizer {
        Tokenizer {
            max_tag,
            mode: Mode::Markup,
        }
    }

    /// Calls `on_tag` for every start and end tag of `input`, in order, until `on_tag` breaks.
    /// `input` is what the last call said to keep, followed by new bytes; `end` says no more
    /// will come (then tags cut by the end are dropped, as the spec drops them).
    pub fn feed<'a>(
        &mut self,
        input: &'a [u8],
        end: bool,
        mut on_tag: impl FnMut(&Tag<'a>) -> ControlFlow<()>,
    ) -> Result<Fed, Stop> {
        // One tag, overwritten by each: moving a fresh one out of every call was a third of
        // the scan's time (memcpy).
        let mut tag = Tag {
            input,
            ..Tag::default()
        };
        let len = input.len();
        let mut pos = 0;
        loop {
            match &mut self.mode {
                Mode::Markup => {}
                Mode::Plain => return Ok(Fed::Keep(len)),
                Mode::Bogus => match memchr(b'>', &input[pos..]) {
                    Some(gt) => pos += gt + 1,
                    None => return Ok(Fed::Keep(len)),
                },
                Mode::Comment => match comment_end(input, pos) {
                    Some(after) => pos = after,
                    // `--!>` is the longest ending: the last three bytes may start one.
                    None => return Ok(Fed::Keep(keep_from(len, 4, pos, end))),
                },
                Mode::Raw { name, len: n } => {
                    let name = &name[..usize::from(*n)];
                    match raw_text_end(input, pos, name) {
                        Some(lt) => pos = lt,
                        // `</name` and one more byte decide an end tag.
                        None => return Ok(Fed::Keep(keep_from(len, name.len() + 3, pos, end))),
                    }
                }
                Mode::Script(script) => match script_end(input, pos, script, end) {
                    Ok(lt) => pos = lt,
                    Err(keep) => return Ok(Fed::Keep(keep)),
                },
            }
            self.mode = Mode::Markup;
            let Some(lt) = memchr(b'<', &input[pos..]) else {
                return Ok(Fed::Keep(len));
            };
            let at = pos + lt;
            match after_lt(input, at, end, &mut tag) {
                Lt::Text(next) => pos = next,
                Lt::Comment(text) => {
                    pos = text;
                    self.mode = Mode::Comment;
                }
                Lt::Bogus(text) => {
                    pos = text;
                    self.mode = Mode::Bogus;
                }
                Lt::Tag(next) => {
                    if next - at > self.max_tag {
                        return Err(Stop::TooLong);
                    }
                    pos = next;
                    self.mode = mode_after(&tag);
                    if on_tag(&tag).is_break() {
                        return Ok(Fed::Stopped);
                    }
                }
                // Measured for tags only (comments and text cost nothing to skip), also for
                // one cut by the end of the input.
                Lt::TagCut if len - at > self.max_tag => return Err(Stop::TooLong),
                Lt::TagCut | Lt::Undecided if end => return Ok(Fed::Keep(len)),
                Lt::TagCut | Lt::Undecided => return Ok(Fed::Keep(at)),
            }
        }
    }
}

/// Where to keep bytes from when text that ends at a marker of `marker` bytes ran out at
/// `len`: its last `marker - 1` bytes may start one (not before `pos`); at the end, nothing.
fn keep_from(len: usize, marker: usize, pos: usize, end: bool) -> usize {
    if end {
        len
    } else {
        len.saturating_sub(marker - 1).max(pos)
    }
}

/// Calls `on_tag` for every start and end tag of a whole `input`, in order. Tags cut by the
/// end of the input are not emitted (the spec drops them); a tag longer than `max_tag` ends
/// the reading.
pub fn scan<'a>(
    input: &'a [u8],
    max_tag: usize,
    mut on_tag: impl FnMut(&Tag<'a>),
) -> Result<(), Stop> {
    Tokenizer::new(max_tag)
        .feed(input, true, |tag| {
            on_tag(tag);
            ControlFlow::Continue(())
        })
        .map(|_| ())
}
