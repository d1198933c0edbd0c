//! `/sitemap.xml`: the pages the service publishes ([`service::published`]) as a sitemap, or
//! a sitemap index over numbered files once there are more than [`MAX_SITEMAP_ENTRIES`].

use std::fmt::Write as _;

use jiff::Timestamp;
use service::paths::absolute;
use service::published::Published;
use url::Url;

/// The most URLs in one sitemap file (the sitemaps protocol's limit).
pub const MAX_SITEMAP_ENTRIES: usize = 50_000;

/// What `/sitemap.xml` answers: one urlset, or an index of the numbered files.
pub fn root(entries: &[Published], public: &Url) -> String {
    if entries.len() <= MAX_SITEMAP_ENTRIES {
        return urlset(entries, public);
    }
    let mut xml = String::from(
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<sitemapindex xmlns=\"http://www.sitemaps.org/schemas/sitemap/0.9\">\n",
    );
    for (n, chunk) in entries.chunks(MAX_SITEMAP_ENTRIES).enumerate() {
        let lastmod = chunk.iter().map(|entry| entry.lastmod).max();
        let loc = absolute(public, &part_path(n + 1));
        let _ = write!(xml, "<sitemap><loc>{}</loc>", escape(&loc));
        if let Some(lastmod) = lastmod {
            let _ = write!(xml, "<lastmod>{}</lastmod>", w3c(lastmod));
        }
        xml.push_str("</sitemap>\n");
    }
    xml.push_str("</sitemapindex>\n");
    xml
}

/// The numbered file `n` (1-based), when the index lists it.
pub fn part(entries: &[Published], public: &Url, n: usize) -> Option<String> {
    if entries.len() <= MAX_SITEMAP_ENTRIES || n == 0 {
        return None;
    }
    entries
        .chunks(MAX_SITEMAP_ENTRIES)
        .nth(n - 1)
        .map(|chunk| urlset(chunk, public))
}

/// The path of numbered file `n`.
pub fn part_path(n: usize) -> String {
    format!("/sitemaps/{n}.xml")
}

fn urlset(entries: &[Published], public: &Url) -> String {
    let mut xml = String::with_capacity(entries.len() * 120 + 200);
    xml.push_str(
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<urlset xmlns=\"http://www.sitemaps.org/schemas/sitemap/0.9\">\n",
    );
    for entry in entries {
        let loc = absolute(public, &entry.path);
        let _ = writeln!(
            xml,
            "<url><loc>{}</loc><lastmod>{}</lastmod></url>",
            escape(&loc),
            w3c(entry.lastmod)
        );
    }
    xml.push_str("</urlset>\n");
    xml
}

fn w3c(at: Timestamp) -> String {
    at.strftime("%Y-%m-%dT%H:%M:%SZ").to_string()
}

/// XML text escaping.
fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&apos;"),
            c => out.push(c),
        }
    }
    out
}
