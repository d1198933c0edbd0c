//! What the fetcher tells an observer about every request it sends (the crawler's metrics):
//! one call per hop answered or failed, one per body read. Observed at the one place every
//! request goes through ([`crate::Fetcher::send_hop`]), so the counts are what servers saw.

use std::fmt;
use std::sync::Arc;

use http::StatusCode;

use crate::error::FetchError;
use crate::tap::{RawTap, SharedTap};

/// What a request is for, as the caller labels it ([`crate::Request::kind`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum RequestKind {
    /// A page (and anything not labelled otherwise).
    #[default]
    Page,
    /// A robots.txt file.
    Robots,
    /// A sitemap.
    Sitemap,
    /// An image or other media file.
    Media,
}

impl RequestKind {
    /// Every kind, in order.
    pub const ALL: [RequestKind; 4] = [
        RequestKind::Page,
        RequestKind::Robots,
        RequestKind::Sitemap,
        RequestKind::Media,
    ];

    /// Its name: `page`, `robots`, `sitemap`, `media`.
    pub fn name(self) -> &'static str {
        match self {
            RequestKind::Page => "page",
            RequestKind::Robots => "robots",
            RequestKind::Sitemap => "sitemap",
            RequestKind::Media => "media",
        }
    }
}

impl fmt::Display for RequestKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// Told about every request a [`crate::Fetcher`] sends. Called on the request's task: keep
/// it cheap (count, do not wait).
pub trait Observer: Send + Sync + fmt::Debug {
    /// A request of `kind` was answered (its response head arrived, with `Ok(status)`) or
    /// failed without an answer (`Err`: refused, reset, timed out, ...).
    fn answered(&self, kind: RequestKind, answer: Result<StatusCode, &FetchError>);
    /// A response body to a request of `kind` was read (or dropped): `bytes` came on the
    /// wire.
    fn body_read(&self, kind: RequestKind, bytes: u64);
}

/// Reports a body's bytes on the wire when the reader holding it is dropped.
pub(crate) struct BodyReport {
    pub(crate) observer: Arc<dyn Observer>,
    pub(crate) kind: RequestKind,
    pub(crate) bytes: SharedTap,
}

impl Drop for BodyReport {
    fn drop(&mut self) {
        let bytes = RawTap::lock(&self.bytes).bytes();
        self.observer.body_read(self.kind, bytes);
    }
}
