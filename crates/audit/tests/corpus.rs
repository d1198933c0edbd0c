//! The corpus sweeps: every file of the sample in the repository (by default) or of the full
//! corpus (`--ignored`) audits and scores without a panic, and the report is consistent: every
//! finding's line exists, the score is the score of the findings, and the report survives a
//! round trip through JSON.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use audit::{audit_robots_txt, FileAudit, FileContext, Score, Severity};

#[path = "../../../testdata/corpus/reader.rs"]
mod corpus;

/// A file taking longer than this (debug build, loaded machine) means something is wrong.
const PER_FILE_CEILING: Duration = Duration::from_secs(20);

/// Audits every file; returns the check ids seen.
fn sweep(files: &[PathBuf]) -> BTreeSet<String> {
    let mut seen = BTreeSet::new();
    let mut grades = std::collections::BTreeMap::new();
    for path in files {
        let body = corpus::read(path);
        let started = Instant::now();
        let audit = audit_robots_txt(
            &body,
            &FileContext {
                robots_url: None,
                page: Some("/"),
                ..FileContext::default()
            },
        );
        let score = Score::compute(&audit.findings);
        let elapsed = started.elapsed();
        assert!(
            elapsed < PER_FILE_CEILING,
            "{} took {elapsed:?}",
            path.display()
        );
        check_findings(path, &audit, &mut seen);
        check_score_and_json(path, &audit, &score);
        *grades.entry(score.grade.to_string()).or_insert(0usize) += 1;
    }
    eprintln!("audited {} files; grades {grades:?}", files.len());
    seen
}

/// Every finding of `audit` (of the file at `path`) has its check's severity, a line that
/// exists and a title it can render; records the check ids in `seen`.
fn check_findings(path: &Path, audit: &FileAudit, seen: &mut BTreeSet<String>) {
    for finding in &audit.findings {
        assert_eq!(
            Some(finding.severity),
            finding.id.severity(),
            "{}",
            path.display()
        );
        if let Some(line) = finding.line() {
            // A file cut by the size limit is reported at the first line not read.
            let last = audit.summary.lines.max(1)
                + usize::from(finding.id == audit::CheckId::FetchTooLarge);
            assert!(
                (1..=last).contains(&line),
                "{}: {} at line {line} of {}",
                path.display(),
                finding.id,
                audit.summary.lines
            );
        }
        assert!(
            finding.specific_title().is_some(),
            "{}: {finding:?} cannot render its title",
            path.display()
        );
        seen.insert(finding.id.to_string());
    }
}

/// A critical finding caps the score, and the audit survives a JSON round trip.
fn check_score_and_json(path: &Path, audit: &FileAudit, score: &Score) {
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
    let json = serde_json::to_string(audit).expect("serialisable");
    let back: FileAudit =
        serde_json::from_str(&json).unwrap_or_else(|error| panic!("{}: {error}", path.display()));
    assert_eq!(
        &back,
        audit,
        "{}: the JSON round trip changed the audit",
        path.display()
    );
}

#[test]
fn every_sample_file_audits_consistently() {
    let files = corpus::sample_files();
    assert!(files.len() >= 300, "the sample has {} files", files.len());
    let seen = sweep(&files);
    // Real files are messy: a sample chosen for coverage sets off most of the file checks. Far
    // fewer means the audit stopped looking.
    assert!(
        seen.len() >= 25,
        "only {} checks fired: {seen:?}",
        seen.len()
    );
}

/// `JITTYBOT_CORPUS_DIR=/path/to/corpus cargo test -p audit --release --test corpus --
/// --ignored`
#[test]
#[ignore = "sweep over the full corpus (not in the repository); run with --ignored"]
fn every_corpus_file_audits_consistently() {
    sweep(&corpus::corpus_files("robots"));
}
