//! Output that is safe on a terminal. Robots.txt lines, sitemap URLs, headers, meta tags and
//! error messages come from files and servers nobody here controls: an ESC sequence in them
//! could move the cursor, rewrite earlier lines or change the terminal's title, and a
//! bidirectional override could make one URL read as another. Everything printed goes through
//! [`is_unsafe`]: text output shows such characters as escapes (`\x1b`, `\u{202e}`), JSON
//! output as JSON escapes (`\u001b`), so `--json` stays valid JSON.

use std::borrow::Cow;
use std::fmt::Write as _;
use std::io::{self, Write};

use serde::Serialize;

/// Whether `c` must not reach a terminal as is: control characters (C0 including line breaks
/// and tabs, DEL, C1) and the characters that reorder text (bidirectional marks, embeddings,
/// overrides and isolates).
pub fn is_unsafe(c: char) -> bool {
    c.is_control()
        || matches!(
            c,
            '\u{061c}' | '\u{200e}' | '\u{200f}' | '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}'
        )
}

/// `text` with every unsafe character written as an escape: `\n`, `\r`, `\t`, `\x1b` for the
/// other ASCII ones, `\u{202e}` for the rest. Text with none is returned as is.
pub fn escape(text: &str) -> Cow<'_, str> {
    if !text.chars().any(is_unsafe) {
        return Cow::Borrowed(text);
    }
    let mut safe = String::with_capacity(text.len() + 8);
    for c in text.chars() {
        match c {
            '\n' => safe.push_str("\\n"),
            '\r' => safe.push_str("\\r"),
            '\t' => safe.push_str("\\t"),
            c if is_unsafe(c) && c.is_ascii() => {
                let _ = write!(safe, "\\x{:02x}", u32::from(c));
            }
            c if is_unsafe(c) => {
                let _ = write!(safe, "\\u{{{:x}}}", u32::from(c));
            }
            c => safe.push(c),
        }
    }
    Cow::Owned(safe)
}

/// Writes text the program composed: its own line breaks are kept, anything else unsafe in
/// it (from the values it quotes) is escaped. Values that may hold a line break of their own
/// are escaped with [`escape`] when they are composed, so they cannot forge a line.
pub fn write_text(out: &mut impl Write, text: &str) -> io::Result<()> {
    for (index, line) in text.split('\n').enumerate() {
        if index > 0 {
            out.write_all(b"\n")?;
        }
        out.write_all(escape(line).as_bytes())?;
    }
    Ok(())
}

/// Writes `value` as JSON (pretty or on one line), with every unsafe character inside its
/// strings as a `\uXXXX` escape. serde_json escapes C0 controls already; DEL, C1 controls
/// and bidirectional characters it writes raw. They can only occur inside strings, where an
/// escape means the same character, so the document stays valid and equal.
pub fn write_json(out: &mut impl Write, value: &impl Serialize, pretty: bool) -> io::Result<()> {
    let json = if pretty {
        serde_json::to_string_pretty(value)?
    } else {
        serde_json::to_string(value)?
    };
    let mut safe = String::with_capacity(json.len());
    for c in json.chars() {
        if c != '\n' && is_unsafe(c) {
            let _ = write!(safe, "\\u{:04x}", u32::from(c));
        } else {
            safe.push(c);
        }
    }
    safe.push('\n');
    out.write_all(safe.as_bytes())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn control_and_bidi_characters_are_escaped() {
        assert_eq!(escape("plain text / é"), "plain text / é");
        assert!(matches!(escape("plain"), Cow::Borrowed(_)));
        assert_eq!(escape("a\u{1b}[2Jb"), "a\\x1b[2Jb");
        assert_eq!(escape("line\nforged"), "line\\nforged");
        assert_eq!(escape("\r\t\u{7f}"), "\\r\\t\\x7f");
        assert_eq!(escape("\u{9b}31m"), "\\u{9b}31m");
        assert_eq!(escape("/admin\u{202e}txt.exe"), "/admin\\u{202e}txt.exe");
    }

    #[test]
    fn composed_text_keeps_its_own_lines() {
        let mut out = Vec::new();
        write_text(&mut out, "one \u{1b}]0;title\u{7}\ntwo\n").unwrap();
        assert_eq!(
            String::from_utf8(out).unwrap(),
            "one \\x1b]0;title\\x07\ntwo\n"
        );
    }

    #[test]
    fn json_stays_valid_and_equal() {
        let value = serde_json::json!({
            "line": "Disallow: /\u{1b}[31mred\u{9b}\u{202e}\u{7f}",
            "n": 1,
        });
        for pretty in [false, true] {
            let mut out = Vec::new();
            write_json(&mut out, &value, pretty).unwrap();
            let text = String::from_utf8(out).unwrap();
            assert!(
                !text.trim_end().chars().any(|c| c != '\n' && is_unsafe(c)),
                "{text:?}"
            );
            let back: serde_json::Value = serde_json::from_str(&text).unwrap();
            assert_eq!(back, value);
        }
    }
}
