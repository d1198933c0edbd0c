//! How a report document is stored: its JSON deflated (zlib) with a preset dictionary, in
//! `service_documents` beside robots.txt's bytes, so the reports table keeps only the small
//! columns that lists, rankings, scores and retention read.
//!
//! Why compressed, and why a dictionary: a document is 14–28 KB of JSON, most of it the
//! 46-crawler table, whose keys and rows are the same in every report. Deflate alone finds
//! the repetition inside one document; the dictionary (a typical document, fixed forever for
//! its encoding number) also lets the first occurrence of every key refer back to it, so a
//! document stores in about a kilobyte and a SQLite row stays on one 4 KB page (no overflow
//! chain to read or free).
//!
//! robots.txt's bytes are stored beside the document, deflated too when that makes them
//! smaller ([`BodyEncoding`], migration 5): they were most of a row (a typical 17–19 KB file
//! stores in 2–4.5 KB; the document beside it in 2.6–3.2 KB).
//!
//! Why deflate and not zstd for the bodies: zstd would save a little more on text, but
//! deflate (zlib-rs, pure Rust) is already here for the documents, with its bounded inflate;
//! zstd would add a C library to build and a second format to keep readable forever.
//!
//! Stored data is a contract: each [`Encoding`] and [`BodyEncoding`] keeps its number and,
//! for the dictionary ones, its dictionary bytes forever. A new dictionary is a new encoding;
//! old rows keep reading with theirs.

use flate2::{Compress, Compression, Decompress, FlushCompress, FlushDecompress, Status};

/// The largest document accepted when inflating: a stored row that inflates past this is
/// refused rather than allowed to exhaust memory (a document is tens of KB; a report of the
/// largest robots.txt, 500 KiB, with a finding per line stays well under it).
pub const DOCUMENT_MAX_BYTES: usize = 16 * 1024 * 1024;

/// The largest robots.txt body inflated from the store: what the fetcher reads of a robots.txt
/// at most (and what a paste is cut to before it is stored), so a stored body never inflates
/// past the bytes the bot could have received; a row that would is damaged.
pub const BODY_MAX_BYTES: usize = fetch::ROBOTS_TXT_MAX_BYTES;

/// The deflate level: 1 is several times faster to write than the default 6 for a few
/// percent more bytes on these documents, and every finished analysis and every generated
/// benchmark report pays it.
const LEVEL: u32 = 1;

/// The deflate level of robots.txt bodies: zlib-rs's level 1 (a faster, simpler matcher)
/// leaves a typical 20 KB file about a quarter larger than level 6, and a body is written once
/// per analysis or paste (zlib at level 6 deflates 500 KiB in 15–20 ms on a loaded 2-core
/// machine, incompressible bytes included).
const BODY_LEVEL: u32 = 6;

/// The preset dictionary of [`Encoding::DeflateV1`]: the stored document of an analysis of a
/// small corpus robots.txt (made by `examples/dictionary.rs`). Never edit it: rows written
/// with it need exactly these bytes to be read.
static DICTIONARY_V1: &[u8] = include_bytes!("document-dictionary-v1.json");

/// How a stored document's bytes are to be read (the `encoding` column).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Encoding {
    /// UTF-8 JSON as is: documents moved from the reports table by migration 3.
    Json,
    /// zlib with [`DICTIONARY_V1`] as preset dictionary.
    DeflateV1,
}

impl Encoding {
    /// The stored number.
    pub fn code(self) -> i64 {
        match self {
            Encoding::Json => 0,
            Encoding::DeflateV1 => 1,
        }
    }

    /// The encoding of a stored number, if this build knows it.
    pub fn from_code(code: i64) -> Option<Encoding> {
        match code {
            0 => Some(Encoding::Json),
            1 => Some(Encoding::DeflateV1),
            _ => None,
        }
    }
}

/// How a stored robots.txt body's bytes are to be read (the `body_encoding` column).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BodyEncoding {
    /// The bytes as received: rows written before migration 5, and bodies deflate does not
    /// shrink (an attacker's bytes may be incompressible; storing them deflated would only
    /// add a few bytes).
    Raw,
    /// zlib, no dictionary.
    Deflate,
}

impl BodyEncoding {
    /// The stored number.
    pub fn code(self) -> i64 {
        match self {
            BodyEncoding::Raw => 0,
            BodyEncoding::Deflate => 1,
        }
    }

    /// The encoding of a stored number, if this build knows it.
    pub fn from_code(code: i64) -> Option<BodyEncoding> {
        match code {
            0 => Some(BodyEncoding::Raw),
            1 => Some(BodyEncoding::Deflate),
            _ => None,
        }
    }
}

/// Why a stored document could not be decoded.
#[derive(Debug, thiserror::Error)]
pub enum CodecError {
    /// A newer build wrote it.
    #[error("unknown document encoding {0}")]
    UnknownEncoding(i64),
    /// The compressed bytes are broken.
    #[error("the compressed document is corrupt")]
    Corrupt(#[source] flate2::DecompressError),
    /// The dictionary could not be set (it is a constant: a build problem).
    #[error("the compression dictionary was refused")]
    Dictionary(#[source] flate2::CompressError),
    /// Compressing failed.
    #[error("the document could not be compressed")]
    Compress(#[source] flate2::CompressError),
    /// It inflates past its limit ([`DOCUMENT_MAX_BYTES`], [`BODY_MAX_BYTES`]), or ends
    /// early.
    #[error("the compressed bytes are truncated or inflate past {limit} bytes")]
    Size {
        /// The limit of what was inflated.
        limit: usize,
    },
    /// The bytes are not UTF-8.
    #[error("the document is not UTF-8")]
    Utf8(#[source] std::string::FromUtf8Error),
}

/// The document's JSON as stored now: [`Encoding::DeflateV1`].
pub fn encode(json: &str) -> Result<(Encoding, Vec<u8>), CodecError> {
    Ok((
        Encoding::DeflateV1,
        deflate(json.as_bytes(), LEVEL, Some(DICTIONARY_V1))?,
    ))
}

/// The JSON of a stored document.
pub fn decode(code: i64, bytes: Vec<u8>) -> Result<String, CodecError> {
    let encoding = Encoding::from_code(code).ok_or(CodecError::UnknownEncoding(code))?;
    let json = match encoding {
        Encoding::Json => bytes,
        Encoding::DeflateV1 => inflate(&bytes, Some(DICTIONARY_V1), DOCUMENT_MAX_BYTES)?,
    };
    String::from_utf8(json).map_err(CodecError::Utf8)
}

/// A robots.txt body as stored now: deflated, or as received when deflate does not shrink it.
pub fn encode_body(body: &[u8]) -> Result<(BodyEncoding, Vec<u8>), CodecError> {
    let packed = deflate(body, BODY_LEVEL, None)?;
    if packed.len() < body.len() {
        Ok((BodyEncoding::Deflate, packed))
    } else {
        Ok((BodyEncoding::Raw, body.to_vec()))
    }
}

/// The bytes of a stored robots.txt body; refused past [`BODY_MAX_BYTES`] whichever the
/// encoding (no body this service writes is longer).
pub fn decode_body(code: i64, bytes: Vec<u8>) -> Result<Vec<u8>, CodecError> {
    let encoding = BodyEncoding::from_code(code).ok_or(CodecError::UnknownEncoding(code))?;
    match encoding {
        BodyEncoding::Raw if bytes.len() > BODY_MAX_BYTES => Err(CodecError::Size {
            limit: BODY_MAX_BYTES,
        }),
        BodyEncoding::Raw => Ok(bytes),
        BodyEncoding::Deflate => inflate(&bytes, None, BODY_MAX_BYTES),
    }
}

fn deflate(input: &[u8], level: u32, dictionary: Option<&[u8]>) -> Result<Vec<u8>, CodecError> {
    let mut z = Compress::new(Compression::new(level), true);
    if let Some(dictionary) = dictionary {
        z.set_dictionary(dictionary)
            .map_err(CodecError::Dictionary)?;
    }
    // Deflate never grows data by more than a few bytes per 16 KB block, plus the header.
    let mut out = Vec::with_capacity(input.len() / 4 + 64);
    loop {
        let consumed = usize::try_from(z.total_in()).unwrap_or(usize::MAX);
        let rest = input.get(consumed..).unwrap_or_default();
        if out.len() == out.capacity() {
            out.reserve(input.len() / 4 + 64);
        }
        let status = z
            .compress_vec(rest, &mut out, FlushCompress::Finish)
            .map_err(CodecError::Compress)?;
        if status == Status::StreamEnd {
            return Ok(out);
        }
    }
}

/// `bytes` inflated, refused as soon as the output passes `limit`.
fn inflate(bytes: &[u8], dictionary: Option<&[u8]>, limit: usize) -> Result<Vec<u8>, CodecError> {
    let size = CodecError::Size { limit };
    let mut z = Decompress::new(true);
    let mut out = Vec::with_capacity(bytes.len().saturating_mul(16).min(limit));
    loop {
        let consumed = usize::try_from(z.total_in()).unwrap_or(usize::MAX);
        let input = bytes.get(consumed..).unwrap_or_default();
        if out.len() >= out.capacity() {
            let room = limit.saturating_sub(out.len());
            if room == 0 {
                return Err(size);
            }
            out.reserve_exact(out.len().max(4096).min(room));
        }
        let before = (z.total_in(), z.total_out());
        match z.decompress_vec(input, &mut out, FlushDecompress::Finish) {
            // `reserve_exact` may round up: the limit is checked on what came out.
            Ok(Status::StreamEnd) if out.len() <= limit => return Ok(out),
            Ok(Status::StreamEnd) => return Err(size),
            Ok(_) => {}
            // zlib asks for the preset dictionary after the header names it; a stream that
            // names one where none is used is corrupt.
            Err(e) if e.needs_dictionary().is_some() => {
                let Some(dictionary) = dictionary else {
                    return Err(CodecError::Corrupt(e));
                };
                z.set_dictionary(dictionary).map_err(CodecError::Corrupt)?;
            }
            Err(e) => return Err(CodecError::Corrupt(e)),
        }
        let stalled = (z.total_in(), z.total_out()) == before;
        if stalled && out.len() < out.capacity() {
            // No progress with room left: the input ended before the stream did.
            return Err(size);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip_and_small() {
        let json = std::str::from_utf8(DICTIONARY_V1)
            .unwrap()
            .replace("a", "b");
        let (encoding, bytes) = encode(&json).unwrap();
        assert_eq!(encoding, Encoding::DeflateV1);
        assert!(bytes.len() * 10 < json.len(), "{} bytes", bytes.len());
        assert_eq!(decode(encoding.code(), bytes).unwrap(), json);
        let (_, empty) = encode("").unwrap();
        assert_eq!(decode(1, empty).unwrap(), "");
    }

    #[test]
    fn plain_json_reads_as_is() {
        assert_eq!(decode(0, b"{\"a\":1}".to_vec()).unwrap(), "{\"a\":1}");
    }

    #[test]
    fn refuses_unknown_corrupt_truncated_and_bombs() {
        assert!(matches!(
            decode(7, Vec::new()),
            Err(CodecError::UnknownEncoding(7))
        ));
        let (_, bytes) = encode(&"x".repeat(100_000)).unwrap();
        assert!(decode(1, bytes[..bytes.len() / 2].to_vec()).is_err());
        let mut broken = bytes.clone();
        broken[bytes.len() / 2] ^= 0xff;
        assert!(decode(1, broken).is_err());
        // Inflating past the limit stops at the limit.
        let (_, bomb) = encode(&" ".repeat(DOCUMENT_MAX_BYTES + 1)).unwrap();
        assert!(matches!(decode(1, bomb), Err(CodecError::Size { .. })));
        let (_, under) = encode(&" ".repeat(DOCUMENT_MAX_BYTES)).unwrap();
        assert_eq!(decode(1, under).unwrap().len(), DOCUMENT_MAX_BYTES);
    }

    #[test]
    fn bodies_deflate_when_smaller_and_read_back() {
        let text = "User-agent: *\nDisallow: /private/\n".repeat(500);
        let (encoding, packed) = encode_body(text.as_bytes()).unwrap();
        assert_eq!(encoding, BodyEncoding::Deflate);
        assert!(packed.len() * 10 < text.len(), "{} bytes", packed.len());
        assert_eq!(decode_body(1, packed).unwrap(), text.as_bytes());
        // Bytes deflate cannot shrink are stored as received.
        let mut state = 0x9e37_79b9_7f4a_7c15u64;
        let noise: Vec<u8> = (0..4096)
            .map(|_| {
                // xorshift64: bytes with nothing for deflate to find.
                state ^= state << 13;
                state ^= state >> 7;
                state ^= state << 17;
                state.to_le_bytes()[0]
            })
            .collect();
        let (encoding, kept) = encode_body(&noise).unwrap();
        assert_eq!(encoding, BodyEncoding::Raw);
        assert!(kept == noise, "stored as received");
        assert_eq!(decode_body(0, kept).unwrap(), noise);
        assert_eq!(encode_body(b"").unwrap().0, BodyEncoding::Raw);
    }

    #[test]
    fn bodies_never_inflate_past_the_fetch_limit() {
        assert_eq!(BODY_MAX_BYTES, fetch::ROBOTS_TXT_MAX_BYTES);
        let (_, bomb) = encode_body(&vec![b'a'; BODY_MAX_BYTES + 1]).unwrap();
        // A hundredth of what it inflates to: a bomb.
        assert!(bomb.len() < BODY_MAX_BYTES / 100, "{} bytes", bomb.len());
        assert!(matches!(
            decode_body(1, bomb),
            Err(CodecError::Size {
                limit: BODY_MAX_BYTES
            })
        ));
        let (_, full) = encode_body(&vec![b'a'; BODY_MAX_BYTES]).unwrap();
        assert_eq!(decode_body(1, full).unwrap().len(), BODY_MAX_BYTES);
        assert!(decode_body(0, vec![b'a'; BODY_MAX_BYTES + 1]).is_err());
        assert!(decode_body(1, vec![0, 0xff, 0, 0xff]).is_err());
        assert!(matches!(
            decode_body(9, Vec::new()),
            Err(CodecError::UnknownEncoding(9))
        ));
        // A stream asking for a dictionary is not a body this service wrote.
        let (_, document) = encode("{}").unwrap();
        assert!(decode_body(1, document).is_err());
    }
}
