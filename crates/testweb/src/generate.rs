//! Generated sites: many linked pages without storing them (benchmarks, big-site tests).

use crate::Reply;

/// The shape of a generated site: every host matching `host_suffix` serves pages
/// `/p0.html` ... `/p{pages-1}.html`, each about `page_bytes` long, each linking to
/// `links_per_page` other pages of the same host (a fixed pseudo-random choice, so every page
/// is reachable from `/p0.html` through `/p1.html`...), and `/robots.txt` allowing everything.
#[derive(Clone, Debug)]
pub struct LinkedPages {
    /// Hosts served: those ending with this (e.g. `.bench.test`).
    pub host_suffix: String,
    /// Pages per host.
    pub pages: u32,
    /// Approximate size of a page in bytes (the smallest, with `size_spread`).
    pub page_bytes: usize,
    /// Pages are `page_bytes` plus up to this many bytes more, varying by page.
    pub size_spread: usize,
    /// Links on each page.
    pub links_per_page: u32,
}

/// A generator for [`crate::TestWeb::generate`] / [`crate::MultiWeb::generate`] serving
/// `shape`.
pub fn linked_pages(
    shape: LinkedPages,
) -> impl Fn(&str, &str) -> Option<Reply> + Send + Sync + 'static {
    // The filler is made once; pages differ in their links and their number.
    let filler =
        "lorem ipsum dolor sit amet consectetur adipiscing elit ".repeat(shape.page_bytes / 55 + 1);
    move |host, path| {
        if !host.ends_with(&shape.host_suffix) {
            return None;
        }
        if path == "/robots.txt" {
            return Some(Reply::robots_txt("User-agent: *\nAllow: /\n"));
        }
        let n: u32 = path
            .strip_prefix("/p")?
            .strip_suffix(".html")?
            .parse()
            .ok()?;
        if n >= shape.pages {
            return None;
        }
        let mut html = String::with_capacity(shape.page_bytes + 64 * shape.links_per_page as usize);
        html.push_str("<!doctype html><html><head><title>page ");
        html.push_str(&n.to_string());
        html.push_str("</title></head><body>");
        for i in 0..shape.links_per_page {
            // The first link is the next page (everything reachable); the rest spread.
            let target = if i == 0 {
                (n + 1) % shape.pages
            } else {
                (n.wrapping_mul(2_654_435_761)
                    .wrapping_add(i.wrapping_mul(40_503)))
                    % shape.pages
            };
            html.push_str(&format!(
                "<p><a href=\"/p{target}.html\">page {target}</a></p>"
            ));
        }
        let extra = (n as usize).wrapping_mul(7_919) % (shape.size_spread + 1);
        let room = (shape.page_bytes + extra).saturating_sub(html.len() + 16);
        html.push_str("<p>");
        html.push_str(&filler[..room.min(filler.len())]);
        html.push_str("</p></body></html>");
        Some(Reply::ok().header("Content-Type", "text/html").body(html))
    }
}
