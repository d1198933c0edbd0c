//! Origin grouping: which hosts are served by one infrastructure (the pacing unit), as a pure
//! model (union-find over host names).
//!
//! Evidence, each merging the origins of the hosts it links (JittyBot's documented "Rate limiting"):
//! 1. DNS: two hosts whose resolved address sets share an address.
//! 2. The same TLS leaf certificate (SHA-256), or the same backend-identifying header value:
//!    `X-Served-By`, `X-Backend-Server`, `X-Server`, and the node names ("received-by") in
//!    `Via` (see [`backend_ids`] for which are used).
//! 3. The operator's `--origins` rules override both ways: every host matching a rule belongs
//!    to the rule's named origin, hosts of one name are merged, and evidence never links a
//!    ruled host with another origin (this is how a CDN's shared address is split).
//!
//! Evidence only ever merges; nothing splits an automatic origin again within a run. The
//! representative of an automatic origin is its smallest host name, so every process that
//! sees the same evidence names the origin the same way; an operator origin is `=NAME`.

use std::collections::HashMap;
use std::net::IpAddr;
use std::time::Duration;

use jiff::Timestamp;

use crate::input::OriginRule;

/// The name of an origin: its smallest host name, or `=NAME` for an operator origin.
#[derive(
    Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize, serde::Deserialize,
)]
pub struct OriginName(pub String);

/// What was learnt about one host that may link it to others.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub enum Evidence {
    /// Nothing.
    #[default]
    None,
    /// Its resolved addresses.
    Addresses(Vec<IpAddr>),
    /// The SHA-256 of the TLS leaf certificate it presented.
    TlsLeaf([u8; 32]),
    /// Backend identifiers from its response headers ([`backend_ids`]).
    Backends(Vec<String>),
}

/// Two origins that became one: `absorbed` now belongs to `into`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Merge {
    /// The origin that no longer exists.
    pub absorbed: OriginName,
    /// The origin that holds its hosts now.
    pub into: OriginName,
}

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
enum Key {
    Addr(IpAddr),
    Leaf([u8; 32]),
    Backend(String),
    Operator(String),
}

/// The grouping of every host seen so far.
#[derive(Debug, Default)]
pub struct OriginModel {
    rules: Vec<OriginRule>,
    names: Vec<String>,
    index: HashMap<String, usize>,
    parent: Vec<usize>,
    /// Per host: the operator origin it is held in, if any.
    ruled: Vec<Option<String>>,
    /// The first host seen with each piece of evidence.
    seen: HashMap<Key, usize>,
}

impl OriginModel {
    /// A model with the operator's rules (first matching rule wins).
    pub fn new(rules: Vec<OriginRule>) -> OriginModel {
        OriginModel {
            rules,
            ..OriginModel::default()
        }
    }

    /// Add a host (lower case) if new, and return its origin. A host matching an operator
    /// rule joins that rule's origin at once (and may merge with other hosts of it).
    pub fn add_host(&mut self, host: &str) -> (OriginName, Vec<Merge>) {
        let mut merges = Vec::new();
        if !self.index.contains_key(host) {
            let id = self.names.len();
            self.names.push(host.to_string());
            self.index.insert(host.to_string(), id);
            self.parent.push(id);
            let rule = self
                .rules
                .iter()
                .find(|r| r.pattern.matches(host))
                .map(|r| r.origin.clone());
            self.ruled.push(rule.clone());
            if let Some(name) = rule {
                self.link(id, Key::Operator(name), &mut merges);
            }
        }
        (
            self.origin_of(host)
                .unwrap_or_else(|| OriginName(host.to_string())),
            merges,
        )
    }

    /// Record evidence about `host` (added if new); returns the merges it caused.
    pub fn observe(&mut self, host: &str, evidence: &Evidence) -> Vec<Merge> {
        let (_, mut merges) = self.add_host(host);
        let Some(&id) = self.index.get(host) else {
            return merges;
        };
        if self.ruled[id].is_some() {
            // The operator decided this host's origin: evidence does not move it.
            return merges;
        }
        let keys: Vec<Key> = match evidence {
            Evidence::None => Vec::new(),
            Evidence::Addresses(addrs) => addrs.iter().copied().map(Key::Addr).collect(),
            Evidence::TlsLeaf(sha) => vec![Key::Leaf(*sha)],
            Evidence::Backends(ids) => ids.iter().cloned().map(Key::Backend).collect(),
        };
        for key in keys {
            self.link(id, key, &mut merges);
        }
        merges
    }

    /// The origin of a known host.
    pub fn origin_of(&self, host: &str) -> Option<OriginName> {
        let id = *self.index.get(host)?;
        let root = self.find(id);
        Some(match &self.ruled[root] {
            Some(name) => OriginName(format!("={name}")),
            None => OriginName(self.names[root].clone()),
        })
    }

    /// Every host known, sorted.
    pub fn hosts_known(&self) -> Vec<String> {
        let mut hosts = self.names.clone();
        hosts.sort_unstable();
        hosts
    }

    /// The hosts of an origin, sorted.
    pub fn hosts_of(&self, origin: &OriginName) -> Vec<&str> {
        let mut hosts: Vec<&str> = self
            .names
            .iter()
            .filter(|h| self.origin_of(h).as_ref() == Some(origin))
            .map(String::as_str)
            .collect();
        hosts.sort_unstable();
        hosts
    }

    fn find(&self, mut id: usize) -> usize {
        while self.parent[id] != id {
            id = self.parent[id];
        }
        id
    }

    fn link(&mut self, id: usize, key: Key, merges: &mut Vec<Merge>) {
        match self.seen.get(&key) {
            None => {
                self.seen.insert(key, id);
            }
            Some(&other) => {
                // Evidence shared with a ruled host does not link (operator keys always do).
                let operator = matches!(key, Key::Operator(_));
                if !operator && self.ruled[other].is_some() {
                    return;
                }
                if let Some(m) = self.union(id, other) {
                    merges.push(m);
                }
            }
        }
    }

    fn union(&mut self, a: usize, b: usize) -> Option<Merge> {
        let (ra, rb) = (self.find(a), self.find(b));
        if ra == rb {
            return None;
        }
        // Keep the smaller host name as root: a deterministic name whatever the order.
        let (root, child) = if self.names[ra] <= self.names[rb] {
            (ra, rb)
        } else {
            (rb, ra)
        };
        let absorbed = self.origin_of(&self.names[child].clone())?;
        self.parent[child] = root;
        // Compress the absorbed tree's paths lazily: `find` walks parents; sets stay small
        // enough (hosts per origin) for that to be cheap, and union by name keeps it simple.
        let into = self.origin_of(&self.names[root].clone())?;
        Some(Merge { absorbed, into })
    }
}

/// The pacing facts of an origin that a merge must combine.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PaceFacts {
    /// The minimum gap between two request starts.
    pub gap: Duration,
    /// When the next request may start.
    pub next_start: Timestamp,
    /// Failures in a row.
    pub failures: u32,
    /// Whether it is paused.
    pub paused: bool,
}

impl PaceFacts {
    /// Merging two origins keeps the stricter pace (the longer gap, the later next start) and
    /// the longer back-off (more failures in a row; paused if either was).
    pub fn merge(&self, other: &PaceFacts) -> PaceFacts {
        PaceFacts {
            gap: self.gap.max(other.gap),
            next_start: self.next_start.max(other.next_start),
            failures: self.failures.max(other.failures),
            paused: self.paused || other.paused,
        }
    }
}

/// Backend identifiers in response headers: the values of `X-Served-By`, `X-Backend-Server`
/// and `X-Server`, and the node names (received-by) of `Via` entries. A `Via` node name is used
/// only when it names a node (it contains a digit or a dot: `1.1 varnish` or `1.1 vegur` are
/// product names shared by every site behind that software, not evidence of one backend) and
/// is not a CDN edge (`*.cloudfront.net`), which says nothing about the backend. Values are
/// lower-cased and trimmed; empty values are ignored.
pub fn backend_ids<'a>(headers: impl IntoIterator<Item = (&'a str, &'a [u8])>) -> Vec<String> {
    let mut ids = Vec::new();
    for (name, value) in headers {
        let Ok(value) = std::str::from_utf8(value) else {
            continue;
        };
        let name = name.to_ascii_lowercase();
        match name.as_str() {
            "x-served-by" | "x-backend-server" | "x-server" => {
                let v = value.trim().to_ascii_lowercase();
                if !v.is_empty() {
                    ids.push(format!("{name}:{v}"));
                }
            }
            "via" => {
                for entry in value.split(',') {
                    let mut parts = entry.split_whitespace();
                    let (Some(_protocol), Some(node)) = (parts.next(), parts.next()) else {
                        continue;
                    };
                    let node = node.to_ascii_lowercase();
                    let names_a_node = node.bytes().any(|b| b.is_ascii_digit() || b == b'.');
                    if names_a_node && !node.ends_with(".cloudfront.net") {
                        ids.push(format!("via:{node}"));
                    }
                }
            }
            _ => {}
        }
    }
    ids
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::input::HostPattern;

    fn addr(s: &str) -> Evidence {
        Evidence::Addresses(vec![s.parse().unwrap()])
    }

    fn rule(p: HostPattern, o: &str) -> OriginRule {
        OriginRule {
            pattern: p,
            origin: o.into(),
        }
    }

    #[test]
    fn shared_addresses_merge_into_the_smallest_name() {
        let mut m = OriginModel::new(vec![]);
        assert!(m.observe("b.test", &addr("127.0.0.2")).is_empty());
        assert!(m.observe("c.test", &addr("127.0.0.3")).is_empty());
        let merges = m.observe(
            "a.test",
            &Evidence::Addresses(vec![
                "127.0.0.9".parse().unwrap(),
                "127.0.0.2".parse().unwrap(),
            ]),
        );
        assert_eq!(
            merges,
            [Merge {
                absorbed: OriginName("b.test".into()),
                into: OriginName("a.test".into())
            }]
        );
        assert_eq!(m.origin_of("b.test"), m.origin_of("a.test"));
        assert_ne!(m.origin_of("c.test"), m.origin_of("a.test"));
        assert_eq!(
            m.hosts_of(&OriginName("a.test".into())),
            ["a.test", "b.test"]
        );
    }

    #[test]
    fn certificate_and_backend_headers_merge() {
        let mut m = OriginModel::new(vec![]);
        m.observe("x.test", &addr("127.0.0.2"));
        m.observe("y.test", &addr("127.0.0.3"));
        m.observe("z.test", &addr("127.0.0.4"));
        m.observe("x.test", &Evidence::TlsLeaf([7; 32]));
        assert_eq!(m.observe("y.test", &Evidence::TlsLeaf([7; 32])).len(), 1);
        let ids = backend_ids([("Via", b"1.1 varnish, 1.1 node-7.example (squid)".as_slice())]);
        assert_eq!(ids, ["via:node-7.example"]);
        m.observe("z.test", &Evidence::Backends(ids.clone()));
        assert!(m.observe("y.test", &Evidence::Backends(ids)).len() == 1);
        let o = m.origin_of("x.test").unwrap();
        assert_eq!(m.hosts_of(&o), ["x.test", "y.test", "z.test"]);
        assert_eq!(
            backend_ids([
                ("X-Served-By", b" Cache-1 ".as_slice()),
                ("via", b"1.1 vegur".as_slice()),
                ("Via", b"1.1 e1.cloudfront.net (CloudFront)".as_slice())
            ]),
            ["x-served-by:cache-1"]
        );
    }

    #[test]
    fn operator_rules_merge_and_split() {
        let rules = vec![
            rule(HostPattern::Suffix("cdn.test".into()), "cdn-a"),
            rule(HostPattern::Exact("b.test".into()), "cdn-a"),
            rule(HostPattern::Exact("solo.test".into()), "solo"),
        ];
        let mut m = OriginModel::new(rules);
        // Merge: hosts with nothing in common are one origin because the operator says so.
        m.observe("www.cdn.test", &addr("127.0.0.2"));
        m.observe("b.test", &addr("127.0.0.3"));
        assert_eq!(m.origin_of("b.test"), Some(OriginName("=cdn-a".into())));
        assert_eq!(m.origin_of("www.cdn.test"), m.origin_of("b.test"));
        // Split: solo.test shares an address with an automatic host but stays apart.
        m.observe("auto.test", &addr("127.0.0.5"));
        m.observe("solo.test", &addr("127.0.0.5"));
        m.observe("auto2.test", &addr("127.0.0.5"));
        assert_eq!(m.origin_of("solo.test"), Some(OriginName("=solo".into())));
        assert_eq!(m.origin_of("auto.test"), m.origin_of("auto2.test"));
        assert_ne!(m.origin_of("auto.test"), m.origin_of("solo.test"));
        // And evidence linking a ruled host to an unruled one does not merge either way.
        m.observe("other.test", &addr("127.0.0.2"));
        assert_eq!(
            m.origin_of("other.test"),
            Some(OriginName("other.test".into()))
        );
    }

    #[test]
    fn merged_pace_is_the_stricter() {
        let t = Timestamp::from_second(1_000).unwrap();
        let a = PaceFacts {
            gap: Duration::from_secs(1),
            next_start: t,
            failures: 3,
            paused: false,
        };
        let b = PaceFacts {
            gap: Duration::from_secs(5),
            next_start: t + Duration::from_secs(2),
            failures: 1,
            paused: true,
        };
        let m = a.merge(&b);
        assert_eq!(
            m,
            PaceFacts {
                gap: Duration::from_secs(5),
                next_start: t + Duration::from_secs(2),
                failures: 3,
                paused: true
            }
        );
        assert_eq!(b.merge(&a), m);
    }
}
