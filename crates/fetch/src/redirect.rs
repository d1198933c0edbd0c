//! The one redirect loop of the workspace: what a response means for the next hop.
//!
//! [`RedirectChain`] is given each response's status and headers in turn and answers with
//! the next URL or a typed reason not to go on. The fetcher's automatic mode drives it
//! ([`Fetcher::fetch`](crate::Fetcher::fetch)); in manual mode
//! ([`Fetcher::send_hop`](crate::Fetcher::send_hop)) the caller drives it, seeing every hop
//! with all its headers and deciding whether to follow (the polite layer checks robots.txt
//! there; the analysis records each hop).

use std::collections::HashSet;

use http::{HeaderMap, StatusCode};
use url::Url;

/// One redirect followed.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct RedirectHop {
    /// The URL requested (credentials removed).
    pub url: Url,
    /// Its redirect status (301, 302, 303, 307, 308).
    #[serde(with = "crate::serde_status")]
    pub status: StatusCode,
    /// The `Location` header as sent, or, when it carried credentials, the URL it pointed
    /// to with the credentials removed: credentials are never shown nor stored.
    pub location: String,
}

/// Why a redirect was not followed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum RedirectError {
    /// More hops than the limit.
    #[error("more than {limit} redirects")]
    TooMany {
        /// The hop limit.
        limit: usize,
    },
    /// The redirect led back to a URL already visited (fragments ignored).
    #[error("redirect loop back to {url}")]
    Loop {
        /// The URL visited twice.
        url: Url,
    },
    /// A redirect status without a `Location` header.
    #[error("{status} redirect without a Location header")]
    MissingLocation {
        /// The status.
        status: StatusCode,
    },
    /// A `Location` that is not a URL.
    #[error("unusable Location {location:?}")]
    BadLocation {
        /// The header as sent (lossily decoded).
        location: String,
    },
    /// A `Location` to a scheme other than `http`/`https`.
    #[error("redirect to a {scheme}: URL")]
    UnsupportedScheme {
        /// The scheme.
        scheme: String,
    },
    /// A redirect to a host the operator holds (no request of any kind goes there).
    #[error("redirect to {url}, a host held by the operator")]
    Held {
        /// The target not requested.
        url: Url,
    },
}

/// What a response means for the chain.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Next {
    /// Not a redirect: this response is the answer.
    Final,
    /// A redirect to this URL (credentials removed), already recorded as a hop.
    Follow(Url),
}

/// True for the statuses that redirect: 301, 302, 303, 307, 308. Other 3xx (300, 304, 305,
/// 306, unknown) are answers, not redirects.
pub fn is_redirect(status: StatusCode) -> bool {
    matches!(status.as_u16(), 301 | 302 | 303 | 307 | 308)
}

/// `url` without user name and password.
pub fn without_credentials(url: &Url) -> Url {
    if url.username().is_empty() && url.password().is_none() {
        return url.clone();
    }
    let mut clean = url.clone();
    // Both only fail for URLs that cannot have credentials, which then have none.
    let _ = clean.set_username("");
    let _ = clean.set_password(None);
    clean
}

fn without_fragment(url: &Url) -> String {
    let mut url = url.clone();
    url.set_fragment(None);
    url.into()
}

/// The hops of one request, and the rules for the next one.
#[derive(Debug, Clone)]
pub struct RedirectChain {
    limit: usize,
    visited: HashSet<String>,
    hops: Vec<RedirectHop>,
}

impl RedirectChain {
    /// A chain starting at `start`, following at most `limit` redirects.
    pub fn new(start: &Url, limit: usize) -> RedirectChain {
        RedirectChain {
            limit,
            visited: HashSet::from([without_fragment(&without_credentials(start))]),
            hops: Vec::new(),
        }
    }

    /// The hop limit.
    pub fn limit(&self) -> usize {
        self.limit
    }

    /// The redirects followed so far, in order.
    pub fn hops(&self) -> &[RedirectHop] {
        &self.hops
    }

    /// Consumes the chain, giving its hops.
    pub fn into_hops(self) -> Vec<RedirectHop> {
        self.hops
    }

    /// Reads the response `url` answered with. A redirect is recorded as a hop (also when
    /// it fails, so the chain shows where it went wrong) and its target returned.
    pub fn next(
        &mut self,
        url: &Url,
        status: StatusCode,
        headers: &HeaderMap,
    ) -> Result<Next, RedirectError> {
        if !is_redirect(status) {
            return Ok(Next::Final);
        }
        let url = without_credentials(url);
        let Some(value) = headers.get(http::header::LOCATION) else {
            self.hops.push(RedirectHop {
                url,
                status,
                location: String::new(),
            });
            return Err(RedirectError::MissingLocation { status });
        };
        let raw = String::from_utf8_lossy(value.as_bytes()).into_owned();
        let target = url.join(raw.trim());
        let shown = match &target {
            Ok(target) if !target.username().is_empty() || target.password().is_some() => {
                without_credentials(target).to_string()
            }
            _ => raw.clone(),
        };
        self.hops.push(RedirectHop {
            url,
            status,
            location: shown.clone(),
        });
        let target = target.map_err(|_| RedirectError::BadLocation { location: shown })?;
        if !matches!(target.scheme(), "http" | "https") {
            return Err(RedirectError::UnsupportedScheme {
                scheme: target.scheme().to_owned(),
            });
        }
        if self.hops.len() > self.limit {
            return Err(RedirectError::TooMany { limit: self.limit });
        }
        let target = without_credentials(&target);
        if !self.visited.insert(without_fragment(&target)) {
            return Err(RedirectError::Loop { url: target });
        }
        Ok(Next::Follow(target))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn url(text: &str) -> Url {
        Url::parse(text).unwrap()
    }

    fn location(value: &str) -> HeaderMap {
        let mut headers = HeaderMap::new();
        headers.insert(http::header::LOCATION, value.parse().unwrap());
        headers
    }

    const FOUND: StatusCode = StatusCode::FOUND;

    #[test]
    fn only_real_redirect_statuses_redirect() {
        for status in [301, 302, 303, 307, 308] {
            assert!(is_redirect(StatusCode::from_u16(status).unwrap()));
        }
        for status in [300, 304, 305, 306, 200, 404, 399] {
            assert!(!is_redirect(StatusCode::from_u16(status).unwrap()));
        }
    }

    #[test]
    fn every_way_a_redirect_fails_is_typed() {
        let start = url("http://a.test/a");
        let mut chain = RedirectChain::new(&start, 5);
        assert_eq!(
            chain.next(&start, FOUND, &HeaderMap::new()),
            Err(RedirectError::MissingLocation { status: FOUND })
        );
        let mut chain = RedirectChain::new(&start, 5);
        assert_eq!(
            chain.next(&start, FOUND, &location("ftp://a.test/x")),
            Err(RedirectError::UnsupportedScheme {
                scheme: "ftp".into()
            })
        );
        let mut chain = RedirectChain::new(&start, 5);
        assert!(matches!(
            chain.next(&start, FOUND, &location("http://[::1")),
            Err(RedirectError::BadLocation { .. })
        ));
        let mut chain = RedirectChain::new(&start, 5);
        assert_eq!(
            chain.next(&start, FOUND, &location("/b")),
            Ok(Next::Follow(url("http://a.test/b")))
        );
        assert_eq!(
            chain.next(&url("http://a.test/b"), FOUND, &location("/a#x")),
            Err(RedirectError::Loop {
                url: url("http://a.test/a#x")
            })
        );
        assert_eq!(chain.hops().len(), 2);
    }

    #[test]
    fn the_hop_limit_counts_redirects() {
        let start = url("http://a.test/0");
        let mut chain = RedirectChain::new(&start, 2);
        let mut current = start;
        for i in 1..=2 {
            let next = chain
                .next(&current, FOUND, &location(&format!("/{i}")))
                .unwrap();
            let Next::Follow(next) = next else { panic!() };
            current = next;
        }
        assert_eq!(
            chain.next(&current, FOUND, &location("/3")),
            Err(RedirectError::TooMany { limit: 2 })
        );
        assert_eq!(chain.hops().len(), 3);
        assert_eq!(
            chain.next(&current, StatusCode::OK, &HeaderMap::new()),
            Ok(Next::Final)
        );
    }

    #[test]
    fn credentials_are_never_followed_nor_shown() {
        let start = url("http://a.test/");
        let mut chain = RedirectChain::new(&start, 5);
        let next = chain
            .next(&start, FOUND, &location("http://user:secret@b.test/x"))
            .unwrap();
        assert_eq!(next, Next::Follow(url("http://b.test/x")));
        assert_eq!(chain.hops()[0].location, "http://b.test/x");
        assert_eq!(
            without_credentials(&url("https://u:p@c.test:8443/y")).as_str(),
            "https://c.test:8443/y"
        );
    }
}
