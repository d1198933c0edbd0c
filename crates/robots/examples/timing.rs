//! Quick ratios while optimising (the benchmark is `cargo bench -p robots --bench engine`):
//! `cargo run --release -p robots --example timing [parse|check]` (corpus directory:
//! `JITTYBOT_CORPUS_DIR`, as for the tests).
use std::hint::black_box;

#[path = "../tests/support/corpus.rs"]
mod support;
use std::time::Instant;

fn main() {
    let mode = std::env::args().nth(1).unwrap_or_default();
    let files = support::corpus_bodies("robots");
    let texts: Vec<String> = files
        .iter()
        .map(|f| String::from_utf8_lossy(f).into_owned())
        .collect();
    let time = |label: &str, runs: u32, work: &dyn Fn()| {
        let mut best = f64::MAX;
        for _ in 0..runs {
            let started = Instant::now();
            work();
            best = best.min(started.elapsed().as_secs_f64());
        }
        println!("{label:<28} {:>9.2} ms (best of {runs})", best * 1e3);
        best
    };
    if mode != "check" {
        let ours = time("parse jittybot", 15, &|| {
            for f in &files {
                black_box(robots::AgentRules::parse(
                    f,
                    &robots::ProductTokens::JITTYBOT,
                ));
            }
        });
        if mode == "parse-only" {
            return;
        }
        let google = time("parse robotstxt (1 match)", 5, &|| {
            for t in &texts {
                let mut m = robotstxt::DefaultMatcher::default();
                black_box(m.one_agent_allowed_by_robots(t, "JittyBot", "https://example.com/"));
            }
        });
        let texting = time("parse texting_robots", 5, &|| {
            for f in &files {
                let _ = black_box(texting_robots::Robot::new("JittyBot", f));
            }
        });
        println!(
            "parse: {:.1}x robotstxt, {:.1}x texting_robots",
            google / ours,
            texting / ours
        );
    }
    if mode != "parse" {
        let urls = [
            "https://example.com/",
            "https://example.com/search?q=robots&page=2",
            "https://example.com/wp-admin/x.php",
            "https://example.com/a/b/c/d/report.pdf",
        ];
        let ours: Vec<_> = files
            .iter()
            .map(|f| robots::AgentRules::parse(f, &robots::ProductTokens::JITTYBOT))
            .collect();
        let theirs: Vec<_> = files
            .iter()
            .filter_map(|f| texting_robots::Robot::new("JittyBot", f).ok())
            .collect();
        let per_url = |n: usize| 1e9 / (n * urls.len()) as f64;
        let a = time("check jittybot", 15, &|| {
            for r in &ours {
                for u in urls {
                    black_box(r.check(u).allowed);
                }
            }
        }) * per_url(ours.len());
        let b = time("check texting_robots", 5, &|| {
            for r in &theirs {
                for u in urls {
                    black_box(r.allowed(u));
                }
            }
        }) * per_url(theirs.len());
        println!("check: {a:.0} ns/url vs {b:.0} ns/url: {:.1}x", b / a);
    }
}
