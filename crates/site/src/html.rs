//! The page shell, the stylesheet and the small helpers every page uses.
//!
//! maud escapes every interpolated value (`<`, `>`, `&`, `"`, `'`), so text from an analysed
//! site can never become markup. [`visible`] goes one step further for that text: control
//! characters and bidirectional overrides are shown as escapes, so a robots.txt line cannot
//! hide or reorder what the reader sees.

use std::borrow::Cow;
use std::fmt::Write as _;

use audit::Grade;
use jiff::Timestamp;
use maud::{html, Markup, PreEscaped, DOCTYPE};

/// The stylesheet, served at [`stylesheet_path`] with a year-long cache.
pub const STYLESHEET: &str = include_str!("site.css");

/// The stylesheet's address: its content hash is in the name, so a new stylesheet is a new
/// address and the old one may be cached for ever.
pub fn stylesheet_path() -> String {
    format!("/static/site.{:016x}.css", fnv1a(STYLESHEET.as_bytes()))
}

fn fnv1a(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325_u64, |hash, &byte| {
        (hash ^ u64::from(byte)).wrapping_mul(0x0100_0000_01b3)
    })
}

/// What goes in a page's `<head>` besides the title and stylesheet.
#[derive(Debug, Clone, Default)]
pub struct Head {
    /// Robots meta tags `(name, content)`.
    pub robots_meta: Vec<(String, &'static str)>,
    /// Seconds after which the page reloads itself (an analysis in progress).
    pub refresh_seconds: Option<u32>,
}

/// A whole page: doctype, head, the site's header and footer around `main`.
pub fn page(title: &str, head: &Head, main: Markup) -> Markup {
    html! {
        (DOCTYPE)
        html lang="en" {
            head {
                meta charset="utf-8";
                meta name="viewport" content="width=device-width, initial-scale=1";
                @for (name, content) in &head.robots_meta {
                    meta name=(name) content=(content);
                }
                @if let Some(seconds) = head.refresh_seconds {
                    meta http-equiv="refresh" content=(seconds);
                }
                title { (visible(title)) " · RobotsTxtParser" }
                link rel="stylesheet" href=(stylesheet_path());
            }
            body {
                a.skip href="#main" { "Skip to content" }
                header.site {
                    nav aria-label="Site" {
                        a.brand href="/" { "RobotsTxtParser" }
                        a href="/stats" { "State of the web" }
                        a href="/scoring" { "How scoring works" }
                        a href="/bot" { "About the bot" }
                    }
                }
                main #main { (main) }
                footer.site {
                    p { "RobotsTxtParser audits robots.txt files and scores them out of 100. "
                        a href="/bot" { "What the bot does and how to block it" } "." }
                }
            }
        }
    }
}

/// `text` with control characters and bidirectional marks written as escapes (`\x1b`,
/// `\u{202e}`); tabs too, so what a line holds is what the reader sees.
pub fn visible(text: &str) -> Cow<'_, str> {
    if !text.chars().any(is_hidden) {
        return Cow::Borrowed(text);
    }
    let mut shown = String::with_capacity(text.len() + 8);
    for c in text.chars() {
        match c {
            '\t' => shown.push_str("\\t"),
            '\r' => shown.push_str("\\r"),
            '\n' => shown.push_str("\\n"),
            c if is_hidden(c) && c.is_ascii() => {
                let _ = write!(shown, "\\x{:02x}", u32::from(c));
            }
            c if is_hidden(c) => {
                let _ = write!(shown, "\\u{{{:x}}}", u32::from(c));
            }
            c => shown.push(c),
        }
    }
    Cow::Owned(shown)
}

/// Control characters and the characters that reorder text.
fn is_hidden(c: char) -> bool {
    c.is_control()
        || matches!(
            c,
            '\u{061c}' | '\u{200e}' | '\u{200f}' | '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}'
        )
}

/// A grade as a badge, with its class for colour and its letter as text (colour is never the
/// only signal).
pub fn grade_badge(grade: Grade) -> Markup {
    let class = format!("grade grade-{}", grade.to_string().to_lowercase());
    html! { span class=(class) aria-label=(format!("grade {grade}")) { (grade) } }
}

/// A time as `2026-12-03 08:15 UTC`, in a `<time>` element.
pub fn time(at: Timestamp) -> Markup {
    let shown = at.strftime("%Y-%m-%d %H:%M UTC").to_string();
    html! { time datetime=(at.to_string()) { (shown) } }
}

/// Markup known to be safe (our own generated SVG or rendered Markdown).
pub fn trusted(markup: String) -> PreEscaped<String> {
    PreEscaped(markup)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hidden_characters_show_as_escapes() {
        assert_eq!(visible("a\u{1b}[2Jb"), "a\\x1b[2Jb");
        assert_eq!(visible("/admin\u{202e}txt.exe"), "/admin\\u{202e}txt.exe");
        assert_eq!(visible("plain"), "plain");
    }
}
