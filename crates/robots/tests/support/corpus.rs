//! Where the real robots.txt corpora are, for the robots tests, the benchmark and the examples:
//! the workspace's one corpus reader, `testdata/corpus/reader.rs` (see there), re-exported.
//! `corpus_files(name)` and `corpus_bodies(name)` read the full corpus `name`; the sample in
//! the repository is `sample_files()`.

#[path = "../../../../testdata/corpus/reader.rs"]
mod reader;

#[allow(unused_imports)] // each includer uses its own part
pub use reader::*;
