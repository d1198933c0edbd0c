//! Shared set-up: a fetcher that reaches the test web and nothing else.

#![allow(dead_code)]

use std::time::Duration;

use fetch::{FetchConfig, Fetcher, MinTransferRate, Timeouts};
use testweb::TestWeb;

pub const INFO_URL: &str = "https://jittybot.test/bot";

/// A config pinning `hosts` to the test web, trusting its certificate, with private
/// addresses allowed and short time limits.
pub fn config(web: &TestWeb, hosts: &[&str]) -> FetchConfig {
    let mut config = FetchConfig::new("JittyBot", INFO_URL);
    config.allow_private_addresses = true;
    config.extra_root_certificates_pem = vec![web.certificate_pem().as_bytes().to_vec()];
    config.resolve = hosts
        .iter()
        .flat_map(|host| web.pins(host))
        .map(|pin| pin.parse().unwrap())
        .collect();
    config.timeouts = Timeouts {
        connect: Duration::from_secs(5),
        first_byte: Duration::from_secs(5),
        total: Duration::from_secs(20),
        min_transfer_rate: MinTransferRate {
            bytes: 1,
            window: Duration::from_secs(5),
        },
    };
    config
}

pub fn fetcher(web: &TestWeb, hosts: &[&str]) -> Fetcher {
    Fetcher::new(config(web, hosts)).unwrap()
}

pub fn url(text: &str) -> fetch::Url {
    fetch::Url::parse(text).unwrap()
}
