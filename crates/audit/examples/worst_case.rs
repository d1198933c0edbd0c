//! Times the audit of the hostile files of `tests/cost/shapes.rs` (500 KiB each).
//!
//! `cargo run --release -p audit --example worst_case [SHAPE...] [--write DIR] [--rounds N]`
use std::path::PathBuf;
use std::time::{Duration, Instant};

#[path = "../tests/cost/shapes.rs"]
mod shapes;

fn main() {
    let mut wanted = Vec::new();
    let mut write = None;
    let mut rounds = 3;
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--write" => write = args.next().map(PathBuf::from),
            "--rounds" => rounds = args.next().and_then(|n| n.parse().ok()).unwrap_or(3),
            _ => wanted.push(arg),
        }
    }
    // A long page URL: every crawler's rules are checked against it.
    let page = format!("https://example.com/{}z.html", "a".repeat(2000));
    for shape in shapes::SHAPES {
        if !wanted.is_empty() && !wanted.iter().any(|w| w == shape.name) {
            continue;
        }
        let body = (shape.build)(shapes::SIZE);
        if let Some(dir) = &write {
            let path = dir.join(format!("{}.txt", shape.name));
            if let Err(error) = std::fs::write(&path, &body) {
                eprintln!("cannot write {}: {error}", path.display());
            }
        }
        let mut times: Vec<(Duration, Duration)> = Vec::new();
        let mut last = None;
        for _ in 0..rounds {
            let started = Instant::now();
            let cpu = audit::cost::thread_cpu_time();
            let analysis = audit::analyze_file(audit::ProvidedFile::whole(&body), Some(&page));
            times.push((audit::cost::thread_cpu_time() - cpu, started.elapsed()));
            last = Some(analysis);
        }
        times.sort();
        let Some(analysis) = last else { continue };
        let parse_started = audit::cost::thread_cpu_time();
        let parsed = robots::RobotsTxt::parse(&body);
        let parse = audit::cost::thread_cpu_time() - parse_started;
        drop(parsed);
        let audit = audit::audit_robots_txt(
            &body,
            &audit::FileContext {
                page: Some(&page),
                ..audit::FileContext::default()
            },
        );
        let (cpu, wall) = times[times.len() / 2];
        let reached = match &analysis.limits_reached {
            None => "-".to_owned(),
            Some(reached) => serde_json::to_string(reached).unwrap_or_default(),
        };
        println!(
            "{:<20} {:>7} B  cpu {:>6.1} ms (max {:>6.1})  wall {:>7.1} ms  parse {:>5.1} ms  work {:>6.1} M  {:>3} findings  limits {reached}",
            shape.name,
            body.len(),
            cpu.as_secs_f64() * 1000.0,
            times.iter().map(|t| t.0).max().unwrap_or_default().as_secs_f64() * 1000.0,
            wall.as_secs_f64() * 1000.0,
            parse.as_secs_f64() * 1000.0,
            audit.cost.comparison_work as f64 / 1e6,
            analysis.findings.len(),
        );
    }
}
