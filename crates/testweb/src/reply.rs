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
    /// Answer conditional requests with `304` when the validators match ([`Reply::conditional`]).
    pub(crate) conditional: bool,
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
            conditional: false,
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

    /// A `200` `text/html` page: a site's home page in most tests.
    pub fn html(body: &str) -> Reply {
        Reply::ok().header("Content-Type", "text/html").body(body)
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

    /// Answers conditional requests as an origin server does (RFC 9110 §13.1–13.2):
    /// `If-None-Match` is compared with the reply's `ETag` (weak comparison, a list, or
    /// `*`); only when it is absent, `If-Modified-Since` with its `Last-Modified` (not
    /// modified when the stored date is not earlier). When the condition says "not
    /// modified", the answer is `304` with the reply's headers but no body (and no
    /// `Content-Encoding`/`Content-Length` of a body not sent). Without this, validators are
    /// ignored and the reply is sent as scripted.
    pub fn conditional(mut self) -> Reply {
        self.conditional = true;
        self
    }

    /// The reply to send for a request with these headers: `304 Not Modified` when the
    /// reply is [`conditional`](Reply::conditional) and the request's validators match.
    pub(crate) fn for_request(self, headers: &[(String, String)]) -> Reply {
        if !self.conditional || !(200..300).contains(&self.status) || !not_modified(&self, headers)
        {
            return self;
        }
        let mut reply = Reply::status(304);
        reply.headers = self
            .headers
            .iter()
            .filter(|(n, _)| {
                !n.eq_ignore_ascii_case("content-encoding")
                    && !n.eq_ignore_ascii_case("content-length")
            })
            .cloned()
            .collect();
        reply.delay = self.delay;
        reply
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

/// The first value of header `name` (names as the log keeps them: lower case).
fn header<'a>(headers: &'a [(String, String)], name: &str) -> Option<&'a str> {
    headers
        .iter()
        .find(|(n, _)| n.eq_ignore_ascii_case(name))
        .map(|(_, v)| v.as_str())
}

/// Whether the request's validators say the client's copy of `reply` is current.
fn not_modified(reply: &Reply, request: &[(String, String)]) -> bool {
    if let Some(list) = header(request, "if-none-match") {
        let Some(etag) = header(&reply.headers, "etag") else {
            return false;
        };
        let weak = |t: &str| t.trim().trim_start_matches("W/").to_owned();
        return list
            .split(',')
            .any(|t| t.trim() == "*" || weak(t) == weak(etag));
    }
    let (Some(since), Some(modified)) = (
        header(request, "if-modified-since"),
        header(&reply.headers, "last-modified"),
    ) else {
        return false;
    };
    match (
        httpdate::parse_http_date(since),
        httpdate::parse_http_date(modified),
    ) {
        (Ok(since), Ok(modified)) => modified <= since,
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn request(headers: &[(&str, &str)]) -> Vec<(String, String)> {
        headers
            .iter()
            .map(|(n, v)| (n.to_string(), v.to_string()))
            .collect()
    }

    #[test]
    fn a_conditional_reply_answers_304_when_the_validators_match() {
        let page = Reply::ok()
            .header("ETag", "\"v1\"")
            .header("Last-Modified", "Tue, 01 Dec 2026 10:00:00 GMT")
            .header("Content-Encoding", "gzip")
            .body("page")
            .conditional();
        let status = |h: &[(&str, &str)]| page.clone().for_request(&request(h)).status;
        assert_eq!(status(&[]), 200);
        assert_eq!(status(&[("if-none-match", "\"v1\"")]), 304);
        assert_eq!(status(&[("if-none-match", "\"v0\", W/\"v1\"")]), 304);
        assert_eq!(status(&[("if-none-match", "*")]), 304);
        assert_eq!(status(&[("if-none-match", "\"v2\"")]), 200);
        // If-None-Match present: If-Modified-Since is not looked at.
        assert_eq!(
            status(&[
                ("if-none-match", "\"v2\""),
                ("if-modified-since", "Tue, 01 Dec 2026 10:00:00 GMT")
            ]),
            200
        );
        assert_eq!(
            status(&[("if-modified-since", "Tue, 01 Dec 2026 10:00:00 GMT")]),
            304
        );
        assert_eq!(
            status(&[("if-modified-since", "Wed, 02 Dec 2026 10:00:00 GMT")]),
            304
        );
        assert_eq!(
            status(&[("if-modified-since", "Mon, 30 Nov 2026 10:00:00 GMT")]),
            200
        );
        assert_eq!(status(&[("if-modified-since", "garbage")]), 200);
        let answer = page
            .clone()
            .for_request(&request(&[("if-none-match", "\"v1\"")]));
        assert!(answer.body.is_empty());
        assert!(answer.headers.iter().any(|(n, _)| n == "ETag"));
        assert!(!answer.headers.iter().any(|(n, _)| n == "Content-Encoding"));
        // Not conditional: validators are ignored.
        let plain = Reply::ok().header("ETag", "\"v1\"");
        assert_eq!(
            plain
                .for_request(&request(&[("if-none-match", "\"v1\"")]))
                .status,
            200
        );
    }
}
