//! The scripted web of these tests, and what they share.

use std::ops::Deref;
use std::sync::Arc;
use std::time::Duration;

use audit::crawlers::BOT_TOKEN;
use audit::{Analysis, CheckId};
use fetch::testing::{Reply, ScriptedWeb};
use fetch::{FetchConfig, FetchError, Fetcher};
use tokio::time::Instant;
use url::Url;

pub(crate) fn url(text: &str) -> Url {
    Url::parse(text).expect("a test URL")
}

/// A scripted web and a fetcher on it as RobotsTxtParser; derefs to the fetcher, so
/// `analyze(&fake, ..)` runs on it.
pub(crate) struct Fake {
    pub(crate) started: Instant,
    pub(crate) web: Arc<ScriptedWeb>,
    fetcher: Fetcher,
}

impl Deref for Fake {
    type Target = Fetcher;

    fn deref(&self) -> &Fetcher {
        &self.fetcher
    }
}

impl Fake {
    pub(crate) fn new() -> Fake {
        let web = ScriptedWeb::new();
        let fetcher = web.fetcher_with(FetchConfig::new(
            BOT_TOKEN,
            "https://robotstxtparser.example/bot",
        ));
        Fake {
            started: Instant::now(),
            web,
            fetcher,
        }
    }

    pub(crate) fn reply(self, url: &str, reply: Reply) -> Fake {
        self.web.route(url, reply);
        self
    }

    pub(crate) fn route(
        self,
        url: &str,
        status: u16,
        headers: &[(&str, &str)],
        body: impl AsRef<[u8]>,
    ) -> Fake {
        let mut reply = Reply::status(status).body(body);
        for (name, value) in headers {
            reply = reply.header(name, value);
        }
        self.reply(url, reply)
    }

    pub(crate) fn robots(self, url: &str, body: &str) -> Fake {
        self.reply(url, Reply::robots_txt(body))
    }

    pub(crate) fn slow(
        self,
        url: &str,
        status: u16,
        headers: &[(&str, &str)],
        body: &str,
        delay: Duration,
    ) -> Fake {
        let mut reply = Reply::status(status).body(body).delay(delay);
        for (name, value) in headers {
            reply = reply.header(name, value);
        }
        self.reply(url, reply)
    }

    pub(crate) fn fail(self, url: &str, error: FetchError) -> Fake {
        self.reply(url, Reply::fail(error))
    }

    pub(crate) fn requested(&self) -> Vec<String> {
        self.web
            .requests()
            .iter()
            .map(|logged| logged.url.to_string())
            .collect()
    }

    pub(crate) fn when(&self, url: &str) -> Option<Duration> {
        self.web
            .requests_to(url)
            .first()
            .map(|logged| logged.at.duration_since(self.started))
    }
}

pub(crate) const HTML: &[(&str, &str)] = &[("Content-Type", "text/html")];
pub(crate) const XML: &[(&str, &str)] = &[("Content-Type", "application/xml")];
pub(crate) const URLSET: &str = "<?xml version=\"1.0\"?><urlset></urlset>";

pub(crate) fn ids(analysis: &Analysis) -> Vec<&str> {
    analysis.findings.iter().map(|f| f.id.as_str()).collect()
}

pub(crate) fn has(analysis: &Analysis, id: CheckId) -> bool {
    analysis.findings.iter().any(|f| f.id == id)
}

pub(crate) fn refused(host: &str) -> FetchError {
    FetchError::AddressRefused {
        host: host.into(),
        address: std::net::IpAddr::from([127, 0, 0, 1]),
        range: fetch::RefusedRange::Loopback,
    }
}
