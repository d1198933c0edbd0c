//! One JittyBot workload, repeated, for a profiler (`perf record -e cpu-clock`, callgrind):
//! `cargo run --release -p robots --example profile -- parse|full|check [passes]`
//! (corpus directory: `JITTYBOT_CORPUS_DIR`, as for the tests). `check` parses before each
//! pass and times only the checks, index build included, 64 URLs per file, like the bench.
//! Instructions of one pass, repeatable to the instruction:
//! `valgrind --tool=callgrind --toggle-collect='*check_all*' target/release/examples/profile
//! check 1` (or `*parse_all*` with `parse` or `full`).
use std::hint::black_box;
use std::time::{Duration, Instant};

use robots::{AgentRules, ProductTokens, RobotsTxt};

#[path = "../tests/support/corpus.rs"]
mod support;

fn urls(body: &[u8]) -> Vec<String> {
    let robots = RobotsTxt::parse(body);
    let mut urls: Vec<String> = ["/", "/index.html", "/search?q=robots&page=2", "/a/b/c.pdf"]
        .iter()
        .map(|path| format!("https://example.com{path}"))
        .collect();
    for rule in robots
        .groups()
        .iter()
        .flat_map(|group| group.rules.iter())
        .take(60)
    {
        let filled = rule.pattern.replace('*', "x");
        let path = filled.strip_suffix('$').unwrap_or(&filled);
        urls.push(format!(
            "https://example.com/{}",
            path.trim_start_matches('/')
        ));
    }
    while urls.len() < 64 {
        urls.push(format!("https://example.com/page/{}/more", urls.len()));
    }
    urls
}

/// The timed part of `parse` and `full` (a separate function, so that callgrind can count it
/// alone: `--toggle-collect='*parse_all*'`).
#[inline(never)]
fn parse_all(files: &[Vec<u8>], tokens: &[ProductTokens], full: bool) {
    for file in files {
        if full {
            black_box(RobotsTxt::parse(file));
        } else {
            for tokens in tokens {
                black_box(AgentRules::parse(file, tokens));
            }
        }
    }
}

/// The timed part of `check` (`--toggle-collect='*check_all*'`); returns the URLs checked.
#[inline(never)]
fn check_all(parsed: &[(AgentRules, &Vec<String>)]) -> usize {
    let mut checked = 0;
    for (rules, urls) in parsed {
        for url in urls.iter() {
            black_box(rules.check(url).allowed);
            checked += 1;
        }
    }
    checked
}

fn main() {
    let mode = std::env::args().nth(1).unwrap_or_default();
    let passes: usize = std::env::args()
        .nth(2)
        .and_then(|n| n.parse().ok())
        .unwrap_or(10);
    let files = support::corpus_bodies("robots");
    let bytes: usize = files.iter().map(Vec::len).sum();
    let tokens = [
        ProductTokens::JITTYBOT,
        ProductTokens::from_static(&["Googlebot"]),
    ];
    let mut total = Duration::ZERO;
    let mut units = 0usize;
    match mode.as_str() {
        "parse" | "full" => {
            for _ in 0..passes {
                let started = Instant::now();
                parse_all(&files, &tokens, mode == "full");
                total += started.elapsed();
                units += if mode == "full" { bytes } else { 2 * bytes };
            }
            println!(
                "{mode}: {:.0} MB/s",
                units as f64 / total.as_secs_f64() / 1e6
            );
        }
        "check" => {
            let urls: Vec<Vec<String>> = files.iter().map(|file| urls(file)).collect();
            for _ in 0..passes {
                let parsed: Vec<(AgentRules, &Vec<String>)> = tokens
                    .iter()
                    .flat_map(|tokens| {
                        files
                            .iter()
                            .zip(&urls)
                            .map(|(f, u)| (AgentRules::parse(f, tokens), u))
                    })
                    .collect();
                let started = Instant::now();
                units += check_all(&parsed);
                total += started.elapsed();
            }
            println!(
                "check: {:.0} ns/URL",
                total.as_secs_f64() * 1e9 / units as f64
            );
        }
        _ => eprintln!("usage: profile parse|full|check [passes]"),
    }
}
