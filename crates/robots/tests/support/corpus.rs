//! Where the real robots.txt corpus is, for the tests, the benchmark and the examples
//! (included with `#[path]`, so each of them reads the corpus the same way).

use std::path::{Path, PathBuf};

/// `shared/corpus/<name>`, beside the repository (override with `JITTYBOT_CORPUS_DIR`).
fn corpus_dir(name: &str) -> PathBuf {
    match std::env::var_os("JITTYBOT_CORPUS_DIR") {
        Some(dir) => PathBuf::from(dir).join(name),
        None => Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../../../shared/corpus")
            .join(name),
    }
}

/// The robots.txt files of `shared/corpus/<name>`, sorted (its `SOURCES.tsv` and `README.md`
/// left out). Panics, saying where the corpus should be, when it is missing.
pub fn corpus_files(name: &str) -> Vec<PathBuf> {
    let dir = corpus_dir(name);
    let entries = std::fs::read_dir(&dir).unwrap_or_else(|error| {
        panic!(
            "the corpus {} is missing ({error}); it ships in shared/corpus beside the repository, \
             or set JITTYBOT_CORPUS_DIR",
            dir.display()
        )
    });
    let mut files: Vec<PathBuf> = entries
        .filter_map(Result::ok)
        .map(|entry| entry.path())
        .filter(|path| {
            let name = path
                .file_name()
                .and_then(|n| n.to_str())
                .unwrap_or_default();
            path.is_file() && name != "SOURCES.tsv" && name != "README.md"
        })
        .collect();
    files.sort();
    files
}

/// The bytes of every file of [`corpus_files`].
#[allow(dead_code)] // used by the examples, not by every includer
pub fn corpus_bodies(name: &str) -> Vec<Vec<u8>> {
    corpus_files(name)
        .iter()
        .map(|path| {
            std::fs::read(path)
                .unwrap_or_else(|error| panic!("cannot read {}: {error}", path.display()))
        })
        .collect()
}
