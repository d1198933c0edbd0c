//! A tag scanner for [`super::read_page`]: the WHATWG HTML tokenizer's states that decide
//! which tags and attributes are seen, on bytes, without building text, comment or doctype
//! tokens and without allocating.
//!
//! Covered as the spec says: the data state (`memchr` for `<`); tag open, end tag open, tag
//! name (ASCII case-insensitive), the attribute name and value states (double-, single-quoted,
//! unquoted), self-closing, `/` between attributes; comments (with `<!-->`, `<!--->` and
//! `--!>` endings), `<!DOCTYPE>`, bogus comments (`<?...>`, `</ ...>`, `<![CDATA[...>`:
//! this scanner never is in foreign content); RAWTEXT and RCDATA elements up to their
//! appropriate end tag; script data with its escaped and double-escaped states (`<!--` inside
//! a script); `<plaintext>`, after which nothing is a tag.
//!
//! Simplified, as lol_html (which this replaced) did or on purpose:
//! - attribute values are the raw bytes between the quotes: character references are
//!   decoded later, on text ([`super::decode_attribute`]), and NUL stays NUL;
//! - `<noscript>` is RAWTEXT (the scripting-enabled parse, as lol_html and browsers do):
//!   links inside it are not seen;
//! - no tree construction: a raw-text start tag that the tree builder would ignore (`<xmp>`
//!   inside `<select>`, anything after `<frameset>`) still switches to RAWTEXT, and
//!   `<svg>`/`<math>` content is tokenized as HTML (so `<svg><style>` is RAWTEXT, and CDATA
//!   sections are bogus comments). lol_html gave up on the first case (the page was
//!   `truncated`) and followed the second. Both are rare on real pages.
//!
//! Only the attributes [`Attr`] names are kept (the first of each name, as the spec drops
//! duplicates), as ranges into the input: the scanner's memory is constant. A tag longer than
//! [`super::MAX_PARSER_MEMORY`] ends the scan (see [`Stop::TooLong`]).

use memchr::memchr;

/// The attributes [`super::read_page`] reads; all others are skipped unrecorded.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Attr {
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
}

/// How many [`Attr`] there are: the size of [`Tag`]'s table.
const ATTRS: usize = 7;

impl Attr {
    /// The attribute this (ASCII case-insensitive) name is, if one we keep.
    fn of(name: &[u8]) -> Option<Attr> {
        // By length first: most names on a page (class, id, style) then fail at one compare.
        let (attr, want): (Attr, &[u8]) = match (name.len(), name.first().map(|c| c | 0x20)) {
            (3, Some(b'r')) => (Attr::Rel, b"rel"),
            (3, _) => (Attr::Src, b"src"),
            (4, Some(b'h')) => (Attr::Href, b"href"),
            (4, _) => (Attr::Name, b"name"),
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
pub(super) struct Tag<'a> {
    /// The tag's name as written (compare ASCII case-insensitively).
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

    /// Whether this tag's name is `name` (given in lowercase).
    pub fn is(&self, name: &[u8]) -> bool {
        self.name.eq_ignore_ascii_case(name)
    }

    /// Records an attribute if it is kept and the first of its name.
    fn record(&mut self, name: (usize, usize), value: (usize, usize)) {
        if let Some(attr) = Attr::of(&self.input[name.0..name.1]) {
            self.values[attr as usize].get_or_insert(value);
        }
    }
}

/// Why a scan ended before the end of its input.
#[derive(Debug, PartialEq, Eq)]
pub(super) enum Stop {
    /// A tag longer than the cap: the page is reported `truncated`.
    TooLong,
}

/// What the scanner does after a start tag, by its name: the tree builder's switches of the
/// tokenizer state (HTML namespace only).
enum Text {
    Markup,
    /// RAWTEXT or RCDATA (the same to us: no character references are decoded).
    Raw,
    Script,
    /// `<plaintext>`: the rest of the input is text.
    Plain,
}

fn text_after(tag: &Tag<'_>) -> Text {
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
    if tag.end || !matches!(tag.name.len(), 3 | 5..=9) {
        Text::Markup
    } else if tag.is(b"script") {
        Text::Script
    } else if RAW.iter().any(|n| tag.is(n)) {
        Text::Raw
    } else if tag.is(b"plaintext") {
        Text::Plain
    } else {
        Text::Markup
    }
}

/// What one `<` starts: a tag or not, and where scanning goes on (`None`: the input ended
/// inside it).
struct Step {
    is_tag: bool,
    next: Option<usize>,
}

/// Calls `on_tag` for every start and end tag of `input`, in order. Tags cut by the end of
/// the input are not emitted (the spec drops them).
pub(super) fn scan<'a>(
    input: &'a [u8],
    max_tag: usize,
    mut on_tag: impl FnMut(&Tag<'a>),
) -> Result<(), Stop> {
    // One tag, overwritten by each: moving a fresh one out of every call was a third of the
    // scan's time (memcpy).
    let mut tag = Tag {
        input,
        ..Tag::default()
    };
    let mut pos = 0;
    while let Some(lt) = memchr(b'<', &input[pos..]) {
        let at = pos + lt;
        let step = after_lt(input, at, &mut tag);
        // Measured for tags only (comments and text cost nothing to skip), also for one cut
        // by the end of the input, as lol_html's buffer limit did.
        if step.is_tag && step.next.unwrap_or(input.len()) - at > max_tag {
            return Err(Stop::TooLong);
        }
        let Some(next) = step.next else {
            return Ok(());
        };
        pos = next;
        if step.is_tag {
            on_tag(&tag);
            pos = match text_after(&tag) {
                Text::Markup => pos,
                Text::Raw => raw_text_end(input, pos, tag.name),
                Text::Script => script_end(input, pos),
                Text::Plain => return Ok(()),
            };
        }
    }
    Ok(())
}

/// The tag open state at `input[at] == b'<'`; a tag found is read into `tag`.
fn after_lt<'a>(input: &'a [u8], at: usize, tag: &mut Tag<'a>) -> Step {
    let no_tag = |next: Option<usize>| Step {
        is_tag: false,
        next,
    };
    let mut is_tag = |start: usize, end: bool| Step {
        is_tag: true,
        next: read_tag(input, start, end, tag),
    };
    match input.get(at + 1) {
        None => no_tag(None),
        Some(b'!') => no_tag(declaration(input, at + 2)),
        Some(b'?') => no_tag(bogus_comment(input, at + 1)),
        Some(b'/') => match input.get(at + 2) {
            Some(c) if c.is_ascii_alphabetic() => is_tag(at + 2, true),
            // `</>` is nothing at all.
            Some(b'>') => no_tag(Some(at + 3)),
            Some(_) => no_tag(bogus_comment(input, at + 2)),
            None => no_tag(None),
        },
        Some(c) if c.is_ascii_alphabetic() => is_tag(at + 1, false),
        // A `<` before anything else is text.
        Some(_) => no_tag(Some(at + 1)),
    }
}

/// HTML's whitespace in the tokenizer (CR counts: the input stream turns it into LF).
fn is_space(c: u8) -> bool {
    matches!(c, b' ' | b'\n' | b'\t' | b'\r' | b'\x0C')
}

fn skip_space(input: &[u8], mut p: usize) -> usize {
    while input.get(p).is_some_and(|&c| is_space(c)) {
        p += 1;
    }
    p
}

/// A tag from its name at `start` to its `>`: the tag name, before/after attribute name,
/// attribute name, before attribute value, the three value states and self-closing.
/// Returns where the data state goes on.
fn read_tag<'a>(input: &'a [u8], start: usize, end: bool, tag: &mut Tag<'a>) -> Option<usize> {
    let mut p = start + 1;
    while !matches!(*input.get(p)?, b'/' | b'>') && !is_space(input[p]) {
        p += 1;
    }
    tag.name = &input[start..p];
    tag.end = end;
    tag.values = [None; ATTRS];
    loop {
        // Before attribute name (also after attribute name and after a quoted value: they
        // differ from it only in `=`, handled below, and in parse errors).
        p = skip_space(input, p);
        match *input.get(p)? {
            b'>' => return Some(p + 1),
            // Self-closing start tag state: anything but `>` is read again as above.
            b'/' => {
                p += 1;
                continue;
            }
            _ => {}
        }
        // Attribute name: its first character may be `=` (a parse error the spec keeps).
        let name_start = p;
        p += 1;
        while !matches!(*input.get(p)?, b'/' | b'>' | b'=') && !is_space(input[p]) {
            p += 1;
        }
        let name = (name_start, p);
        p = skip_space(input, p);
        if input.get(p) != Some(&b'=') {
            tag.record(name, (p, p));
            continue;
        }
        let value;
        (value, p) = attribute_value(input, skip_space(input, p + 1))?;
        tag.record(name, value);
    }
}

/// Before attribute value and the value states from `p`: the value's range and where the
/// tag goes on.
fn attribute_value(input: &[u8], p: usize) -> Option<((usize, usize), usize)> {
    match *input.get(p)? {
        quote @ (b'"' | b'\'') => {
            let close = p + 1 + memchr(quote, &input[p + 1..])?;
            Some(((p + 1, close), close + 1))
        }
        // A missing value: `>` ends the tag, read again by the caller.
        b'>' => Some(((p, p), p)),
        _ => {
            let mut q = p;
            while input[q] != b'>' && !is_space(input[q]) {
                q += 1;
                input.get(q)?;
            }
            Some(((p, q), q))
        }
    }
}

/// After `<!` at `p`: a comment, or a DOCTYPE, CDATA section (bogus outside foreign
/// content) or bogus comment, all three of which end at the next `>`.
fn declaration(input: &[u8], p: usize) -> Option<usize> {
    if input[p..].starts_with(b"--") {
        comment(input, p + 2)
    } else {
        bogus_comment(input, p)
    }
}

fn bogus_comment(input: &[u8], p: usize) -> Option<usize> {
    Some(p + memchr(b'>', &input[p..])? + 1)
}

/// A comment's text from `p` (after `<!--`) to its end: `>` or `->` at once (`<!-->`,
/// `<!--->`), else the first `--` followed by `>` or `!>`. The comment states' other
/// branches (`<!--` nested, `--!` not before `>`) only report parse errors.
fn comment(input: &[u8], p: usize) -> Option<usize> {
    let rest = &input[p..];
    if rest.starts_with(b">") {
        return Some(p + 1);
    }
    if rest.starts_with(b"->") {
        return Some(p + 2);
    }
    let mut from = 0;
    loop {
        // `memchr` for `-` rather than `memmem` for `--`: no searcher to build per comment.
        let dash = from + memchr(b'-', &rest[from..])?;
        match rest.get(dash + 1..)? {
            [b'-', b'>', ..] => return Some(p + dash + 3),
            [b'-', b'!', b'>', ..] => return Some(p + dash + 4),
            _ => from = dash + 1,
        }
    }
}

/// Whether `input[lt..]` is `</name` followed by whitespace, `/` or `>`: an appropriate end
/// tag for RAWTEXT, RCDATA or script data opened by `name`.
fn is_end_tag(input: &[u8], lt: usize, name: &[u8]) -> bool {
    let Some(rest) = input.get(lt + 1..) else {
        return false;
    };
    rest.first() == Some(&b'/')
        && rest.len() > name.len() + 1
        && rest[1..=name.len()].eq_ignore_ascii_case(name)
        && matches!(
            rest[name.len() + 1],
            b'/' | b'>' | b' ' | b'\n' | b'\t' | b'\r' | b'\x0C'
        )
}

/// Where the RAWTEXT or RCDATA text of element `name` from `p` ends: at its end tag's `<`,
/// or at the end of the input.
fn raw_text_end(input: &[u8], mut p: usize, name: &[u8]) -> usize {
    while let Some(i) = memchr(b'<', &input[p..]) {
        if is_end_tag(input, p + i, name) {
            return p + i;
        }
        p += i + 1;
    }
    input.len()
}

/// Where script data from `p` ends: at `</script`'s `<`, or at the end of the input.
/// `<!--` leads into the escaped states, where `<script>` makes `</script>` not end it.
fn script_end(input: &[u8], mut p: usize) -> usize {
    while let Some(i) = memchr(b'<', &input[p..]) {
        let lt = p + i;
        if is_end_tag(input, lt, b"script") {
            return lt;
        }
        p = lt + 1;
        if input[p..].starts_with(b"!--") {
            match escaped(input, p + 3) {
                Ok(back) => p = back,
                Err(end) => return end,
            }
        }
    }
    input.len()
}

/// The script data escaped and double escaped states, from the escaped dash dash state at
/// `p`: `Ok` where script data resumes (after `-->`), `Err` where the script ends (its end
/// tag's `<`, or the end of the input).
fn escaped(input: &[u8], mut p: usize) -> Result<usize, usize> {
    let mut dashes = 2;
    let mut double = false;
    while let Some(&c) = input.get(p) {
        match c {
            b'-' => {
                dashes = (dashes + 1).min(2);
                p += 1;
                continue;
            }
            b'>' if dashes == 2 => return Ok(p + 1),
            b'<' if !double => {
                if is_end_tag(input, p, b"script") {
                    return Err(p);
                }
                p = double_escape(input, p + 1, &mut double, true);
            }
            b'<' if input.get(p + 1) == Some(&b'/') => {
                p = double_escape(input, p + 2, &mut double, false);
            }
            _ => p += 1,
        }
        dashes = 0;
    }
    Err(input.len())
}

/// The double escape start (`<script`) and end (`</script`) states: letters from `p`; if
/// they spell `script` and whitespace, `/` or `>` follows, `double` becomes `to` (that
/// character is consumed). Returns where the escaped states go on.
fn double_escape(input: &[u8], p: usize, double: &mut bool, to: bool) -> usize {
    let mut q = p;
    while input.get(q).is_some_and(u8::is_ascii_alphabetic) {
        q += 1;
    }
    match input.get(q) {
        Some(&c)
            if (c == b'/' || c == b'>' || is_space(c))
                && input[p..q].eq_ignore_ascii_case(b"script") =>
        {
            *double = to;
            q + 1
        }
        _ => q,
    }
}
