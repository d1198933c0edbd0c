//! Which addresses the fetcher may connect to.
//!
//! RobotsTxtParser fetches whatever a stranger types in, so by default only public unicast
//! addresses are allowed: a name that resolves into the operator's own network (or a redirect
//! that points there) must not turn the bot into a proxy for it.

use std::fmt;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

/// A range of addresses refused by default, with the reason it is refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RefusedRange {
    /// `127.0.0.0/8`, `::1`.
    Loopback,
    /// `10.0.0.0/8`, `172.16.0.0/12`, `192.168.0.0/16`, and the deprecated IPv6 site-local
    /// `fec0::/10`.
    Private,
    /// `169.254.0.0/16`, `fe80::/10`.
    LinkLocal,
    /// Carrier-grade NAT, `100.64.0.0/10`.
    SharedCgnat,
    /// IPv6 unique-local, `fc00::/7`.
    UniqueLocal,
    /// `224.0.0.0/4`, `ff00::/8`.
    Multicast,
    /// `0.0.0.0/8` ("this network"), `::`.
    Unspecified,
    /// `255.255.255.255`.
    Broadcast,
    /// `192.0.2.0/24`, `198.51.100.0/24`, `203.0.113.0/24`, `2001:db8::/32`, `3fff::/20`.
    Documentation,
    /// `198.18.0.0/15`, `2001:2::/48`.
    Benchmarking,
    /// Other special-purpose ranges: `192.0.0.0/24`, `240.0.0.0/4`, the deprecated
    /// IPv4-compatible `::/96`, the discard prefix `100::/64`.
    Reserved,
}

impl fmt::Display for RefusedRange {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            RefusedRange::Loopback => "loopback",
            RefusedRange::Private => "private",
            RefusedRange::LinkLocal => "link-local",
            RefusedRange::SharedCgnat => "shared (CGNAT)",
            RefusedRange::UniqueLocal => "unique-local",
            RefusedRange::Multicast => "multicast",
            RefusedRange::Unspecified => "unspecified",
            RefusedRange::Broadcast => "broadcast",
            RefusedRange::Documentation => "documentation",
            RefusedRange::Benchmarking => "benchmarking",
            RefusedRange::Reserved => "reserved",
        })
    }
}

/// Which addresses may be connected to.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct AddressPolicy {
    /// Allow every address, private ones included (`--allow-private-addresses`).
    pub allow_private_addresses: bool,
    /// Addresses allowed even though they are in a refused range (exact match): an operator
    /// letting the bot reach one known internal host, or a test reaching one loopback server
    /// while everything else stays refused.
    pub allowed_addresses: Vec<IpAddr>,
}

impl AddressPolicy {
    /// Checks one address: `Err` names the refused range.
    pub fn check(&self, address: IpAddr) -> Result<(), RefusedRange> {
        if self.allow_private_addresses || self.allowed_addresses.contains(&address) {
            return Ok(());
        }
        match classify(address) {
            Some(range) => Err(range),
            None => Ok(()),
        }
    }
}

/// The refused range `address` belongs to, or `None` for a public unicast address.
///
/// IPv4 addresses embedded in IPv6 (mapped `::ffff:a.b.c.d`, SIIT `::ffff:0:a.b.c.d`, NAT64
/// `64:ff9b::/96` and `64:ff9b:1::/48`, 6to4 `2002::/16`) are judged by their IPv4 address,
/// so `::ffff:127.0.0.1` is loopback.
pub fn classify(address: IpAddr) -> Option<RefusedRange> {
    match address {
        IpAddr::V4(v4) => classify_v4(v4),
        IpAddr::V6(v6) => classify_v6(v6),
    }
}

fn classify_v4(address: Ipv4Addr) -> Option<RefusedRange> {
    let [a, b, c, _] = address.octets();
    let range = match (a, b, c) {
        _ if address.is_broadcast() => RefusedRange::Broadcast,
        (0, _, _) => RefusedRange::Unspecified,
        (127, _, _) => RefusedRange::Loopback,
        (10, _, _) | (172, 16..=31, _) | (192, 168, _) => RefusedRange::Private,
        (169, 254, _) => RefusedRange::LinkLocal,
        (100, 64..=127, _) => RefusedRange::SharedCgnat,
        (192, 0, 2) | (198, 51, 100) | (203, 0, 113) => RefusedRange::Documentation,
        (198, 18..=19, _) => RefusedRange::Benchmarking,
        (224..=239, _, _) => RefusedRange::Multicast,
        (192, 0, 0) | (240..=255, _, _) => RefusedRange::Reserved,
        _ => return None,
    };
    Some(range)
}

fn classify_v6(address: Ipv6Addr) -> Option<RefusedRange> {
    if let Some(v4) = embedded_v4(address) {
        return classify_v4(v4);
    }
    let segments = address.segments();
    let range = match segments {
        _ if address.is_unspecified() => RefusedRange::Unspecified,
        _ if address.is_loopback() => RefusedRange::Loopback,
        [0, 0, 0, 0, 0, 0, _, _] => RefusedRange::Reserved,
        [0x100, 0, 0, 0, ..] => RefusedRange::Reserved,
        [first, ..] if first & 0xfe00 == 0xfc00 => RefusedRange::UniqueLocal,
        [first, ..] if first & 0xffc0 == 0xfe80 => RefusedRange::LinkLocal,
        [first, ..] if first & 0xffc0 == 0xfec0 => RefusedRange::Private,
        [first, ..] if first & 0xff00 == 0xff00 => RefusedRange::Multicast,
        [0x2001, 0xdb8, ..] => RefusedRange::Documentation,
        [first, ..] if first & 0xfff0 == 0x3ff0 => RefusedRange::Documentation,
        [0x2001, 2, 0, ..] => RefusedRange::Benchmarking,
        _ => return None,
    };
    Some(range)
}

/// The IPv4 address carried inside an IPv6 address: IPv4-mapped `::ffff:0:0/96`, SIIT
/// IPv4-translated `::ffff:0:0:0/96` (RFC 6145), NAT64 well-known `64:ff9b::/96` (RFC 6052)
/// and local-use `64:ff9b:1::/48` (RFC 8215, the IPv4 address in the last 32 bits as the
/// /96 form of RFC 6052 places it), and 6to4 `2002::/16`.
fn embedded_v4(address: Ipv6Addr) -> Option<Ipv4Addr> {
    let s = address.segments();
    let from = |hi: u16, lo: u16| {
        let [a, b] = hi.to_be_bytes();
        let [c, d] = lo.to_be_bytes();
        Ipv4Addr::new(a, b, c, d)
    };
    match s {
        [0, 0, 0, 0, 0, 0xffff, hi, lo] => Some(from(hi, lo)),
        [0, 0, 0, 0, 0xffff, 0, hi, lo] => Some(from(hi, lo)),
        [0x64, 0xff9b, 0, 0, 0, 0, hi, lo] => Some(from(hi, lo)),
        [0x64, 0xff9b, 1, _, _, _, hi, lo] => Some(from(hi, lo)),
        [0x2002, hi, lo, ..] => Some(from(hi, lo)),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn range(address: &str) -> Option<RefusedRange> {
        classify(address.parse().unwrap())
    }

    #[test]
    fn every_refused_range_is_refused() {
        use RefusedRange::*;
        let cases = [
            ("127.0.0.1", Loopback),
            ("127.255.255.254", Loopback),
            ("::1", Loopback),
            ("10.0.0.1", Private),
            ("10.255.255.255", Private),
            ("172.16.0.1", Private),
            ("172.31.255.255", Private),
            ("192.168.1.1", Private),
            ("fec0::1", Private),
            ("169.254.169.254", LinkLocal),
            ("fe80::1", LinkLocal),
            ("100.64.0.1", SharedCgnat),
            ("100.127.255.255", SharedCgnat),
            ("fc00::1", UniqueLocal),
            ("fd12:3456::1", UniqueLocal),
            ("224.0.0.1", Multicast),
            ("239.255.255.255", Multicast),
            ("ff02::1", Multicast),
            ("0.0.0.0", Unspecified),
            ("0.1.2.3", Unspecified),
            ("::", Unspecified),
            ("255.255.255.255", Broadcast),
            ("192.0.2.1", Documentation),
            ("198.51.100.7", Documentation),
            ("203.0.113.9", Documentation),
            ("2001:db8::1", Documentation),
            ("3fff::1", Documentation),
            ("198.18.0.1", Benchmarking),
            ("198.19.255.255", Benchmarking),
            ("2001:2::1", Benchmarking),
            ("192.0.0.8", Reserved),
            ("240.0.0.1", Reserved),
            ("100::1", Reserved),
            ("::7f00:1", Reserved),
        ];
        for (address, expected) in cases {
            assert_eq!(range(address), Some(expected), "{address}");
        }
    }

    #[test]
    fn ipv4_embedded_in_ipv6_is_judged_as_ipv4() {
        use RefusedRange::*;
        let cases = [
            ("::ffff:127.0.0.1", Loopback),
            ("::ffff:10.1.2.3", Private),
            ("::ffff:172.20.0.1", Private),
            ("::ffff:192.168.0.1", Private),
            ("::ffff:169.254.169.254", LinkLocal),
            ("::ffff:100.64.0.1", SharedCgnat),
            ("::ffff:224.0.0.1", Multicast),
            ("::ffff:0.0.0.0", Unspecified),
            ("::ffff:255.255.255.255", Broadcast),
            ("::ffff:192.0.2.1", Documentation),
            ("::ffff:198.18.0.1", Benchmarking),
            ("64:ff9b::10.0.0.1", Private),
            ("2002:c0a8:0101::1", Private),
            // NAT64 local-use (RFC 8215) and SIIT (RFC 6145) are mapped forms too.
            ("64:ff9b:1::127.0.0.1", Loopback),
            ("64:ff9b:1:abcd::10.1.2.3", Private),
            ("64:ff9b:1::169.254.169.254", LinkLocal),
            ("::ffff:0:127.0.0.1", Loopback),
            ("::ffff:0:192.168.1.1", Private),
        ];
        for (address, expected) in cases {
            assert_eq!(range(address), Some(expected), "{address}");
        }
        assert_eq!(range("::ffff:93.184.216.34"), None);
        assert_eq!(range("64:ff9b:1::93.184.216.34"), None);
        assert_eq!(range("::ffff:0:93.184.216.34"), None);
    }

    #[test]
    fn public_addresses_pass() {
        for address in [
            "93.184.216.34",
            "1.1.1.1",
            "8.8.8.8",
            "172.15.255.255",
            "172.32.0.1",
            "100.63.255.255",
            "100.128.0.1",
            "198.17.255.255",
            "198.20.0.1",
            "2606:4700:4700::1111",
            "2a00:1450:4009:81f::200e",
        ] {
            assert_eq!(range(address), None, "{address}");
            assert!(AddressPolicy::default()
                .check(address.parse().unwrap())
                .is_ok());
        }
    }

    #[test]
    fn opting_in_allows_private_addresses() {
        let policy = AddressPolicy {
            allow_private_addresses: true,
            ..AddressPolicy::default()
        };
        assert!(policy.check("127.0.0.1".parse().unwrap()).is_ok());
        assert!(policy.check("10.0.0.1".parse().unwrap()).is_ok());
        assert_eq!(
            AddressPolicy::default().check("10.0.0.1".parse().unwrap()),
            Err(RefusedRange::Private)
        );
        let one = AddressPolicy {
            allowed_addresses: vec!["127.0.0.1".parse().unwrap()],
            ..AddressPolicy::default()
        };
        assert!(one.check("127.0.0.1".parse().unwrap()).is_ok());
        assert_eq!(
            one.check("127.0.0.2".parse().unwrap()),
            Err(RefusedRange::Loopback)
        );
    }
}
