//! Which corpus files cost the most to parse: `cargo run --release -p robots --example hotparse`.
use std::time::Instant;
fn main() {
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/../../../shared/corpus/robots");
    let mut rows = Vec::new();
    let mut total = 0.0;
    for entry in std::fs::read_dir(dir).expect("corpus") {
        let path = entry.expect("entry").path();
        let body = std::fs::read(&path).expect("file");
        let mut best = f64::MAX;
        for _ in 0..5 {
            let started = Instant::now();
            std::hint::black_box(robots::AgentRules::parse(&body, &["JittyBot"]));
            best = best.min(started.elapsed().as_secs_f64());
        }
        total += best;
        let name = path
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        rows.push((best, body.len(), name));
    }
    rows.sort_by(|a, b| b.0.total_cmp(&a.0));
    println!("total {:.2} ms", total * 1e3);
    for (t, len, name) in rows.iter().take(10) {
        println!(
            "{:>8.3} ms {:>9} B {:>6.1} ns/B  {name}",
            t * 1e3,
            len,
            t * 1e9 / (*len).min(512_000) as f64
        );
    }
}
