//! One gzip member from parts, with a deflate compressor reused per thread.
//!
//! Why: a fresh `GzEncoder` allocates and clears the whole deflate state (window, hash
//! chains: about 300 KB) for every record, two records per page; that cost more than
//! compressing a 40 KB page at the fastest level. A compressor reset between members keeps
//! its buffers. The output is an ordinary gzip member (RFC 1952), byte for byte what
//! `flate2::write::GzEncoder` at the same level writes.

use std::cell::RefCell;

use flate2::{Compress, CompressError, Compression, Crc, FlushCompress, Status};

/// The compression level of every record: the fastest (the archive is written at crawl
/// speed; recompress later if space matters).
pub(crate) fn level() -> Compression {
    Compression::fast()
}

thread_local! {
    /// Raw deflate (the gzip header and trailer are written here), reset before each member.
    static DEFLATE: RefCell<Compress> = RefCell::new(Compress::new(level(), false));
}

/// Spare room kept at the end of the output while compressing.
const MIN_ROOM: usize = 4 * 1024;

/// The gzip member holding `parts` one after another.
pub(crate) fn member(parts: &[&[u8]]) -> Vec<u8> {
    let total: usize = parts.iter().map(|p| p.len()).sum();
    let pooled = DEFLATE.try_with(|cell| {
        cell.try_borrow_mut()
            .ok()
            .and_then(|mut deflate| compress(&mut deflate, parts, total).ok())
    });
    match pooled {
        Ok(Some(out)) => out,
        // The thread is exiting, or the compressor failed (it does not on valid input):
        // a one-off compressor.
        _ => {
            let mut deflate = Compress::new(level(), false);
            compress(&mut deflate, parts, total).unwrap_or_default()
        }
    }
}

fn compress(
    deflate: &mut Compress,
    parts: &[&[u8]],
    total: usize,
) -> Result<Vec<u8>, CompressError> {
    deflate.reset();
    // Generated and real pages compress well: a quarter of the input is a fair first guess.
    let mut out = Vec::with_capacity(total / 4 + MIN_ROOM);
    out.extend_from_slice(&header());
    let mut crc = Crc::new();
    for part in parts {
        crc.update(part);
        feed(deflate, part, &mut out, FlushCompress::None)?;
    }
    feed(deflate, &[], &mut out, FlushCompress::Finish)?;
    out.extend_from_slice(&crc.sum().to_le_bytes());
    out.extend_from_slice(&crc.amount().to_le_bytes());
    Ok(out)
}

/// Compresses all of `input` into `out`, growing it as needed; with `Finish`, until the
/// deflate stream is ended.
fn feed(
    deflate: &mut Compress,
    mut input: &[u8],
    out: &mut Vec<u8>,
    flush: FlushCompress,
) -> Result<(), CompressError> {
    loop {
        if out.capacity() - out.len() < MIN_ROOM {
            out.reserve(out.capacity().max(MIN_ROOM));
        }
        let before = deflate.total_in();
        let status = deflate.compress_vec(input, out, flush)?;
        let used = usize::try_from(deflate.total_in() - before).unwrap_or(input.len());
        input = input.get(used..).unwrap_or_default();
        let done = match flush {
            FlushCompress::Finish => status == Status::StreamEnd,
            _ => input.is_empty(),
        };
        if done {
            return Ok(());
        }
    }
}

/// The 10-byte gzip header flate2 writes at the fastest level: no name, no time, extra
/// flags 4 (fastest), operating system unknown.
fn header() -> [u8; 10] {
    [0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 4, 255]
}

#[cfg(test)]
mod tests {
    use std::io::{Read, Write};

    use super::*;

    fn gunzip(member: &[u8]) -> Vec<u8> {
        let mut out = Vec::new();
        flate2::read::GzDecoder::new(member)
            .read_to_end(&mut out)
            .unwrap();
        out
    }

    #[test]
    fn a_member_is_what_gz_encoder_writes_and_the_compressor_is_reused() {
        let page = "lorem ipsum dolor sit amet ".repeat(3_000);
        let parts: [&[u8]; 3] = [b"WARC/1.1\r\n\r\n", page.as_bytes(), b"\r\n\r\n"];
        let mut expected = Vec::new();
        let mut gz = flate2::write::GzEncoder::new(&mut expected, level());
        for p in parts {
            gz.write_all(p).unwrap();
        }
        gz.finish().unwrap();
        for _ in 0..3 {
            let m = member(&parts);
            assert_eq!(m, expected);
            assert_eq!(gunzip(&m), parts.concat());
        }
        // An empty member and incompressible bytes, larger than the first guess of room.
        assert_eq!(gunzip(&member(&[])), b"");
        let noise: Vec<u8> = (0..200_000u32)
            .map(|i| (i.wrapping_mul(2_654_435_761) >> 13) as u8)
            .collect();
        assert_eq!(gunzip(&member(&[&noise])), noise);
    }
}
