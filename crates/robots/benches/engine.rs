//! The engine's speed and memory on the real corpus, against the peers, in one process:
//! `cargo bench -p robots --bench engine` (the corpus: `JITTYBOT_CORPUS_DIR`, or
//! `shared/corpus` beside the repository; see the crate README for figures).
//!
//! Workloads, each over every corpus file for two agents (`JittyBot` and `Googlebot`):
//! - parse, one crawler: `AgentRules::parse`; the peers' equivalents (`robotstxt` parses while
//!   it matches, so one call per file with one URL is its parse);
//! - parse, full: `RobotsTxt::parse` (once per file, not per agent);
//! - check: `URLS_PER_FILE` URLs per file and agent on rules parsed before the clock starts, the
//!   first check of each building its matching index (so the index is in the figure);
//! - heap held (a counting global allocator): one agent's rules for every file, before and after
//!   the index is built, and the full parse, against the bytes of the files;
//! - the worst case: a rule of 4,000 `*` against a 60 KB URL.
//!
//! Timed workloads run in `ROUNDS` interleaved rounds (default 9), their order rotated each
//! round; the median and the minimum are reported. A peer that panics, errors or takes over a
//! second on a file is named on stderr and left out of its own figures only.

use std::alloc::System;
use std::hint::black_box;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::time::{Duration, Instant};

use robots::{AgentRules, ProductTokens, RobotsTxt};
use stats_alloc::{Region, StatsAlloc, INSTRUMENTED_SYSTEM};

#[global_allocator]
static GLOBAL: &StatsAlloc<System> = &INSTRUMENTED_SYSTEM;

#[path = "../tests/support/corpus.rs"]
mod support;

const AGENTS: [&str; 2] = ["JittyBot", "Googlebot"];
const URLS_PER_FILE: usize = 64;
/// URLs per file and agent for `robotstxt`, which re-parses the whole file for each URL.
const REPARSING_URLS_PER_FILE: usize = 2;
const PEER_TIME_LIMIT: Duration = Duration::from_secs(1);

struct CorpusFile {
    name: String,
    body: Vec<u8>,
    /// The body as UTF-8 (lossy), for the peer that only takes `&str`.
    text: String,
    urls: Vec<String>,
}

/// URLs that exercise a file's own rules (each pattern with `*` filled in and `$` dropped),
/// then common paths, `URLS_PER_FILE` in all.
fn urls_for(body: &[u8]) -> Vec<String> {
    let mut urls: Vec<String> = [
        "/",
        "/index.html",
        "/search?q=robots&page=2",
        "/a/b/c/d/report.pdf",
        "/wp-admin/admin-ajax.php",
        "/products/item-123?color=red",
        "/hus/%C3%A5",
        "/robots.txt",
    ]
    .iter()
    .map(|path| format!("https://example.com{path}"))
    .collect();
    let robots = RobotsTxt::parse(body);
    let patterns = robots.groups().iter().flat_map(|group| group.rules.iter());
    for rule in patterns.take(URLS_PER_FILE - urls.len()) {
        let filled = rule.pattern.replace('*', "x");
        let path = filled.strip_suffix('$').unwrap_or(&filled);
        let slash = if path.starts_with('/') { "" } else { "/" };
        urls.push(format!("https://example.com{slash}{path}"));
    }
    while urls.len() < URLS_PER_FILE {
        urls.push(format!("https://example.com/page/{}/more", urls.len()));
    }
    urls
}

fn load_corpus() -> Vec<CorpusFile> {
    support::corpus_files("robots")
        .into_iter()
        .map(|path| {
            let body = std::fs::read(&path).unwrap_or_default();
            CorpusFile {
                name: path
                    .file_name()
                    .map(|n| n.to_string_lossy().into_owned())
                    .unwrap_or_default(),
                text: String::from_utf8_lossy(&body).into_owned(),
                urls: urls_for(&body),
                body,
            }
        })
        .collect()
}

/// Runs `work` on every file and returns the indices it handles; reports the others.
fn usable_for(peer: &str, corpus: &[CorpusFile], work: impl Fn(&CorpusFile) -> bool) -> Vec<usize> {
    let hook = std::panic::take_hook();
    std::panic::set_hook(Box::new(|_| {}));
    let mut usable = Vec::new();
    for (index, file) in corpus.iter().enumerate() {
        let started = Instant::now();
        let outcome = catch_unwind(AssertUnwindSafe(|| work(file)));
        let elapsed = started.elapsed();
        match outcome {
            Ok(true) if elapsed <= PEER_TIME_LIMIT => usable.push(index),
            Ok(true) => eprintln!(
                "finding: {peer} took {elapsed:?} on {}; left out",
                file.name
            ),
            Ok(false) => eprintln!("finding: {peer} refused {}; left out", file.name),
            Err(_) => eprintln!("finding: {peer} panicked on {}; left out", file.name),
        }
    }
    std::panic::set_hook(hook);
    if usable.len() < corpus.len() {
        eprintln!("{peer}: {} of {} files usable", usable.len(), corpus.len());
    }
    usable
}

/// What a timed workload reports: bytes (MB/s) or URLs (ns/URL).
#[derive(Clone, Copy)]
enum Unit {
    Bytes(u64),
    Urls(u64),
}

struct Workload<'a> {
    name: &'static str,
    unit: Unit,
    /// One pass; returns the time of the part that counts.
    run: Box<dyn Fn() -> Duration + 'a>,
    times: Vec<Duration>,
}

fn time(work: impl FnOnce()) -> Duration {
    let started = Instant::now();
    work();
    started.elapsed()
}

fn tokens() -> Vec<ProductTokens> {
    AGENTS
        .iter()
        .map(|agent| ProductTokens::new([agent]).expect("the agents are product tokens"))
        .collect()
}

fn workloads<'a>(corpus: &'a [CorpusFile], tokens: &'a [ProductTokens]) -> Vec<Workload<'a>> {
    // Shared by several workloads for the whole run.
    let all: &[usize] = Vec::leak((0..corpus.len()).collect());
    let texting: &[usize] = Vec::leak(usable_for("texting_robots", corpus, |file| {
        texting_robots::Robot::new(AGENTS[0], &file.body).is_ok_and(|robot| {
            file.urls.iter().all(|url| {
                black_box(robot.allowed(url));
                true
            })
        })
    }));
    let google: &[usize] = Vec::leak(usable_for("robotstxt", corpus, |file| {
        let mut matcher = robotstxt::DefaultMatcher::default();
        black_box(matcher.one_agent_allowed_by_robots(&file.text, AGENTS[0], &file.urls[0]));
        true
    }));
    let bytes = |set: &[usize]| {
        set.iter()
            .map(|&i| corpus[i].body.len() as u64)
            .sum::<u64>()
    };
    let agents = AGENTS.len() as u64;
    let workload = |name, unit, run: Box<dyn Fn() -> Duration + 'a>| Workload {
        name,
        unit,
        run,
        times: Vec::new(),
    };
    let texting_urls = texting.len() as u64 * agents * URLS_PER_FILE as u64;
    let google_urls = google.len() as u64 * agents * REPARSING_URLS_PER_FILE as u64;
    vec![
        workload(
            "jittybot parse, one crawler",
            Unit::Bytes(bytes(all) * agents),
            Box::new(move || {
                time(|| {
                    for tokens in tokens {
                        for file in corpus {
                            black_box(AgentRules::parse(&file.body, tokens));
                        }
                    }
                })
            }),
        ),
        workload(
            "jittybot parse, full",
            Unit::Bytes(bytes(all)),
            Box::new(move || {
                time(|| {
                    for file in corpus {
                        black_box(RobotsTxt::parse(&file.body));
                    }
                })
            }),
        ),
        workload(
            "jittybot check (index built on first check)",
            Unit::Urls(corpus.len() as u64 * agents * URLS_PER_FILE as u64),
            Box::new(move || {
                let parsed: Vec<AgentRules> = tokens
                    .iter()
                    .flat_map(|tokens| corpus.iter().map(|f| AgentRules::parse(&f.body, tokens)))
                    .collect();
                let urls = corpus.iter().cycle().map(|file| &file.urls);
                time(|| {
                    for (rules, urls) in parsed.iter().zip(urls) {
                        for url in urls {
                            black_box(rules.check(url).allowed);
                        }
                    }
                })
            }),
        ),
        workload(
            "robotstxt 0.3 parse",
            Unit::Bytes(bytes(google) * agents),
            Box::new(move || {
                time(|| {
                    for agent in AGENTS {
                        for &i in google {
                            let mut matcher = robotstxt::DefaultMatcher::default();
                            let file = &corpus[i];
                            black_box(matcher.one_agent_allowed_by_robots(
                                &file.text,
                                agent,
                                &file.urls[0],
                            ));
                        }
                    }
                })
            }),
        ),
        workload(
            "robotstxt 0.3 check (re-parses per URL)",
            Unit::Urls(google_urls),
            Box::new(move || {
                time(|| {
                    for agent in AGENTS {
                        for &i in google {
                            let file = &corpus[i];
                            for url in &file.urls[..REPARSING_URLS_PER_FILE] {
                                let mut matcher = robotstxt::DefaultMatcher::default();
                                black_box(
                                    matcher.one_agent_allowed_by_robots(&file.text, agent, url),
                                );
                            }
                        }
                    }
                })
            }),
        ),
        workload(
            "texting_robots 0.2 parse",
            Unit::Bytes(bytes(texting) * agents),
            Box::new(move || {
                time(|| {
                    for agent in AGENTS {
                        for &i in texting {
                            let _ = black_box(texting_robots::Robot::new(agent, &corpus[i].body));
                        }
                    }
                })
            }),
        ),
        workload(
            "texting_robots 0.2 check",
            Unit::Urls(texting_urls),
            Box::new(move || {
                let robots: Vec<(texting_robots::Robot, &CorpusFile)> = AGENTS
                    .iter()
                    .flat_map(|agent| {
                        texting.iter().filter_map(|&i| {
                            let robot = texting_robots::Robot::new(agent, &corpus[i].body).ok()?;
                            Some((robot, &corpus[i]))
                        })
                    })
                    .collect();
                time(|| {
                    for (robot, file) in &robots {
                        for url in &file.urls {
                            black_box(robot.allowed(url));
                        }
                    }
                })
            }),
        ),
    ]
}

fn median(times: &[Duration]) -> Duration {
    let mut sorted = times.to_vec();
    sorted.sort();
    sorted[sorted.len() / 2]
}

fn report(workload: &Workload<'_>) {
    let figure = |duration: Duration| match workload.unit {
        Unit::Bytes(bytes) => format!("{:>7.0} MB/s", bytes as f64 / duration.as_secs_f64() / 1e6),
        Unit::Urls(urls) => format!("{:>7.0} ns/URL", duration.as_secs_f64() * 1e9 / urls as f64),
    };
    let best = workload.times.iter().min().copied().unwrap_or_default();
    let middle = median(&workload.times);
    println!(
        "{:<46} median {:>9.2} ms {}   min {:>9.2} ms {}",
        workload.name,
        middle.as_secs_f64() * 1e3,
        figure(middle),
        best.as_secs_f64() * 1e3,
        figure(best),
    );
}

/// Heap bytes still held after `build`, and what it built.
fn held<T>(build: impl FnOnce() -> T) -> (i64, T) {
    let region = Region::new(GLOBAL);
    let built = build();
    let change = region.change();
    // stats_alloc already books a reallocation's growth or shrinking in these two.
    let held = change.bytes_allocated as i64 - change.bytes_deallocated as i64;
    (held, built)
}

fn memory(corpus: &[CorpusFile], tokens: &[ProductTokens]) {
    let text: usize = corpus.iter().map(|file| file.body.len()).sum();
    let mb = |bytes: i64| bytes as f64 / 1e6;
    println!(
        "\nheap held, whole corpus ({:.1} MB of robots.txt), counting allocator:",
        mb(text as i64)
    );
    for tokens in tokens {
        let (parsed, rules) = held(|| {
            let mut rules = Vec::with_capacity(corpus.len());
            rules.extend(
                corpus
                    .iter()
                    .map(|file| AgentRules::parse(&file.body, tokens)),
            );
            rules
        });
        let (indexed, ()) = held(|| {
            for rules in &rules {
                black_box(rules.check("/").allowed);
            }
        });
        println!(
            "  jittybot, {:<10} rules {:>6.1} MB, + index {:>6.1} MB = {:>6.1} MB ({:.2}x the text)",
            tokens.first(),
            mb(parsed),
            mb(indexed),
            mb(parsed + indexed),
            (parsed + indexed) as f64 / text as f64
        );
        drop(rules);
    }
    let (full, parsed) = held(|| {
        let mut parsed = Vec::with_capacity(corpus.len());
        parsed.extend(corpus.iter().map(|file| RobotsTxt::parse(&file.body)));
        parsed
    });
    println!(
        "  jittybot, full parse   {:>6.1} MB ({:.2}x the text)",
        mb(full),
        full as f64 / text as f64
    );
    drop(parsed);
    let (texting, robots) = held(|| {
        let robots: Vec<_> = corpus
            .iter()
            .filter_map(|file| texting_robots::Robot::new(AGENTS[0], &file.body).ok())
            .collect();
        robots
    });
    println!(
        "  texting_robots, {:<10}    {:>6.1} MB ({:.2}x the text)",
        AGENTS[0],
        mb(texting),
        texting as f64 / text as f64
    );
    drop(robots);
}

fn worst_case() {
    println!("\nworst case (median of 51 checks):");
    for (stars, url_bytes) in [(4_000, 60_000), (5_000, 100_000)] {
        let file = format!("User-agent: *\nDisallow: /{}z\n", "*a".repeat(stars));
        let url = format!("https://example.com/{}", "a".repeat(url_bytes));
        let rules = AgentRules::parse(file.as_bytes(), &ProductTokens::JITTYBOT);
        let times: Vec<Duration> = (0..51)
            .map(|_| time(|| assert!(black_box(rules.check(&url)).allowed)))
            .collect();
        println!(
            "  a rule of {stars} '*' against a {} KB URL: {:.1} µs",
            url_bytes / 1000,
            median(&times).as_secs_f64() * 1e6
        );
    }
}

fn main() {
    // `cargo bench` passes `--bench`; a filter argument is not supported.
    let rounds: usize = std::env::var("ROUNDS")
        .ok()
        .and_then(|rounds| rounds.parse().ok())
        .unwrap_or(9);
    let corpus = load_corpus();
    let tokens = tokens();
    let mut workloads = workloads(&corpus, &tokens);
    println!(
        "{} files, {} agents ({}), {} URLs per file and agent; {rounds} interleaved rounds",
        corpus.len(),
        AGENTS.len(),
        AGENTS.join(", "),
        URLS_PER_FILE
    );
    for round in 0..rounds {
        let count = workloads.len();
        for step in 0..count {
            let workload = &mut workloads[(round + step) % count];
            let elapsed = (workload.run)();
            workload.times.push(elapsed);
        }
    }
    // ROUNDS=0 reports memory and the worst case only.
    for workload in workloads
        .iter()
        .filter(|workload| !workload.times.is_empty())
    {
        report(workload);
    }
    memory(&corpus, &tokens);
    worst_case();
}
