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
//! Stored data is a contract: each [`Encoding`] keeps its number and, for the dictionary
//! ones, its dictionary bytes forever. A new dictionary is a new encoding; old rows keep
//! reading with theirs.

use flate2::{Compress, Compression, Decompress, FlushCompress, FlushDecompress, Status};

/// The largest document accepted when inflating: a stored row that inflates past this is
/// refused rather than allowed to exhaust memory (a document is tens of KB; a report of the
/// largest robots.txt, 500 KiB, with a finding per line stays well under it).
pub const DOCUMENT_MAX_BYTES: usize = 16 * 1024 * 1024;

/// The deflate level: 1 is several times faster to write than the default 6 for a few
/// percent more bytes on these documents, and every finished analysis and every generated
/// benchmark report pays it.
const LEVEL: u32 = 1;

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
    /// It inflates past [`DOCUMENT_MAX_BYTES`], or ends early.
    #[error("the compressed document is truncated or larger than {DOCUMENT_MAX_BYTES} bytes")]
    Size,
    /// The bytes are not UTF-8.
    #[error("the document is not UTF-8")]
    Utf8(#[source] std::string::FromUtf8Error),
}

/// The document's JSON as stored now: [`Encoding::DeflateV1`].
pub fn encode(json: &str) -> Result<(Encoding, Vec<u8>), CodecError> {
    let mut z = Compress::new(Compression::new(LEVEL), true);
    z.set_dictionary(DICTIONARY_V1)
        .map_err(CodecError::Dictionary)?;
    // Deflate never grows data by more than a few bytes per 16 KB block, plus the header.
    let mut out = Vec::with_capacity(json.len() / 4 + 64);
    loop {
        let consumed = usize::try_from(z.total_in()).unwrap_or(usize::MAX);
        let input = json.as_bytes().get(consumed..).unwrap_or_default();
        if out.len() == out.capacity() {
            out.reserve(json.len() / 4 + 64);
        }
        let status = z
            .compress_vec(input, &mut out, FlushCompress::Finish)
            .map_err(CodecError::Compress)?;
        if status == Status::StreamEnd {
            return Ok((Encoding::DeflateV1, out));
        }
    }
}

/// The JSON of a stored document.
pub fn decode(code: i64, bytes: Vec<u8>) -> Result<String, CodecError> {
    let encoding = Encoding::from_code(code).ok_or(CodecError::UnknownEncoding(code))?;
    let json = match encoding {
        Encoding::Json => bytes,
        Encoding::DeflateV1 => inflate(&bytes, DICTIONARY_V1)?,
    };
    String::from_utf8(json).map_err(CodecError::Utf8)
}

fn inflate(bytes: &[u8], dictionary: &[u8]) -> Result<Vec<u8>, CodecError> {
    let mut z = Decompress::new(true);
    let mut out = Vec::with_capacity(bytes.len().saturating_mul(16).min(DOCUMENT_MAX_BYTES));
    loop {
        let consumed = usize::try_from(z.total_in()).unwrap_or(usize::MAX);
        let input = bytes.get(consumed..).unwrap_or_default();
        if out.len() >= out.capacity() {
            let room = DOCUMENT_MAX_BYTES.saturating_sub(out.len());
            if room == 0 {
                return Err(CodecError::Size);
            }
            out.reserve_exact(out.len().max(4096).min(room));
        }
        let before = (z.total_in(), z.total_out());
        match z.decompress_vec(input, &mut out, FlushDecompress::Finish) {
            // `reserve_exact` may round up: the limit is checked on what came out.
            Ok(Status::StreamEnd) if out.len() <= DOCUMENT_MAX_BYTES => return Ok(out),
            Ok(Status::StreamEnd) => return Err(CodecError::Size),
            Ok(_) => {}
            // zlib asks for the preset dictionary after the header names it.
            Err(e) if e.needs_dictionary().is_some() => {
                z.set_dictionary(dictionary).map_err(CodecError::Corrupt)?;
            }
            Err(e) => return Err(CodecError::Corrupt(e)),
        }
        let stalled = (z.total_in(), z.total_out()) == before;
        if stalled && out.len() < out.capacity() {
            // No progress with room left: the input ended before the stream did.
            return Err(CodecError::Size);
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
        assert!(matches!(decode(1, bomb), Err(CodecError::Size)));
        let (_, under) = encode(&" ".repeat(DOCUMENT_MAX_BYTES)).unwrap();
        assert_eq!(decode(1, under).unwrap().len(), DOCUMENT_MAX_BYTES);
    }
}
