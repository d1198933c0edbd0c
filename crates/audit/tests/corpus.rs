//! The corpus sweep: every robots.txt of `shared/corpus/robots/` audits and scores without a
//! panic, and its findings are consistent.

use std::path::PathBuf;

use audit::{audit_robots_txt, FileContext, Score, Severity};

fn corpus_dir() -> Option<PathBuf> {
    let manifest = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    // crates/audit -> repo root -> ../shared (the work tree sits beside shared/).
    let candidates = [
        manifest.join("../../../shared/corpus/robots"),
        manifest.join("../../shared/corpus/robots"),
    ];
    candidates.into_iter().find(|dir| dir.is_dir())
}

#[test]
fn every_corpus_file_audits_without_a_panic() {
    let Some(dir) = corpus_dir() else {
        eprintln!("corpus not found; skipping");
        return;
    };
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .expect("corpus dir readable")
        .filter_map(|entry| entry.ok().map(|entry| entry.path()))
        .filter(|path| {
            let name = path
                .file_name()
                .and_then(|n| n.to_str())
                .unwrap_or_default();
            path.is_file() && name != "SOURCES.tsv" && name != "README.md"
        })
        .collect();
    files.sort();
    assert!(
        files.len() > 1000,
        "corpus looks incomplete: {}",
        files.len()
    );
    let started = std::time::Instant::now();
    let mut grades = std::collections::BTreeMap::new();
    for path in &files {
        let body = std::fs::read(path).expect("corpus file readable");
        let audit = audit_robots_txt(
            &body,
            &FileContext {
                robots_url: None,
                page: Some("/"),
            },
        );
        let score = Score::compute(&audit.findings);
        assert!(score.score <= 100);
        if audit
            .findings
            .iter()
            .any(|f| f.severity == Severity::Critical)
        {
            assert!(
                score.score <= audit::score::CRITICAL_CAP,
                "{}",
                path.display()
            );
        }
        for finding in &audit.findings {
            assert_eq!(finding.severity, finding.id.severity());
        }
        serde_json::to_string(&audit).expect("serialisable");
        *grades.entry(score.grade.to_string()).or_insert(0usize) += 1;
    }
    eprintln!(
        "audited {} files in {:?}; grades {:?}",
        files.len(),
        started.elapsed(),
        grades
    );
}
