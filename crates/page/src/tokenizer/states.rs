//! The tokenizer's states, as functions of the input and a position: what one `<` starts,
//! a tag and its attributes, where a comment, a raw-text element and script data end.
//!
//! Each answers from the bytes it is given; where the input ends before a decision (`<!-`
//! at the end of a chunk may start a comment), it says so, and the caller waits for more.

use memchr::memchr;

use super::{Tag, ATTRS};

/// What one `<` starts.
pub(super) enum Lt {
    /// Not markup: the data state goes on at this position.
    Text(usize),
    /// A tag, read into the caller's [`Tag`]; the data state goes on at this position.
    Tag(usize),
    /// A tag cut by the end of the input.
    TagCut,
    /// A comment whose text starts at this position (after its special starts).
    Comment(usize),
    /// A bogus comment, DOCTYPE or CDATA section whose text starts at this position and
    /// ends at the next `>`.
    Bogus(usize),
    /// The input ends before what this `<` starts can be told.
    Undecided,
}

/// The tag open state at `input[at] == b'<'`; a tag found is read into `tag`. `end`: the
/// input is whole.
pub(super) fn after_lt<'a>(input: &'a [u8], at: usize, end: bool, tag: &mut Tag<'a>) -> Lt {
    let mut is_tag = |start: usize, is_end: bool| match read_tag(input, start, is_end, tag) {
        Some(next) => Lt::Tag(next),
        None => Lt::TagCut,
    };
    match input.get(at + 1) {
        None => Lt::Undecided,
        Some(b'!') => declaration(input, at + 2, end),
        Some(b'?') => Lt::Bogus(at + 1),
        Some(b'/') => match input.get(at + 2) {
            Some(c) if c.is_ascii_alphabetic() => is_tag(at + 2, true),
            // `</>` is nothing at all.
            Some(b'>') => Lt::Text(at + 3),
            Some(_) => Lt::Bogus(at + 2),
            None => Lt::Undecided,
        },
        Some(c) if c.is_ascii_alphabetic() => is_tag(at + 1, false),
        // A `<` before anything else is text.
        Some(_) => Lt::Text(at + 1),
    }
}

/// After `<!` at `p`: a comment, or a DOCTYPE, CDATA section (bogus outside foreign
/// content) or bogus comment, all three of which end at the next `>`. A comment's special
/// starts, `<!-->` and `<!--->`, end it at once.
fn declaration(input: &[u8], p: usize, end: bool) -> Lt {
    let rest = &input[p..];
    if rest.starts_with(b"--") {
        return match &rest[2..] {
            [b'>', ..] => Lt::Text(p + 3),
            [b'-', b'>', ..] => Lt::Text(p + 4),
            [] | [b'-'] if !end => Lt::Undecided,
            _ => Lt::Comment(p + 2),
        };
    }
    if !end && b"--".starts_with(rest) {
        // `<!` or `<!-` at the end: a comment or not, the next bytes say.
        return Lt::Undecided;
    }
    Lt::Bogus(p)
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
/// Returns where the data state goes on (`None`: the input ends inside the tag).
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

/// Where a comment's text from `p` ends: after the first `--` followed by `>` or `!>`
/// (`None`: not in `input`). The comment states' other branches (`<!--` nested, `--!` not
/// before `>`) only report parse errors.
pub(super) fn comment_end(input: &[u8], p: usize) -> Option<usize> {
    let rest = &input[p..];
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

/// Where the RAWTEXT or RCDATA text of element `name` from `p` ends: at its end tag's `<`
/// (`None`: not in `input`).
pub(super) fn raw_text_end(input: &[u8], mut p: usize, name: &[u8]) -> Option<usize> {
    while let Some(i) = memchr(b'<', &input[p..]) {
        if is_end_tag(input, p + i, name) {
            return Some(p + i);
        }
        p += i + 1;
    }
    None
}

/// Where script data is between chunks: in the data state, or in the escaped states that
/// `<!--` opens (where `<script>` makes `</script>` not end it).
#[derive(Clone, Copy, Debug, Default)]
pub(super) struct Script {
    escaped: bool,
    double: bool,
    /// Dashes just read in the escaped states (up to 2): `-->` ends the escape.
    dashes: u8,
}

/// The end of the ASCII letters from `p`.
fn letters_end(input: &[u8], mut p: usize) -> usize {
    while input.get(p).is_some_and(u8::is_ascii_alphabetic) {
        p += 1;
    }
    p
}

/// Whether the input ends before the `<` at `lt` in script data can be read: its letters
/// (after `/`, or after `<` in the escaped states) and the byte after them decide an end tag
/// or a double escape; `<!--` needs its four bytes.
fn script_lt_undecided(input: &[u8], lt: usize, escaped: bool) -> bool {
    match input.get(lt + 1) {
        None => true,
        Some(b'/') => letters_end(input, lt + 2) >= input.len(),
        Some(b'!') if !escaped => lt + 4 > input.len(),
        Some(_) if escaped => letters_end(input, lt + 1) >= input.len(),
        Some(_) => false,
    }
}

/// Where script data from `p` ends, in the state `script`: `Ok` at its end tag's `<`, or
/// `Err` with where to keep bytes from for the next chunk (`script` is then the state
/// there). `end`: the input is whole, so nothing is kept.
pub(super) fn script_end(
    input: &[u8],
    mut p: usize,
    script: &mut Script,
    end: bool,
) -> Result<usize, usize> {
    loop {
        if !script.escaped {
            let Some(i) = memchr(b'<', &input[p..]) else {
                return Err(input.len());
            };
            let lt = p + i;
            if !end && script_lt_undecided(input, lt, false) {
                return Err(lt);
            }
            if is_end_tag(input, lt, b"script") {
                return Ok(lt);
            }
            p = lt + 1;
            if input[p..].starts_with(b"!--") {
                p += 3;
                *script = Script {
                    escaped: true,
                    double: false,
                    dashes: 2,
                };
            }
            continue;
        }
        let Some(&c) = input.get(p) else {
            return Err(input.len());
        };
        match c {
            b'-' => {
                script.dashes = (script.dashes + 1).min(2);
                p += 1;
                continue;
            }
            b'>' if script.dashes == 2 => {
                *script = Script::default();
                p += 1;
                continue;
            }
            b'<' => {
                if !end && script_lt_undecided(input, p, true) {
                    return Err(p);
                }
                if !script.double {
                    if is_end_tag(input, p, b"script") {
                        return Ok(p);
                    }
                    p = double_escape(input, p + 1, &mut script.double, true);
                } else if input.get(p + 1) == Some(&b'/') {
                    p = double_escape(input, p + 2, &mut script.double, false);
                } else {
                    p += 1;
                }
            }
            _ => p += 1,
        }
        script.dashes = 0;
    }
}

/// The double escape start (`<script`) and end (`</script`) states: letters from `p`; if
/// they spell `script` and whitespace, `/` or `>` follows, `double` becomes `to` (that
/// character is consumed). Returns where the escaped states go on.
fn double_escape(input: &[u8], p: usize, double: &mut bool, to: bool) -> usize {
    let q = letters_end(input, p);
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
