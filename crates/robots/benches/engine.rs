//! Parse and check speed over the real corpus, against the peers, in one run.
//!
//! `cargo bench -p robots --bench engine` (see the crate README for figures). Workloads:
//! - parse: build the rules for one token from every corpus file (and, for JittyBot, the same
//!   followed by one check, which also builds the matching index);
//! - check: parse each file once, then answer its URLs (16 per file, drawn from its own rules);
//! - wildcard: a rule of 5,000 `*` against a 100 KB URL.
//!
//! A peer that panics, errors or takes over a second on a file is reported on stderr and left
//! out of that peer's figures only (the file stays in the others').

use std::hint::black_box;
use std::panic::{catch_unwind, AssertUnwindSafe};

use std::time::{Duration, Instant};

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use robots::{AgentRules, ProductTokens, RobotsTxt};

#[path = "../tests/support/corpus.rs"]
mod support;
use support::corpus_files;

const TOKEN: &str = "JittyBot";
const URLS_PER_FILE: usize = 16;
const PEER_TIME_LIMIT: Duration = Duration::from_secs(1);

struct CorpusFile {
    name: String,
    body: Vec<u8>,
    /// The body as UTF-8 (lossy), for the peer that only takes `&str`.
    text: String,
    urls: Vec<String>,
}

/// URLs that exercise a file's own rules: each pattern with `*` filled in and `$` dropped.
fn urls_for(body: &[u8]) -> Vec<String> {
    let mut urls: Vec<String> = vec![
        "https://example.com/".into(),
        "https://example.com/index.html".into(),
        "https://example.com/search?q=robots&page=2".into(),
        "https://example.com/a/b/c/d/report.pdf".into(),
    ];
    let robots = RobotsTxt::parse(body);
    let patterns = robots.groups().iter().flat_map(|group| group.rules.iter());
    for rule in patterns {
        if urls.len() >= URLS_PER_FILE {
            break;
        }
        let filled = rule.pattern.replace('*', "x");
        let path = filled.strip_suffix('$').unwrap_or(&filled);
        let path = if path.starts_with('/') {
            path.to_owned()
        } else {
            format!("/{path}")
        };
        urls.push(format!("https://example.com{path}"));
    }
    while urls.len() < URLS_PER_FILE {
        urls.push(format!("https://example.com/page/{}", urls.len()));
    }
    urls
}

fn load_corpus() -> Vec<CorpusFile> {
    corpus_files("robots")
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
    eprintln!("{peer}: {} of {} files usable", usable.len(), corpus.len());
    usable
}

fn quietly<T>(work: impl FnOnce() -> T) -> T {
    let hook = std::panic::take_hook();
    std::panic::set_hook(Box::new(|_| {}));
    let result = work();
    std::panic::set_hook(hook);
    result
}

fn benches(c: &mut Criterion) {
    let corpus = load_corpus();
    let all: Vec<usize> = (0..corpus.len()).collect();
    let (texting, google) = quietly(|| {
        let texting = usable_for(
            "texting_robots",
            &corpus,
            |file| match texting_robots::Robot::new(TOKEN, &file.body) {
                Ok(robot) => {
                    file.urls.iter().for_each(|url| {
                        black_box(robot.allowed(url));
                    });
                    true
                }
                Err(_) => false,
            },
        );
        let google = usable_for("robotstxt", &corpus, |file| {
            let mut matcher = robotstxt::DefaultMatcher::default();
            black_box(matcher.one_agent_allowed_by_robots(&file.text, TOKEN, &file.urls[0]));
            true
        });
        (texting, google)
    });
    let bytes = |set: &[usize]| {
        set.iter()
            .map(|&i| corpus[i].body.len() as u64)
            .sum::<u64>()
    };

    let mut parse = c.benchmark_group("parse");
    parse
        .sample_size(10)
        .measurement_time(Duration::from_secs(8));
    for (name, set) in [
        ("jittybot", &all),
        ("texting_robots", &texting),
        ("robotstxt", &google),
    ] {
        parse.throughput(Throughput::Bytes(bytes(set)));
        parse.bench_function(
            BenchmarkId::new(name, format!("{} files", set.len())),
            |b| {
                b.iter(|| match name {
                    "jittybot" => set.iter().for_each(|&i| {
                        black_box(AgentRules::parse(&corpus[i].body, &ProductTokens::JITTYBOT));
                    }),
                    "texting_robots" => set.iter().for_each(|&i| {
                        let _ = black_box(texting_robots::Robot::new(TOKEN, &corpus[i].body));
                    }),
                    // Google's library parses while it matches: one call per file is its parse.
                    _ => set.iter().for_each(|&i| {
                        let mut matcher = robotstxt::DefaultMatcher::default();
                        let file = &corpus[i];
                        black_box(matcher.one_agent_allowed_by_robots(
                            &file.text,
                            TOKEN,
                            &file.urls[0],
                        ));
                    }),
                })
            },
        );
    }
    // The matching index is built on the first check; this shows what that adds to a parse.
    parse.throughput(Throughput::Bytes(bytes(&all)));
    parse.bench_function(
        BenchmarkId::new("jittybot+first-check", format!("{} files", all.len())),
        |b| {
            b.iter(|| {
                for file in &corpus {
                    let rules = AgentRules::parse(&file.body, &ProductTokens::JITTYBOT);
                    black_box(rules.check(&file.urls[0]).allowed);
                }
            })
        },
    );
    parse.finish();

    let mut check = c.benchmark_group("check");
    check
        .sample_size(10)
        .measurement_time(Duration::from_secs(8));
    let jitty_rules: Vec<AgentRules> = corpus
        .iter()
        .map(|file| AgentRules::parse(&file.body, &ProductTokens::JITTYBOT))
        .collect();
    check.throughput(Throughput::Elements((all.len() * URLS_PER_FILE) as u64));
    check.bench_function(BenchmarkId::new("jittybot", "urls"), |b| {
        b.iter(|| {
            for (rules, file) in jitty_rules.iter().zip(&corpus) {
                for url in &file.urls {
                    black_box(rules.check(url).allowed);
                }
            }
        })
    });
    let texting_robots: Vec<(texting_robots::Robot, usize)> = texting
        .iter()
        .filter_map(|&i| Some((texting_robots::Robot::new(TOKEN, &corpus[i].body).ok()?, i)))
        .collect();
    check.throughput(Throughput::Elements(
        (texting_robots.len() * URLS_PER_FILE) as u64,
    ));
    check.bench_function(BenchmarkId::new("texting_robots", "urls"), |b| {
        b.iter(|| {
            for (robot, i) in &texting_robots {
                for url in &corpus[*i].urls {
                    black_box(robot.allowed(url));
                }
            }
        })
    });
    check.finish();

    let mut wildcard = c.benchmark_group("wildcard");
    wildcard
        .sample_size(10)
        .measurement_time(Duration::from_secs(4));
    let file = format!("User-agent: *\nDisallow: /{}z\n", "*a".repeat(5000));
    let url = format!("https://example.com/{}", "a".repeat(100_000));
    let rules = AgentRules::parse(file.as_bytes(), &ProductTokens::JITTYBOT);
    wildcard.bench_function("jittybot", |b| {
        b.iter(|| black_box(rules.check(&url).allowed))
    });
    match quietly(|| catch_unwind(|| texting_robots::Robot::new(TOKEN, file.as_bytes()))) {
        Ok(Ok(robot)) => wildcard.bench_function("texting_robots", |b| {
            b.iter(|| black_box(robot.allowed(&url)))
        }),
        _ => {
            eprintln!("finding: texting_robots cannot build the 5,000-star rule");
            &mut wildcard
        }
    };
    wildcard.finish();
}

criterion_group!(engine, benches);
criterion_main!(engine);
