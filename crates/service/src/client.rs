//! Who a client is: the key that per-client limits (connections, the rate limit, the fair
//! queue, the daily quotas) count by.
//!
//! A client is its peer address, except that every address of one IPv6 /64 is one client
//! (a single host is commonly given a whole /64, so counting each address apart would give
//! it billions of shares). Behind a reverse proxy every peer is the proxy: only when the peer
//! is one of the operator's `--trusted-proxy` networks does the `X-Forwarded-For` header
//! count, and then its right-most address that is not itself a trusted proxy (the ones to
//! its left are whatever the client chose to send).

use std::net::{IpAddr, Ipv6Addr};

use axum::http::HeaderMap;
use ipnet::IpNet;

/// A client, as the per-client limits count it: an IPv4 address or an IPv6 /64.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ClientKey(IpAddr);

impl ClientKey {
    /// The client of `addr` (IPv4-mapped IPv6 addresses are their IPv4 address; other IPv6
    /// addresses are cut to their /64).
    pub fn of(addr: IpAddr) -> ClientKey {
        match addr {
            IpAddr::V4(v4) => ClientKey(IpAddr::V4(v4)),
            IpAddr::V6(v6) => match v6.to_ipv4_mapped() {
                Some(v4) => ClientKey(IpAddr::V4(v4)),
                None => {
                    let prefix = u128::from(v6) & !((1u128 << 64) - 1);
                    ClientKey(IpAddr::V6(Ipv6Addr::from(prefix)))
                }
            },
        }
    }

    /// The address (an IPv6 key is its /64's first address).
    pub fn addr(&self) -> IpAddr {
        self.0
    }
}

impl From<IpAddr> for ClientKey {
    fn from(addr: IpAddr) -> ClientKey {
        ClientKey::of(addr)
    }
}

impl std::fmt::Display for ClientKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.0 {
            IpAddr::V4(v4) => write!(f, "{v4}"),
            IpAddr::V6(v6) => write!(f, "{v6}/64"),
        }
    }
}

/// The networks whose connections are reverse proxies of the operator's (`--trusted-proxy`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TrustedProxies(Vec<IpNet>);

impl TrustedProxies {
    /// Trust `networks`.
    pub fn new(networks: Vec<IpNet>) -> TrustedProxies {
        TrustedProxies(networks)
    }

    /// Whether `addr` is a trusted proxy.
    pub fn contains(&self, addr: IpAddr) -> bool {
        let addr = match addr {
            IpAddr::V6(v6) => v6.to_ipv4_mapped().map_or(addr, IpAddr::V4),
            v4 => v4,
        };
        self.0.iter().any(|net| net.contains(&addr))
    }

    /// The client of a request from `peer` with `headers`: the peer itself unless it is a
    /// trusted proxy; then the right-most `X-Forwarded-For` address that is not a trusted
    /// proxy (the peer when the header has none, or is malformed).
    pub fn client(&self, peer: IpAddr, headers: &HeaderMap) -> ClientKey {
        if !self.contains(peer) {
            return ClientKey::of(peer);
        }
        let mut forwarded = Vec::new();
        for value in headers.get_all("x-forwarded-for") {
            let Ok(text) = value.to_str() else {
                return ClientKey::of(peer);
            };
            for item in text.split(',') {
                match item.trim().parse::<IpAddr>() {
                    Ok(addr) => forwarded.push(addr),
                    Err(_) => return ClientKey::of(peer),
                }
            }
        }
        let client = forwarded
            .into_iter()
            .rev()
            .find(|addr| !self.contains(*addr))
            .unwrap_or(peer);
        ClientKey::of(client)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use axum::http::HeaderValue;

    fn ip(text: &str) -> IpAddr {
        text.parse().unwrap()
    }

    #[test]
    fn an_ipv6_slash_64_is_one_client() {
        let a = ClientKey::of(ip("2001:db8:1:2:aaaa::1"));
        let b = ClientKey::of(ip("2001:db8:1:2:ffff:1:2:3"));
        let c = ClientKey::of(ip("2001:db8:1:3::1"));
        assert_eq!(a, b);
        assert_ne!(a, c);
        assert_eq!(a.to_string(), "2001:db8:1:2::/64");
        assert_eq!(
            ClientKey::of(ip("::ffff:192.0.2.7")),
            ClientKey::of(ip("192.0.2.7"))
        );
    }

    #[test]
    fn forwarded_for_counts_only_from_a_trusted_proxy() {
        let mut headers = HeaderMap::new();
        headers.insert(
            "x-forwarded-for",
            HeaderValue::from_static("203.0.113.9, 198.51.100.4, 10.0.0.2"),
        );
        let none = TrustedProxies::default();
        assert_eq!(
            none.client(ip("10.0.0.1"), &headers),
            ClientKey::of(ip("10.0.0.1"))
        );
        let proxies = TrustedProxies::new(vec!["10.0.0.0/8".parse().unwrap()]);
        assert_eq!(
            proxies.client(ip("10.0.0.1"), &headers),
            ClientKey::of(ip("198.51.100.4")),
            "the right-most address that is not a proxy; the rest is the client's to forge"
        );
        assert_eq!(
            proxies.client(ip("192.0.2.1"), &headers),
            ClientKey::of(ip("192.0.2.1")),
            "a peer that is not a proxy is the client whatever it says"
        );
        headers.insert(
            "x-forwarded-for",
            HeaderValue::from_static("not an address"),
        );
        assert_eq!(
            proxies.client(ip("10.0.0.1"), &headers),
            ClientKey::of(ip("10.0.0.1"))
        );
    }
}
