//! The one reader of the robots.txt corpora for the whole workspace. Tests, benchmarks and
//! examples include this file with `#[path]` (it needs nothing but std), so every sweep lists
//! and checks files the same way.
//!
//! - The **sample**, `testdata/corpus/robots/` in the repository: a few hundred real files
//!   chosen for coverage (see `testdata/corpus/README.md`). The default sweeps run on it, so
//!   they pass in a clone of the repository alone.
//! - The **full corpus**, `robots/` (2,388 files) and `robots-extra/` (15,311 files): not in
//!   the repository. Found through [`CORPUS_DIR_VAR`], else beside the repository
//!   (`../shared/corpus`). Only `#[ignore]`d sweeps and benchmarks use it; they fail, saying
//!   how to get it, when it is missing.
//!
//! Every corpus directory holds a `SOURCES.tsv` whose first column names each file: the
//! reader checks the directory against it, so a missing or stray file fails the sweep instead
//! of shrinking it silently.

#![allow(dead_code)] // each includer uses its own part

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

/// The environment variable naming the directory that holds the full corpora (`robots/`,
/// `robots-extra/`).
pub const CORPUS_DIR_VAR: &str = "JITTYBOT_CORPUS_DIR";

/// The repository's root: every includer is a crate at `crates/<name>`.
fn repository_root() -> PathBuf {
    let manifest = Path::new(env!("CARGO_MANIFEST_DIR"));
    manifest
        .parent()
        .and_then(Path::parent)
        .map_or_else(|| manifest.join("../.."), Path::to_path_buf)
}

/// The sample in the repository.
pub fn sample_dir() -> PathBuf {
    repository_root().join("testdata/corpus/robots")
}

/// The sample's files, sorted. Panics if the sample does not match its `SOURCES.tsv`.
pub fn sample_files() -> Vec<PathBuf> {
    let dir = sample_dir();
    listed_files(&dir).unwrap_or_else(|error| panic!("the sample corpus is broken: {error}"))
}

/// Where the full corpus `name` (`robots` or `robots-extra`) is, or how to get it.
pub fn full_dir(name: &str) -> Result<PathBuf, String> {
    let (base, how) = match std::env::var_os(CORPUS_DIR_VAR) {
        Some(dir) => (PathBuf::from(dir), format!("{CORPUS_DIR_VAR} names it")),
        None => (
            repository_root().parent().map_or_else(
                || PathBuf::from("../shared/corpus"),
                |up| up.join("shared/corpus"),
            ),
            format!("the sibling of the repository; {CORPUS_DIR_VAR} is not set"),
        ),
    };
    let dir = base.join(name);
    if dir.is_dir() {
        Ok(dir)
    } else {
        Err(format!(
            "the full corpus {name}/ is not at {} ({how}). It is not part of the repository: \
             it is the corpus/ folder of the project's shared files (2,388 + 15,311 real \
             robots.txt files, described in its README.md). Put that folder beside the \
             repository as ../shared/corpus, or set {CORPUS_DIR_VAR}=/path/to/corpus. The \
             default tests need only the sample in testdata/corpus/.",
            dir.display()
        ))
    }
}

/// The files of the full corpus `name`, sorted. Panics, saying how to get the corpus, when it
/// is missing or does not match its `SOURCES.tsv`.
pub fn corpus_files(name: &str) -> Vec<PathBuf> {
    let dir = full_dir(name).unwrap_or_else(|error| panic!("{error}"));
    listed_files(&dir).unwrap_or_else(|error| panic!("the corpus {name}/ is broken: {error}"))
}

/// The bytes of every file of [`corpus_files`].
pub fn corpus_bodies(name: &str) -> Vec<Vec<u8>> {
    corpus_files(name).iter().map(|path| read(path)).collect()
}

/// The bytes of one corpus file; panics, naming the file, when it cannot be read.
pub fn read(path: &Path) -> Vec<u8> {
    std::fs::read(path).unwrap_or_else(|error| panic!("cannot read {}: {error}", path.display()))
}

/// The files of `dir` (its `SOURCES.tsv` and `README.md` left out), sorted, after checking
/// that they are exactly the files `SOURCES.tsv` lists.
pub fn listed_files(dir: &Path) -> Result<Vec<PathBuf>, String> {
    let sources = dir.join("SOURCES.tsv");
    let table = std::fs::read_to_string(&sources)
        .map_err(|error| format!("cannot read {}: {error}", sources.display()))?;
    let listed: BTreeSet<String> = table
        .lines()
        .skip(1)
        .filter_map(|row| row.split('\t').next())
        .filter(|name| !name.is_empty())
        .map(str::to_owned)
        .collect();
    let entries = std::fs::read_dir(dir)
        .map_err(|error| format!("cannot list {}: {error}", dir.display()))?;
    let mut present = BTreeSet::new();
    for entry in entries {
        let entry = entry.map_err(|error| format!("cannot list {}: {error}", dir.display()))?;
        let name = entry.file_name().to_string_lossy().into_owned();
        if entry.path().is_file() && name != "SOURCES.tsv" && name != "README.md" {
            present.insert(name);
        }
    }
    let missing: Vec<&String> = listed.difference(&present).take(5).collect();
    let stray: Vec<&String> = present.difference(&listed).take(5).collect();
    if !missing.is_empty() || !stray.is_empty() {
        return Err(format!(
            "{} lists {} files and the directory holds {}; missing {missing:?}, not listed \
             {stray:?}",
            sources.display(),
            listed.len(),
            present.len()
        ));
    }
    if present.is_empty() {
        return Err(format!("{} is empty", dir.display()));
    }
    Ok(present.into_iter().map(|name| dir.join(name)).collect())
}
