//! The sections of a finished report: score, findings, the robots.txt as served with the
//! findings at their lines, the crawler table, sitemaps, headers and meta tags. Everything
//! from the analysed site goes through maud's escaping and [`visible`].

use std::borrow::Cow;
use std::collections::BTreeMap;

use audit::report::{RobotsReport, RobotsStatus};
use audit::score::{points, MAX_OCCURRENCES_PER_CHECK};
use audit::{Analysis, Finding};
use maud::{html, Markup};

use crate::html::{grade_badge, time, visible};

/// The report without a "what changed" section (a paste).
pub(crate) fn report_body(analysis: &Analysis) -> Markup {
    report_body_with(analysis, html! {})
}

/// The report with `changes` after the score.
pub(crate) fn report_body_with(analysis: &Analysis, changes: Markup) -> Markup {
    html! {
        (summary(analysis))
        (changes)
        (findings(analysis))
        (robots_listing(analysis))
        (crawler_table(analysis))
        (sitemaps(analysis))
        (headers_and_meta(analysis))
    }
}

fn summary(analysis: &Analysis) -> Markup {
    html! {
        section aria-labelledby="score" {
            h2 #score { "Score" }
            p {
                span.score-big { (analysis.score) } " / 100, grade " (grade_badge(analysis.grade))
            }
            p { "Analysed " (time(analysis.analysed_at)) " in " (analysis.duration_ms) " ms, scoring method version "
                (visible(&analysis.scoring_version)) ". " a href="/scoring" { "How scoring works" } "." }
            @if let Some(cap) = &analysis.scoring.cap {
                p { "The score is capped at " (cap.max_score) " because of " code { (cap.id) } "." }
            }
        }
    }
}

/// The points each finding cost: a check deducts for its first
/// [`MAX_OCCURRENCES_PER_CHECK`] findings (notices are capped in all, shown in the total).
fn finding_points(analysis: &Analysis) -> Vec<u32> {
    let mut seen: BTreeMap<String, usize> = BTreeMap::new();
    analysis
        .findings
        .iter()
        .map(|finding| {
            let count = seen.entry(finding.id.to_string()).or_default();
            *count += 1;
            if *count <= MAX_OCCURRENCES_PER_CHECK {
                points(finding.severity)
            } else {
                0
            }
        })
        .collect()
}

/// The findings grouped by check, in report order (worst first): the explanation and fix
/// once per check, then each occurrence with its line and cost. A file with the same mistake
/// on many lines stays a short page.
fn findings(analysis: &Analysis) -> Markup {
    let costs = finding_points(analysis);
    let deducted: u32 = analysis.scoring.deductions.iter().map(|d| d.points).sum();
    let mut groups: Vec<Vec<(&Finding, u32)>> = Vec::new();
    for (finding, cost) in analysis.findings.iter().zip(costs) {
        match groups.iter_mut().find(|group| group[0].0.id == finding.id) {
            Some(group) => group.push((finding, cost)),
            None => groups.push(vec![(finding, cost)]),
        }
    }
    html! {
        h2 #findings { "Findings" }
        @if analysis.findings.is_empty() {
            p { "Nothing to report: no mistake found." }
        } @else {
            p { (analysis.findings.len()) " findings, " (deducted) " points deducted in all." }
            ol.findings {
                @for group in &groups {
                    li { (finding_group(group)) }
                }
            }
        }
        @for omitted in &analysis.omitted_findings {
            p.hint { (omitted.count) " more findings of " code { (omitted.id) } " are counted but not listed." }
        }
    }
}

fn finding_group(group: &[(&Finding, u32)]) -> Markup {
    let first = group[0].0;
    let severity = first.severity.to_string();
    html! {
        span class=(format!("sev sev-{severity}")) { (severity) } " "
        @if group.len() == 1 {
            (occurrence(first, group[0].1))
        } @else {
            strong { (visible(&first.id.check().map_or_else(|| first.id.to_string(), |c| c.title.to_owned()))) }
            " (" (group.len()) " times)"
            ul { @for (finding, cost) in group { li { (occurrence(finding, *cost)) } } }
        }
        p { (first.why()) }
        @if !first.fix().is_empty() { p { strong { "Fix: " } (first.fix()) } }
    }
}

fn occurrence(finding: &Finding, cost: u32) -> Markup {
    html! {
        strong { (visible(&finding.title())) }
        " (−" (cost) " points)"
        @if let Some(line) = finding.line() {
            " at " a href=(format!("#L{line}")) { "line " (line) }
        }
        @if let Some(text) = &finding.evidence.text {
            br; code { (visible(text)) }
        }
        @if let Some(header) = &finding.evidence.header {
            br; code { (visible(header)) }
        }
        @if let Some(url) = &finding.evidence.url {
            br; code { (visible(url)) }
        }
    }
}

fn robots_listing(analysis: &Analysis) -> Markup {
    let robots = &analysis.robots;
    let mut at_line: BTreeMap<usize, Vec<&Finding>> = BTreeMap::new();
    for finding in &analysis.findings {
        if let Some(line) = finding.line() {
            at_line.entry(line).or_default().push(finding);
        }
    }
    let has_file = matches!(robots.outcome, RobotsStatus::Rules | RobotsStatus::Provided);
    html! {
        h2 #robots-txt { "robots.txt as served" }
        (robots_facts(analysis))
        @if has_file && !robots.body.is_empty() {
            div.robots {
                table {
                    caption.hint {
                        "Each line with its number; findings are shown under their line."
                        @if robots.raw_body.is_some() {
                            " The file is not valid UTF-8: its lines that are not are shown \
                             as Windows-1252 (Latin-1) text."
                        }
                    }
                    tbody {
                        @for (index, line) in shown_lines(robots).iter().map(|l| &**l).enumerate() {
                            @let number = index + 1;
                            @let here = at_line.get(&number);
                            tr id=(format!("L{number}")) class=[here.map(|_| "has-finding")] {
                                td.ln { (number) }
                                td.text {
                                    (visible(line.strip_suffix('\r').unwrap_or(line)))
                                    @for finding in here.into_iter().flatten() {
                                        span.at-line { "▲ " (visible(&finding.title())) }
                                    }
                                }
                            }
                        }
                    }
                }
            }
        } @else {
            p { "No file to show." }
        }
    }
}

/// robots.txt's lines as shown. A file that is not valid UTF-8 is read line by line from the
/// bytes as received: a line that is UTF-8 as it is, any other as Windows-1252 (the web's
/// fallback for legacy text), so a Latin-1 file reads as written rather than as replacement
/// characters. Line numbers are the same either way (both split at `\n`).
fn shown_lines(robots: &RobotsReport) -> Vec<Cow<'_, str>> {
    match &robots.raw_body {
        None => robots.body.split('\n').map(Cow::Borrowed).collect(),
        Some(raw) => raw
            .split(|&b| b == b'\n')
            .map(|line| match std::str::from_utf8(line) {
                Ok(text) => Cow::Borrowed(text),
                Err(_) => {
                    encoding_rs::WINDOWS_1252
                        .decode_without_bom_handling(line)
                        .0
                }
            })
            .collect(),
    }
}

fn robots_facts(analysis: &Analysis) -> Markup {
    let robots = &analysis.robots;
    html! {
        dl.facts {
            @if let Some(url) = &robots.url { dt { "Address" } dd { code { (visible(url.as_str())) } } }
            dt { "Outcome" } dd { (outcome_words(robots.outcome)) }
            @if let Some(status) = robots.status { dt { "Status" } dd { (status.as_u16()) } }
            @if let Some(final_url) = &robots.final_url { dt { "Final address" } dd { code { (visible(final_url.as_str())) } } }
            @for hop in &robots.redirects {
                dt { "Redirect" } dd { code { (visible(hop.url.as_str())) } " → " (hop.status.as_u16()) " → " code { (visible(&hop.location)) } }
            }
            @if let Some(kind) = &robots.content_type { dt { "Content-Type" } dd { code { (visible(kind)) } } }
            dt { "Size" } dd { (robots.size) " bytes" @if robots.truncated { " (cut at the limit)" } }
            @if let Some(error) = &robots.error { dt { "Error" } dd { (visible(error)) } }
        }
    }
}

fn outcome_words(outcome: RobotsStatus) -> &'static str {
    match outcome {
        RobotsStatus::Rules => "rules apply",
        RobotsStatus::NoFile => "no file (4xx): crawlers may fetch everything",
        RobotsStatus::Unreachable => "unreachable: crawlers treat every path as disallowed",
        RobotsStatus::RateLimited => "rate limited (429): crawlers treat every path as disallowed",
        RobotsStatus::Provided => "pasted or uploaded file",
    }
}

fn decision_text(explanation: &robots::Explanation) -> Markup {
    html! {
        @if explanation.allowed { "allowed" } @else { strong { "blocked" } }
        @if let Some(rule) = &explanation.rule {
            " by " a href=(format!("#L{}", rule.line)) { "line " (rule.line) }
        }
    }
}

fn crawler_table(analysis: &Analysis) -> Markup {
    let page = analysis.page.path.is_some();
    html! {
        h2 #crawlers { "Rules for each crawler" }
        div.table-wrap {
            table {
                thead { tr {
                    th scope="col" { "Crawler" } th scope="col" { "Purpose" } th scope="col" { "Group" }
                    th scope="col" { "Site root /" }
                    @if page { th scope="col" { "This page" } }
                } }
                tbody {
                    @for row in &analysis.crawlers {
                        tr {
                            th scope="row" { (row.token) br; span.hint { (row.operator) } }
                            td { (row.purpose.label()) }
                            td { code { (visible(&row.group.to_string())) } }
                            td { (decision_text(&row.root)) }
                            @if page {
                                td { @if let Some(decision) = &row.page { (decision_text(decision)) } }
                            }
                        }
                    }
                }
            }
        }
    }
}

fn sitemaps(analysis: &Analysis) -> Markup {
    html! {
        h2 #sitemaps { "Sitemaps" }
        @if analysis.sitemaps.is_empty() {
            p { "robots.txt declares no sitemap." }
        } @else {
            div.table-wrap { table {
                thead { tr { th scope="col" { "Line" } th scope="col" { "Sitemap" } th scope="col" { "Answer" } } }
                tbody {
                    @for sitemap in &analysis.sitemaps {
                        tr {
                            td { a href=(format!("#L{}", sitemap.line)) { (sitemap.line) } }
                            td { code { (visible(&sitemap.url)) } }
                            td {
                                @if let Some(status) = sitemap.status { (status.as_u16()) " " }
                                @if let Some(kind) = &sitemap.content_type { code { (visible(kind)) } " " }
                                @match sitemap.looks_like_sitemap {
                                    Some(true) => "looks like a sitemap",
                                    Some(false) => "does not look like a sitemap",
                                    None => "",
                                }
                                @if let Some(reason) = &sitemap.skipped { "not checked: " (visible(&reason.to_string())) }
                                @if let Some(error) = &sitemap.error { "failed: " (visible(error)) }
                            }
                        }
                    }
                }
            } }
        }
    }
}

fn headers_and_meta(analysis: &Analysis) -> Markup {
    let page = &analysis.page;
    html! {
        h2 #headers { "Headers and meta tags" }
        dl.facts {
            @for value in &analysis.robots.x_robots_tag {
                dt { "robots.txt X-Robots-Tag" } dd { code { (visible(value)) } }
            }
            @if let Some(url) = &page.url { dt { "Page" } dd { code { (visible(url.as_str())) } } }
            @if let Some(status) = page.status { dt { "Page status" } dd { (status.as_u16()) } }
            @if let Some(reason) = &page.skipped { dt { "Page not requested" } dd { (visible(&reason.to_string())) } }
            @if let Some(error) = &page.error { dt { "Page error" } dd { (visible(error)) } }
            @for value in &page.x_robots_tag {
                dt { "X-Robots-Tag" } dd { code { (visible(value)) } }
            }
            @for meta in &page.meta {
                dt { "Meta tag" } dd { code { "<meta name=\"" (visible(&meta.name)) "\" content=\"" (visible(&meta.content)) "\">" } }
            }
        }
        @if page.x_robots_tag.is_empty() && page.meta.is_empty() && page.requested {
            p { "The page sends no X-Robots-Tag header and has no robots meta tag." }
        }
    }
}
