//! The one canonical percent-encoded form that both URLs and rule patterns are compared in.
//!
//! - non-ASCII bytes, controls, space, DEL and the characters RFC 3986 never allows raw
//!   (`"` `<` `>` `\` `^` `` ` `` `{` `|` `}`) become `%XX` with upper-case hex;
//! - a `%XX` escape gets upper-case hex, and is decoded when it encodes an unreserved character
//!   (`A-Z a-z 0-9 - . _ ~`), so `%7E` and `~` are one character, while `%2F` stays `%2F`;
//! - a `%` that does not start a valid escape is itself escaped as `%25`.
//!
//! `*` and `$` differ by side (RFC 9309 §2.2.3). In a rule pattern a raw `*` is the wildcard and
//! a final raw `$` the anchor; both stay raw. Literal ones are written `%2A` and `%24`, and a
//! `$` before the end of a pattern is a literal `$` too, so it becomes `%24`. In a URL, `*` and
//! `$` are always literal characters: they become `%2A` and `%24`, the same as a URL that
//! encodes them. So `Disallow: /%24` matches `/$100` and `/%24100`, and `Disallow: /a*` stays a
//! wildcard.

const HEX_UPPER: &[u8; 16] = b"0123456789ABCDEF";

fn hex_value(byte: u8) -> Option<u8> {
    match byte {
        b'0'..=b'9' => Some(byte - b'0'),
        b'a'..=b'f' => Some(byte - b'a' + 10),
        b'A'..=b'F' => Some(byte - b'A' + 10),
        _ => None,
    }
}

fn is_unreserved(byte: u8) -> bool {
    byte.is_ascii_alphanumeric() || matches!(byte, b'-' | b'.' | b'_' | b'~')
}

/// True for bytes that are never written raw in a canonical URL.
fn must_escape(byte: u8) -> bool {
    byte <= 0x20
        || byte >= 0x7F
        || matches!(
            byte,
            b'"' | b'<' | b'>' | b'\\' | b'^' | b'`' | b'{' | b'|' | b'}'
        )
}

/// Which side of a comparison a text is: they differ only in how `*` and `$` are read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Side {
    /// A URL's path and query: `*` and `$` are literal characters, written `%2A` and `%24`.
    Url,
    /// A rule pattern: raw `*` is the wildcard and a final raw `$` the anchor; a `$` before the
    /// end is literal, written `%24`.
    Pattern,
}

/// Bytes that need a closer look when checking canonical form: `%`, `$` and every byte that
/// [`must_escape`], and for URLs `*` and `#` as well (a fragment is cut before comparing, so
/// a URL without `#` or any of these needs neither cut nor copy). Most URLs and rules contain
/// none, and a table lookup per byte keeps the common case a tight loop.
const fn attention(side: Side) -> [bool; 256] {
    let mut table = [false; 256];
    let mut byte = 0;
    while byte < 256 {
        let b = byte as u8;
        table[byte] = b == b'%'
            || b == b'$'
            || ((b == b'*' || b == b'#') && matches!(side, Side::Url))
            || b <= 0x20
            || b >= 0x7F
            || matches!(
                b,
                b'"' | b'<' | b'>' | b'\\' | b'^' | b'`' | b'{' | b'|' | b'}'
            );
        byte += 1;
    }
    table
}

const URL_ATTENTION: [bool; 256] = attention(Side::Url);
const PATTERN_ATTENTION: [bool; 256] = attention(Side::Pattern);

/// Whether any byte of `text` is marked in `table`: eight lookups OR-ed together per step, with
/// no branch per byte.
fn needs_attention(text: &[u8], table: &[bool; 256]) -> bool {
    let look = |byte: &u8| table[usize::from(*byte)];
    let mut chunks = text.chunks_exact(8);
    let mut seen = false;
    for chunk in &mut chunks {
        if let [a, b, c, d, e, f, g, h] = chunk {
            seen |=
                (look(a) | look(b) | look(c) | look(d)) | (look(e) | look(f) | look(g) | look(h));
        }
    }
    chunks
        .remainder()
        .iter()
        .fold(seen, |seen, byte| seen | look(byte))
}

/// True when `input` is already canonical for its side, so callers can skip the copy.
/// Canonical text is always ASCII.
// Inlined: its callers pass a constant side, and a call per rule value or URL cost an eighth
// of the work; the rare slow part stays out of line.
#[inline(always)]
pub(crate) fn is_canonical(input: &[u8], side: Side) -> bool {
    let table = match side {
        Side::Url => &URL_ATTENTION,
        Side::Pattern => &PATTERN_ATTENTION,
    };
    // Most texts have no byte needing attention, and one pass without branches says so (a
    // pattern's final `$` is its anchor, not a byte needing attention).
    let checked = match (side, input.split_last()) {
        (Side::Pattern, Some((b'$', body))) => body,
        _ => input,
    };
    !needs_attention(checked, table) || escapes_are_canonical(input, side, table)
}

/// The rest of [`is_canonical`] for a text with bytes needing attention: whether each is an
/// anchor or a canonical escape. Kept out of line: few texts get here.
#[inline(never)]
fn escapes_are_canonical(input: &[u8], side: Side, table: &[bool; 256]) -> bool {
    let mut i = 0;
    while let Some(offset) = input[i..].iter().position(|&b| table[usize::from(b)]) {
        i += offset;
        if input[i] == b'$' && side == Side::Pattern && i + 1 == input.len() {
            return true;
        }
        if input[i] != b'%' {
            return false;
        }
        let (Some(&high), Some(&low)) = (input.get(i + 1), input.get(i + 2)) else {
            return false;
        };
        let upper_hex = |c: u8| c.is_ascii_digit() || (b'A'..=b'F').contains(&c);
        if !upper_hex(high) || !upper_hex(low) {
            return false;
        }
        match (hex_value(high), hex_value(low)) {
            (Some(h), Some(l)) if !is_unreserved(h << 4 | l) => i += 3,
            _ => return false,
        }
    }
    true
}

/// Appends the canonical form of `input`, read as `side`, to `out`.
pub(crate) fn canonicalize_into(input: &[u8], side: Side, out: &mut Vec<u8>) {
    out.reserve(input.len());
    let mut i = 0;
    while i < input.len() {
        let byte = input[i];
        let literal = match byte {
            b'*' => side == Side::Url,
            b'$' => side == Side::Url || i + 1 < input.len(),
            _ => false,
        };
        if literal {
            push_escaped(byte, out);
            i += 1;
        } else if byte == b'%' {
            let escape = match (input.get(i + 1), input.get(i + 2)) {
                (Some(&h), Some(&l)) => hex_value(h).zip(hex_value(l)).map(|(h, l)| h << 4 | l),
                _ => None,
            };
            match escape {
                Some(decoded) if is_unreserved(decoded) => {
                    out.push(decoded);
                    i += 3;
                }
                Some(decoded) => {
                    push_escaped(decoded, out);
                    i += 3;
                }
                None => {
                    out.extend_from_slice(b"%25");
                    i += 1;
                }
            }
        } else if must_escape(byte) {
            push_escaped(byte, out);
            i += 1;
        } else {
            out.push(byte);
            i += 1;
        }
    }
}

fn push_escaped(byte: u8, out: &mut Vec<u8>) {
    out.extend_from_slice(&[
        b'%',
        HEX_UPPER[usize::from(byte >> 4)],
        HEX_UPPER[usize::from(byte & 0xF)],
    ]);
}

/// The canonical form of a URL's path and query (or any text read as one) as a new buffer:
/// the form [`crate::AgentRules::check`] compares with rules. `*` and `$` are literal here and
/// come out as `%2A` and `%24`; see the crate README for the whole form.
pub fn canonicalize(input: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(input.len() + 8);
    canonicalize_into(input, Side::Url, &mut out);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn canon(s: &str) -> String {
        String::from_utf8(canonicalize(s.as_bytes())).unwrap()
    }

    #[test]
    fn non_ascii_is_escaped_with_upper_hex() {
        assert_eq!(canon("/hus/å"), "/hus/%C3%A5");
    }

    #[test]
    fn lower_case_escapes_become_upper_case() {
        assert_eq!(canon("/hus/%c3%a5"), "/hus/%C3%A5");
    }

    #[test]
    fn unreserved_escapes_are_decoded() {
        assert_eq!(canon("/%7Euser/%41%2d%5f%2E"), "/~user/A-_.");
    }

    #[test]
    fn reserved_escapes_stay_encoded() {
        assert_eq!(canon("/a%2fb"), "/a%2Fb");
        assert_ne!(canon("/a%2Fb"), canon("/a/b"));
        assert_eq!(canon("/a%3Fb%2A"), "/a%3Fb%2A");
    }

    #[test]
    fn stray_percent_is_escaped() {
        assert_eq!(canon("/100%"), "/100%25");
        assert_eq!(canon("/%zz"), "/%25zz");
        assert_eq!(canon("/%4"), "/%254");
    }

    #[test]
    fn unsafe_ascii_is_escaped() {
        assert_eq!(canon("/a b\"<>|"), "/a%20b%22%3C%3E%7C");
        assert_eq!(canon("/\u{7f}"), "/%7F");
    }

    fn pattern(s: &str) -> String {
        let mut out = Vec::new();
        canonicalize_into(s.as_bytes(), Side::Pattern, &mut out);
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn in_a_url_star_and_dollar_are_literal_characters() {
        assert_eq!(canon("/*.pdf$?a=1&b"), "/%2A.pdf%24?a=1&b");
        assert_eq!(canon("/%2a%24"), "/%2A%24");
    }

    #[test]
    fn in_a_pattern_star_and_final_dollar_stay_wildcards() {
        assert_eq!(pattern("/*.pdf$"), "/*.pdf$");
        assert_eq!(pattern("/a$b$"), "/a%24b$");
        assert_eq!(pattern("/%2a%24"), "/%2A%24");
        assert_eq!(pattern("/a$$"), "/a%24$");
    }

    #[test]
    fn is_canonical_agrees_with_canonicalize() {
        for s in [
            "/", "/a%2Fb", "/a%2fb", "/%41", "/å", "/a b", "/%", "/x?y=%20", "/*", "/$", "/a$b",
            "/a$b$", "/%2A", "/%24$", "$",
        ] {
            assert_eq!(
                is_canonical(s.as_bytes(), Side::Url),
                canon(s).as_bytes() == s.as_bytes(),
                "url {s}"
            );
            assert_eq!(
                is_canonical(s.as_bytes(), Side::Pattern),
                pattern(s).as_bytes() == s.as_bytes(),
                "pattern {s}"
            );
        }
    }
}
