//! Sites: a site is a registrable domain (ARCHITECTURE.md "Names"), the crawl's scope.
//!
//! The registrable domain comes from the Public Suffix List embedded in the `psl` crate (kept
//! up to date by its maintainers; a new list arrives with a dependency update). `www.example.com`
//! and `example.com` are one site, `a.example.co.uk` belongs to `example.co.uk`, and a name
//! under an unlisted top-level domain (`.test`) takes its last two labels, by the list's
//! default `*` rule. An IP address, or a name that is itself a public suffix (`localhost`,
//! `co.uk`), is its own site.

use std::fmt;

use crate::normal::NormalUrl;

/// A registrable domain, lower case.
#[derive(
    Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize, serde::Deserialize,
)]
pub struct Site(String);

impl Site {
    /// The site of a host name or address.
    pub fn of_host(host: &str) -> Site {
        let host = host.trim_end_matches('.').to_ascii_lowercase();
        let is_ip = host.parse::<std::net::Ipv4Addr>().is_ok() || host.starts_with('[');
        if is_ip {
            return Site(host);
        }
        match psl::domain_str(&host) {
            Some(domain) => Site(domain.to_string()),
            None => Site(host),
        }
    }

    /// The site of a URL.
    pub fn of(url: &NormalUrl) -> Site {
        Site::of_host(url.host())
    }

    /// The domain as text.
    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// Whether `host` belongs to this site.
    pub fn contains_host(&self, host: &str) -> bool {
        Site::of_host(host) == *self
    }
}

impl fmt::Display for Site {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn registrable_domains() {
        assert_eq!(
            Site::of_host("www.example.com"),
            Site::of_host("example.com")
        );
        assert_eq!(Site::of_host("WWW.Example.COM.").as_str(), "example.com");
        assert_eq!(Site::of_host("a.b.example.co.uk").as_str(), "example.co.uk");
        assert_ne!(
            Site::of_host("one.github.io"),
            Site::of_host("two.github.io")
        );
        assert_eq!(Site::of_host("www.shop.test").as_str(), "shop.test");
        assert_eq!(Site::of_host("127.0.0.1").as_str(), "127.0.0.1");
        assert_eq!(Site::of_host("[::1]").as_str(), "[::1]");
        assert_eq!(Site::of_host("localhost").as_str(), "localhost");
        let url = NormalUrl::parse("https://blog.example.com/x").unwrap();
        assert!(Site::of(&url).contains_host("www.example.com"));
        assert!(!Site::of(&url).contains_host("example.org"));
    }
}
