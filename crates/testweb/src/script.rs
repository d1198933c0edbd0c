//! Generated sites of small script pages (the interactive crawl's benchmark and tests): links
//! that only a browser running the page's script finds.

use crate::Reply;

/// The shape of a generated script site: every host ending with `host_suffix` serves pages
/// `/p0.html` ... `/p{pages-1}.html`. A page has a stylesheet (`/style.css`) and a script
/// (`/app.js`); the script fetches `/data/{n}.json` and builds the page's links from it:
/// `/p{2n+1}.html` and `/p{2n+2}.html` (those that exist). The served HTML has no links, so
/// every page but `/p0.html` is found only by running the script. `/robots.txt` allows
/// everything; `/sitemap.xml` is not found.
#[derive(Clone, Debug)]
pub struct ScriptPages {
    /// Hosts served: those ending with this (e.g. `.web.test`).
    pub host_suffix: String,
    /// Pages per host.
    pub pages: u32,
}

/// The links page `n` of a site of `pages` pages builds by script.
pub fn script_links(n: u32, pages: u32) -> Vec<u32> {
    [2 * n + 1, 2 * n + 2]
        .into_iter()
        .filter(|&t| t < pages)
        .collect()
}

const APP_JS: &str = "fetch('/data/' + document.body.dataset.n + '.json')
  .then(function (r) { return r.json(); })
  .then(function (d) {
    d.links.forEach(function (href) {
      var a = document.createElement('a');
      a.href = href; a.textContent = href;
      document.body.appendChild(a);
    });
  });
";

/// A generator for [`crate::TestWeb::generate`] / [`crate::MultiWeb::generate`] serving
/// `shape`.
pub fn script_pages(
    shape: ScriptPages,
) -> impl Fn(&str, &str) -> Option<Reply> + Send + Sync + 'static {
    move |host, path| {
        if !host.ends_with(&shape.host_suffix) {
            return None;
        }
        match path {
            "/robots.txt" => return Some(Reply::robots_txt("User-agent: *\nAllow: /\n")),
            "/style.css" => {
                return Some(
                    Reply::ok()
                        .header("Content-Type", "text/css")
                        .body("body { font-family: sans-serif; }"),
                )
            }
            "/app.js" => {
                return Some(
                    Reply::ok()
                        .header("Content-Type", "text/javascript")
                        .body(APP_JS),
                )
            }
            _ => {}
        }
        if let Some(n) = path
            .strip_prefix("/data/")
            .and_then(|p| p.strip_suffix(".json"))
        {
            let n: u32 = n.parse().ok().filter(|&n| n < shape.pages)?;
            let links: Vec<String> = script_links(n, shape.pages)
                .into_iter()
                .map(|t| format!("\"/p{t}.html\""))
                .collect();
            return Some(
                Reply::ok()
                    .header("Content-Type", "application/json")
                    .body(format!("{{\"links\": [{}]}}", links.join(", "))),
            );
        }
        let n: u32 = path
            .strip_prefix("/p")?
            .strip_suffix(".html")?
            .parse()
            .ok()
            .filter(|&n| n < shape.pages)?;
        Some(
            Reply::ok()
                .header("Content-Type", "text/html; charset=utf-8")
                .body(format!(
                    "<!doctype html><html><head><title>page {n}</title>\
                     <link rel=\"stylesheet\" href=\"/style.css\">\
                     <script src=\"/app.js\" defer></script></head>\
                     <body data-n=\"{n}\"><h1>page {n}</h1></body></html>"
                )),
        )
    }
}
