//! The no-panic sweep over the real robots.txt corpus in `shared/corpus/`.
//!
//! Every file is parsed both ways and answers a few URLs. A per-file time bound catches a hang
//! or a blow-up (it is a generous ceiling for a debug build, not a speed target: speed is
//! measured by the benchmarks).

use std::path::PathBuf;
use std::time::{Duration, Instant};

use robots::{AgentRules, ProductTokens, RobotsTxt};

#[path = "support/corpus.rs"]
mod support;
use support::corpus_files;

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

fn sweep(name: &str, minimum_files: usize) {
    let files = corpus_files(name);
    assert!(
        files.len() >= minimum_files,
        "expected at least {minimum_files} files in {name}, found {}",
        files.len()
    );
    let mut slowest = (Duration::ZERO, PathBuf::new());
    for path in &files {
        let body = std::fs::read(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
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
fn every_corpus_file_parses_and_answers_without_panicking() {
    sweep("robots", 2388);
}

/// The 15,311 extra files: `cargo test -p robots --release --test corpus -- --ignored`.
#[test]
#[ignore = "long sweep over robots-extra; run with --ignored"]
fn every_extra_corpus_file_parses_and_answers_without_panicking() {
    sweep("robots-extra", 15_000);
}
