//! What the writer and crash recovery share about WARC files: the suffixes that tell a file
//! being written from a finished one, and the error of a file operation. Both sit here, below
//! the writer and recovery, so that neither has to import the other for them.

use std::path::{Path, PathBuf};

/// The suffix of a file being written.
pub(crate) const OPEN_SUFFIX: &str = ".warc.gz.open";
/// The suffix of a finished file.
pub(crate) const DONE_SUFFIX: &str = ".warc.gz";

/// What can go wrong writing WARC files.
#[derive(Debug, thiserror::Error)]
pub enum WarcError {
    /// A file operation failed.
    #[error("WARC file {}: {op}", path.display())]
    Io {
        /// What was being done.
        op: &'static str,
        /// The file or directory.
        path: PathBuf,
        /// The error.
        #[source]
        source: std::io::Error,
    },
}

/// The error of file operation `op` on `path`, for `map_err`.
pub(crate) fn io<'p>(
    op: &'static str,
    path: &'p Path,
) -> impl FnOnce(std::io::Error) -> WarcError + 'p {
    move |source| WarcError::Io {
        op,
        path: path.to_path_buf(),
        source,
    }
}
