//! URL normalisation: one page, one frontier entry.
//!
//! [`NormalUrl::parse`] accepts absolute `http`/`https` URLs and returns them in one canonical
//! form: scheme and host lower-cased, a trailing dot of the host removed, the scheme's default
//! port removed, dot segments resolved and an empty path made `/` (all by the `url` crate's
//! WHATWG parser), the fragment removed, credentials removed, and percent-encoding made
//! canonical: escapes of unreserved characters (`A-Z a-z 0-9 - . _ ~`) decoded, the hex digits
//! of every other escape upper-cased.
//!
//! [`NormalUrl::key`] is the frontier key: the URL without its scheme, so the `http` and
//! `https` forms of one URL are one entry (the HTTPS preference decides which is used).

use std::fmt;

use url::Url;

/// The longest URL JittyBot queues, in bytes (longer ones are skipped as bad input).
pub const MAX_URL_BYTES: usize = 2048;

/// Why a URL was not accepted into the frontier.
#[derive(Debug, thiserror::Error, Clone, PartialEq, Eq)]
pub enum UrlError {
    /// Not a URL at all.
    #[error("not a URL: {0}")]
    Parse(#[from] url::ParseError),
    /// Another scheme than `http` / `https`.
    #[error("scheme {0:?} is not crawled (only http and https)")]
    Scheme(String),
    /// No host.
    #[error("URL has no host")]
    NoHost,
    /// Longer than [`MAX_URL_BYTES`].
    #[error("URL longer than {MAX_URL_BYTES} bytes")]
    TooLong,
}

/// An absolute `http`/`https` URL in canonical form.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct NormalUrl(Url);

impl NormalUrl {
    /// Parse and normalise an absolute URL.
    pub fn parse(input: &str) -> Result<NormalUrl, UrlError> {
        NormalUrl::from_url(Url::parse(input.trim())?)
    }

    /// Resolve `href` against `base` (a link on a page) and normalise it.
    pub fn join(base: &Url, href: &str) -> Result<NormalUrl, UrlError> {
        NormalUrl::from_url(base.join(href.trim())?)
    }

    /// Normalise a parsed URL.
    pub fn from_url(mut url: Url) -> Result<NormalUrl, UrlError> {
        if !matches!(url.scheme(), "http" | "https") {
            return Err(UrlError::Scheme(url.scheme().to_string()));
        }
        // Each step below runs only when it changes something: every link of every page
        // comes through here, and each `Url` setter re-serialises (`set_path` parses the path
        // again), which made normalising most of the cost of reading a page's links.
        let host = url.host_str().ok_or(UrlError::NoHost)?;
        if let Some(bare) = host.strip_suffix('.').map(str::to_string) {
            if bare.is_empty() {
                return Err(UrlError::NoHost);
            }
            url.set_host(Some(&bare))?;
        }
        if url.fragment().is_some() {
            url.set_fragment(None);
        }
        if !url.username().is_empty() || url.password().is_some() {
            // Cannot fail on an http(s) URL with a host.
            let _ = url.set_username("");
            let _ = url.set_password(None);
        }
        // Only escapes change in `canonical_escapes`.
        if url.path().contains('%') {
            let path = canonical_escapes(url.path());
            url.set_path(&path);
        }
        if let Some(query) = url.query().filter(|q| q.contains('%')) {
            let query = canonical_escapes(query);
            url.set_query(Some(&query));
        }
        if url.as_str().len() > MAX_URL_BYTES {
            return Err(UrlError::TooLong);
        }
        Ok(NormalUrl(url))
    }

    /// The URL.
    pub fn url(&self) -> &Url {
        &self.0
    }

    /// The URL as text.
    pub fn as_str(&self) -> &str {
        self.0.as_str()
    }

    /// The host (lower case, no trailing dot).
    pub fn host(&self) -> &str {
        self.0.host_str().unwrap_or_default()
    }

    /// Whether the scheme is `https`.
    pub fn is_https(&self) -> bool {
        self.0.scheme() == "https"
    }

    /// The frontier key: the URL without `scheme:`, e.g. `//example.com/a?b`.
    pub fn key(&self) -> &str {
        let s = self.0.as_str();
        &s[self.0.scheme().len() + 1..]
    }

    /// The same URL with the other scheme (`http` ↔ `https`); an explicit port is kept.
    pub fn with_scheme(&self, https: bool) -> NormalUrl {
        let scheme = if https { "https" } else { "http" };
        // Rebuilt from text: `Url::set_scheme` refuses nothing between http and https, but a
        // port equal to the new scheme's default must be dropped as normalisation says.
        match NormalUrl::parse(&format!("{scheme}:{}", self.key())) {
            Ok(u) => u,
            Err(_) => self.clone(),
        }
    }

    /// Rebuild from a frontier key and a scheme.
    pub fn from_key(key: &str, https: bool) -> Result<NormalUrl, UrlError> {
        NormalUrl::parse(&format!("{}:{key}", if https { "https" } else { "http" }))
    }
}

impl fmt::Display for NormalUrl {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.0.as_str())
    }
}

impl From<NormalUrl> for Url {
    fn from(u: NormalUrl) -> Url {
        u.0
    }
}

/// Decode escapes of unreserved characters and upper-case the hex of the others (RFC 3986
/// 6.2.2.1 and 6.2.2.2). Input is an already-encoded URL component, so it is ASCII.
fn canonical_escapes(component: &str) -> String {
    let bytes = component.as_bytes();
    let mut out = String::with_capacity(component.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' && i + 2 < bytes.len() {
            let hex = |b: u8| (b as char).to_digit(16);
            if let (Some(h), Some(l)) = (hex(bytes[i + 1]), hex(bytes[i + 2])) {
                let c = (h * 16 + l) as u8;
                if c.is_ascii_alphanumeric() || matches!(c, b'-' | b'.' | b'_' | b'~') {
                    out.push(c as char);
                } else {
                    out.push('%');
                    out.push((bytes[i + 1] as char).to_ascii_uppercase());
                    out.push((bytes[i + 2] as char).to_ascii_uppercase());
                }
                i += 3;
                continue;
            }
        }
        out.push(bytes[i] as char);
        i += 1;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn n(s: &str) -> String {
        NormalUrl::parse(s).unwrap().to_string()
    }

    #[test]
    fn one_page_one_form() {
        assert_eq!(
            n("HTTP://Example.COM:80/a/./b/../c#frag"),
            "http://example.com/a/c"
        );
        assert_eq!(n("https://example.com:443"), "https://example.com/");
        assert_eq!(
            n("https://example.com.:8443/x"),
            "https://example.com:8443/x"
        );
        assert_eq!(n("http://u:p@example.com/"), "http://example.com/");
        assert_eq!(
            n("http://example.com/%7euser/%2fx%3a?q=%41%2f"),
            "http://example.com/~user/%2Fx%3A?q=A%2F"
        );
        assert_eq!(n("http://example.com/a b"), "http://example.com/a%20b");
        assert_eq!(n("http://example.com/%"), "http://example.com/%");
        assert_eq!(n("http://example.com/%4"), "http://example.com/%4");
        assert_eq!(n("http://example.com/%41"), "http://example.com/A");
    }

    #[test]
    fn http_and_https_share_a_key() {
        let a = NormalUrl::parse("http://example.com/p?q").unwrap();
        let b = NormalUrl::parse("https://EXAMPLE.com:443/p?q#x").unwrap();
        assert_eq!(a.key(), b.key());
        assert_eq!(a.key(), "//example.com/p?q");
        assert_eq!(a.with_scheme(true), b);
        assert_eq!(NormalUrl::from_key(a.key(), false).unwrap(), a);
    }

    #[test]
    fn refuses_what_is_not_crawled() {
        assert!(matches!(
            NormalUrl::parse("ftp://h/x"),
            Err(UrlError::Scheme(_))
        ));
        assert!(matches!(
            NormalUrl::parse("mailto:a@b"),
            Err(UrlError::Scheme(_))
        ));
        assert!(matches!(
            NormalUrl::parse("/relative"),
            Err(UrlError::Parse(_))
        ));
        let long = format!("http://h/{}", "a".repeat(MAX_URL_BYTES));
        assert_eq!(NormalUrl::parse(&long), Err(UrlError::TooLong));
        let base = Url::parse("http://h/dir/page").unwrap();
        assert_eq!(
            NormalUrl::join(&base, "../x#y").unwrap().as_str(),
            "http://h/x"
        );
    }

    /// The normalisation before its steps were skipped when they change nothing: every
    /// setter applied, always.
    fn every_step(mut url: Url) -> Option<String> {
        let host = url.host_str()?.to_string();
        if let Some(bare) = host.strip_suffix('.') {
            url.set_host(Some(bare)).ok()?;
        }
        url.set_fragment(None);
        let _ = url.set_username("");
        let _ = url.set_password(None);
        let path = canonical_escapes(url.path());
        url.set_path(&path);
        if let Some(query) = url.query() {
            let query = canonical_escapes(query);
            url.set_query(Some(&query));
        }
        Some(url.to_string())
    }

    proptest::proptest! {
        /// Skipping the steps that change nothing gives the same URL as applying them all.
        #[test]
        fn skipped_steps_change_nothing(
            path in proptest::collection::vec(proptest::sample::select(vec![
                "a", "/", "%41", "%2f", "%2F", "%7e", "%zz", "%", " ", "..", ".", "%2e", "é",
                "?", "#", "&", "=", "+", "%20", "~", "[", "]", "|", "%C3%A9", "\\", ";",
            ]), 0..8),
            user in proptest::sample::select(vec!["", "u@", "u:p@", ":p@"]),
            host in proptest::sample::select(vec!["a.test", "a.test.", "A.Test", "127.0.0.1"]),
        ) {
            let text = format!("http://{user}{host}/{}", path.concat());
            if let Ok(url) = Url::parse(&text) {
                let fast = NormalUrl::from_url(url.clone()).ok().map(|u| u.to_string());
                proptest::prop_assert_eq!(fast, every_step(url));
            }
        }
    }
}
