//! The gate every request of a rendered page passes: the caller decides, and makes the
//! request itself, so the browser never touches the network.

use std::future::Future;

use http::{HeaderMap, StatusCode};
use tokio::time::Instant;
use url::Url;

/// What kind of resource the page asked for (DevTools' `Network.ResourceType`, grouped by
/// which rules apply to it).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ResourceKind {
    /// A document: a frame's HTML.
    Document,
    /// A script.
    Script,
    /// A stylesheet.
    Stylesheet,
    /// A font.
    Font,
    /// An image.
    Image,
    /// Audio or video.
    Media,
    /// Data the page asked for by script: `fetch()`, `XMLHttpRequest`, event sources.
    Data,
    /// Anything else (manifests, text tracks, pings, prefetches ...).
    Other,
}

impl ResourceKind {
    /// True for images, audio and video: fetched as JittyBot-Image, under its rules (JittyBot's documentation:
    /// "JittyBot-Image rules for images and other media").
    pub fn is_media(self) -> bool {
        matches!(self, ResourceKind::Image | ResourceKind::Media)
    }

    /// The kind of a DevTools resource type name (`"Image"`, `"XHR"`, ...).
    pub fn from_devtools(name: &str) -> ResourceKind {
        match name {
            "Document" => ResourceKind::Document,
            "Script" => ResourceKind::Script,
            "Stylesheet" => ResourceKind::Stylesheet,
            "Font" => ResourceKind::Font,
            "Image" => ResourceKind::Image,
            "Media" => ResourceKind::Media,
            "XHR" | "Fetch" | "EventSource" => ResourceKind::Data,
            _ => ResourceKind::Other,
        }
    }

    /// A short lower-case label for logs and events.
    pub fn label(self) -> &'static str {
        match self {
            ResourceKind::Document => "document",
            ResourceKind::Script => "script",
            ResourceKind::Stylesheet => "stylesheet",
            ResourceKind::Font => "font",
            ResourceKind::Image => "image",
            ResourceKind::Media => "media",
            ResourceKind::Data => "data",
            ResourceKind::Other => "other",
        }
    }
}

/// The two methods a page may use; every other one is failed in the browser, before any gate.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SubMethod {
    /// `GET`.
    Get,
    /// `HEAD`.
    Head,
}

/// One request the page made, as the gate sees it.
#[derive(Clone, Debug)]
pub struct SubRequest {
    /// The URL asked for (fragment removed by the browser).
    pub url: Url,
    /// GET or HEAD.
    pub method: SubMethod,
    /// The kind of resource.
    pub kind: ResourceKind,
    /// The end of the page's time budget: the gate must answer before it (a request waiting
    /// for its origin's turn past it is denied).
    pub deadline: Instant,
}

/// A response made by the gate, given to the browser as if it came from the network.
#[derive(Clone, Debug)]
pub struct GateResponse {
    /// The status.
    pub status: StatusCode,
    /// The headers as received; `Content-Encoding`, `Content-Length` and `Transfer-Encoding`
    /// are dropped before the browser sees them (the body is given decoded).
    pub headers: HeaderMap,
    /// The body, decoded.
    pub body: Vec<u8>,
}

/// What the gate decided.
#[derive(Clone, Debug)]
pub enum Decision {
    /// The request was made (by the caller's own pipeline): its response goes to the page.
    Allow(GateResponse),
    /// Not made (or made and failed); the page sees a failed request.
    Deny(DenyReason),
}

/// Why the gate gave the page no response.
#[derive(Clone, Debug)]
pub enum DenyReason {
    /// The pipeline did not request `url` (the request's, or a redirect target's): its
    /// robots.txt disallows it or cannot be read, the origin gave no turn in time, a redirect
    /// left the scope, or the URL cannot be fetched.
    NotRequested {
        /// The URL not requested.
        url: Url,
        /// Why, as the pipeline says.
        reason: fetch::SkipReason,
    },
    /// The request was made and failed (connection, protocol, body).
    Failed {
        /// The pipeline's error, causes kept (shared: a decision is cloned into the page's
        /// record and its result).
        error: std::sync::Arc<fetch::FetchError>,
    },
    /// The page's time budget was spent before the request could start.
    TimeBudget,
    /// The page's sub-requests had read their byte budget
    /// ([`crate::polite_gate::PAGE_BYTE_BUDGET`]).
    ByteBudget,
    /// Media (an image, audio, video) are not fetched for the browser: the caller's media
    /// pipeline fetches them once, under its own rules.
    MediaElsewhere,
    /// Outside what the caller crawls.
    OutOfScope,
}

/// Two refusals are equal when they are of one kind and say the same: failures compare by
/// their error's words (a `FetchError` has no equality of its own).
impl PartialEq for DenyReason {
    fn eq(&self, other: &Self) -> bool {
        match (self, other) {
            (DenyReason::Failed { error: a }, DenyReason::Failed { error: b }) => {
                a.full_message() == b.full_message()
            }
            (
                DenyReason::NotRequested { url: a, reason: r },
                DenyReason::NotRequested { url: b, reason: q },
            ) => a == b && r == q,
            (DenyReason::NotRequested { .. } | DenyReason::Failed { .. }, _) => false,
            _ => std::mem::discriminant(self) == std::mem::discriminant(other),
        }
    }
}

impl Eq for DenyReason {}

impl std::fmt::Display for DenyReason {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            DenyReason::NotRequested { url, reason } => {
                write!(f, "not requested: {url}: ")?;
                match reason {
                    fetch::SkipReason::Disallowed {
                        robots_url,
                        line,
                        rule,
                    } => write!(f, "disallowed by {robots_url} line {line} ({rule})"),
                    fetch::SkipReason::RobotsUnreachable { robots_url, source } => {
                        write!(f, "{robots_url} not usable ({source:?})")
                    }
                    fetch::SkipReason::Pacing(skip) => write!(f, "no turn of the origin: {skip:?}"),
                    fetch::SkipReason::OutOfScope => write!(f, "a redirect out of scope"),
                    fetch::SkipReason::NotFetchable => write!(f, "not an http(s) URL with a host"),
                }
            }
            DenyReason::Failed { error } => write!(f, "failed: {}", error.full_message()),
            DenyReason::TimeBudget => write!(f, "the page's time budget ran out"),
            DenyReason::ByteBudget => write!(f, "the page's byte budget is spent"),
            DenyReason::MediaElsewhere => {
                write!(
                    f,
                    "media go to the crawler's media pipeline (fetched once, stored)"
                )
            }
            DenyReason::OutOfScope => write!(f, "out of the crawl's scope"),
        }
    }
}

/// Decides every request a rendered page makes (other than the page's own document, which
/// the caller already fetched), and makes the allowed ones.
///
/// The crawler's gate checks robots.txt (fetching it first), waits for the origin's turn,
/// sends with JittyBot's User-Agent and records the exchange for the archive.
pub trait RequestGate: Send + Sync + 'static {
    /// Decide `request`; answer before `request.deadline`.
    fn decide(&self, request: SubRequest) -> impl Future<Output = Decision> + Send;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn devtools_types_map_to_kinds_and_media_rules() {
        assert_eq!(ResourceKind::from_devtools("XHR"), ResourceKind::Data);
        assert_eq!(ResourceKind::from_devtools("Fetch"), ResourceKind::Data);
        assert_eq!(ResourceKind::from_devtools("Image"), ResourceKind::Image);
        assert_eq!(ResourceKind::from_devtools("Ping"), ResourceKind::Other);
        assert!(ResourceKind::Image.is_media());
        assert!(ResourceKind::Media.is_media());
        assert!(!ResourceKind::Script.is_media());
        assert!(!ResourceKind::Font.is_media());
    }

    #[test]
    fn deny_reasons_read_as_text() {
        let url = Url::parse("https://a.test/x").unwrap();
        let robots_url = Url::parse("https://a.test/robots.txt").unwrap();
        let disallowed = DenyReason::NotRequested {
            url,
            reason: fetch::SkipReason::Disallowed {
                robots_url,
                line: 2,
                rule: "Disallow: /x".into(),
            },
        };
        assert_eq!(
            disallowed.to_string(),
            "not requested: https://a.test/x: disallowed by https://a.test/robots.txt line 2 (Disallow: /x)"
        );
        assert_eq!(
            DenyReason::ByteBudget.to_string(),
            "the page's byte budget is spent"
        );
    }
}
