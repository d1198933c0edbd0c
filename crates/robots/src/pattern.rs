//! Path patterns and the linear-time matcher.
//!
//! A pattern is literal text with two wildcards: `*` (any run of characters, including none) and
//! a final `$` (end of path and query). Matching splits the pattern at its `*`s and looks for the
//! pieces left to right, each at its leftmost place. With only `*` as a wildcard, leftmost
//! placement never loses a match, so there is no backtracking: the cost is one substring search
//! per piece, linear in the URL's length.
//!
//! Both sides are canonical (see `canon`), and a piece only matches whole characters: `*A` does
//! not match the hex digit in `%A5`.

use memchr::memmem;

/// What matching needs to know about a canonical pattern besides its bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Shape {
    /// Whether the pattern ended in `$` (the `$` is not part of the body).
    pub(crate) anchored: bool,
    /// Offsets of the first and last `*` in the body, if it has any.
    stars: Option<(u32, u32)>,
    /// Length of the canonical pattern as written (with `*`s and `$`): the rule's specificity.
    pub(crate) specificity: u32,
}

impl Shape {
    /// Reads a canonical pattern: its shape, and the length of its body (without the anchor).
    pub(crate) fn of(canonical: &[u8]) -> (Shape, usize) {
        let (body_len, anchored) = match canonical.split_last() {
            Some((b'$', rest)) => (rest.len(), true),
            _ => (canonical.len(), false),
        };
        (Shape::of_body(&canonical[..body_len], anchored), body_len)
    }

    /// The shape of a pattern whose body of `len` bytes has its first and last `*` at `stars`.
    pub(crate) fn new(anchored: bool, stars: (usize, usize), len: usize) -> Shape {
        let to_u32 = |position: usize| u32::try_from(position).unwrap_or(u32::MAX);
        Shape {
            anchored,
            stars: Some((to_u32(stars.0), to_u32(stars.1))),
            specificity: to_u32(len + usize::from(anchored)),
        }
    }

    /// The shape of a canonical pattern given as its body and whether an anchor followed it.
    pub(crate) fn of_body(body: &[u8], anchored: bool) -> Shape {
        let to_u32 = |position: usize| u32::try_from(position).unwrap_or(u32::MAX);
        let stars = memchr::memchr(b'*', body).map(|first| {
            let last = memchr::memrchr(b'*', body).unwrap_or(first);
            (to_u32(first), to_u32(last))
        });
        Shape {
            anchored,
            stars,
            specificity: to_u32(body.len() + usize::from(anchored)),
        }
    }
}

/// Whether canonical `path` matches the canonical pattern `body` of this `shape`.
pub(crate) fn matches(body: &[u8], shape: Shape, path: &[u8]) -> bool {
    let Some((first_star, last_star)) = shape.stars else {
        return if shape.anchored {
            path == body
        } else {
            path.starts_with(body)
        };
    };
    let (first_star, last_star) = (first_star as usize, last_star as usize);
    let head = &body[..first_star];
    let middle = body.get(first_star + 1..last_star).unwrap_or_default();
    let tail = &body[last_star + 1..];
    if !path.starts_with(head) {
        return false;
    }
    let mut position = head.len();
    let end = if shape.anchored {
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
    shape.anchored || tail.is_empty() || find_piece(path, position, tail).is_some()
}

/// Whether `position` starts a character of the canonical `path`, rather than falling inside
/// a `%XX` escape (in canonical form every `%` opens a three-byte escape).
fn starts_character(path: &[u8], position: usize) -> bool {
    let before = |back: usize| position.checked_sub(back).and_then(|i| path.get(i));
    before(1) != Some(&b'%') && before(2) != Some(&b'%')
}

/// Below this many bytes a plain scan beats building a substring searcher.
const SHORT_HAYSTACK: usize = 64;

/// The leftmost place at or after `from` where `piece` occurs as whole characters.
fn find_piece(path: &[u8], mut from: usize, piece: &[u8]) -> Option<usize> {
    loop {
        let haystack = path.get(from..)?;
        let offset = if haystack.len() < SHORT_HAYSTACK {
            // Candidates start with the piece's first byte; only those are compared.
            let (&first, rest) = piece.split_first()?;
            let mut at = 0;
            loop {
                let candidate = at + haystack.get(at..)?.iter().position(|&b| b == first)?;
                if haystack.get(candidate + 1..)?.starts_with(rest) {
                    break candidate;
                }
                at = candidate + 1;
            }
        } else {
            memmem::find(haystack, piece)?
        };
        let found = from + offset;
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
        let (shape, body_len) = Shape::of(pattern.as_bytes());
        assert_eq!(
            shape,
            Shape::of_body(&pattern.as_bytes()[..body_len], shape.anchored)
        );
        super::matches(&pattern.as_bytes()[..body_len], shape, path.as_bytes())
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
        let long = format!("/{}A", "%C3%A5".repeat(30));
        assert!(matches("*A", &long));
        assert!(!matches("*A", &long[..long.len() - 1]));
    }

    #[test]
    fn literal_star_and_dollar_are_escapes_on_both_sides() {
        // Canonical form: a literal `*` or `$` is `%2A` or `%24` in patterns and URLs alike.
        assert!(matches("/a%24b", "/a%24b"));
        assert!(!matches("/a%24b", "/ab"));
        assert!(matches("/*%2A$", "/x%2A"));
        assert!(!matches("/a*%2A", "/a%2"));
    }

    #[test]
    fn specificity_counts_wildcards_and_anchor() {
        assert_eq!(Shape::of(b"/*.pdf$").0.specificity, 7);
    }

    #[test]
    fn thousands_of_stars_stay_linear() {
        let pattern = format!("/{}x$", "a*".repeat(5000));
        let path = format!("/{}", "a".repeat(20000));
        assert!(!matches(&pattern, &path));
    }
}
