//! One WARC record: its named fields and its block, serialised per WARC 1.1.

use std::fmt::Write as _;
use std::net::IpAddr;

use data_encoding::BASE32;
use jiff::Timestamp;
use sha1::{Digest, Sha1};

/// `WARC-Profile` of a revisit record for a `304 Not Modified`.
pub const REVISIT_PROFILE_NOT_MODIFIED: &str =
    "http://netpreserve.org/warc/1.1/revisit/server-not-modified";
/// `WARC-Profile` of a revisit record for a payload already archived under another URL.
pub const REVISIT_PROFILE_IDENTICAL_PAYLOAD: &str =
    "http://netpreserve.org/warc/1.1/revisit/identical-payload-digest";

/// A record id, `<urn:uuid:...>`.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct RecordId(String);

impl RecordId {
    /// A fresh random id.
    pub fn new() -> RecordId {
        RecordId(format!("<urn:uuid:{}>", uuid::Uuid::new_v4()))
    }

    /// The id as written, angle brackets included.
    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// An id read back from a store.
    pub fn from_stored(text: String) -> RecordId {
        RecordId(text)
    }
}

impl Default for RecordId {
    fn default() -> Self {
        RecordId::new()
    }
}

/// The record types written.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RecordKind {
    /// `warcinfo`: about the file.
    Warcinfo,
    /// `request`: the HTTP request as sent.
    Request,
    /// `response`: the HTTP response.
    Response,
    /// `revisit`: a 304, pointing at the earlier response.
    Revisit,
    /// `metadata`: facts about another record (or a page kept as metadata only: noindex).
    Metadata,
    /// `resource`: content not from an HTTP exchange.
    Resource,
    /// `conversion`: another form of an earlier record's content (a rendered DOM).
    Conversion,
}

impl RecordKind {
    fn name(self) -> &'static str {
        match self {
            RecordKind::Warcinfo => "warcinfo",
            RecordKind::Request => "request",
            RecordKind::Response => "response",
            RecordKind::Revisit => "revisit",
            RecordKind::Metadata => "metadata",
            RecordKind::Resource => "resource",
            RecordKind::Conversion => "conversion",
        }
    }
}

/// A record to write. The block is given in parts (e.g. an HTTP head and a payload) so the
/// payload need not be copied.
#[derive(Clone, Debug)]
pub struct WarcRecord<'a> {
    /// Its type.
    pub kind: RecordKind,
    /// Its id.
    pub id: RecordId,
    /// `WARC-Target-URI`.
    pub target_uri: Option<&'a str>,
    /// `WARC-Date`: when the capture began.
    pub date: Timestamp,
    /// `WARC-IP-Address`.
    pub ip: Option<IpAddr>,
    /// `Content-Type` of the block.
    pub content_type: Option<&'a str>,
    /// The block, in parts, written one after another.
    pub block: Vec<&'a [u8]>,
    /// Which parts of the block are the payload (for `WARC-Payload-Digest`), e.g. `1..2` for
    /// an HTTP response given as `[head, body]`. `None`: no payload digest.
    pub payload_parts: Option<std::ops::Range<usize>>,
    /// The payload digest (`sha1:BASE32`) when the caller already computed it from the
    /// payload parts (it needs it too, e.g. as a content hash): the payload is then hashed
    /// once, not twice. `None`: computed here.
    pub payload_digest: Option<String>,
    /// Further fields, written in order (`WARC-Concurrent-To`, `WARC-Refers-To`,
    /// `WARC-Profile`, `WARC-Truncated`, ...). Values must not contain CR or LF.
    pub fields: Vec<(&'static str, String)>,
}

impl<'a> WarcRecord<'a> {
    /// A record of `kind` with a fresh id, dated `date`, with no block yet.
    pub fn new(kind: RecordKind, date: Timestamp) -> WarcRecord<'a> {
        WarcRecord {
            kind,
            id: RecordId::new(),
            target_uri: None,
            date,
            ip: None,
            content_type: None,
            block: Vec::new(),
            payload_parts: None,
            payload_digest: None,
            fields: Vec::new(),
        }
    }

    /// The block's length.
    pub fn block_len(&self) -> usize {
        self.block.iter().map(|p| p.len()).sum()
    }

    /// The record's header (`WARC/1.1` ... blank line), digests computed from the block.
    pub fn header(&self) -> String {
        let mut h = String::with_capacity(512);
        h.push_str("WARC/1.1\r\n");
        let mut field = |name: &str, value: &str| {
            // Field values never carry line breaks: they would start a new field.
            let value: String = value
                .chars()
                .map(|c| if c == '\r' || c == '\n' { ' ' } else { c })
                .collect();
            let _ = write!(h, "{name}: {value}\r\n");
        };
        field("WARC-Type", self.kind.name());
        field("WARC-Record-ID", self.id.as_str());
        field(
            "WARC-Date",
            &self.date.strftime("%Y-%m-%dT%H:%M:%S%.fZ").to_string(),
        );
        if let Some(uri) = self.target_uri {
            field("WARC-Target-URI", uri);
        }
        if let Some(ip) = self.ip {
            field("WARC-IP-Address", &ip.to_string());
        }
        for (name, value) in &self.fields {
            field(name, value);
        }
        let mut block = Sha1::new();
        for part in &self.block {
            block.update(part);
        }
        field(
            "WARC-Block-Digest",
            &sha1_label(block.finalize().as_slice()),
        );
        if let Some(range) = &self.payload_parts {
            match &self.payload_digest {
                Some(digest) => field("WARC-Payload-Digest", digest),
                None => {
                    let mut payload = Sha1::new();
                    for part in self.block.get(range.clone()).unwrap_or_default() {
                        payload.update(part);
                    }
                    field(
                        "WARC-Payload-Digest",
                        &sha1_label(payload.finalize().as_slice()),
                    );
                }
            }
        }
        if let Some(ct) = self.content_type {
            field("Content-Type", ct);
        }
        field("Content-Length", &self.block_len().to_string());
        h.push_str("\r\n");
        h
    }
}

/// `sha1:` and the base32 digest, as WARC readers expect.
pub fn sha1_label(digest: &[u8]) -> String {
    format!("sha1:{}", BASE32.encode(digest))
}

/// The `WARC-Payload-Digest` of `payload`: `sha1:` and its base32 SHA-1.
pub fn payload_digest(payload: &[u8]) -> String {
    sha1_label(Sha1::digest(payload).as_slice())
}

/// An HTTP/1.1-style request block: `METHOD target HTTP/x`, the headers exactly as sent, and
/// the blank line (for requests without a body, such as GET and HEAD).
pub fn http_request_block<'h>(
    method: &str,
    target: &str,
    version: &str,
    headers: impl IntoIterator<Item = (&'h str, &'h [u8])>,
) -> Vec<u8> {
    let mut b = format!("{method} {target} {version}\r\n").into_bytes();
    push_headers(&mut b, headers);
    b
}

/// An HTTP response head: status line, the headers as received, the blank line. The payload
/// follows it in the record block.
pub fn http_response_head<'h>(
    version: &str,
    status: u16,
    reason: &str,
    headers: impl IntoIterator<Item = (&'h str, &'h [u8])>,
) -> Vec<u8> {
    let mut b = format!("{version} {status} {reason}\r\n").into_bytes();
    push_headers(&mut b, headers);
    b
}

fn push_headers<'h>(b: &mut Vec<u8>, headers: impl IntoIterator<Item = (&'h str, &'h [u8])>) {
    for (name, value) in headers {
        b.extend_from_slice(name.as_bytes());
        b.extend_from_slice(b": ");
        b.extend_from_slice(value);
        b.extend_from_slice(b"\r\n");
    }
    b.extend_from_slice(b"\r\n");
}
