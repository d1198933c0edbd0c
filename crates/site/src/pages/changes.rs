//! "What changed" since the previous report of the same URL: robots.txt lines added and
//! removed, findings fixed and new, the score's move.
//!
//! Lines are compared as a multiset (a line moved is not a change; a line added twice is
//! counted twice): linear in the files' size, so two 500 KB files cost milliseconds, where a
//! longest-common-subsequence diff would not be bounded. Findings are compared by check and
//! evidence text, not by line number, so a line inserted above does not "fix" every finding
//! below it.

use std::collections::HashMap;

use audit::{Analysis, Finding};
use maud::{html, Markup};

use crate::html::{time, visible};

/// The most added, removed, fixed or new items listed each; the rest are counted.
pub const MAX_CHANGES_LISTED: usize = 100;

/// What changed between two reports.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Changes {
    /// Lines in the new file and not (as many times) in the old.
    pub added: Vec<String>,
    /// Lines in the old file and not (as many times) in the new.
    pub removed: Vec<String>,
    /// Finding titles of the old report no longer found.
    pub fixed: Vec<String>,
    /// Finding titles of the new report not in the old one.
    pub new: Vec<String>,
    /// New score minus old score.
    pub score_move: i16,
}

/// The changes from `old` to `new`.
pub fn compare(old: &Analysis, new: &Analysis) -> Changes {
    let (added, removed) = line_changes(&old.robots.body, &new.robots.body);
    let (new_findings, fixed) = finding_changes(&old.findings, &new.findings);
    Changes {
        added,
        removed,
        fixed,
        new: new_findings,
        score_move: i16::from(new.score) - i16::from(old.score),
    }
}

fn lines(body: &str) -> impl Iterator<Item = &str> {
    body.split('\n')
        .map(|line| line.strip_suffix('\r').unwrap_or(line))
        .filter(|line| !line.trim().is_empty())
}

/// Items of `b` beyond their count in `a`, in `b`'s order.
fn beyond<'a, K: std::hash::Hash + Eq>(
    a: impl Iterator<Item = K>,
    b: impl Iterator<Item = (K, &'a str)>,
) -> Vec<String> {
    let mut counts: HashMap<K, usize> = HashMap::new();
    for key in a {
        *counts.entry(key).or_default() += 1;
    }
    b.filter_map(|(key, shown)| match counts.get_mut(&key) {
        Some(count) if *count > 0 => {
            *count -= 1;
            None
        }
        _ => Some(shown.to_owned()),
    })
    .collect()
}

fn line_changes(old: &str, new: &str) -> (Vec<String>, Vec<String>) {
    let added = beyond(lines(old), lines(new).map(|line| (line, line)));
    let removed = beyond(lines(new), lines(old).map(|line| (line, line)));
    (added, removed)
}

fn key(finding: &Finding) -> (String, Option<&str>, Option<&str>, Option<&str>) {
    (
        finding.id.to_string(),
        finding.evidence.text.as_deref(),
        finding.evidence.header.as_deref(),
        finding.evidence.url.as_deref(),
    )
}

fn finding_changes(old: &[Finding], new: &[Finding]) -> (Vec<String>, Vec<String>) {
    let old_titles: Vec<String> = old.iter().map(Finding::title).collect();
    let new_titles: Vec<String> = new.iter().map(Finding::title).collect();
    let appeared = beyond(
        old.iter().map(key),
        new.iter()
            .map(key)
            .zip(new_titles.iter().map(String::as_str)),
    );
    let fixed = beyond(
        new.iter().map(key),
        old.iter()
            .map(key)
            .zip(old_titles.iter().map(String::as_str)),
    );
    (appeared, fixed)
}

/// The "What changed" section.
pub(crate) fn section(old: &Analysis, new: &Analysis) -> Markup {
    let changes = compare(old, new);
    let direction = match changes.score_move {
        0 => "unchanged".to_owned(),
        n if n > 0 => format!("up {n} points"),
        n => format!("down {} points", -n),
    };
    html! {
        h2 #changes { "What changed" }
        p { "Since the previous report of this address (" (time(old.analysed_at)) "): score "
            (old.score) " → " (new.score) ", " (direction) "." }
        (list("Lines added", "added", "+ ", &changes.added))
        (list("Lines removed", "removed", "− ", &changes.removed))
        (list("Findings fixed", "added", "✓ ", &changes.fixed))
        (list("New findings", "removed", "✗ ", &changes.new))
        @if changes.added.is_empty() && changes.removed.is_empty() {
            p { "robots.txt is the same as before." }
        }
    }
}

fn list(title: &str, class: &str, mark: &str, items: &[String]) -> Markup {
    html! {
        @if !items.is_empty() {
            h3 { (title) " (" (items.len()) ")" }
            ul class=(class) {
                @for item in items.iter().take(MAX_CHANGES_LISTED) {
                    li { span aria-hidden="true" { (mark) } code { (visible(item)) } }
                }
            }
            @if items.len() > MAX_CHANGES_LISTED {
                p.hint { "and " (items.len() - MAX_CHANGES_LISTED) " more." }
            }
        }
    }
}
