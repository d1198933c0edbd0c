//! Splitting a robots.txt body into lines and lines into directives.

use crate::word::{first_eight, splat, zero_bytes, HIGH_BITS};
use memchr::memchr2;

/// The most bytes of a robots.txt file that are read (RFC 9309 §2.5's minimum, 500 KiB).
pub const MAX_ROBOTS_TXT_BYTES: usize = 512_000;

const UTF8_BOM: &[u8] = b"\xEF\xBB\xBF";

/// What opened the file before its first line.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Bom {
    /// Nothing: the first line starts at the first byte.
    None,
    /// A whole UTF-8 byte order mark, `EF BB BF`.
    Whole,
    /// The first one or two bytes of one (`EF` or `EF BB`), not continued into any UTF-8
    /// character: a mark cut short, skipped like a whole one so the first line still counts.
    Partial,
}

impl Bom {
    /// Reads the start of `body`: how many bytes of it are a byte order mark, and which kind.
    ///
    /// A prefix of the mark is only taken for one when the next byte does not continue a UTF-8
    /// character (`EF BC 9A` is the character U+FF1A, not a cut mark).
    fn at_start_of(body: &[u8]) -> (Bom, usize) {
        let continues = |at: usize| body.get(at).is_some_and(|b| (0x80..=0xBF).contains(b));
        if body.starts_with(UTF8_BOM) {
            (Bom::Whole, UTF8_BOM.len())
        } else if body.starts_with(&UTF8_BOM[..2]) && !continues(2) {
            (Bom::Partial, 2)
        } else if body.starts_with(&UTF8_BOM[..1]) && !continues(1) {
            (Bom::Partial, 1)
        } else {
            (Bom::None, 0)
        }
    }
}

/// The part of the input that is parsed, and what was set aside to get it.
pub(crate) struct Prepared<'a> {
    /// Bytes to parse: after the BOM, within the limit, without a line cut by the limit.
    pub(crate) body: &'a [u8],
    pub(crate) bom: Bom,
    /// Bytes beyond [`MAX_ROBOTS_TXT_BYTES`] that were not read.
    pub(crate) ignored_bytes: usize,
    /// Whether an incomplete line at the limit was dropped.
    pub(crate) cut_line: bool,
}

pub(crate) fn prepare(input: &[u8]) -> Prepared<'_> {
    let (limited, ignored_bytes) = if input.len() > MAX_ROBOTS_TXT_BYTES {
        (
            &input[..MAX_ROBOTS_TXT_BYTES],
            input.len() - MAX_ROBOTS_TXT_BYTES,
        )
    } else {
        (input, 0)
    };
    let mut cut_line = false;
    let mut body = limited;
    if ignored_bytes > 0 {
        let line_ends_at_limit = matches!(input[MAX_ROBOTS_TXT_BYTES], b'\r' | b'\n')
            || matches!(limited.last(), Some(b'\r' | b'\n'));
        if !line_ends_at_limit {
            let keep = memchr::memrchr2(b'\r', b'\n', limited).map_or(0, |i| i + 1);
            cut_line = keep < limited.len();
            body = &limited[..keep];
        }
    }
    let (bom, skip) = Bom::at_start_of(body);
    body = &body[skip..];
    Prepared {
        body,
        bom,
        ignored_bytes,
        cut_line,
    }
}

/// What one line says.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Directive<'a> {
    /// Empty, or only a comment.
    Blank,
    /// Text without a colon.
    MissingColon,
    UserAgent(&'a [u8]),
    Allow(&'a [u8]),
    Disallow(&'a [u8]),
    Sitemap(&'a [u8]),
    CrawlDelay(&'a [u8]),
    Unknown {
        field: &'a [u8],
        value: &'a [u8],
    },
}

/// `bytes` as an owned string, invalid UTF-8 replaced. Valid UTF-8 (nearly all robots.txt
/// text) takes the standard library's fast validation rather than the lossy decoder.
pub(crate) fn lossy_string(bytes: &[u8]) -> String {
    match std::str::from_utf8(bytes) {
        Ok(text) => text.to_owned(),
        Err(_) => String::from_utf8_lossy(bytes).into_owned(),
    }
}

fn is_space(byte: u8) -> bool {
    matches!(byte, b' ' | b'\t' | b'\x0B' | b'\x0C')
}

pub(crate) fn trim(mut text: &[u8]) -> &[u8] {
    while let [first, rest @ ..] = text {
        if !is_space(*first) {
            break;
        }
        text = rest;
    }
    while let [rest @ .., last] = text {
        if !is_space(*last) {
            break;
        }
        text = rest;
    }
    text
}

/// Reads one line (without its terminator).
#[cfg(test)]
pub(crate) fn directive(line: &[u8]) -> Directive<'_> {
    match Directives::new(line).next() {
        Some(line) => line.directive,
        None => Directive::Blank,
    }
}

/// One line of a body and what it says.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Line<'a> {
    /// 1-based line number.
    pub(crate) number: usize,
    /// Offset of the line's first byte in the body.
    pub(crate) start: usize,
    /// The line without its terminator.
    pub(crate) raw: &'a [u8],
    pub(crate) directive: Directive<'a>,
}

/// A field recognised without searching for the colon.
#[derive(Debug, Clone, Copy)]
enum Field {
    Disallow,
    Allow,
    UserAgent,
    Sitemap,
    CrawlDelay,
}

impl Field {
    fn directive(self, value: &[u8]) -> Directive<'_> {
        match self {
            Field::Disallow => Directive::Disallow(value),
            Field::Allow => Directive::Allow(value),
            Field::UserAgent => Directive::UserAgent(value),
            Field::Sitemap => Directive::Sitemap(value),
            Field::CrawlDelay => Directive::CrawlDelay(value),
        }
    }
}

/// A field name, prepared to be compared with the start of a line a word at a time.
struct Name {
    field: Field,
    len: usize,
    /// The first eight bytes of the name, lower case (zero-padded).
    word: u64,
    /// Which bits of the line's first eight bytes count: the bytes of the name.
    mask: u64,
    /// `0x20` at the name's letters: OR-ing it into a byte lowers a letter, and only a letter
    /// can become a lower-case letter that way, so `-` is compared exactly.
    fold: u64,
    /// The name past eight bytes.
    tail: &'static [u8],
}

impl Name {
    const fn new(name: &'static [u8], field: Field) -> Name {
        let mut word = [0u8; 8];
        let mut fold = [0u8; 8];
        let mut mask = [0u8; 8];
        let mut i = 0;
        while i < name.len() && i < 8 {
            word[i] = name[i];
            mask[i] = 0xFF;
            if name[i].is_ascii_alphabetic() {
                fold[i] = 0x20;
            }
            i += 1;
        }
        let tail = match name.split_at_checked(i) {
            Some((_, tail)) => tail,
            None => &[],
        };
        Name {
            field,
            len: name.len(),
            word: u64::from_le_bytes(word),
            mask: u64::from_le_bytes(mask),
            fold: u64::from_le_bytes(fold),
            tail,
        }
    }

    /// Whether `line` starts with this name, in any case.
    // Inlined into the line reader: a call per line costs more than the comparison.
    #[inline(always)]
    fn starts(&self, line: &[u8], first_eight: u64) -> bool {
        line.len() >= self.len
            && (first_eight | self.fold) & self.mask == self.word
            && line
                .get(8..self.len)
                .is_none_or(|tail| tail.eq_ignore_ascii_case(self.tail))
    }
}

/// The fields recognised without searching for the colon.
const KNOWN_FIELDS: [Name; 5] = [
    Name::new(b"disallow", Field::Disallow),
    Name::new(b"allow", Field::Allow),
    Name::new(b"user-agent", Field::UserAgent),
    Name::new(b"sitemap", Field::Sitemap),
    Name::new(b"crawl-delay", Field::CrawlDelay),
];

/// Where the value of a line that starts with a known field name starts (after the colon),
/// and which field; `None` for any other line, which the general path reads.
#[inline(always)]
fn known_field(line: &[u8]) -> Option<(usize, Field)> {
    let first = line.first()? | 0x20;
    let name = KNOWN_FIELDS.iter().find(|name| name.word as u8 == first)?;
    if !name.starts(line, first_eight(line)) {
        return None;
    }
    let mut at = name.len;
    while matches!(line.get(at), Some(b' ' | b'\t')) {
        at += 1;
    }
    (line.get(at) == Some(&b':')).then_some((at + 1, name.field))
}

/// Reads a value from `from` to its end: where the trimmed value starts and ends, and where
/// the line ends.
#[inline(always)]
fn scan_value(rest: &[u8], mut from: usize) -> (usize, usize, usize) {
    while matches!(rest.get(from), Some(b' ' | b'\t' | b'\x0B' | b'\x0C')) {
        from += 1;
    }
    let stop = find_value_end(rest.get(from..).unwrap_or_default())
        .map_or(rest.len(), |offset| from + offset);
    let mut value_end = stop;
    while value_end > from && is_space(rest[value_end - 1]) {
        value_end -= 1;
    }
    let line_end = match rest.get(stop) {
        Some(b'#') => line_end(rest, stop),
        _ => stop,
    };
    (from, value_end, line_end)
}

/// The first position of any of `needles` in `text`.
///
/// Field names and rule values are a few dozen bytes: eight bytes at a time in a register
/// beats a byte loop, and beats setting up a vector search for so little text.
fn find_any(text: &[u8], needles: [u8; 4]) -> Option<usize> {
    let [a, b, c, d] = needles.map(splat);
    let mut chunks = text.chunks_exact(8);
    let mut offset = 0;
    for chunk in &mut chunks {
        let mut bytes = [0u8; 8];
        bytes.copy_from_slice(chunk);
        let word = u64::from_le_bytes(bytes);
        // Written out rather than folded over the array: folded, the compiler moves the word
        // into vector registers and back, which costs more than the four tests.
        let found = zero_bytes(word ^ a)
            | zero_bytes(word ^ b)
            | zero_bytes(word ^ c)
            | zero_bytes(word ^ d);
        if found != 0 {
            return Some(offset + (found.trailing_zeros() / 8) as usize);
        }
        offset += 8;
    }
    chunks
        .remainder()
        .iter()
        .position(|byte| needles.contains(byte))
        .map(|position| offset + position)
}

/// The first `#`, CR or LF in `text`: [`find_any`] with the three needles that end a value.
#[inline(always)]
fn find_value_end(text: &[u8]) -> Option<usize> {
    let [hash, cr, lf] = [b'#', b'\r', b'\n'].map(splat);
    let mut chunks = text.chunks_exact(8);
    let mut offset = 0;
    for chunk in &mut chunks {
        let mut bytes = [0u8; 8];
        bytes.copy_from_slice(chunk);
        let word = u64::from_le_bytes(bytes);
        // All three needles are below `$`, and so are few bytes of a value (space, `!`, `"`):
        // one test says whether the word can hold one, three say where.
        if word.wrapping_sub(splat(b'$')) & !word & HIGH_BITS != 0 {
            let found = zero_bytes(word ^ hash) | zero_bytes(word ^ cr) | zero_bytes(word ^ lf);
            if found != 0 {
                return Some(offset + (found.trailing_zeros() / 8) as usize);
            }
        }
        offset += 8;
    }
    chunks
        .remainder()
        .iter()
        .position(|byte| matches!(byte, b'#' | b'\r' | b'\n'))
        .map(|position| offset + position)
}

/// Iterates over the lines of a body and what each says, numbered from 1.
///
/// One pass per line: a short scalar scan over the field name to the colon, then one search
/// for the comment or line end; cheaper than splitting lines first and reading them after.
pub(crate) struct Directives<'a> {
    /// When set, the values of rule, crawl-delay and sitemap lines are not read (they come
    /// out empty): the one-crawler parse sets it while in a group it does not need.
    pub(crate) skip_values: bool,
    rest: &'a [u8],
    number: usize,
    /// Offset of `rest` in the body.
    offset: usize,
}

impl<'a> Directives<'a> {
    pub(crate) fn new(body: &'a [u8]) -> Self {
        Directives {
            skip_values: false,
            rest: body,
            number: 0,
            offset: 0,
        }
    }
}

fn line_end(text: &[u8], from: usize) -> usize {
    memchr2(b'\r', b'\n', &text[from..]).map_or(text.len(), |offset| from + offset)
}

// Inlined: returning the directive through memory from a call stalls on store forwarding.
#[inline(always)]
fn classify<'a>(field: &'a [u8], value: &'a [u8]) -> Directive<'a> {
    let field = trim(field);
    let value = trim(value);
    let is = |name: &str| field.eq_ignore_ascii_case(name.as_bytes());
    match field.len() {
        0 if value.is_empty() => Directive::MissingColon,
        5 if is("allow") => Directive::Allow(value),
        7 if is("sitemap") => Directive::Sitemap(value),
        8 if is("disallow") => Directive::Disallow(value),
        10 if is("user-agent") => Directive::UserAgent(value),
        11 if is("crawl-delay") => Directive::CrawlDelay(value),
        _ => Directive::Unknown { field, value },
    }
}

fn no_colon(before_comment: &[u8]) -> Directive<'_> {
    if trim(before_comment).is_empty() {
        Directive::Blank
    } else {
        Directive::MissingColon
    }
}

impl<'a> Iterator for Directives<'a> {
    type Item = Line<'a>;

    // Inlined into the parse loop: a line returned through memory from a call costs more
    // than reading it.
    #[inline(always)]
    fn next(&mut self) -> Option<Self::Item> {
        let rest = self.rest;
        if rest.is_empty() {
            return None;
        }
        self.number += 1;
        let (end, directive) = match known_field(rest) {
            Some((value_start, field))
                if self.skip_values && !matches!(field, Field::UserAgent) =>
            {
                (line_end(rest, value_start), field.directive(b""))
            }
            Some((value_start, field)) => {
                let (from, value_end, end) = scan_value(rest, value_start);
                (end, field.directive(&rest[from..value_end]))
            }
            None => general_line(rest),
        };
        let line = &rest[..end];
        let skip = match (rest.get(end), rest.get(end + 1)) {
            (Some(b'\r'), Some(b'\n')) => 2,
            (Some(_), _) => 1,
            (None, _) => 0,
        };
        let start = self.offset;
        self.rest = &rest[end + skip..];
        self.offset += end + skip;
        Some(Line {
            number: self.number,
            start,
            raw: line,
            directive,
        })
    }
}

/// Reads a line that does not start with a known field name: the end of its text and what it
/// says.
fn general_line(rest: &[u8]) -> (usize, Directive<'_>) {
    {
        let stop = find_any(rest, [b':', b'#', b'\r', b'\n']).unwrap_or(rest.len());
        match rest.get(stop) {
            None | Some(b'\r' | b'\n') => (stop, no_colon(&rest[..stop])),
            Some(b'#') => (line_end(rest, stop), no_colon(&rest[..stop])),
            Some(_colon) => {
                let value_start = stop + 1;
                match find_any(&rest[value_start..], [b'#', b'\r', b'\n', b'\n']) {
                    None => (rest.len(), classify(&rest[..stop], &rest[value_start..])),
                    Some(offset) => {
                        let value_end = value_start + offset;
                        let end = if rest[value_end] == b'#' {
                            line_end(rest, value_end)
                        } else {
                            value_end
                        };
                        (end, classify(&rest[..stop], &rest[value_start..value_end]))
                    }
                }
            }
        }
    }
}

/// What a user-agent value names.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Product<'a> {
    /// `*`, alone or followed only by characters that cannot be part of a token (`*;`, `**`):
    /// every crawler without a group of its own.
    Global,
    /// A product token: the leading run of `[A-Za-z_-]`.
    Token(&'a [u8]),
    /// A `*` followed by a name (`*OrkashBot*`, `*libwww*`): not the `*` group (RFC 9309
    /// §2.2.1: only `*` is), and no product token either, so it names no crawler. The first
    /// token-like run after the `*` is kept, for reporting.
    StarredName(&'a [u8]),
    /// Nothing usable (empty, or no leading token character).
    Nothing,
}

/// Whether `byte` may be part of a product token (`[A-Za-z_-]`, RFC 9309 §2.2.1).
pub(crate) fn is_token_byte(byte: u8) -> bool {
    byte.is_ascii_alphabetic() || byte == b'_' || byte == b'-'
}

/// The length of the leading run of token bytes.
fn token_len(value: &[u8]) -> usize {
    value
        .iter()
        .position(|&b| !is_token_byte(b))
        .unwrap_or(value.len())
}

pub(crate) fn product(value: &[u8]) -> Product<'_> {
    if let Some(after_star) = value.strip_prefix(b"*") {
        return match after_star.iter().position(|&b| is_token_byte(b)) {
            None => Product::Global,
            Some(start) => {
                let name = &after_star[start..];
                Product::StarredName(&name[..token_len(name)])
            }
        };
    }
    match token_len(value) {
        0 => Product::Nothing,
        end => Product::Token(&value[..end]),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lines(body: &[u8]) -> Vec<(usize, &[u8])> {
        Directives::new(body)
            .map(|line| {
                assert_eq!(&body[line.start..line.start + line.raw.len()], line.raw);
                (line.number, line.raw)
            })
            .collect()
    }

    #[test]
    fn cr_lf_and_crlf_all_end_lines() {
        assert_eq!(
            lines(b"a\rb\nc\r\nd"),
            vec![(1, &b"a"[..]), (2, b"b"), (3, b"c"), (4, b"d")]
        );
        assert_eq!(lines(b"a\n\rb"), vec![(1, &b"a"[..]), (2, b""), (3, b"b")]);
        assert_eq!(lines(b"a\n"), vec![(1, &b"a"[..])]);
        assert!(lines(b"").is_empty());
    }

    #[test]
    fn directives_are_case_insensitive_and_trimmed() {
        assert_eq!(
            directive(b"  DISALLOW :  /a  # c"),
            Directive::Disallow(b"/a")
        );
        assert_eq!(
            directive(b"user-Agent:\tJittyBot"),
            Directive::UserAgent(b"JittyBot")
        );
        assert_eq!(directive(b"# only a comment"), Directive::Blank);
        assert_eq!(directive(b"Disallow /a"), Directive::MissingColon);
        assert_eq!(
            directive(b"Dissallow: /a"),
            Directive::Unknown {
                field: b"Dissallow",
                value: b"/a"
            }
        );
        assert_eq!(
            directive(b"Sitemap: https://e.com/s.xml"),
            Directive::Sitemap(b"https://e.com/s.xml")
        );
    }

    #[test]
    fn product_token_is_the_leading_token_run() {
        assert_eq!(product(b"JittyBot/1.0"), Product::Token(b"JittyBot"));
        assert_eq!(
            product(b"JittyBot-Image"),
            Product::Token(b"JittyBot-Image")
        );
        assert_eq!(product(b"*"), Product::Global);
        assert_eq!(product(b"**"), Product::Global);
        assert_eq!(product(b"*;"), Product::Global);
        assert_eq!(product(b"*OrkashBot*"), Product::StarredName(b"OrkashBot"));
        assert_eq!(product(b"* libwww"), Product::StarredName(b"libwww"));
        assert_eq!(product(b""), Product::Nothing);
        assert_eq!(product(b"1bot"), Product::Nothing);
        assert_eq!(
            product(b"Mozilla/5.0 (compatible; Googlebot/2.1)"),
            Product::Token(b"Mozilla")
        );
    }

    #[test]
    fn limit_drops_the_cut_line_and_keeps_complete_ones() {
        let mut input = vec![b'a'; MAX_ROBOTS_TXT_BYTES - 2];
        input.extend_from_slice(b"\nDisallow: /x\n");
        let prepared = prepare(&input);
        assert!(prepared.cut_line);
        assert_eq!(prepared.body.len(), MAX_ROBOTS_TXT_BYTES - 1);
        assert_eq!(prepared.ignored_bytes, input.len() - MAX_ROBOTS_TXT_BYTES);

        let mut exact = vec![b'a'; MAX_ROBOTS_TXT_BYTES];
        exact.push(b'\n');
        let prepared = prepare(&exact);
        assert!(!prepared.cut_line);
        assert_eq!(prepared.body.len(), MAX_ROBOTS_TXT_BYTES);
    }

    #[test]
    fn find_any_finds_the_first_needle_in_and_after_whole_words() {
        let needles = [b':', b'#', b'\r', b'\n'];
        assert_eq!(find_any(b"Disallow: /x", needles), Some(8));
        assert_eq!(find_any(b"User-agent: x", needles), Some(10));
        assert_eq!(find_any(b"0123456789abcdef#", needles), Some(16));
        assert_eq!(find_any(b"ab#cd:ef", needles), Some(2));
        assert_eq!(find_any(b"\x01\x00\x01:", needles), Some(3));
        assert_eq!(find_any(b"no needle here at all", needles), None);
        assert_eq!(find_any(b"", needles), None);
        for length in 0..40 {
            for at in 0..length {
                let mut text = vec![b'a'; length];
                text[at] = b'\n';
                assert_eq!(find_any(&text, needles), Some(at), "{length} {at}");
            }
        }
    }

    #[test]
    fn find_value_end_finds_the_first_hash_cr_or_lf() {
        assert_eq!(find_value_end(b"/a b!\"c"), None);
        for length in 0..40 {
            for at in 0..length {
                for needle in [b'#', b'\r', b'\n'] {
                    // Bytes below `$` that end nothing, before and after the needle.
                    let mut text: Vec<u8> = (0..length).map(|i| b"a !\"/"[i % 5]).collect();
                    text[at] = needle;
                    assert_eq!(find_value_end(&text), Some(at), "{length} {at} {needle}");
                }
            }
        }
    }

    #[test]
    fn bom_is_skipped_whole_or_cut_short() {
        let prepared = prepare(b"\xEF\xBB\xBFUser-agent: *");
        assert_eq!(prepared.bom, Bom::Whole);
        assert_eq!(prepared.body, b"User-agent: *");
        for input in [&b"\xEF\xBBUser-agent: *"[..], b"\xEFUser-agent: *"] {
            let prepared = prepare(input);
            assert_eq!(prepared.bom, Bom::Partial);
            assert_eq!(prepared.body, b"User-agent: *");
        }
        assert_eq!(prepare(b"\xEF\xBB").body, b"");
        // A character that starts with a byte of the mark is not a mark.
        for input in [&b"\xEF\xBC\x9A"[..], b"\xEF\xBB\x80"] {
            let prepared = prepare(input);
            assert_eq!((prepared.bom, prepared.body), (Bom::None, input));
        }
    }
}
