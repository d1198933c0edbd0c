//! Which robots.txt governs a URL: one per scheme, host and port.

use std::fmt;

use url::Url;

use crate::error::FetchError;

/// The scope of one robots.txt file: scheme, host and port.
///
/// Hosts are compared in lower case punycode, so `bücher.example` and
/// `xn--bcher-kva.example` are one scope; a default port (80 for `http`, 443 for `https`)
/// is the same scope as no port. Everything else differs: `http` vs `https`, `www.` vs the
/// bare name, `:8443` vs `:443`.
///
/// Serialized as its robots.txt URL's origin, e.g. `"https://example.com:8443"`.
#[derive(
    Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize, serde::Deserialize,
)]
#[serde(try_from = "String", into = "String")]
pub struct Scope {
    scheme: String,
    host: String,
    port: u16,
    robots_txt_url: Url,
}

impl Scope {
    /// The scope of `url`. Fails for URLs that are not `http`/`https` or have no host.
    pub fn of(url: &Url) -> Result<Scope, FetchError> {
        let scheme = url.scheme();
        if scheme != "http" && scheme != "https" {
            return Err(FetchError::invalid_url(url.as_str(), "not http or https"));
        }
        let host = match url.host() {
            Some(url::Host::Domain(domain)) => domain.to_ascii_lowercase(),
            Some(url::Host::Ipv4(v4)) => v4.to_string(),
            Some(url::Host::Ipv6(v6)) => format!("[{v6}]"),
            None => return Err(FetchError::invalid_url(url.as_str(), "no host")),
        };
        let port = url
            .port_or_known_default()
            .ok_or_else(|| FetchError::invalid_url(url.as_str(), "no port"))?;
        // Built from the parsed URL rather than from text, so it cannot fail.
        let mut robots_txt_url = url.clone();
        robots_txt_url.set_path("/robots.txt");
        robots_txt_url.set_query(None);
        robots_txt_url.set_fragment(None);
        // Credentials never belong to a robots.txt request; these only fail for URLs
        // without a host, excluded above.
        let _ = robots_txt_url.set_username("");
        let _ = robots_txt_url.set_password(None);
        Ok(Scope {
            scheme: scheme.to_owned(),
            host,
            port,
            robots_txt_url,
        })
    }

    /// Parses `url` and returns its scope.
    pub fn parse(url: &str) -> Result<Scope, FetchError> {
        let parsed = Url::parse(url).map_err(|e| FetchError::invalid_url(url, e.to_string()))?;
        Scope::of(&parsed)
    }

    /// `http` or `https`.
    pub fn scheme(&self) -> &str {
        &self.scheme
    }

    /// The host in lower case punycode (IPv6 literals in brackets).
    pub fn host(&self) -> &str {
        &self.host
    }

    /// The port, default ports included.
    pub fn port(&self) -> u16 {
        self.port
    }

    /// The robots.txt URL of this scope: `scheme://host[:port]/robots.txt`.
    pub fn robots_txt_url(&self) -> &Url {
        &self.robots_txt_url
    }

    fn default_port(&self) -> u16 {
        if self.scheme == "https" {
            443
        } else {
            80
        }
    }
}

impl fmt::Display for Scope {
    /// `https://example.com`, or `https://example.com:8443` for a non-default port.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}://{}", self.scheme, self.host)?;
        if self.port != self.default_port() {
            write!(f, ":{}", self.port)?;
        }
        Ok(())
    }
}

impl TryFrom<String> for Scope {
    type Error = FetchError;

    fn try_from(origin: String) -> Result<Scope, FetchError> {
        Scope::parse(&origin)
    }
}

impl From<Scope> for String {
    fn from(scope: Scope) -> String {
        scope.to_string()
    }
}

/// The robots.txt URL governing `url` (see [`Scope`]).
pub fn robots_txt_url(url: &Url) -> Result<Url, FetchError> {
    Ok(Scope::of(url)?.robots_txt_url)
}

/// Longest URL [`parse_target`] accepts: 2,048 bytes (what the service accepts from a form).
pub const MAX_TARGET_BYTES: usize = 2048;

/// Why a typed URL is not a target.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum TargetError {
    /// Nothing was typed.
    #[error("no URL given")]
    Empty,
    /// Longer than [`MAX_TARGET_BYTES`].
    #[error("the URL is {len} bytes long; at most {max} are accepted")]
    TooLong {
        /// Its length.
        len: usize,
        /// The limit.
        max: usize,
    },
    /// Not a URL.
    #[error("not a URL")]
    Unparsable(#[source] url::ParseError),
    /// Not `http` or `https`.
    #[error("only http and https URLs can be fetched, not {scheme}:")]
    UnsupportedScheme {
        /// The scheme given.
        scheme: String,
    },
    /// No host.
    #[error("the URL has no host")]
    NoHost,
    /// A user name or password: never sent, so refused rather than silently dropped.
    #[error("the URL carries credentials (user:password@); they are never sent")]
    Credentials,
}

/// Reads a URL typed by a person (the one target parser of the workspace). Without a scheme
/// (`example.com/page`) it is taken as `https://`: HTTPS is preferred wherever the caller
/// leaves the choice open. Surrounding whitespace is ignored.
pub fn parse_target(input: &str) -> Result<Url, TargetError> {
    let input = input.trim();
    if input.is_empty() {
        return Err(TargetError::Empty);
    }
    if input.len() > MAX_TARGET_BYTES {
        return Err(TargetError::TooLong {
            len: input.len(),
            max: MAX_TARGET_BYTES,
        });
    }
    let with_scheme = if input.contains("://") {
        input.to_owned()
    } else {
        format!("https://{input}")
    };
    let url = Url::parse(&with_scheme).map_err(TargetError::Unparsable)?;
    if !matches!(url.scheme(), "http" | "https") {
        return Err(TargetError::UnsupportedScheme {
            scheme: url.scheme().to_owned(),
        });
    }
    if url.host_str().is_none_or(str::is_empty) {
        return Err(TargetError::NoHost);
    }
    if !url.username().is_empty() || url.password().is_some() {
        return Err(TargetError::Credentials);
    }
    Ok(url)
}

/// A host name in lower case punycode; IP literals as written by [`url::Host`].
pub(crate) fn normalize_host(host: &str) -> Result<String, url::ParseError> {
    match url::Host::parse(host)? {
        url::Host::Domain(domain) => Ok(domain.to_ascii_lowercase()),
        url::Host::Ipv4(v4) => Ok(v4.to_string()),
        url::Host::Ipv6(v6) => Ok(format!("[{v6}]")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scope(url: &str) -> Scope {
        Scope::parse(url).unwrap()
    }

    #[test]
    fn scope_is_scheme_host_and_port() {
        let base = scope("https://example.com/a/b?c");
        assert_eq!(base, scope("https://EXAMPLE.com:443/other"));
        assert_eq!(base.to_string(), "https://example.com");
        assert_ne!(base, scope("http://example.com/"));
        assert_ne!(base, scope("https://www.example.com/"));
        assert_ne!(base, scope("https://example.com:8443/"));
        assert_eq!(
            scope("http://example.com:80/"),
            scope("http://example.com/")
        );
        assert_eq!(
            scope("https://example.com:8443/x").to_string(),
            "https://example.com:8443"
        );
    }

    #[test]
    fn idn_and_punycode_are_one_scope() {
        let unicode = scope("https://Bücher.example/");
        let punycode = scope("https://xn--bcher-kva.example/");
        assert_eq!(unicode, punycode);
        assert_eq!(unicode.host(), "xn--bcher-kva.example");
    }

    #[test]
    fn robots_txt_url_is_at_the_root_of_the_scope() {
        let url = |u: &str| robots_txt_url(&Url::parse(u).unwrap()).unwrap().to_string();
        assert_eq!(
            url("https://example.com/a/b/c.html?q#f"),
            "https://example.com/robots.txt"
        );
        assert_eq!(
            url("http://example.com:8080/x"),
            "http://example.com:8080/robots.txt"
        );
        assert_eq!(
            url("https://bücher.example/"),
            "https://xn--bcher-kva.example/robots.txt"
        );
        assert_eq!(url("http://[::1]:81/"), "http://[::1]:81/robots.txt");
    }

    #[test]
    fn only_http_and_https_have_a_scope() {
        assert!(Scope::parse("ftp://example.com/").is_err());
        assert!(Scope::parse("mailto:a@example.com").is_err());
        assert!(Scope::parse("not a url").is_err());
    }

    #[test]
    fn typed_targets_prefer_https() {
        assert_eq!(
            parse_target("example.com/a").unwrap().as_str(),
            "https://example.com/a"
        );
        assert_eq!(
            parse_target(" http://example.com ").unwrap().as_str(),
            "http://example.com/"
        );
        assert!(matches!(
            parse_target("ftp://example.com/"),
            Err(TargetError::UnsupportedScheme { .. })
        ));
        assert_eq!(parse_target("  "), Err(TargetError::Empty));
        assert_eq!(
            parse_target("http://user:secret@example.com/"),
            Err(TargetError::Credentials)
        );
        assert!(matches!(
            parse_target("http://exa mple.com/"),
            Err(TargetError::Unparsable(_))
        ));
        let long = format!("example.com/{}", "a".repeat(MAX_TARGET_BYTES));
        assert!(matches!(
            parse_target(&long),
            Err(TargetError::TooLong { .. })
        ));
    }

    #[test]
    fn scopes_serialize_as_their_origin() {
        let scope = scope("https://user:pw@Bücher.example:8443/a?b");
        let json = serde_json::to_string(&scope).unwrap();
        assert_eq!(json, "\"https://xn--bcher-kva.example:8443\"");
        let back: Scope = serde_json::from_str(&json).unwrap();
        assert_eq!(back, scope);
        assert_eq!(
            back.robots_txt_url().as_str(),
            "https://xn--bcher-kva.example:8443/robots.txt"
        );
        assert!(serde_json::from_str::<Scope>("\"ftp://x\"").is_err());
    }
}
