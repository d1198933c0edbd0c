//! Scripted replies.

use std::io::Write;
use std::time::Duration;

use flate2::write::{DeflateEncoder, GzEncoder};
use flate2::Compression;

/// What the server does with a request, beyond answering it normally.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Action {
    /// Answer with the reply's status, headers and body.
    Respond,
    /// Reset the TCP connection (RST) instead of answering.
    Reset,
    /// Write these bytes on the raw connection instead of an HTTP response, then close it
    /// (plain HTTP only): for malformed responses.
    Raw(Vec<u8>),
}

/// One scripted reply.
#[derive(Debug, Clone)]
pub struct Reply {
    pub(crate) status: u16,
    pub(crate) headers: Vec<(String, String)>,
    pub(crate) body: Vec<u8>,
    pub(crate) delay: Duration,
    pub(crate) drip: Option<Drip>,
    pub(crate) action: Action,
}

/// A body sent a piece at a time.
#[derive(Debug, Clone)]
pub(crate) struct Drip {
    pub(crate) chunk: Vec<u8>,
    pub(crate) every: Duration,
    pub(crate) count: usize,
}

impl Reply {
    /// An empty reply with `status`.
    pub fn status(status: u16) -> Reply {
        Reply {
            status,
            headers: Vec::new(),
            body: Vec::new(),
            delay: Duration::ZERO,
            drip: None,
            action: Action::Respond,
        }
    }

    /// `200` with an empty body.
    pub fn ok() -> Reply {
        Reply::status(200)
    }

    /// A `text/plain` robots.txt.
    pub fn robots_txt(text: &str) -> Reply {
        Reply::ok().header("Content-Type", "text/plain").body(text)
    }

    /// A redirect with `status` to `location`.
    pub fn redirect(status: u16, location: &str) -> Reply {
        Reply::status(status).header("Location", location)
    }

    /// Resets the connection instead of answering.
    pub fn reset() -> Reply {
        Reply {
            action: Action::Reset,
            ..Reply::status(0)
        }
    }

    /// Writes `bytes` instead of a valid HTTP response.
    pub fn raw(bytes: &[u8]) -> Reply {
        Reply {
            action: Action::Raw(bytes.to_vec()),
            ..Reply::status(0)
        }
    }

    /// Adds a header; repeated names are all sent.
    pub fn header(mut self, name: &str, value: &str) -> Reply {
        self.headers.push((name.to_owned(), value.to_owned()));
        self
    }

    /// Sets the body.
    pub fn body(mut self, body: impl AsRef<[u8]>) -> Reply {
        self.body = body.as_ref().to_vec();
        self
    }

    /// Waits this long before sending the headers.
    pub fn delay(mut self, delay: Duration) -> Reply {
        self.delay = delay;
        self
    }

    /// Sends the body as `count` copies of `chunk`, one every `every` (after the headers):
    /// a slow-drip server.
    pub fn drip(mut self, chunk: &[u8], every: Duration, count: usize) -> Reply {
        self.drip = Some(Drip {
            chunk: chunk.to_vec(),
            every,
            count,
        });
        self
    }

    /// Gzips the body and says so (`Content-Encoding: gzip`).
    pub fn gzip(mut self) -> Reply {
        let mut encoder = GzEncoder::new(Vec::new(), Compression::best());
        // Writing to a Vec cannot fail.
        let _ = encoder.write_all(&self.body);
        self.body = encoder.finish().unwrap_or_default();
        self.header("Content-Encoding", "gzip")
    }

    /// Deflates the body (zlib) and says so (`Content-Encoding: deflate`).
    pub fn deflate(mut self) -> Reply {
        let mut encoder = flate2::write::ZlibEncoder::new(Vec::new(), Compression::best());
        let _ = encoder.write_all(&self.body);
        self.body = encoder.finish().unwrap_or_default();
        self.header("Content-Encoding", "deflate")
    }

    /// A gzip bomb: `decompressed_bytes` zeros, compressed to about a thousandth of that.
    pub fn gzip_bomb(decompressed_bytes: usize) -> Reply {
        let mut encoder = GzEncoder::new(Vec::new(), Compression::best());
        let zeros = vec![0u8; 64 * 1024];
        let mut left = decompressed_bytes;
        while left > 0 {
            let n = left.min(zeros.len());
            let _ = encoder.write_all(&zeros[..n]);
            left -= n;
        }
        Reply::ok()
            .header("Content-Type", "text/plain")
            .header("Content-Encoding", "gzip")
            .body(encoder.finish().unwrap_or_default())
    }

    /// A raw deflate stream (no zlib header), which some servers send as `deflate`.
    pub fn raw_deflate(mut self) -> Reply {
        let mut encoder = DeflateEncoder::new(Vec::new(), Compression::best());
        let _ = encoder.write_all(&self.body);
        self.body = encoder.finish().unwrap_or_default();
        self.header("Content-Encoding", "deflate")
    }
}
