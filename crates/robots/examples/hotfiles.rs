use std::time::Instant;
fn main() {
    let dir = "/work/shared/corpus/robots";
    let mut files = vec![];
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        files.push((
            p.file_name().unwrap().to_string_lossy().to_string(),
            std::fs::read(&p).unwrap(),
        ));
    }
    let urls = [
        "https://example.com/",
        "https://example.com/search?q=robots&page=2",
        "https://example.com/wp-admin/x.php",
        "https://example.com/a/b/c/d/report.pdf",
    ];
    let mut times = vec![];
    let mut total = 0.0;
    for (name, body) in &files {
        let r = robots::AgentRules::parse(body, &["JittyBot"]);
        let t = Instant::now();
        for _ in 0..200 {
            for u in urls {
                std::hint::black_box(r.check(u).allowed);
            }
        }
        let ns = t.elapsed().as_nanos() as f64 / 800.0;
        total += ns;
        times.push((ns, r.rule_count(), name.clone()));
    }
    times.sort_by(|a, b| b.0.partial_cmp(&a.0).unwrap());
    println!("mean {:.0} ns/url", total / files.len() as f64);
    for t in times.iter().take(12) {
        println!("{:>8.0} ns  {:>6} rules  {}", t.0, t.1, t.2);
    }
    let med = &times[times.len() / 2];
    println!("median {:.0}", med.0);
}
