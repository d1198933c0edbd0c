//! Character references in attribute values, decoded as the WHATWG HTML tokenizer does in
//! its attribute value states ("character reference state", with the rule for references
//! "consumed as part of an attribute"):
//!
//! - numeric, `&#38;`, `&#x26;`, `&#X26;`, with or without the `;`: 0, surrogates and code
//!   points past U+10FFFF become U+FFFD, and 0x80–0x9F are remapped by the spec's C1 table
//!   (`&#x80;` is `€`);
//! - named, by the longest name in the spec's table of 2,231 (`&notin;` is `∉`, `&not-in`
//!   is `¬-in`), the legacy ones without `;` included (`&amp`, `&copy`);
//! - but a named reference that does not end with `;` and is followed by `=` or an ASCII
//!   letter or digit stays as written, which keeps `?a=1&copy=2` a query (and `&notit;`,
//!   which is `¬it;` in text, stays `&notit;` in an attribute);
//! - anything else (`&` alone, `&;`, `&#;`, `&#x;`, an unknown name) stays as written.
//!
//! The table is `web_atoms`' (html5ever's own, generated from the spec's `entities.json`):
//! it maps each name, without its `&`, and each prefix of one (to `(0, 0)`) to code points.

use std::borrow::Cow;

use memchr::memchr;
use web_atoms::{C1_REPLACEMENTS, NAMED_ENTITIES};

/// An attribute value with its character references decoded. A value without `&` (nearly
/// every one) is returned as it came, without allocating.
pub fn decode_attribute(value: Cow<'_, str>) -> Cow<'_, str> {
    match memchr(b'&', value.as_bytes()) {
        None => value,
        Some(first) => Cow::Owned(decode_from(&value, first)),
    }
}

/// `value` decoded, its first `&` at `first`.
fn decode_from(value: &str, first: usize) -> String {
    let mut out = String::with_capacity(value.len());
    let (plain, mut rest) = value.split_at(first);
    out.push_str(plain);
    // `rest` starts with `&` here.
    while let Some(after) = rest.strip_prefix('&') {
        let used = reference(after, &mut out);
        if used == 0 {
            out.push('&');
        }
        let tail = after.get(used..).unwrap_or_default();
        match memchr(b'&', tail.as_bytes()) {
            Some(next) => {
                let (plain, more) = tail.split_at(next);
                out.push_str(plain);
                rest = more;
            }
            None => {
                out.push_str(tail);
                break;
            }
        }
    }
    out
}

/// Decode the reference that `s` (what follows an `&`) starts with into `out`: the bytes of
/// `s` it took, or 0 (nothing pushed) when there is none to decode there.
fn reference(s: &str, out: &mut String) -> usize {
    match s.as_bytes().first() {
        Some(b'#') => numeric(s, out),
        Some(c) if c.is_ascii_alphanumeric() => named(s, out),
        _ => 0,
    }
}

/// `#123;`, `#x7B;`, `#X7b`: the spec's "numeric character reference" states.
fn numeric(s: &str, out: &mut String) -> usize {
    let b = s.as_bytes();
    let (radix, start) = match b.get(1) {
        Some(b'x' | b'X') => (16, 2),
        _ => (10, 1),
    };
    let digits = b.get(start..).unwrap_or_default();
    let count = digits
        .iter()
        .take_while(|d| char::from(**d).is_digit(radix))
        .count();
    if count == 0 {
        // `&#;`, `&#x;`, `&#a`: not a reference, left as written.
        return 0;
    }
    // Saturates past u32: any such number is past U+10FFFF all the same.
    let code = digits[..count].iter().fold(0u32, |n, d| {
        let digit = char::from(*d).to_digit(radix).unwrap_or(0);
        n.saturating_mul(radix).saturating_add(digit)
    });
    out.push(numeric_char(code));
    let end = start + count;
    end + usize::from(b.get(end) == Some(&b';'))
}

/// The character a numeric reference to `code` stands for ("numeric character reference
/// end state").
fn numeric_char(code: u32) -> char {
    match code {
        0 | 0xD800..=0xDFFF | 0x11_0000.. => char::REPLACEMENT_CHARACTER,
        0x80..=0x9F => C1_REPLACEMENTS[(code - 0x80) as usize]
            .or_else(|| char::from_u32(code))
            .unwrap_or(char::REPLACEMENT_CHARACTER),
        _ => char::from_u32(code).unwrap_or(char::REPLACEMENT_CHARACTER),
    }
}

/// The longest named reference that `s` starts with, unless the attribute rule keeps it.
fn named(s: &str, out: &mut String) -> usize {
    let mut best = None;
    // Names are ASCII: a prefix that is no `str` (past a non-ASCII byte) is no name either.
    for len in 1..=s.len() {
        match s.get(..len).and_then(|p| NAMED_ENTITIES.get(p)) {
            None => break,
            // Only a prefix of a longer name.
            Some(&(0, _)) => {}
            Some(&chars) => best = Some((len, chars)),
        }
    }
    let Some((len, (first, second))) = best else {
        return 0;
    };
    let b = s.as_bytes();
    let next = b.get(len).copied();
    if b.get(len - 1) != Some(&b';') && next.is_some_and(|c| c == b'=' || c.is_ascii_alphanumeric())
    {
        // "Consumed as part of an attribute": `&copy=2`, `&notit` stay as written.
        return 0;
    }
    out.extend(char::from_u32(first));
    if second != 0 {
        out.extend(char::from_u32(second));
    }
    len
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dec(value: &str) -> String {
        decode_attribute(Cow::Borrowed(value)).into_owned()
    }

    #[test]
    fn values_without_ampersand_are_not_copied() {
        assert!(matches!(
            decode_attribute(Cow::Borrowed("/plain?a=1")),
            Cow::Borrowed("/plain?a=1")
        ));
        assert!(matches!(
            decode_attribute(Cow::Borrowed("/q?a=1&amp;b")),
            Cow::Owned(_)
        ));
    }

    #[test]
    fn numeric_forms() {
        assert_eq!(dec("&#123;"), "{");
        assert_eq!(dec("&#x7B;"), "{");
        assert_eq!(dec("&#X7b;"), "{");
        assert_eq!(dec("&#123"), "{");
        assert_eq!(dec("&#x7bz"), "{z");
        assert_eq!(dec("a&#47;b"), "a/b");
        assert_eq!(dec("&#0000065;"), "A");
        assert_eq!(dec("&#x1F600;"), "\u{1F600}");
        // Numeric references ignore the attribute rule: `=` or a letter after is fine.
        assert_eq!(dec("&#38=1&#65B"), "&=1AB");
    }

    #[test]
    fn numeric_c1_controls_are_remapped() {
        assert_eq!(dec("&#x80;"), "\u{20AC}");
        assert_eq!(dec("&#130;"), "\u{201A}");
        assert_eq!(dec("&#x9F;"), "\u{0178}");
        // The table's holes keep their code point.
        assert_eq!(dec("&#x81;"), "\u{81}");
        assert_eq!(dec("&#x9D;"), "\u{9D}");
        assert_eq!(dec("&#xA0;"), "\u{A0}");
    }

    #[test]
    fn invalid_code_points_become_replacement_characters() {
        assert_eq!(dec("&#0;"), "\u{FFFD}");
        assert_eq!(dec("&#xD800;"), "\u{FFFD}");
        assert_eq!(dec("&#xDFFF;"), "\u{FFFD}");
        assert_eq!(dec("&#x110000;"), "\u{FFFD}");
        assert_eq!(dec("&#99999999999999999999;x"), "\u{FFFD}x");
        assert_eq!(dec("&#x10FFFF;"), "\u{10FFFF}");
    }

    #[test]
    fn named_references() {
        assert_eq!(dec("&amp;"), "&");
        assert_eq!(dec("/q?a=1&amp;b=2"), "/q?a=1&b=2");
        assert_eq!(dec("&quot;x&quot;"), "\"x\"");
        assert_eq!(dec("a&nbsp;b"), "a\u{A0}b");
        assert_eq!(dec("&lt;&gt;&apos;"), "<>'");
        // Two code points.
        assert_eq!(dec("&NotEqualTilde;"), "\u{2242}\u{338}");
        // The longest name in the table.
        assert_eq!(dec("&CounterClockwiseContourIntegral;"), "\u{2233}");
        // Names are case-sensitive.
        assert_eq!(dec("&AMP;&Amp;"), "&&Amp;");
    }

    #[test]
    fn longest_match_wins() {
        assert_eq!(dec("&notin;"), "\u{2209}");
        assert_eq!(dec("&not;"), "\u{AC}");
        assert_eq!(dec("&not-it;"), "\u{AC}-it;");
        assert_eq!(dec("&notinva;x"), "\u{2209}x");
        assert_eq!(dec("&amp;amp;"), "&amp;");
        // The spec's `&notit;` is `¬it;` in text, where the longest name is `not`; in an
        // attribute that `not`, without `;` and before a letter, stays as written.
        assert_eq!(dec("&notit;"), "&notit;");
    }

    #[test]
    fn legacy_names_without_semicolon() {
        assert_eq!(dec("&amp"), "&");
        assert_eq!(dec("&lt "), "< ");
        assert_eq!(dec("&copy/"), "\u{A9}/");
        assert_eq!(dec("x&amp&ampy"), "x&&ampy");
        // Only the legacy names may drop the `;`.
        assert_eq!(dec("&hellip"), "&hellip");
    }

    #[test]
    fn attribute_rule_keeps_names_before_equals_or_alphanumerics() {
        assert_eq!(dec("/q?a=1&copy=2"), "/q?a=1&copy=2");
        assert_eq!(dec("/q?a=1&lang=en&amp=3"), "/q?a=1&lang=en&amp=3");
        assert_eq!(dec("&notit"), "&notit");
        assert_eq!(dec("&amp1"), "&amp1");
        // With its `;`, or before anything else, it is decoded.
        assert_eq!(dec("&copy;=2"), "\u{A9}=2");
        assert_eq!(dec("&not-it"), "\u{AC}-it");
    }

    #[test]
    fn what_is_no_reference_stays() {
        assert_eq!(dec("&"), "&");
        assert_eq!(dec("a & b"), "a & b");
        assert_eq!(dec("&;"), "&;");
        assert_eq!(dec("&#;"), "&#;");
        assert_eq!(dec("&#x;"), "&#x;");
        assert_eq!(dec("&#xg;"), "&#xg;");
        assert_eq!(dec("&nosuchname;"), "&nosuchname;");
        assert_eq!(dec("&&amp;&"), "&&&");
        assert_eq!(dec("&é;"), "&é;");
        assert_eq!(dec("é&amp;é"), "é&é");
    }
}
