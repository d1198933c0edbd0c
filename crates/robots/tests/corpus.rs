//! The no-panic sweeps over real robots.txt files: by default the sample in the repository
//! (`testdata/corpus/robots/`), with `--ignored` the full corpora (`JITTYBOT_CORPUS_DIR` or
//! `../shared/corpus` beside the repository; see `testdata/corpus/reader.rs`).
//!
//! Every file is parsed both ways and answers a few URLs. A per-file time bound catches a hang
//! or a blow-up (it is a generous ceiling for a debug build, not a speed target: speed is
//! measured by the benchmarks).

use std::path::PathBuf;
use std::time::{Duration, Instant};

use robots::{AgentRules, ProductTokens, RobotsTxt};

#[path = "support/corpus.rs"]
mod support;
use support::{corpus_files, read, sample_files};

/// A file taking longer than this (debug build, loaded machine) means something is wrong.
const PER_FILE_CEILING: Duration = Duration::from_secs(20);

const PROBES: &[&str] = &[
    "/",
    "/index.html",
    "/search?q=robots&page=2",
    "/wp-admin/admin-ajax.php",
    "/media/images/photo%20one.jpg",
    "/hus/å?x=1#frag",
    "https://example.com/a/b/c/d/e/f/g/h/i/j/k.pdf",
    "/robots.txt",
];

fn sweep(name: &str, files: &[PathBuf], minimum_files: usize) {
    assert!(
        files.len() >= minimum_files,
        "expected at least {minimum_files} files in {name}, found {}",
        files.len()
    );
    let mut slowest = (Duration::ZERO, PathBuf::new());
    for path in files {
        let body = read(path);
        let started = Instant::now();
        let full = RobotsTxt::parse(&body);
        let googlebot = ProductTokens::from_static(&["Googlebot"]);
        for tokens in [
            &ProductTokens::JITTYBOT,
            &ProductTokens::JITTYBOT_IMAGE,
            &googlebot,
        ] {
            let agent = AgentRules::parse(&body, tokens);
            assert_eq!(
                agent,
                full.rules_for(tokens),
                "{}: the two parses disagree",
                path.display()
            );
            for probe in PROBES {
                let _ = agent.check(probe).to_string();
            }
        }
        for diagnostic in full.diagnostics() {
            let _ = diagnostic.to_string();
        }
        let elapsed = started.elapsed();
        assert!(
            elapsed < PER_FILE_CEILING,
            "{} took {elapsed:?}",
            path.display()
        );
        if elapsed > slowest.0 {
            slowest = (elapsed, path.clone());
        }
    }
    eprintln!(
        "{name}: {} files, slowest {:?} ({})",
        files.len(),
        slowest.0,
        slowest.1.display()
    );
}

#[test]
fn every_sample_file_parses_and_answers_without_panicking() {
    sweep("the sample", &sample_files(), 300);
}

/// The 2,388 files of the full corpus: `cargo test -p robots --release --test corpus --
/// --ignored`.
#[test]
#[ignore = "sweep over the full corpus (not in the repository); run with --ignored"]
fn every_corpus_file_parses_and_answers_without_panicking() {
    sweep("robots", &corpus_files("robots"), 2388);
}

/// The 15,311 extra files.
#[test]
#[ignore = "long sweep over robots-extra (not in the repository); run with --ignored"]
fn every_extra_corpus_file_parses_and_answers_without_panicking() {
    sweep("robots-extra", &corpus_files("robots-extra"), 15_000);
}
