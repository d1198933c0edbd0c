use std::time::Instant;
fn main() {
    let dir = "/work/shared/corpus/robots";
    let mut files = vec![];
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        files.push(std::fs::read(&p).unwrap());
    }
    let total: usize = files.iter().map(|f| f.len().min(512_000)).sum();
    let mut lines = 0usize;
    for f in &files {
        lines += robots::RobotsTxt::parse(f).line_count();
    }
    let mut rules = 0usize;
    for f in &files {
        rules += robots::AgentRules::parse(f, &["JittyBot"]).rules().len();
    }
    println!("bytes read {total}, lines {lines}, jittybot rules {rules}");
    let mode = std::env::args().nth(1).unwrap_or_default();
    for _ in 0..(if mode == "check" { 0 } else { 3 }) {
        let t = Instant::now();
        for _ in 0..10 {
            for f in &files {
                std::hint::black_box(robots::AgentRules::parse(f, &["JittyBot"]));
            }
        }
        println!("parse {:?}/iter", t.elapsed() / 10);
    }
    let parsed: Vec<_> = files
        .iter()
        .map(|f| robots::AgentRules::parse(f, &["JittyBot"]))
        .collect();
    let urls = [
        "https://example.com/",
        "https://example.com/search?q=robots&page=2",
        "https://example.com/wp-admin/x.php",
        "https://example.com/a/b/c/d/report.pdf",
    ];
    for _ in 0..(if mode == "parse" { 0 } else { 3 }) {
        let t = Instant::now();
        for _ in 0..10 {
            for r in &parsed {
                for u in urls {
                    std::hint::black_box(r.check(u).allowed);
                }
            }
        }
        println!(
            "check {:?}/url",
            t.elapsed() / (10 * parsed.len() as u32 * urls.len() as u32)
        );
    }
}
