//! Compiled path patterns and the linear-time matcher.
//!
//! A pattern is literal text with two wildcards: `*` (any run of bytes, including none) and a
//! final `$` (end of path and query). Matching splits the pattern at its `*`s and looks for the
//! pieces left to right, each at its leftmost place. With only `*` as a wildcard, leftmost
//! placement never loses a match, so there is no backtracking: the cost is one substring search
//! per piece, linear in the URL's length.

use memchr::memmem;

/// A rule path in canonical form, ready to match.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Pattern {
    /// The canonical pattern without a trailing anchor `$`.
    body: Box<[u8]>,
    /// Whether the pattern ended in `$`.
    anchored: bool,
    /// Offsets of the first and last `*` in `body`, if it has any.
    stars: Option<(usize, usize)>,
    /// Length of the canonical pattern as written (with `*`s and `$`): the rule's specificity.
    specificity: usize,
}

impl Pattern {
    /// Compiles an already canonical pattern.
    pub(crate) fn from_canonical(canonical: &[u8]) -> Pattern {
        let specificity = canonical.len();
        let (body, anchored) = match canonical.split_last() {
            Some((b'$', rest)) => (rest, true),
            _ => (canonical, false),
        };
        Pattern {
            stars: memchr::memchr(b'*', body).zip(memchr::memrchr(b'*', body)),
            body: body.into(),
            anchored,
            specificity,
        }
    }

    /// Length of the canonical pattern: longer is more specific.
    pub(crate) fn specificity(&self) -> usize {
        self.specificity
    }

    /// The canonical form, with the `$` anchor if any.
    pub(crate) fn canonical(&self) -> String {
        let mut text = String::from_utf8_lossy(&self.body).into_owned();
        if self.anchored {
            text.push('$');
        }
        text
    }

    /// Whether `path` (canonical path and query) matches this pattern.
    pub(crate) fn matches(&self, path: &[u8]) -> bool {
        let body = &*self.body;
        let Some((first_star, last_star)) = self.stars else {
            return if self.anchored {
                path == body
            } else {
                path.starts_with(body)
            };
        };
        let head = &body[..first_star];
        let middle = body.get(first_star + 1..last_star).unwrap_or_default();
        let tail = &body[last_star + 1..];
        if !path.starts_with(head) {
            return false;
        }
        let mut position = head.len();
        let end = if self.anchored {
            match path.len().checked_sub(tail.len()) {
                Some(end)
                    if end >= position
                        && path.ends_with(tail)
                        && (tail.is_empty() || starts_character(path, end)) =>
                {
                    end
                }
                _ => return false,
            }
        } else {
            path.len()
        };
        for piece in middle
            .split(|&b| b == b'*')
            .filter(|piece| !piece.is_empty())
        {
            match find_piece(&path[..end], position, piece) {
                Some(found) => position = found + piece.len(),
                None => return false,
            }
        }
        self.anchored || tail.is_empty() || find_piece(path, position, tail).is_some()
    }
}

/// Whether `position` starts a character of the canonical `path`, rather than falling inside
/// a `%XX` escape (in canonical form every `%` opens a three-byte escape).
fn starts_character(path: &[u8], position: usize) -> bool {
    let before = |back: usize| position.checked_sub(back).and_then(|i| path.get(i));
    before(1) != Some(&b'%') && before(2) != Some(&b'%')
}

/// The leftmost place at or after `from` where `piece` occurs as whole characters: `*A` must
/// not match the hex digit in `%A5`.
fn find_piece(path: &[u8], mut from: usize, piece: &[u8]) -> Option<usize> {
    loop {
        let found = from + memmem::find(path.get(from..)?, piece)?;
        if starts_character(path, found) {
            return Some(found);
        }
        from = found + 1;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn matches(pattern: &str, path: &str) -> bool {
        Pattern::from_canonical(pattern.as_bytes()).matches(path.as_bytes())
    }

    #[test]
    fn prefix_and_anchor() {
        assert!(matches("/", "/anything"));
        assert!(matches("/$", "/"));
        assert!(!matches("/$", "/a"));
        assert!(matches("/property", "/property-list"));
        // The interpretation page lists /properties here, but it does not start with /property
        // (the rule it states): prefix matching decides, see the crate README.
        assert!(!matches("/property", "/properties"));
        assert!(matches("/property", "/property/12"));
        assert!(!matches("/property", "/Property"));
        assert!(matches("/property/", "/property/12"));
        assert!(!matches("/property/", "/property.html"));
    }

    #[test]
    fn star_matches_any_run_including_none() {
        assert!(matches("/*.pdf$", "/a/b.pdf"));
        assert!(matches("/*.pdf$", "/.pdf"));
        assert!(!matches("/*.pdf$", "/brochure.pdf?v=2"));
        assert!(matches("/a*b*c", "/abc"));
        assert!(matches("/a*b*c", "/aXXbYYcZZ"));
        assert!(!matches("/a*b*c", "/acb"));
        assert!(matches("*", "/x"));
        assert!(matches("/a**b", "/ab"));
    }

    #[test]
    fn anchored_last_piece_must_not_overlap_earlier_pieces() {
        assert!(!matches("/ab*b$", "/ab"));
        assert!(matches("/ab*b$", "/abb"));
        assert!(matches("/*a*a$", "/aa"));
        assert!(!matches("/*a*a$", "/a"));
    }

    #[test]
    fn wildcards_never_split_an_escape() {
        assert!(!matches("*A", "/%C3%A5"));
        assert!(!matches("/*5$", "/%C3%A5"));
        assert!(matches("/*%A5$", "/%C3%A5"));
        assert!(matches("*A", "/%C3%A5A"));
        assert!(matches("/*%25", "/100%25"));
        assert!(!matches("/*25", "/100%25"));
    }

    #[test]
    fn dollar_in_the_middle_is_literal() {
        assert!(matches("/a$b", "/a$b"));
        assert!(!matches("/a$b", "/ab"));
    }

    #[test]
    fn specificity_counts_wildcards_and_anchor() {
        assert_eq!(Pattern::from_canonical(b"/*.pdf$").specificity(), 7);
    }

    #[test]
    fn thousands_of_stars_stay_linear() {
        let pattern = format!("/{}x$", "a*".repeat(5000));
        let path = format!("/{}", "a".repeat(20000));
        assert!(!matches(&pattern, &path));
    }
}
