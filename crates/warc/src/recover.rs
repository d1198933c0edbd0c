//! Finding and cutting a torn record at the end of a WARC file left open by a crash.

use std::fs::{File, OpenOptions};
use std::io::{BufRead, BufReader, Read};
use std::path::{Path, PathBuf};

use crate::file::{io, WarcError, DONE_SUFFIX, OPEN_SUFFIX};

/// What recovery did to one file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Recovered {
    /// The file's final path.
    pub path: PathBuf,
    /// Complete records kept.
    pub records: u64,
    /// Bytes of torn or corrupt tail cut off (0 when the file ended cleanly).
    pub dropped_bytes: u64,
}

/// Recover every `.open` file in `dir` that no live writer holds.
pub(crate) fn recover_dir(dir: &Path) -> Result<Vec<Recovered>, WarcError> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir(dir).map_err(io("list", dir))? {
        let path = entry.map_err(io("list", dir))?.path();
        let is_open = path.to_str().is_some_and(|p| p.ends_with(OPEN_SUFFIX));
        if is_open {
            if let Some(r) = recover_file(&path)? {
                out.push(r);
            }
        }
    }
    Ok(out)
}

/// Check a `.warc.gz.open` file record by record, cut any torn or corrupt tail, and rename it
/// to `.warc.gz`. `None` when a live writer holds it (its lock is taken).
pub fn recover_file(path: &Path) -> Result<Option<Recovered>, WarcError> {
    let file = OpenOptions::new()
        .read(true)
        .write(true)
        .open(path)
        .map_err(io("open", path))?;
    if file.try_lock().is_err() {
        return Ok(None);
    }
    let len = file.metadata().map_err(io("stat", path))?.len();
    let (good, records) = scan(&file);
    if good < len {
        tracing::warn!(path = %path.display(), kept = good, dropped = len - good, "cut a torn WARC record");
        file.set_len(good).map_err(io("truncate", path))?;
    }
    file.sync_all().map_err(io("sync", path))?;
    let name = path.to_string_lossy();
    let done = PathBuf::from(format!(
        "{}{DONE_SUFFIX}",
        &name[..name.len() - OPEN_SUFFIX.len()]
    ));
    std::fs::rename(path, &done).map_err(io("rename", path))?;
    Ok(Some(Recovered {
        path: done,
        records,
        dropped_bytes: len - good,
    }))
}

/// A `BufRead` that counts the bytes consumed from it.
struct Counted<R> {
    inner: R,
    pos: u64,
}

impl<R: BufRead> Read for Counted<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.pos += n as u64;
        Ok(n)
    }
}

impl<R: BufRead> BufRead for Counted<R> {
    fn fill_buf(&mut self) -> std::io::Result<&[u8]> {
        self.inner.fill_buf()
    }
    fn consume(&mut self, amt: usize) {
        self.pos += amt as u64;
        self.inner.consume(amt);
    }
}

/// The end offset of the last complete, well-formed record, and how many records precede it.
fn scan(file: &File) -> (u64, u64) {
    let mut reader = Counted {
        inner: BufReader::with_capacity(256 * 1024, file),
        pos: 0,
    };
    let (mut good, mut records) = (0, 0);
    loop {
        match reader.fill_buf() {
            Ok([]) | Err(_) => return (good, records),
            Ok(_) => {}
        }
        let mut member = flate2::bufread::GzDecoder::new(&mut reader);
        if !record_is_whole(&mut member) {
            return (good, records);
        }
        drop(member);
        good = reader.pos;
        records += 1;
    }
}

/// Whether one decompressed member is a whole WARC record: a `WARC/` header whose
/// `Content-Length` matches the block that follows, then the closing CRLF CRLF.
fn record_is_whole(member: &mut impl Read) -> bool {
    // The header is small; read until the blank line (bounded).
    const MAX_HEADER: usize = 64 * 1024;
    let mut head = Vec::with_capacity(1024);
    let mut byte = [0u8; 1];
    while !head.ends_with(b"\r\n\r\n") {
        if head.len() > MAX_HEADER || !matches!(member.read(&mut byte), Ok(1)) {
            return false;
        }
        head.push(byte[0]);
    }
    let Ok(text) = std::str::from_utf8(&head) else {
        return false;
    };
    if !text.starts_with("WARC/") {
        return false;
    }
    let length = text.lines().find_map(|l| {
        let (name, value) = l.split_once(':')?;
        name.eq_ignore_ascii_case("content-length")
            .then(|| value.trim().parse::<u64>().ok())?
    });
    let Some(length) = length else { return false };
    // Block plus the record's closing CRLF CRLF, then the member must end.
    let mut rest = Vec::new();
    match member.take(length + 5).read_to_end(&mut rest) {
        Ok(n) => n as u64 == length + 4 && rest.ends_with(b"\r\n\r\n"),
        Err(_) => false,
    }
}
