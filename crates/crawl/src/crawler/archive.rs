//! WARC records of what was exchanged, encoded by the worker that made the request.
//!
//! The payload of a `response` record is the body **as received** (content-coded, matching
//! the `Content-Encoding` header archived with it) when the fetcher kept it whole; otherwise
//! (robots.txt, which the fetcher decodes; a body cut at its cap) the decoded body, and the
//! record carries the extension field `JittyBot-Payload-Decoded: <coding>` so a reader knows
//! the `Content-Encoding` header no longer applies. A body cut at its cap is marked
//! `WARC-Truncated: length`; a redirect's body, which is never read, `WARC-Truncated:
//! unspecified` with an empty payload.
//!
//! This is the one archiving path: every exchange a crawl makes (pages, media, sitemaps,
//! robots.txt fetches on the way or as probes, redirect hops, a rendered page's
//! sub-requests) is recorded by [`Archive::trail`], [`Archive::robots_fetch`] or
//! [`Archive::exchange`] with a [`Payload`] made by [`Payload::of_body`] or
//! [`Payload::of_robots`].

use fetch::{ContentCoding, HopRecord, HopRequest, ResponseHead, RobotsFetch, Trail};

use warc::{
    encode_member, http_request_block, http_response_head, RecordId, RecordKind, WarcRecord,
};

/// The encoded records of one URL's work, in order.
#[derive(Debug, Default)]
pub(crate) struct Archive {
    /// gzip members, ready for the writer.
    pub(crate) members: Vec<Vec<u8>>,
    /// Which member is the URL's own response (or revisit), for its stored location.
    pub(crate) main: Option<usize>,
    /// That record's id.
    pub(crate) main_id: Option<String>,
    /// That record's payload digest, when it has a payload (reused as the content hash when
    /// the payload is the decoded body: one SHA-1 pass fewer per page).
    pub(crate) main_payload_digest: Option<String>,
    /// Time spent building and compressing records.
    pub(crate) encode_nanos: u64,
}

/// Encode a record, adding the time it took to `nanos`.
fn encode(record: &WarcRecord<'_>, nanos: &mut u64) -> Vec<u8> {
    let started = std::time::Instant::now();
    let member = encode_member(record);
    *nanos += started.elapsed().as_nanos() as u64;
    member
}

/// A response payload and how it relates to the archived headers.
pub(crate) struct Payload<'a> {
    pub(crate) bytes: &'a [u8],
    /// The coding removed from `bytes` (`None`: as received).
    pub(crate) decoded_from: Option<String>,
    pub(crate) truncated: bool,
}

impl<'a> Payload<'a> {
    /// The payload of a fetched body: as received when the fetcher kept it whole, else
    /// decoded (and marked so).
    pub(crate) fn of_body(body: &'a fetch::Body) -> Payload<'a> {
        match &body.raw {
            Some(raw) if !body.truncated && raw.len() as u64 == body.raw_bytes => Payload {
                bytes: raw,
                decoded_from: None,
                truncated: false,
            },
            _ => Payload {
                bytes: &body.bytes,
                decoded_from: coding_name(&body.coding),
                truncated: body.truncated,
            },
        }
    }

    /// The payload of a robots.txt fetch answered by `head`: fetch keeps only the decoded
    /// file, so the coding its `Content-Encoding` names is marked as removed.
    pub(crate) fn of_robots(fetched: &'a RobotsFetch, head: &ResponseHead) -> Payload<'a> {
        Payload {
            bytes: &fetched.body,
            decoded_from: head
                .headers
                .get(http::header::CONTENT_ENCODING)
                .and_then(|v| v.to_str().ok())
                .map(str::trim)
                .filter(|v| !v.is_empty() && !v.eq_ignore_ascii_case("identity"))
                .map(str::to_ascii_lowercase),
            truncated: fetched.truncated,
        }
    }
}

fn request_block(request: &HopRequest) -> Vec<u8> {
    let target = match request.url.query() {
        Some(q) => format!("{}?{q}", request.url.path()),
        None => request.url.path().to_string(),
    };
    http_request_block(
        request.method.as_http().as_str(),
        &target,
        "HTTP/1.1",
        request
            .headers
            .iter()
            .map(|(n, v)| (n.as_str(), v.as_bytes())),
    )
}

fn response_block_head(head: &ResponseHead) -> Vec<u8> {
    let version = match head.version {
        http::Version::HTTP_10 => "HTTP/1.0",
        http::Version::HTTP_2 => "HTTP/2",
        http::Version::HTTP_3 => "HTTP/3",
        _ => "HTTP/1.1",
    };
    http_response_head(
        version,
        head.status.as_u16(),
        head.status.canonical_reason().unwrap_or(""),
        head.headers.iter().map(|(n, v)| (n.as_str(), v.as_bytes())),
    )
}

/// The coding named by the response's `Content-Encoding` when it is not identity.
pub(crate) fn coding_name(coding: &ContentCoding) -> Option<String> {
    match coding {
        ContentCoding::Identity => None,
        other => Some(format!("{other:?}").to_ascii_lowercase()),
    }
}

impl Archive {
    /// A robots.txt fetch: each hop as a request/response pair, the last (when it was
    /// answered) with the file as payload.
    pub(crate) fn robots_fetch(&mut self, fetched: &RobotsFetch) {
        let last = fetched.exchanges.len().saturating_sub(1);
        for (i, hop) in fetched.exchanges.iter().enumerate() {
            let payload = (i == last && fetched.status.is_some())
                .then(|| Payload::of_robots(fetched, &hop.head));
            self.exchange(hop, payload, false);
        }
    }

    /// What a polite request did on the way: its robots.txt fetches and its redirect hops
    /// (every hop but the final one when that one was fetched: the caller archives it with
    /// its body).
    pub(crate) fn trail(&mut self, trail: &Trail, final_hop_fetched: bool) {
        for fetched in &trail.robots_fetches {
            self.robots_fetch(fetched);
        }
        let redirects = trail
            .exchanges
            .len()
            .saturating_sub(usize::from(final_hop_fetched));
        for hop in &trail.exchanges[..redirects] {
            self.exchange(hop, None, false);
        }
    }

    /// A request/response pair for one hop. `payload: None` means the body was not read.
    pub(crate) fn exchange(&mut self, hop: &HopRecord, payload: Option<Payload<'_>>, main: bool) {
        let uri = hop.request.url.as_str();
        let ip = hop.head.remote_addr.map(|a| a.ip());
        let head = response_block_head(&hop.head);
        let mut response = WarcRecord::new(RecordKind::Response, hop.sent_at);
        response.target_uri = Some(uri);
        response.ip = ip;
        response.content_type = Some("application/http;msgtype=response");
        match &payload {
            Some(p) => {
                response.block = vec![&head, p.bytes];
                response.payload_parts = Some(1..2);
                let digest = payload_digest(p.bytes);
                if main {
                    self.main_payload_digest = Some(digest.clone());
                }
                response.payload_digest = Some(digest);
                if let Some(coding) = &p.decoded_from {
                    response
                        .fields
                        .push(("JittyBot-Payload-Decoded", coding.clone()));
                }
                if p.truncated {
                    response.fields.push(("WARC-Truncated", "length".into()));
                }
            }
            None => {
                response.block = vec![&head];
                response.payload_parts = Some(1..1);
                response
                    .fields
                    .push(("WARC-Truncated", "unspecified".into()));
            }
        }
        let block = request_block(&hop.request);
        let mut request = WarcRecord::new(RecordKind::Request, hop.sent_at);
        request.target_uri = Some(uri);
        request.ip = ip;
        request.content_type = Some("application/http;msgtype=request");
        request.block = vec![&block];
        request
            .fields
            .push(("WARC-Concurrent-To", response.id.as_str().to_string()));
        self.members.push(encode(&request, &mut self.encode_nanos));
        if main {
            self.main = Some(self.members.len());
            self.main_id = Some(response.id.as_str().to_string());
        }
        self.members.push(encode(&response, &mut self.encode_nanos));
    }

    /// A `revisit` for a 304 (server-not-modified), referring to the stored response.
    pub(crate) fn not_modified(&mut self, hop: &HopRecord, refers_to: Option<&str>) {
        let uri = hop.request.url.as_str();
        let head = response_block_head(&hop.head);
        let mut revisit = WarcRecord::new(RecordKind::Revisit, hop.sent_at);
        revisit.target_uri = Some(uri);
        revisit.ip = hop.head.remote_addr.map(|a| a.ip());
        revisit.content_type = Some("application/http;msgtype=response");
        revisit.block = vec![&head];
        revisit
            .fields
            .push(("WARC-Profile", warc::REVISIT_PROFILE_NOT_MODIFIED.into()));
        if let Some(id) = refers_to {
            revisit.fields.push(("WARC-Refers-To", id.to_string()));
        }
        revisit
            .fields
            .push(("WARC-Refers-To-Target-URI", uri.to_string()));
        let block = request_block(&hop.request);
        let mut request = WarcRecord::new(RecordKind::Request, hop.sent_at);
        request.target_uri = Some(uri);
        request.ip = revisit.ip;
        request.content_type = Some("application/http;msgtype=request");
        request.block = vec![&block];
        request
            .fields
            .push(("WARC-Concurrent-To", revisit.id.as_str().to_string()));
        self.members.push(encode(&request, &mut self.encode_nanos));
        self.main = Some(self.members.len());
        self.main_id = Some(revisit.id.as_str().to_string());
        self.members.push(encode(&revisit, &mut self.encode_nanos));
    }

    /// A `revisit` for media whose bytes are already stored under another URL
    /// (identical-payload-digest), instead of storing them again.
    pub(crate) fn duplicate(&mut self, hop: &HopRecord, digest_of: &[u8]) {
        let uri = hop.request.url.as_str();
        let head = response_block_head(&hop.head);
        let mut revisit = WarcRecord::new(RecordKind::Revisit, hop.sent_at);
        revisit.target_uri = Some(uri);
        revisit.ip = hop.head.remote_addr.map(|a| a.ip());
        revisit.content_type = Some("application/http;msgtype=response");
        revisit.block = vec![&head];
        revisit.fields.push((
            "WARC-Profile",
            warc::REVISIT_PROFILE_IDENTICAL_PAYLOAD.into(),
        ));
        revisit
            .fields
            .push(("WARC-Payload-Digest", payload_digest(digest_of)));
        self.main = Some(self.members.len());
        self.main_id = Some(revisit.id.as_str().to_string());
        self.members.push(encode(&revisit, &mut self.encode_nanos));
    }

    /// A `metadata` record only (a noindex page: the fetch is recorded, its content not kept).
    pub(crate) fn metadata_only(&mut self, hop: &HopRecord, fields: &str) {
        let mut meta = WarcRecord::new(RecordKind::Metadata, hop.sent_at);
        meta.target_uri = Some(hop.request.url.as_str());
        meta.content_type = Some("application/warc-fields");
        meta.block = vec![fields.as_bytes()];
        self.main = Some(self.members.len());
        self.main_id = Some(meta.id.as_str().to_string());
        self.members.push(encode(&meta, &mut self.encode_nanos));
    }
}

/// `sha1:BASE32` of bytes (WARC's payload digest; also the media content hash).
pub(crate) fn payload_digest(bytes: &[u8]) -> String {
    warc::payload_digest(bytes)
}

/// A fresh record id (for records built elsewhere).
#[allow(dead_code)]
pub(crate) fn record_id() -> RecordId {
    RecordId::new()
}
