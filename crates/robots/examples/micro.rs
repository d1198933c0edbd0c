//! Per-line and per-rule costs on synthetic files: `cargo run --release -p robots --example micro`.
use std::hint::black_box;
use std::time::Instant;

fn per_line(label: &str, file: &str, lines: usize) {
    let mut best = f64::MAX;
    for _ in 0..200 {
        let started = Instant::now();
        black_box(robots::AgentRules::parse(
            file.as_bytes(),
            &robots::ProductTokens::JITTYBOT,
        ));
        best = best.min(started.elapsed().as_secs_f64());
    }
    println!("{label:<40} {:>6.1} ns/line", best * 1e9 / lines as f64);
}

fn main() {
    let n = 20_000;
    let mut relevant = String::from("User-agent: *\n");
    let mut other = String::from("User-agent: Other\n");
    let mut comments = String::new();
    for i in 0..n {
        relevant.push_str(&format!("Disallow: /some/path/number/{i}/\n"));
        other.push_str(&format!("Disallow: /some/path/number/{i}/\n"));
        comments.push_str(&format!("# some/path/number/{i}/ comment\n"));
    }
    let only = std::env::args().nth(1).unwrap_or_default();
    if only.is_empty() || only == "compiled" {
        per_line("rules in the * group (compiled)", &relevant, n);
    }
    if only.is_empty() || only == "skipped" {
        per_line("rules in another group (skipped)", &other, n);
    }
    if only.is_empty() {
        per_line("comment lines", &comments, n);
    }
}
