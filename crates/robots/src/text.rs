//! Pieces of a parsed file's text, shared with the parse instead of copied one by one.

use std::borrow::Borrow;
use std::cmp::Ordering;
use std::fmt;
use std::hash::{Hash, Hasher};
use std::ops::{Deref, Range};
use std::sync::Arc;

/// A piece of a robots.txt file's text as written: a rule's pattern, a user-agent value, a
/// product token.
///
/// [`crate::RobotsTxt::parse`] keeps one shared copy of the file's text and every piece of it
/// in the parse refers into that copy (a reference count and a range) instead of owning a
/// string of its own: a file of a thousand rules costs one copy of its text, not a thousand
/// allocations. It reads as the `str` it holds: it derefs to `str`, compares, hashes, orders,
/// prints (and serialises) as that text, so `&rule.pattern` is a `&str` wherever one is wanted
/// and `rule.pattern == "/search"` holds for that pattern. Cloning it is cheap; to own the
/// text alone, `to_string()` it. A piece that was not valid UTF-8 holds its own (lossily
/// decoded) copy.
#[derive(Clone)]
pub struct SourceText {
    source: Arc<str>,
    /// Where the piece lies in `source`: on character boundaries (checked when made).
    start: u32,
    end: u32,
}

impl SourceText {
    /// The piece `range` of `source`; `None` when the range is not a piece of `source` on
    /// character boundaries.
    pub(crate) fn shared(source: &Arc<str>, range: Range<usize>) -> Option<SourceText> {
        source.get(range.clone())?;
        Some(SourceText {
            source: Arc::clone(source),
            start: u32::try_from(range.start).ok()?,
            end: u32::try_from(range.end).ok()?,
        })
    }

    /// The text, as a `str`.
    pub fn as_str(&self) -> &str {
        // The range was checked when the piece was made, and `source` never changes.
        self.source
            .get(self.start as usize..self.end as usize)
            .unwrap_or_default()
    }
}

impl From<&str> for SourceText {
    /// An owned piece: `text` alone. Ranges are 32-bit: text beyond 4 GiB (never a piece of a
    /// robots.txt, which is read up to [`crate::MAX_ROBOTS_TXT_BYTES`]) is cut at the last
    /// character boundary below that.
    fn from(text: &str) -> SourceText {
        let mut end = text.len().min(u32::MAX as usize);
        while !text.is_char_boundary(end) {
            end -= 1;
        }
        let text = text.get(..end).unwrap_or_default();
        SourceText {
            source: Arc::from(text),
            start: 0,
            end: u32::try_from(text.len()).unwrap_or(0),
        }
    }
}

impl From<String> for SourceText {
    fn from(text: String) -> SourceText {
        SourceText::from(text.as_str())
    }
}

impl From<SourceText> for String {
    fn from(text: SourceText) -> String {
        text.as_str().to_owned()
    }
}

impl Deref for SourceText {
    type Target = str;

    fn deref(&self) -> &str {
        self.as_str()
    }
}

impl AsRef<str> for SourceText {
    fn as_ref(&self) -> &str {
        self.as_str()
    }
}

impl AsRef<[u8]> for SourceText {
    fn as_ref(&self) -> &[u8] {
        self.as_str().as_bytes()
    }
}

impl Borrow<str> for SourceText {
    fn borrow(&self) -> &str {
        self.as_str()
    }
}

impl fmt::Display for SourceText {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl fmt::Debug for SourceText {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(self.as_str(), f)
    }
}

impl PartialEq for SourceText {
    fn eq(&self, other: &SourceText) -> bool {
        self.as_str() == other.as_str()
    }
}

impl Eq for SourceText {}

impl PartialOrd for SourceText {
    fn partial_cmp(&self, other: &SourceText) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for SourceText {
    fn cmp(&self, other: &SourceText) -> Ordering {
        self.as_str().cmp(other.as_str())
    }
}

impl Hash for SourceText {
    /// As the `str` it holds, so that `Borrow<str>` lookups find it.
    fn hash<H: Hasher>(&self, state: &mut H) {
        self.as_str().hash(state);
    }
}

/// Comparisons with the string types, both ways round.
macro_rules! eq_with {
    ($($other:ty),*) => {$(
        impl PartialEq<$other> for SourceText {
            fn eq(&self, other: &$other) -> bool {
                self.as_str() == AsRef::<str>::as_ref(other)
            }
        }

        impl PartialEq<SourceText> for $other {
            fn eq(&self, other: &SourceText) -> bool {
                AsRef::<str>::as_ref(self) == other.as_str()
            }
        }
    )*};
}

eq_with!(str, &str, String, std::borrow::Cow<'_, str>);

#[cfg(feature = "serde")]
impl serde::Serialize for SourceText {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_shared_piece_reads_as_its_range() {
        let source: Arc<str> = Arc::from("Disallow: /søk\n");
        let piece = SourceText::shared(&source, 10..15).unwrap();
        assert_eq!(piece, "/søk");
        assert_eq!("/søk", piece);
        assert_eq!(piece, String::from("/søk"));
        assert_eq!(piece.len(), 5);
        assert_eq!(piece.to_string(), "/søk");
        assert_eq!(format!("{piece:?}"), "\"/søk\"");
        assert_eq!(piece, SourceText::from("/søk"));
        assert_eq!(Arc::strong_count(&source), 2);
    }

    #[test]
    fn a_range_off_the_text_or_inside_a_character_is_no_piece() {
        let source: Arc<str> = Arc::from("/søk");
        assert_eq!(SourceText::shared(&source, 0..3), None);
        assert_eq!(SourceText::shared(&source, 2..9), None);
        assert_eq!(SourceText::shared(&source, 0..5).unwrap(), "/søk");
    }

    #[test]
    fn it_hashes_as_its_text() {
        let mut set = std::collections::HashSet::new();
        set.insert(SourceText::from("/a"));
        assert!(set.contains("/a"));
    }
}
