//! `/stats`: what the stored reports say about the state of the web.

use maud::{html, Markup};

use service::stats::{CrawlerStat, Stats};

use super::Html;
use crate::html::{grade_badge, page as shell, Head};
use crate::svg;

/// How many crawlers the charts show.
pub const CRAWLERS_CHARTED: usize = 15;

/// The stats page.
pub(crate) fn page(stats: &Stats) -> Html {
    let grades: Vec<(String, f64)> = stats
        .grades
        .iter()
        .map(|(grade, count)| (format!("grade {grade}"), *count as f64))
        .collect();
    let body = html! {
        h1 { "The state of the web, by its robots.txt" }
        p { "From the newest report of each of the " (stats.sites) " addresses analysed"
            @if stats.detailed < stats.sites {
                "; crawlers and findings from the newest " (stats.detailed) " of them"
            }
            ". " a href="/scoring" { "How scoring works" } "." }
        h2 { "Grades" }
        (svg::bars("Addresses by grade", &grades))
        div.table-wrap { table {
            thead { tr { th scope="col" { "Grade" } th.num scope="col" { "Addresses" } } }
            tbody { @for (grade, count) in &stats.grades { tr { td { (grade_badge(*grade)) } td.num { (count) } } } }
        } }
        (crawlers(stats))
        h2 { "The most common findings" }
        @if stats.findings.is_empty() { p { "No findings yet." } }
        div.table-wrap { table {
            thead { tr { th scope="col" { "Finding" } th.num scope="col" { "Addresses" } } }
            tbody { @for finding in &stats.findings {
                tr { td { (finding.title) br; code.hint { (finding.id) } } td.num { (finding.count) } }
            } }
        } }
        (months(stats))
    };
    Html::ok(shell("State of the web", &Head::default(), body))
}

fn crawler_chart(label: &str, rows: &[&CrawlerStat], value: fn(&CrawlerStat) -> u64) -> Markup {
    let mut bars: Vec<(String, f64)> = rows
        .iter()
        .map(|row| (row.token.clone(), value(row) as f64))
        .filter(|(_, value)| *value > 0.0)
        .collect();
    bars.sort_by(|a, b| b.1.total_cmp(&a.1));
    bars.truncate(CRAWLERS_CHARTED);
    if bars.is_empty() {
        return html! { p { "None yet." } };
    }
    svg::bars(label, &bars)
}

fn crawlers(stats: &Stats) -> Markup {
    let all: Vec<&CrawlerStat> = stats.crawlers.iter().collect();
    let ai: Vec<&CrawlerStat> = stats.crawlers.iter().filter(|row| row.is_ai()).collect();
    html! {
        h2 { "Crawlers named and blocked" }
        h3 { "Named by a group of their own" }
        (crawler_chart("Crawlers most often named", &all, |row| row.named))
        h3 { "AI crawlers kept off the whole site" }
        (crawler_chart("AI crawlers most often blocked", &ai, |row| row.blocked))
        div.table-wrap { table {
            thead { tr {
                th scope="col" { "Crawler" } th scope="col" { "Purpose" }
                th.num scope="col" { "Named" } th.num scope="col" { "Blocked from /" }
            } }
            tbody { @for row in &stats.crawlers {
                tr {
                    th scope="row" { (row.token) br; span.hint { (row.operator) } }
                    td { (row.purpose.label()) }
                    td.num { (row.named) } td.num { (row.blocked) }
                }
            } }
        } }
    }
}

fn months(stats: &Stats) -> Markup {
    let averages: Vec<(String, f64)> = stats
        .months
        .iter()
        .map(|month| {
            (
                month.month.to_string(),
                (month.average * 10.0).round() / 10.0,
            )
        })
        .collect();
    html! {
        h2 { "Month by month" }
        @if stats.months.is_empty() { p { "No reports yet." } } @else {
            (svg::bars("Average score by month", &averages))
            div.table-wrap { table {
                thead { tr {
                    th scope="col" { "Month" } th.num scope="col" { "Reports" } th.num scope="col" { "Average score" }
                    th.num scope="col" { "Blocking an AI crawler" }
                } }
                tbody { @for month in &stats.months {
                    tr {
                        td { (month.month) } td.num { (month.reports) }
                        td.num { (format!("{:.1}", month.average)) }
                        td.num { @if month.detailed > 0 {
                            (format!("{:.0} %", 100.0 * month.blocking_ai as f64 / month.detailed as f64))
                        } @else { "–" } }
                    }
                } }
            } }
        }
    }
}
