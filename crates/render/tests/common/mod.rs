//! Set-up shared by the tests that render in a real Chromium: the polite pipeline on the
//! loopback test web, and the gate on it.

use std::sync::Arc;
use std::time::Duration;

use fetch::{
    FetchConfig, Fetcher, Pacer, PacerConfig, Policy, Polite, ResolvePin, RobotsCache, ScopeOrigins,
};
use render::PoliteGate;
use robots::ProductTokens;

/// JittyBot's pipeline with `hosts` resolved to loopback and each origin paced at `pace`.
pub fn polite(hosts: &[&str], pace: Duration) -> Arc<Polite> {
    let mut config = FetchConfig::new("JittyBot", "https://jittybot.test/bot");
    config.allow_private_addresses = true;
    config.resolve = hosts
        .iter()
        .map(|h| ResolvePin {
            host: h.to_string(),
            port: 0,
            addresses: vec![std::net::Ipv4Addr::LOCALHOST.into()],
        })
        .collect();
    let pacer = PacerConfig {
        pace,
        ..PacerConfig::default()
    };
    Arc::new(Polite::new(
        RobotsCache::new(Fetcher::new(config).unwrap(), Policy::Cached),
        Pacer::new(pacer),
        Arc::new(ScopeOrigins),
    ))
}

/// A gate on `polite`: pages as JittyBot, media as JittyBot-Image.
pub fn gate(polite: &Arc<Polite>) -> Arc<PoliteGate> {
    Arc::new(PoliteGate::new(
        Arc::clone(polite) as Arc<dyn render::PoliteSource>,
        ProductTokens::from_static(&["JittyBot"]),
        ProductTokens::from_static(&["JittyBot-Image", "JittyBot"]),
        Some("JittyBot-Image".into()),
    ))
}
