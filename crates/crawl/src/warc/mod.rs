//! WARC 1.1 output (ISO 28500): records, a rotating gzip-per-record writer, and recovery of a
//! file torn by a crash.
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
//!   The crawler commits a URL's state only after the flush that covers its records.

mod gzip;
mod record;
mod recover;
mod writer;

pub use record::{
    http_request_block, http_response_head, sha1_label, RecordId, RecordKind, WarcRecord,
    REVISIT_PROFILE_NOT_MODIFIED,
};
pub use recover::{recover_file, Recovered};
pub use writer::{
    encode_member, RecordLocation, WarcError, WarcOptions, WarcWriter, DEFAULT_MAX_FILE_BYTES,
};
