//! `read_page` against the lol_html reader it replaced, on pages shaped as the crawler
//! benchmark's (`testweb::linked_pages`: 20–60 KB, 30 links) and on the same pages with
//! their filler as tag soup (a tag every ~20 bytes, a script and a comment every ~150).
//!
//! `cargo run -p crawl --release --example html_bench [rounds]`: interleaved rounds (old,
//! new, old, new, ...), each reading every page once; prints the median round as MB/s and
//! µs per page. `html_bench new [rounds]` or `html_bench old [rounds]` runs only one reader (for
//! callgrind or perf); `HTML_BENCH_PAGES=bench` or `=soup` reads one set of pages only.

// The old reader, as the crate's tests keep it; its `crate::` paths resolve to `crawl::`.
#[allow(dead_code)]
#[path = "../src/html/oracle.rs"]
mod oracle;

pub use crawl::{directives, html, normal};

use std::hint::black_box;
use std::time::{Duration, Instant};

use url::Url;

/// A page of `testweb::linked_pages` (the same shape; that generator is not public).
fn linked_page(n: u32, soup: bool) -> Vec<u8> {
    const PAGES: u32 = 1_000;
    let mut html = format!("<!doctype html><html><head><title>page {n}</title></head><body>");
    for i in 0..30u32 {
        let target = if i == 0 {
            (n + 1) % PAGES
        } else {
            (n.wrapping_mul(2_654_435_761)
                .wrapping_add(i.wrapping_mul(40_503)))
                % PAGES
        };
        html.push_str(&format!(
            "<p><a href=\"/p{target}.html\">page {target}</a></p>"
        ));
    }
    let size = 20_000 + (n as usize).wrapping_mul(7_919) % 40_001;
    let filler = if soup {
        "<div class=\"c\"><span id=s1>lorem</span> <em>ipsum</em></div><!-- c -->\n\
         <script>if (a < b) { x = '<p>'; }</script><img alt=\"\" width=1>"
    } else {
        "lorem ipsum dolor sit amet consectetur adipiscing elit "
    };
    html.push_str("<p>");
    while html.len() < size {
        html.push_str(filler);
    }
    html.push_str("</p></body></html>");
    html.into_bytes()
}

type Reader = fn(&[u8], &Url, Option<&str>, jiff::Timestamp) -> html::Page;

/// One round: every page read once; returns its time.
fn round(read: Reader, pages: &[Vec<u8>], url: &Url) -> Duration {
    let now = jiff::Timestamp::now();
    let start = Instant::now();
    for page in pages {
        black_box(read(black_box(page), url, None, now));
    }
    start.elapsed()
}

fn report(name: &str, mut times: Vec<Duration>, pages: &[Vec<u8>]) {
    times.sort();
    let median = times[times.len() / 2].as_secs_f64();
    let bytes: usize = pages.iter().map(Vec::len).sum();
    println!(
        "{name}: {:.0} MB/s, {:.1} µs per page (median of {} rounds)",
        bytes as f64 / median / 1e6,
        median * 1e6 / pages.len() as f64,
        times.len()
    );
}

fn main() {
    let arg = std::env::args().nth(1).unwrap_or_default();
    let rounds: usize = std::env::args()
        .next_back()
        .and_then(|a| a.parse().ok())
        .unwrap_or(31);
    let url = Url::parse("https://h1.bench.test/p1.html").unwrap();
    // HTML_BENCH_PAGES=bench or =soup: one set only (for per-set instruction counts).
    let only = std::env::var("HTML_BENCH_PAGES").unwrap_or_default();
    for soup in [false, true] {
        if (only == "bench" && soup) || (only == "soup" && !soup) {
            continue;
        }
        let pages: Vec<Vec<u8>> = (0..200).map(|n| linked_page(n, soup)).collect();
        let (old, new): (Reader, Reader) = (oracle::read_page, html::read_page);
        assert_eq!(
            old(&pages[0], &url, None, jiff::Timestamp::now())
                .links
                .len(),
            30
        );
        assert_eq!(
            old(&pages[7], &url, None, jiff::Timestamp::UNIX_EPOCH),
            new(&pages[7], &url, None, jiff::Timestamp::UNIX_EPOCH)
        );
        let kind = if soup { "tag soup" } else { "bench pages" };
        match arg.as_str() {
            "old" | "new" => {
                let read = if arg == "old" { old } else { new };
                let times = (0..rounds).map(|_| round(read, &pages, &url)).collect();
                report(&format!("{kind}, {arg}"), times, &pages);
            }
            _ => {
                let (mut t_old, mut t_new) = (Vec::new(), Vec::new());
                for _ in 0..rounds {
                    t_old.push(round(old, &pages, &url));
                    t_new.push(round(new, &pages, &url));
                }
                report(&format!("{kind}, lol_html"), t_old, &pages);
                report(&format!("{kind}, scanner "), t_new, &pages);
            }
        }
    }
}
