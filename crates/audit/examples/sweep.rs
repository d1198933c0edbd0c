//! Audits every file of a corpus and prints the slowest ones and the findings per check.
//!
//! `cargo run --release -p audit --example sweep` reads the full corpus (`JITTYBOT_CORPUS_DIR`
//! or `../shared/corpus` beside the repository); give a directory holding a `SOURCES.tsv` to
//! read another one, such as `testdata/corpus/robots`.
use std::path::PathBuf;
use std::time::Instant;

#[path = "../../../testdata/corpus/reader.rs"]
mod corpus;

fn main() {
    let files = match std::env::args().nth(1) {
        Some(dir) => corpus::listed_files(&PathBuf::from(dir)),
        None => corpus::full_dir("robots").and_then(|dir| corpus::listed_files(&dir)),
    };
    let files = files.unwrap_or_else(|error| {
        eprintln!("{error}");
        std::process::exit(2);
    });
    let mut times = Vec::new();
    let start = Instant::now();
    let mut counts = std::collections::BTreeMap::new();
    for path in &files {
        let body = corpus::read(path);
        let t = Instant::now();
        let audit = audit::audit_robots_txt(
            &body,
            &audit::FileContext {
                robots_url: None,
                page: Some("/"),
                ..audit::FileContext::default()
            },
        );
        let score = audit::Score::compute(&audit.findings);
        let name = path.file_name().unwrap_or_default().to_string_lossy();
        times.push((t.elapsed(), name.into_owned(), body.len(), score.score));
        for f in &audit.findings {
            *counts.entry(f.id.to_string()).or_insert(0usize) += 1;
        }
    }
    times.sort();
    for (d, n, len, s) in times.iter().rev().take(8) {
        println!("{d:?} {n} {len} bytes score {s}");
    }
    println!("total {:?} for {} files", start.elapsed(), times.len());
    for (id, c) in counts {
        println!("{c:6} {id}");
    }
}
