//! The rotating writer.

use std::fs::{File, OpenOptions};
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};

use flate2::write::GzEncoder;
use jiff::Timestamp;

use crate::file::{io, WarcError, DONE_SUFFIX};
use crate::record::{RecordKind, WarcRecord};
use crate::recover::{recover_dir, Recovered};

/// Default size at which a WARC file is closed and the next begun: 1 GiB of compressed
/// records, the customary size of web archive files.
pub const DEFAULT_MAX_FILE_BYTES: u64 = 1024 * 1024 * 1024;

/// How the writer names, rotates and syncs its files.
#[derive(Clone, Debug)]
pub struct WarcOptions {
    /// File names start with it (`PREFIX-20260101120000000-00001-PID-RAND.warc.gz`).
    pub prefix: String,
    /// Size at which a file is rotated (checked before each record).
    pub max_file_bytes: u64,
    /// Wait for the disk on each flush (survives power loss; slower).
    pub sync: bool,
    /// `software` in the `warcinfo` record.
    pub software: String,
}

impl Default for WarcOptions {
    /// Files named `WARC-...`, rotated at [`DEFAULT_MAX_FILE_BYTES`], not synced, written by
    /// this crate (a crawler names itself with [`WarcOptions::named`]).
    fn default() -> Self {
        WarcOptions::named("WARC", concat!("warc/", env!("CARGO_PKG_VERSION")))
    }
}

impl WarcOptions {
    /// Files named `prefix-...`, with `software` in their `warcinfo` records; the other
    /// options at their defaults.
    pub fn named(prefix: &str, software: &str) -> WarcOptions {
        WarcOptions {
            prefix: prefix.into(),
            max_file_bytes: DEFAULT_MAX_FILE_BYTES,
            sync: false,
            software: software.into(),
        }
    }
}

/// Where a record was written.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RecordLocation {
    /// The file's final name (`...warc.gz`, within the WARC directory).
    pub file: String,
    /// Offset of the record's gzip member in the file.
    pub offset: u64,
    /// Length of the gzip member.
    pub length: u64,
}

struct Current {
    open_path: PathBuf,
    name: String,
    out: BufWriter<File>,
    bytes: u64,
    records: u64,
}

/// Writes records to rotating WARC files in one directory.
pub struct WarcWriter {
    dir: PathBuf,
    options: WarcOptions,
    current: Option<Current>,
    serial: u32,
}

impl WarcWriter {
    /// Create `dir` if needed, recover files left open by a crash, and get ready to write
    /// (the first file is created with the first record).
    pub fn open(
        dir: &Path,
        options: WarcOptions,
    ) -> Result<(WarcWriter, Vec<Recovered>), WarcError> {
        std::fs::create_dir_all(dir).map_err(io("create directory", dir))?;
        let recovered = recover_dir(dir)?;
        let writer = WarcWriter {
            dir: dir.to_path_buf(),
            options,
            current: None,
            serial: 0,
        };
        Ok((writer, recovered))
    }

    /// Append one record (as one gzip member), rotating first if the file is full.
    pub fn write(&mut self, record: &WarcRecord<'_>) -> Result<RecordLocation, WarcError> {
        let mut locations = self.write_group(std::slice::from_ref(record))?;
        Ok(locations.remove(0))
    }

    /// Append records that belong together (a request, its response, their metadata) to one
    /// file: rotation happens only before a group.
    pub fn write_group(
        &mut self,
        records: &[WarcRecord<'_>],
    ) -> Result<Vec<RecordLocation>, WarcError> {
        let full = self
            .current
            .as_ref()
            .is_some_and(|c| c.bytes >= self.options.max_file_bytes && c.records > 1);
        if full {
            self.finish_current()?;
        }
        if self.current.is_none() {
            self.start_file()?;
        }
        let Some(current) = self.current.as_mut() else {
            unreachable!("a file was just started")
        };
        records.iter().map(|r| write_member(current, r)).collect()
    }

    /// Append records already encoded by [`encode_member`] (compressed on worker threads, so
    /// the one writer only appends bytes), as one group kept in one file.
    pub fn write_encoded(&mut self, members: &[Vec<u8>]) -> Result<Vec<RecordLocation>, WarcError> {
        let full = self
            .current
            .as_ref()
            .is_some_and(|c| c.bytes >= self.options.max_file_bytes && c.records > 1);
        if full {
            self.finish_current()?;
        }
        if self.current.is_none() {
            self.start_file()?;
        }
        let Some(c) = self.current.as_mut() else {
            unreachable!("a file was just started")
        };
        let mut locations = Vec::with_capacity(members.len());
        for m in members {
            c.out.write_all(m).map_err(io("write", &c.open_path))?;
            locations.push(RecordLocation {
                file: c.name.clone(),
                offset: c.bytes,
                length: m.len() as u64,
            });
            c.bytes += m.len() as u64;
            c.records += 1;
        }
        Ok(locations)
    }

    /// Hand everything written so far to the operating system (and to the disk with
    /// [`WarcOptions::sync`]).
    pub fn flush(&mut self) -> Result<(), WarcError> {
        if let Some(c) = self.current.as_mut() {
            c.out.flush().map_err(io("flush", &c.open_path))?;
            if self.options.sync {
                c.out
                    .get_ref()
                    .sync_data()
                    .map_err(io("sync", &c.open_path))?;
            }
        }
        Ok(())
    }

    /// Flush, close and rename the current file to its final name.
    pub fn close(mut self) -> Result<(), WarcError> {
        self.finish_current()
    }

    /// The name the current file will have when finished, if one is open.
    pub fn current_file(&self) -> Option<&str> {
        self.current.as_ref().map(|c| c.name.as_str())
    }

    fn start_file(&mut self) -> Result<(), WarcError> {
        self.serial += 1;
        let now = Timestamp::now();
        let stamp = now.strftime("%Y%m%d%H%M%S%3f");
        let rand = &uuid::Uuid::new_v4().simple().to_string()[..8];
        let name = format!(
            "{}-{stamp}-{:05}-{}-{rand}{DONE_SUFFIX}",
            self.options.prefix,
            self.serial,
            std::process::id()
        );
        let open_path = self.dir.join(format!("{}.open", name));
        let file = OpenOptions::new()
            .create_new(true)
            .write(true)
            .open(&open_path)
            .map_err(io("create", &open_path))?;
        // Held while the file is written: recovery leaves locked files alone.
        file.try_lock().map_err(|e| WarcError::Io {
            op: "lock",
            path: open_path.clone(),
            source: e.into(),
        })?;
        let mut current = Current {
            open_path,
            name: name.clone(),
            out: BufWriter::with_capacity(256 * 1024, file),
            bytes: 0,
            records: 0,
        };
        let info = format!(
            "software: {}\r\nformat: WARC File Format 1.1\r\nconformsTo: http://iipc.github.io/warc-specifications/specifications/warc-format/warc-1.1/\r\nrobots: obey\r\n",
            self.options.software
        );
        let mut record = WarcRecord::new(RecordKind::Warcinfo, now);
        record.content_type = Some("application/warc-fields");
        record.block = vec![info.as_bytes()];
        record.fields.push(("WARC-Filename", name));
        write_member(&mut current, &record)?;
        self.current = Some(current);
        Ok(())
    }

    fn finish_current(&mut self) -> Result<(), WarcError> {
        let Some(mut c) = self.current.take() else {
            return Ok(());
        };
        c.out.flush().map_err(io("flush", &c.open_path))?;
        let file = c.out.into_inner().map_err(|e| WarcError::Io {
            op: "flush",
            path: c.open_path.clone(),
            source: e.into_error(),
        })?;
        file.sync_all().map_err(io("sync", &c.open_path))?;
        let done = self.dir.join(&c.name);
        std::fs::rename(&c.open_path, &done).map_err(io("rename", &c.open_path))?;
        drop(file);
        Ok(())
    }
}

impl Drop for WarcWriter {
    fn drop(&mut self) {
        // A writer dropped without close (an error path): finish the file if possible; if not,
        // the next open recovers it.
        let _ = self.finish_current();
    }
}

struct Counting<'a, W> {
    inner: &'a mut W,
    n: u64,
}

impl<W: Write> Write for Counting<'_, W> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let n = self.inner.write(buf)?;
        self.n += n as u64;
        Ok(n)
    }
    fn flush(&mut self) -> std::io::Result<()> {
        self.inner.flush()
    }
}

/// One record as its gzip member, ready for [`WarcWriter::write_encoded`] (compressed with
/// the thread's reused compressor, see `gzip`).
pub fn encode_member(record: &WarcRecord<'_>) -> Vec<u8> {
    let header = record.header();
    let mut parts: Vec<&[u8]> = Vec::with_capacity(record.block.len() + 2);
    parts.push(header.as_bytes());
    parts.extend(record.block.iter().copied());
    parts.push(b"\r\n\r\n");
    crate::gzip::member(&parts)
}

fn write_member(c: &mut Current, record: &WarcRecord<'_>) -> Result<RecordLocation, WarcError> {
    let header = record.header();
    let offset = c.bytes;
    let counting = Counting {
        inner: &mut c.out,
        n: 0,
    };
    let mut gz = GzEncoder::new(counting, crate::gzip::level());
    let result = (|| {
        gz.write_all(header.as_bytes())?;
        for part in &record.block {
            gz.write_all(part)?;
        }
        gz.write_all(b"\r\n\r\n")?;
        gz.finish()
    })();
    let counting = result.map_err(io("write", &c.open_path))?;
    let length = counting.n;
    c.bytes += length;
    c.records += 1;
    Ok(RecordLocation {
        file: c.name.clone(),
        offset,
        length,
    })
}
