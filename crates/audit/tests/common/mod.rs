//! What the test-web analyses share: the bot's fetcher reaching named hosts on the test web.

// Each test file uses its own part of this module.
#![allow(dead_code)]

use audit::crawlers::BOT_TOKEN;
use fetch::{FetchConfig, Fetcher, ResolvePin};
use testweb::TestWeb;
use url::Url;

/// An empty sitemap.
pub const URLSET: &str = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<urlset xmlns=\"http://www.sitemaps.org/schemas/sitemap/0.9\"></urlset>";

/// A URL written in a test.
pub fn url(text: &str) -> Url {
    Url::parse(text).expect("a test URL")
}

/// The bot's configuration with `hosts` pinned to the test web. Private addresses are allowed
/// (the test web is on loopback); a test of the refusal turns that off.
pub fn config_for<'a>(web: &TestWeb, hosts: impl IntoIterator<Item = &'a str>) -> FetchConfig {
    let mut config = FetchConfig::new(BOT_TOKEN, "https://robotstxtparser.example/bot");
    config.allow_private_addresses = true;
    for host in hosts {
        for pin in web.pins(host) {
            config.resolve.push(pin.parse::<ResolvePin>().expect("pin"));
        }
    }
    config
}

/// A fetcher reaching `hosts` on the test web.
pub fn make_fetcher(web: &TestWeb, hosts: &[&str]) -> Fetcher {
    Fetcher::new(config_for(web, hosts.iter().copied())).expect("fetcher")
}
