//! One engine, one workload, `ITERS` times, for instruction counts under callgrind (repeatable
//! on a shared machine, where wall-clock times drift):
//!
//! ```sh
//! ITERS=1 valgrind --tool=callgrind --callgrind-out-file=/dev/null \
//!   target/release/examples/instructions jittybot parse
//! ```
//! and again with `ITERS=3`; half the difference is one pass over the corpus.
//! Engines: `jittybot`, `robotstxt`, `texting_robots`; workloads: `parse`, `check`.
use std::hint::black_box;

#[path = "../tests/support/corpus.rs"]
mod support;

fn main() {
    let engine = std::env::args().nth(1).unwrap_or_default();
    let workload = std::env::args().nth(2).unwrap_or_default();
    let iterations: usize = std::env::var("ITERS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(1);
    let files = support::corpus_bodies("robots");
    let texts: Vec<String> = files
        .iter()
        .map(|f| String::from_utf8_lossy(f).into_owned())
        .collect();
    let urls = [
        "https://example.com/",
        "https://example.com/search?q=robots&page=2",
        "https://example.com/wp-admin/admin-ajax.php",
        "https://example.com/a/b/c/d/report.pdf",
    ];
    match (engine.as_str(), workload.as_str()) {
        ("jittybot", "parse") => (0..iterations).for_each(|_| {
            files.iter().for_each(|f| {
                black_box(robots::AgentRules::parse(
                    f,
                    &robots::ProductTokens::JITTYBOT,
                ));
            })
        }),
        ("robotstxt", "parse") => (0..iterations).for_each(|_| {
            texts.iter().for_each(|t| {
                let mut matcher = robotstxt::DefaultMatcher::default();
                black_box(matcher.one_agent_allowed_by_robots(t, "JittyBot", urls[0]));
            })
        }),
        ("texting_robots", "parse") => (0..iterations).for_each(|_| {
            files.iter().for_each(|f| {
                let _ = black_box(texting_robots::Robot::new("JittyBot", f));
            })
        }),
        ("jittybot", "check") => {
            let parsed: Vec<_> = files
                .iter()
                .map(|f| robots::AgentRules::parse(f, &robots::ProductTokens::JITTYBOT))
                .collect();
            parsed.iter().for_each(|r| {
                black_box(r.check(urls[0]));
            });
            (0..iterations).for_each(|_| {
                parsed.iter().for_each(|r| {
                    urls.iter().for_each(|u| {
                        black_box(r.check(u).allowed);
                    })
                })
            })
        }
        ("texting_robots", "check") => {
            let parsed: Vec<_> = files
                .iter()
                .filter_map(|f| texting_robots::Robot::new("JittyBot", f).ok())
                .collect();
            (0..iterations).for_each(|_| {
                parsed.iter().for_each(|r| {
                    urls.iter().for_each(|u| {
                        black_box(r.allowed(u));
                    })
                })
            })
        }
        _ => eprintln!("usage: instructions jittybot|robotstxt|texting_robots parse|check"),
    }
}
