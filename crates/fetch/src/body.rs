//! Reading a body: decoded here (never by the client) with a capped streaming decoder, so the
//! cap holds on the decoded stream and a compression bomb stops at the cap; bounded in time by
//! the operation's deadline and a minimum transfer rate.

use std::io;
use std::sync::Arc;
use std::time::Duration;

use async_compression::tokio::bufread::{BrotliDecoder, DeflateDecoder, GzipDecoder, ZlibDecoder};
use bytes::{BufMut, Bytes, BytesMut};
use futures_util::{stream, StreamExt};
use http::HeaderMap;
use tokio::io::{AsyncRead, AsyncReadExt};
use tokio::time::Instant;
use tokio_util::io::StreamReader;

use crate::config::MinTransferRate;
use crate::deadline::Deadline;
use crate::error::{Cause, FetchError, TimeoutPhase};
use crate::http::RawBody;
use crate::tap::{RawTap, SharedTap};

/// Largest piece read from the decoder at once: with the cap, what bounds the memory a bomb
/// can make the reader allocate.
pub const READ_CHUNK_BYTES: usize = 16 * 1024;
/// The `Accept-Encoding` sent on every request: the codings [`BodyReader`] decodes.
pub const ACCEPT_ENCODING: &str = "gzip, deflate, br";

/// A body's content coding, from its `Content-Encoding` header.
#[derive(Debug, Clone, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case", tag = "coding", content = "name")]
pub enum ContentCoding {
    /// None (or `identity`).
    Identity,
    /// `gzip` (or `x-gzip`).
    Gzip,
    /// `deflate`, zlib-wrapped (RFC 1950) or raw (RFC 1951) as some servers send it: told
    /// apart by the first two bytes.
    Deflate,
    /// `br`.
    Brotli,
    /// A coding that was not asked for (`zstd`, `compress`, several stacked, unknown): the
    /// body is passed on as received, undecoded, and must not be read as text.
    Unsupported(String),
}

impl ContentCoding {
    /// The coding `headers` declare.
    pub fn of(headers: &HeaderMap) -> ContentCoding {
        let values: Vec<String> = headers
            .get_all(http::header::CONTENT_ENCODING)
            .iter()
            .flat_map(|value| {
                String::from_utf8_lossy(value.as_bytes())
                    .split(',')
                    .map(|s| s.trim().to_ascii_lowercase())
                    .collect::<Vec<_>>()
            })
            .filter(|coding| !coding.is_empty() && coding != "identity")
            .collect();
        match values.as_slice() {
            [] => ContentCoding::Identity,
            [one] => match one.as_str() {
                "gzip" | "x-gzip" => ContentCoding::Gzip,
                "deflate" => ContentCoding::Deflate,
                "br" => ContentCoding::Brotli,
                _ => ContentCoding::Unsupported(one.clone()),
            },
            _ => ContentCoding::Unsupported(values.join(", ")),
        }
    }

    /// True for a coding this crate decodes.
    pub fn is_supported(&self) -> bool {
        !matches!(self, ContentCoding::Unsupported(_))
    }
}

/// What reading stopped at, and the counts, once a body is read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Body {
    /// The decoded bytes kept (at most the cap); undecoded for an unsupported coding.
    pub bytes: Vec<u8>,
    /// True when the decoded body was longer than the cap and was cut.
    pub truncated: bool,
    /// True when reading stopped after the caller's stop marker.
    pub stopped_at_marker: bool,
    /// Decoded bytes read (at most the cap plus one byte).
    pub decoded_bytes: u64,
    /// Bytes received on the wire (content-coded).
    pub raw_bytes: u64,
    /// The content coding.
    pub coding: ContentCoding,
    /// The bytes as received, when asked for (`keep_raw`), up to the raw cap; `None` for a
    /// body without a content coding, whose `bytes` are the bytes as received (keeping a
    /// second copy cost a copy of every page).
    pub raw: Option<Vec<u8>>,
}

/// Reads a body: decoded chunks, capped, within the deadline and the minimum rate.
pub struct BodyReader {
    source: Source,
    coding: ContentCoding,
    cap: usize,
    decoded: u64,
    truncated: bool,
    done: bool,
    deadline: Deadline,
    rate: MinTransferRate,
    window_end: Option<Instant>,
    window_bytes: u64,
    host: String,
    tap: SharedTap,
    /// The announced length of an uncoded body, within the cap (0: unknown).
    size_hint: usize,
    /// Held while the body is read (the pacer's permit: one request in flight per origin).
    _guard: Option<Box<dyn Send + Sync>>,
    /// Tells the fetcher's observer the bytes read, when dropped.
    _report: Option<crate::observe::BodyReport>,
}

enum Source {
    /// `deflate` not yet told apart: the raw stream.
    PendingDeflate(RawBody),
    Reader(Box<dyn AsyncRead + Send + Unpin>),
    Empty,
}

impl std::fmt::Debug for BodyReader {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("BodyReader")
            .field("coding", &self.coding)
            .field("cap", &self.cap)
            .field("decoded", &self.decoded)
            .field("truncated", &self.truncated)
            .finish_non_exhaustive()
    }
}

type IoStream = std::pin::Pin<Box<dyn futures_util::Stream<Item = io::Result<Bytes>> + Send>>;

fn io_stream(raw: RawBody, tap: &SharedTap) -> IoStream {
    let tap = Arc::clone(tap);
    Box::pin(raw.map(move |chunk| {
        if let Ok(bytes) = &chunk {
            RawTap::lock(&tap).record(bytes);
        }
        chunk.map_err(io::Error::other)
    }))
}

fn reader_for(
    coding: &ContentCoding,
    raw: IoStream,
    zlib: bool,
) -> Box<dyn AsyncRead + Send + Unpin> {
    let buffered = StreamReader::new(raw);
    match coding {
        ContentCoding::Gzip => {
            let mut decoder = GzipDecoder::new(buffered);
            decoder.multiple_members(true);
            Box::new(decoder)
        }
        ContentCoding::Deflate if zlib => Box::new(ZlibDecoder::new(buffered)),
        ContentCoding::Deflate => Box::new(DeflateDecoder::new(buffered)),
        ContentCoding::Brotli => Box::new(BrotliDecoder::new(buffered)),
        ContentCoding::Identity | ContentCoding::Unsupported(_) => Box::new(buffered),
    }
}

/// True when `prefix` starts a zlib stream (RFC 1950: method 8, window ≤ 32 KiB, check bits).
fn is_zlib(prefix: &[u8]) -> bool {
    match prefix {
        [cmf, flg, ..] => {
            cmf & 0x0f == 8 && cmf >> 4 <= 7 && (u16::from(*cmf) << 8 | u16::from(*flg)) % 31 == 0
        }
        _ => false,
    }
}

/// Options of one body read.
#[derive(Debug, Clone)]
pub(crate) struct ReadLimits {
    pub(crate) cap: usize,
    pub(crate) deadline: Deadline,
    pub(crate) rate: MinTransferRate,
    pub(crate) keep_raw: Option<usize>,
}

impl BodyReader {
    pub(crate) fn new(
        raw: RawBody,
        headers: &HeaderMap,
        host: &str,
        limits: ReadLimits,
    ) -> BodyReader {
        let coding = ContentCoding::of(headers);
        // Without a content coding the decoded bytes are the bytes as received: no copy kept.
        let keep_raw = limits
            .keep_raw
            .filter(|_| coding != ContentCoding::Identity);
        // A body whose length is announced is read into one buffer of that size (at most the
        // cap and the byte past it) instead of a buffer grown and copied while reading.
        let size_hint = match coding {
            ContentCoding::Identity => headers
                .get(http::header::CONTENT_LENGTH)
                .and_then(|v| v.to_str().ok()?.trim().parse::<usize>().ok())
                // One byte more: the read that finds the end needs room, and growing the
                // buffer for it would copy the whole body.
                .map_or(0, |length| {
                    length.min(limits.cap.saturating_add(1)).saturating_add(1)
                }),
            _ => 0,
        };
        let tap = RawTap::shared(keep_raw);
        let source = match coding {
            ContentCoding::Deflate => Source::PendingDeflate(raw),
            _ => Source::Reader(reader_for(&coding, io_stream(raw, &tap), false)),
        };
        BodyReader {
            source,
            coding,
            cap: limits.cap,
            decoded: 0,
            truncated: false,
            done: false,
            deadline: limits.deadline,
            rate: limits.rate,
            window_end: None,
            window_bytes: 0,
            host: host.to_owned(),
            tap,
            size_hint,
            _guard: None,
            _report: None,
        }
    }

    /// A reader that yields nothing (HEAD, or a body not wanted).
    pub(crate) fn empty(headers: &HeaderMap, deadline: Deadline) -> BodyReader {
        let mut reader = BodyReader::new(
            Box::pin(stream::empty()),
            headers,
            "",
            ReadLimits {
                cap: 0,
                deadline,
                rate: MinTransferRate {
                    bytes: 0,
                    window: Duration::from_secs(1),
                },
                keep_raw: None,
            },
        );
        reader.source = Source::Empty;
        reader.done = true;
        reader
    }

    /// Keeps `guard` alive until the reader is dropped.
    /// Reports the bytes read to `observer` when this reader is dropped.
    pub(crate) fn report_to(
        &mut self,
        observer: std::sync::Arc<dyn crate::observe::Observer>,
        kind: crate::observe::RequestKind,
    ) {
        self._report = Some(crate::observe::BodyReport {
            observer,
            kind,
            bytes: Arc::clone(&self.tap),
        });
    }

    pub(crate) fn hold(&mut self, guard: Box<dyn Send + Sync>) {
        self._guard = Some(guard);
    }

    /// The body's content coding.
    pub fn coding(&self) -> &ContentCoding {
        &self.coding
    }

    /// True once the decoded body went past the cap (the rest is not read).
    pub fn truncated(&self) -> bool {
        self.truncated
    }

    /// Decoded bytes read so far.
    pub fn decoded_bytes(&self) -> u64 {
        self.decoded
    }

    /// Bytes received so far, as sent (content-coded).
    pub fn raw_bytes(&self) -> u64 {
        RawTap::lock(&self.tap).bytes()
    }

    /// The next decoded chunk (at most [`READ_CHUNK_BYTES`]), or `None` at the end of the
    /// body or at the cap ([`BodyReader::truncated`] tells which).
    pub async fn chunk(&mut self) -> Result<Option<Bytes>, FetchError> {
        let mut buffer = Vec::new();
        match self.read_into(&mut buffer).await? {
            0 => Ok(None),
            // The vector becomes the chunk as it is (no copy).
            _ => Ok(Some(Bytes::from(buffer))),
        }
    }

    /// Appends the next decoded piece (at most [`READ_CHUNK_BYTES`]) to `out`, without
    /// zeroing or copying it again; returns its length, 0 at the end of the body or at the
    /// cap. Reading a whole body into one buffer this way spares a buffer and a copy per
    /// piece (the crawler reads every page whole).
    async fn read_into(&mut self, out: &mut Vec<u8>) -> Result<usize, FetchError> {
        if self.done {
            return Ok(0);
        }
        let room = self.cap.saturating_sub(self.decoded as usize);
        // One byte past the cap tells a body of exactly the cap from a longer one.
        let want = READ_CHUNK_BYTES.min(room + 1);
        let start = out.len();
        loop {
            let window_end = *self
                .window_end
                .get_or_insert_with(|| Instant::now() + self.rate.window);
            let limit = window_end.min(self.deadline.instant());
            let read = tokio::time::timeout_at(limit, self.read(out, want)).await;
            let now = Instant::now();
            let n = match read {
                Ok(result) => Some(result?),
                Err(_) if now >= self.deadline.instant() => {
                    return Err(FetchError::timeout(TimeoutPhase::Deadline))
                }
                Err(_) => None,
            };
            if let Some(n) = n {
                self.window_bytes += n as u64;
            }
            if now >= window_end {
                if self.window_bytes < self.rate.bytes {
                    return Err(FetchError::timeout(TimeoutPhase::Transfer));
                }
                self.window_end = Some(now + self.rate.window);
                self.window_bytes = 0;
            }
            let Some(n) = n else { continue };
            if n == 0 {
                self.done = true;
                return Ok(0);
            }
            self.decoded += n as u64;
            if n > room {
                self.truncated = true;
                self.done = true;
                out.truncate(start + room);
            }
            return Ok(out.len() - start);
        }
    }

    /// Appends at most `want` decoded bytes to `buffer` (its spare capacity is read into as
    /// it is, not zeroed first).
    async fn read(&mut self, buffer: &mut Vec<u8>, want: usize) -> Result<usize, FetchError> {
        if let Source::PendingDeflate(_) = self.source {
            self.tell_deflate_apart().await?;
        }
        // Room left in the buffer is used first (a presized body fills it exactly); it grows
        // by a piece only when full.
        if buffer.capacity() == buffer.len() {
            buffer.reserve(want);
        }
        let room = (buffer.capacity() - buffer.len()).min(want);
        let result = match &mut self.source {
            Source::Reader(reader) => reader.read_buf(&mut buffer.limit(room)).await,
            Source::Empty | Source::PendingDeflate(_) => Ok(0),
        };
        result.map_err(|error| self.io_error(error))
    }

    /// Reads up to two bytes of a `deflate` body to choose zlib or raw deflate.
    async fn tell_deflate_apart(&mut self) -> Result<(), FetchError> {
        let Source::PendingDeflate(mut raw) = std::mem::replace(&mut self.source, Source::Empty)
        else {
            return Ok(());
        };
        let mut prefix = BytesMut::new();
        while prefix.len() < 2 {
            match raw.next().await {
                Some(chunk) => prefix.extend_from_slice(&chunk?),
                None => break,
            }
        }
        let zlib = is_zlib(&prefix);
        let rest: RawBody = Box::pin(stream::iter([Ok(prefix.freeze())]).chain(raw));
        self.source = Source::Reader(reader_for(&self.coding, io_stream(rest, &self.tap), zlib));
        Ok(())
    }

    fn io_error(&self, error: io::Error) -> FetchError {
        if let Some(fetch_error) = error
            .get_ref()
            .and_then(|inner| inner.downcast_ref::<FetchError>())
        {
            return fetch_error.clone();
        }
        // Anything else comes from the decoder: the body is not what its coding says.
        FetchError::MalformedResponse {
            host: self.host.clone(),
            source: Cause::new(error),
        }
    }

    /// Reads the rest of the body (up to the cap), stopping early after `stop_marker` (ASCII,
    /// case-insensitive) when given.
    pub async fn read_to_end(mut self, stop_marker: Option<&[u8]>) -> Result<Body, FetchError> {
        let mut bytes = Vec::with_capacity(self.size_hint);
        let mut stopped_at_marker = false;
        loop {
            let searched_from = bytes.len();
            if self.read_into(&mut bytes).await? == 0 {
                break;
            }
            if let Some(marker) = stop_marker.filter(|m| !m.is_empty()) {
                if let Some(end) = find_marker(&bytes, searched_from, marker) {
                    bytes.truncate(end);
                    stopped_at_marker = true;
                    break;
                }
            }
        }
        let mut tap = RawTap::lock(&self.tap);
        Ok(Body {
            bytes,
            truncated: self.truncated && !stopped_at_marker,
            stopped_at_marker,
            decoded_bytes: self.decoded,
            raw_bytes: tap.bytes(),
            coding: self.coding.clone(),
            // Taken, not copied: the reader is done with it.
            raw: tap.take_kept(),
        })
    }
}

/// Where `marker` ends in `body`, looking only at matches that end after `searched_from`
/// (earlier bytes were searched before).
pub(crate) fn find_marker(body: &[u8], searched_from: usize, marker: &[u8]) -> Option<usize> {
    let start = searched_from.saturating_sub(marker.len() - 1);
    body.get(start..)?
        .windows(marker.len())
        .position(|window| window.eq_ignore_ascii_case(marker))
        .map(|position| start + position + marker.len())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn headers(encoding: &str) -> HeaderMap {
        let mut headers = HeaderMap::new();
        headers.append(http::header::CONTENT_ENCODING, encoding.parse().unwrap());
        headers
    }

    #[test]
    fn codings_are_read_from_the_header() {
        assert_eq!(
            ContentCoding::of(&HeaderMap::new()),
            ContentCoding::Identity
        );
        assert_eq!(
            ContentCoding::of(&headers("identity")),
            ContentCoding::Identity
        );
        assert_eq!(ContentCoding::of(&headers("GZIP")), ContentCoding::Gzip);
        assert_eq!(ContentCoding::of(&headers("x-gzip")), ContentCoding::Gzip);
        assert_eq!(
            ContentCoding::of(&headers("deflate")),
            ContentCoding::Deflate
        );
        assert_eq!(ContentCoding::of(&headers("br")), ContentCoding::Brotli);
        assert_eq!(
            ContentCoding::of(&headers("zstd")),
            ContentCoding::Unsupported("zstd".into())
        );
        assert_eq!(
            ContentCoding::of(&headers("gzip, br")),
            ContentCoding::Unsupported("gzip, br".into())
        );
    }

    #[test]
    fn zlib_headers_are_told_from_raw_deflate() {
        assert!(is_zlib(&[0x78, 0x9c]));
        assert!(is_zlib(&[0x78, 0xda]));
        assert!(is_zlib(&[0x78, 0x01]));
        // Raw deflate blocks of typical encoders.
        assert!(!is_zlib(&[0xcb, 0x48]));
        assert!(!is_zlib(&[0xed, 0xbd]));
        assert!(!is_zlib(&[0x78]));
    }

    #[test]
    fn markers_are_found_across_chunks_case_insensitively() {
        let marker = b"</head>";
        let body = b"<html><HEAD><title>x</title></HeAd><body>";
        let end = find_marker(body, 0, marker).unwrap();
        assert_eq!(&body[..end], b"<html><HEAD><title>x</title></HeAd>");
        assert_eq!(find_marker(body, 32, marker), Some(end));
        assert_eq!(find_marker(b"<head></he", 0, marker), None);
    }
}
