//! Audits every file in a directory and prints the slowest ones and the grade spread.
use std::time::Instant;
fn main() {
    let dir = std::env::args()
        .nth(1)
        .unwrap_or_else(|| "../shared/corpus/robots".into());
    let mut times = Vec::new();
    let start = Instant::now();
    let mut counts = std::collections::BTreeMap::new();
    let entries = match std::fs::read_dir(&dir) {
        Ok(entries) => entries,
        Err(error) => {
            eprintln!("cannot read {dir}: {error}");
            std::process::exit(2);
        }
    };
    for entry in entries.flatten() {
        let path = entry.path();
        let name = path
            .file_name()
            .and_then(|n| n.to_str())
            .unwrap_or_default()
            .to_owned();
        if name == "SOURCES.tsv" || name == "README.md" {
            continue;
        }
        let Ok(body) = std::fs::read(&path) else {
            continue;
        };
        let t = Instant::now();
        let audit = audit::audit_robots_txt(
            &body,
            &audit::FileContext {
                robots_url: None,
                page: Some("/"),
            },
        );
        let score = audit::Score::compute(&audit.findings);
        times.push((t.elapsed(), name, body.len(), score.score));
        for f in &audit.findings {
            *counts.entry(f.id.as_str()).or_insert(0usize) += 1;
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
