//! Resolving each host once, checking every address, and handing only checked addresses to
//! the connection.
//!
//! The fetch loop resolves a hop's host itself (so it can report DNS failures and refused
//! addresses as typed errors) and *approves* the checked addresses for the duration of the
//! request. The HTTP client's resolver then answers from the approvals instead of asking DNS a
//! second time, so a name cannot resolve to a public address for the check and to a private
//! one for the connection (DNS rebinding).

use std::collections::HashMap;
use std::net::{IpAddr, SocketAddr};
use std::sync::{Arc, Mutex, PoisonError};

use crate::address::AddressPolicy;
use crate::config::ResolvePin;
use crate::error::{Cause, FetchError};

pub(crate) struct Resolver {
    policy: AddressPolicy,
    pins: Vec<ResolvePin>,
    approved: Mutex<HashMap<String, Approval>>,
}

struct Approval {
    addresses: Vec<IpAddr>,
    /// Requests in flight that rely on this approval.
    users: usize,
}

/// Keeps an approval alive while its request runs.
pub(crate) struct ApprovalGuard {
    resolver: Arc<Resolver>,
    host: String,
}

impl Drop for ApprovalGuard {
    fn drop(&mut self) {
        let mut approved = self
            .resolver
            .approved
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        if let Some(approval) = approved.get_mut(&self.host) {
            approval.users = approval.users.saturating_sub(1);
            if approval.users == 0 {
                approved.remove(&self.host);
            }
        }
    }
}

impl Resolver {
    pub(crate) fn new(policy: AddressPolicy, pins: Vec<ResolvePin>) -> Resolver {
        Resolver {
            policy,
            pins,
            approved: Mutex::new(HashMap::new()),
        }
    }

    /// Resolves `host` (lower case punycode, or an IP literal, IPv6 in brackets) for `port`
    /// and checks every address. Any refused address refuses the host: a name mixing public
    /// and private addresses is either misconfigured or an attack.
    pub(crate) async fn resolve_checked(
        &self,
        host: &str,
        port: Option<u16>,
    ) -> Result<Vec<IpAddr>, FetchError> {
        let addresses = self.lookup(host, port).await?;
        for &address in &addresses {
            self.policy
                .check(address)
                .map_err(|range| FetchError::AddressRefused {
                    host: host.to_owned(),
                    address,
                    range,
                })?;
        }
        Ok(addresses)
    }

    async fn lookup(&self, host: &str, port: Option<u16>) -> Result<Vec<IpAddr>, FetchError> {
        let literal = host.strip_prefix('[').and_then(|h| h.strip_suffix(']'));
        if let Ok(address) = literal.unwrap_or(host).parse::<IpAddr>() {
            return Ok(vec![address]);
        }
        // Without a port (the client's own resolver) any pin for the host applies.
        if let Some(pin) = self
            .pins
            .iter()
            .find(|pin| pin.host == host && port.is_none_or(|port| pin.port == port))
        {
            return Ok(pin.addresses.clone());
        }
        let dns_error = |source: Cause| FetchError::Dns {
            host: host.to_owned(),
            source,
        };
        let found = tokio::net::lookup_host((host, port.unwrap_or(0)))
            .await
            .map_err(|e| dns_error(Cause::new(e)))?;
        let mut addresses: Vec<IpAddr> = Vec::new();
        for address in found.map(|a| a.ip()) {
            if !addresses.contains(&address) {
                addresses.push(address);
            }
        }
        if addresses.is_empty() {
            return Err(dns_error(Cause::message("no addresses")));
        }
        Ok(addresses)
    }

    /// Lets the client connect to `host` at `addresses` until the guard is dropped.
    pub(crate) fn approve(self: &Arc<Self>, host: &str, addresses: Vec<IpAddr>) -> ApprovalGuard {
        let mut approved = self.approved.lock().unwrap_or_else(PoisonError::into_inner);
        let approval = approved.entry(host.to_owned()).or_insert(Approval {
            addresses: Vec::new(),
            users: 0,
        });
        // Concurrent requests to one host share an approval; the latest check wins, and
        // every address in it has been checked.
        approval.addresses = addresses;
        approval.users += 1;
        ApprovalGuard {
            resolver: Arc::clone(self),
            host: host.to_owned(),
        }
    }

    fn approved(&self, host: &str) -> Option<Vec<IpAddr>> {
        let approved = self.approved.lock().unwrap_or_else(PoisonError::into_inner);
        approved.get(host).map(|a| a.addresses.clone())
    }
}

/// The HTTP client's resolver.
pub(crate) struct ClientResolver(pub(crate) Arc<Resolver>);

impl reqwest::dns::Resolve for ClientResolver {
    fn resolve(&self, name: reqwest::dns::Name) -> reqwest::dns::Resolving {
        let resolver = Arc::clone(&self.0);
        let host = name.as_str().to_ascii_lowercase();
        Box::pin(async move {
            let addresses = match resolver.approved(&host) {
                Some(addresses) => addresses,
                // Only reached if the client connects outside a fetch (for instance a pooled
                // connection being completed in the background): resolve and check afresh.
                None => resolver.resolve_checked(&host, None).await?,
            };
            // Port 0 is replaced by the URL's port.
            let addrs: reqwest::dns::Addrs =
                Box::new(addresses.into_iter().map(|ip| SocketAddr::new(ip, 0)));
            Ok(addrs)
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::address::RefusedRange;

    fn pinned(pins: &[&str], allow_private: bool) -> Resolver {
        Resolver::new(
            AddressPolicy {
                allow_private_addresses: allow_private,
                ..AddressPolicy::default()
            },
            pins.iter().map(|p| p.parse().unwrap()).collect(),
        )
    }

    #[tokio::test]
    async fn pins_apply_to_their_host_and_port_and_are_checked() {
        let resolver = pinned(
            &["site.test:80:93.184.216.34", "inside.test:80:10.0.0.1"],
            false,
        );
        assert_eq!(
            resolver
                .resolve_checked("site.test", Some(80))
                .await
                .unwrap(),
            vec!["93.184.216.34".parse::<IpAddr>().unwrap()]
        );
        let refused = resolver.resolve_checked("inside.test", Some(80)).await;
        assert!(matches!(
            refused,
            Err(FetchError::AddressRefused {
                range: RefusedRange::Private,
                ..
            })
        ));
        let allowed = pinned(&["inside.test:80:10.0.0.1"], true);
        assert!(allowed
            .resolve_checked("inside.test", Some(80))
            .await
            .is_ok());
    }

    #[tokio::test]
    async fn ip_literals_are_checked_without_dns() {
        let resolver = pinned(&[], false);
        for (host, range) in [
            ("127.0.0.1", RefusedRange::Loopback),
            ("[::1]", RefusedRange::Loopback),
            ("[::ffff:127.0.0.1]", RefusedRange::Loopback),
            ("[fd00::1]", RefusedRange::UniqueLocal),
            ("169.254.169.254", RefusedRange::LinkLocal),
        ] {
            let result = resolver.resolve_checked(host, Some(80)).await;
            assert!(
                matches!(result, Err(FetchError::AddressRefused { range: r, .. }) if r == range),
                "{host}: {result:?}"
            );
        }
    }

    #[tokio::test]
    async fn localhost_resolves_and_is_refused() {
        // `localhost` comes from the hosts file, not the network.
        let result = pinned(&[], false)
            .resolve_checked("localhost", Some(80))
            .await;
        assert!(
            matches!(
                result,
                Err(FetchError::AddressRefused {
                    range: RefusedRange::Loopback,
                    ..
                })
            ),
            "{result:?}"
        );
    }

    #[tokio::test]
    async fn approvals_last_while_a_request_needs_them() {
        let resolver = Arc::new(pinned(&[], true));
        let address: IpAddr = "127.0.0.1".parse().unwrap();
        let first = resolver.approve("a.test", vec![address]);
        let second = resolver.approve("a.test", vec![address]);
        drop(first);
        assert_eq!(resolver.approved("a.test"), Some(vec![address]));
        drop(second);
        assert_eq!(resolver.approved("a.test"), None);
    }
}
