//! What a URL is matched by: its path and query in canonical form.

use crate::canon::{self, Side};
use crate::word::{first_eight, splat, zero_bytes};

/// Why a URL cannot be checked against a robots.txt.
///
/// A robots.txt lives at `scheme://authority/robots.txt` and governs the URLs of that scheme
/// and authority (RFC 9309 §2.3, whose examples are HTTP and FTP), so every URL written
/// `scheme://authority/path` is checked by its path and query: which file governs it is the
/// caller's choice. A URL with a scheme but no authority (`mailto:`, `urn:`) has no robots.txt.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, thiserror::Error)]
#[cfg_attr(
    feature = "serde",
    derive(serde::Serialize, serde::Deserialize),
    serde(rename_all = "snake_case")
)]
#[non_exhaustive]
pub enum TargetError {
    /// A URL with a scheme other than `http` or `https` and no `//` and authority
    /// (`mailto:someone@example.net`, `urn:isbn:0451450523`, and `localhost:8080/a`, which URL
    /// parsers read as the scheme `localhost`): no robots.txt governs it.
    #[error("not a URL with a host (scheme://host/path): no robots.txt governs it")]
    UnsupportedScheme,
    /// An `http:` or `https:` URL without `//` and an authority (`http:/a`).
    #[error("an http(s) URL without '//' and a host")]
    MissingAuthority,
}

/// The path and query of `url`, as written.
///
/// A path (`/a?b`) is itself. An absolute URL of any scheme with an authority
/// (`scheme://authority/path?query#fragment`: `https://`, `ftp://`, `file:///`) loses its
/// scheme and authority. Anything else that starts with a scheme
/// (`ALPHA *( ALPHA / DIGIT / "+" / "-" / "." ) ":"`) is refused. Anything else (`a/b`, `?q`,
/// the empty string) is taken as a path.
fn path_and_query(url: &[u8]) -> Result<&[u8], TargetError> {
    if url.first() == Some(&b'/') {
        return Ok(url);
    }
    // The common case first: an http(s) URL, its scheme compared a word at a time (0x20
    // lowers the scheme's letters; only a letter becomes a lower-case letter that way).
    let word = first_eight(url);
    let fold = u64::from_le_bytes([0x20, 0x20, 0x20, 0x20, 0x20, 0, 0, 0]);
    if url.len() >= 8 && word | fold == u64::from_le_bytes(*b"https://") {
        return Ok(after_authority(&url[8..]));
    }
    let seven = (1u64 << 56) - 1;
    if url.len() >= 7 && (word | fold) & seven == u64::from_le_bytes(*b"http://\0") {
        return Ok(after_authority(&url[7..]));
    }
    let scheme_len = url
        .iter()
        .position(|&b| !(b.is_ascii_alphanumeric() || matches!(b, b'+' | b'-' | b'.')))
        .unwrap_or(url.len());
    let has_scheme =
        url.first().is_some_and(u8::is_ascii_alphabetic) && url.get(scheme_len) == Some(&b':');
    if !has_scheme {
        return Ok(url);
    }
    if let Some(after_scheme) = url[scheme_len + 1..].strip_prefix(b"//") {
        return Ok(after_authority(after_scheme));
    }
    let scheme = &url[..scheme_len];
    if scheme.eq_ignore_ascii_case(b"http") || scheme.eq_ignore_ascii_case(b"https") {
        Err(TargetError::MissingAuthority)
    } else {
        Err(TargetError::UnsupportedScheme)
    }
}

/// What follows the authority at the start of `text`: the path, query and fragment.
fn after_authority(text: &[u8]) -> &[u8] {
    &text[authority_end(text)..]
}

/// Where the authority at the start of `text` ends: its first `/`, `?` or `#`, or the end.
///
/// Eight bytes at a time while whole words remain, then byte by byte: a byte loop cost a
/// fifteenth of a check, and `memchr3` more than that on so little text.
fn authority_end(text: &[u8]) -> usize {
    let [slash, question, hash] = [b'/', b'?', b'#'].map(splat);
    let mut chunks = text.chunks_exact(8);
    let mut offset = 0;
    for chunk in &mut chunks {
        let word = chunk
            .first_chunk::<8>()
            .map_or(0, |bytes| u64::from_le_bytes(*bytes));
        let found =
            zero_bytes(word ^ slash) | zero_bytes(word ^ question) | zero_bytes(word ^ hash);
        if found != 0 {
            return offset + (found.trailing_zeros() / 8) as usize;
        }
        offset += 8;
    }
    chunks
        .remainder()
        .iter()
        .position(|&b| matches!(b, b'/' | b'?' | b'#'))
        .map_or(text.len(), |position| offset + position)
}

/// Extracts the path and query of `url`, canonicalises them and hands them to `f`.
///
/// The fragment is dropped; an empty path is `/`. See [`path_and_query`] for what is refused.
pub(crate) fn with_canonical_target<T>(
    url: &[u8],
    f: impl FnOnce(&[u8]) -> T,
) -> Result<T, TargetError> {
    let target = path_and_query(url)?;
    // Canonical URL text has no `#`: most URLs pass this one check and are used as they are.
    if target.first() == Some(&b'/') && canon::is_canonical(target, Side::Url) {
        return Ok(f(target));
    }
    let target = match memchr::memchr(b'#', target) {
        Some(fragment) => &target[..fragment],
        None => target,
    };
    if target.first() == Some(&b'/') && canon::is_canonical(target, Side::Url) {
        return Ok(f(target));
    }
    let mut buffer = Vec::with_capacity(target.len() + 8);
    if target.first() != Some(&b'/') {
        buffer.push(b'/');
    }
    canon::canonicalize_into(target, Side::Url, &mut buffer);
    Ok(f(&buffer))
}

/// Whether a canonical target is `/robots.txt` itself (any query).
pub(crate) fn is_robots_txt(path: &[u8]) -> bool {
    const ROBOTS_TXT: &[u8] = b"/robots.txt";
    path.starts_with(ROBOTS_TXT) && matches!(path.get(ROBOTS_TXT.len()), None | Some(b'?'))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn target(url: &str) -> Result<String, TargetError> {
        with_canonical_target(url.as_bytes(), |path| {
            String::from_utf8_lossy(path).into_owned()
        })
    }

    #[test]
    fn paths_and_http_urls_give_their_path_and_query() {
        assert_eq!(target("/a?b#c").as_deref(), Ok("/a?b"));
        assert_eq!(target("https://e.com").as_deref(), Ok("/"));
        assert_eq!(target("HTTP://e.com:80/x?y").as_deref(), Ok("/x?y"));
        assert_eq!(target("a/b").as_deref(), Ok("/a/b"));
        assert_eq!(target("").as_deref(), Ok("/"));
        assert_eq!(target("//e.com/x").as_deref(), Ok("//e.com/x"));
    }

    #[test]
    fn the_authority_ends_at_the_first_slash_question_mark_or_hash() {
        for text in [
            "",
            "e.com",
            "e.com/",
            "example.com/a?b#c",
            "example.com?x/",
            "long-host-name.example.org#f/",
        ] {
            let expected = text.find(['/', '?', '#']).unwrap_or(text.len());
            assert_eq!(authority_end(text.as_bytes()), expected, "{text}");
        }
        for length in 0..40 {
            for at in 0..length {
                let mut text = vec![b'a'; length];
                text[at] = b'?';
                assert_eq!(authority_end(&text), at, "{length} {at}");
            }
        }
    }

    #[test]
    fn urls_of_other_schemes_give_their_path_and_query() {
        assert_eq!(
            target("ftp://example.net/foo.html").as_deref(),
            Ok("/foo.html")
        );
        assert_eq!(target("FTP://e.net:21/a?b#c").as_deref(), Ok("/a?b"));
        assert_eq!(target("file:///etc/passwd").as_deref(), Ok("/etc/passwd"));
        assert_eq!(target("s3://bucket").as_deref(), Ok("/"));
    }

    #[test]
    fn urls_without_an_authority_are_refused() {
        for url in ["mailto:a@b", "urn:isbn:0451450523", "localhost:8080/a"] {
            assert_eq!(target(url), Err(TargetError::UnsupportedScheme), "{url}");
        }
        assert_eq!(target("http:/a"), Err(TargetError::MissingAuthority));
        assert_eq!(target("HTTPS:a"), Err(TargetError::MissingAuthority));
    }
}
