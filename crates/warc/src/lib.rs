//! WARC 1.1 output (ISO 28500): records, a rotating gzip-per-record writer, and recovery of a
//! file torn by a crash. It knows nothing of crawling: a caller builds [`WarcRecord`]s (or
//! encodes them as gzip members on its own threads with [`encode_member`]) and appends them.
//!
//! - Each record is its own gzip member (so readers can seek to a record, and a torn tail can
//!   be cut at a member boundary), compressed at flate2's fastest level: the archive is
//!   written at crawl speed; recompress later if space matters.
//! - A file is written as `NAME.warc.gz.open` and renamed to `NAME.warc.gz` when it is full
//!   ([`WarcOptions::max_file_bytes`], default [`DEFAULT_MAX_FILE_BYTES`], checked before each
//!   record, so a file exceeds it by at most one record) or the writer is closed. Each file
//!   starts with a `warcinfo` record.
//! - The writer holds an exclusive lock on its `.open` file. On open, every `.open` file in
//!   the directory that no live writer locks was left by a crash: its records are checked
//!   member by member, a torn or corrupt tail is cut off, and it is renamed to `.warc.gz`.
//! - [`WarcWriter::flush`] hands the written records to the operating system (they survive
//!   `kill -9`); with [`WarcOptions::sync`] it also waits for the disk (survives power loss).
//!   A crawler commits a URL's state only after the flush that covers its records.
//!
//! ```
//! use warc::{RecordKind, WarcOptions, WarcRecord, WarcWriter};
//!
//! let dir = std::env::temp_dir().join(format!("warc-doc-{}", std::process::id()));
//! let (mut writer, _recovered) = WarcWriter::open(&dir, WarcOptions::default())?;
//! let mut record = WarcRecord::new(RecordKind::Resource, jiff::Timestamp::now());
//! record.target_uri = Some("https://example.com/");
//! record.content_type = Some("text/plain");
//! record.block = vec![b"hello"];
//! writer.write(&record)?;
//! writer.close()?;
//! # std::fs::remove_dir_all(&dir).ok();
//! # Ok::<(), warc::WarcError>(())
//! ```

mod file;
mod gzip;
mod record;
mod recover;
mod writer;

pub use file::WarcError;
pub use record::{
    http_request_block, http_response_head, payload_digest, sha1_label, RecordId, RecordKind,
    WarcRecord, REVISIT_PROFILE_IDENTICAL_PAYLOAD, REVISIT_PROFILE_NOT_MODIFIED,
};
pub use recover::{recover_file, Recovered};
pub use writer::{encode_member, RecordLocation, WarcOptions, WarcWriter, DEFAULT_MAX_FILE_BYTES};
