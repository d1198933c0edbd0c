//! `/score/{domain}`: every report of the domain, newest first, the monthly summaries of
//! earlier ones, and the score over time.

use maud::html;
use service::{paths, DomainView};

use super::{robots_header, robots_meta, Html};
use crate::html::{grade_badge, page as shell, time, visible, Head};
use crate::svg;

/// The domain page.
pub(crate) fn page(view: &DomainView) -> Html {
    let domain = view.domain.as_str();
    let indexing = view.indexing();
    let head = Head {
        robots_meta: robots_meta(&indexing),
        refresh_seconds: None,
    };
    let reports: Vec<_> = view.finished().collect();
    let mut points: Vec<_> = reports
        .iter()
        .filter_map(|report| {
            Some((
                report.analysed_at.unwrap_or(report.created_at),
                report.score?,
            ))
        })
        .collect();
    for month in &view.summaries {
        points.push((
            month.month.start(),
            month.average.round().clamp(0.0, 100.0) as u8,
        ));
    }
    let chart_label = format!("Score of {domain} over time");
    let body = html! {
        h1 {
            @if view.has_icon { img.icon src=(paths::icon(domain)) alt="" width="20" height="20"; " " }
            "robots.txt reports of " (visible(domain))
        }
        @if !points.is_empty() {
            h2 { "Score over time" }
            (svg::score_over_time(&chart_label, &points))
            p.hint { "Each report's score; a monthly summary is drawn at its average." }
        }
        h2 { "Reports" }
        @if reports.is_empty() {
            p { "No report is kept in full any more; the monthly summaries below remain." }
        } @else {
            div.table-wrap { table {
                thead { tr { th scope="col" { "Address" } th scope="col" { "Analysed" } th scope="col" { "Grade" } th.num scope="col" { "Score" } } }
                tbody {
                    @for report in &reports {
                        tr {
                            td { a href=(paths::report(domain, &report.id)) { code { (visible(report.url.as_ref().map_or("", |url| url.as_str()))) } } }
                            td { (time(report.analysed_at.unwrap_or(report.created_at))) }
                            td { @if let Some(grade) = report.grade { (grade_badge(grade)) } }
                            td.num { (report.score.unwrap_or(0)) }
                        }
                    }
                }
            } }
        }
        @if !view.summaries.is_empty() {
            h2 { "Monthly summaries" }
            p { "Reports older than 6 months are folded into one summary per month." }
            div.table-wrap { table {
                thead { tr {
                    th scope="col" { "Month" } th.num scope="col" { "Reports" } th.num scope="col" { "Addresses" }
                    th.num scope="col" { "Best" } th.num scope="col" { "Average" } th.num scope="col" { "Lowest" }
                } }
                tbody {
                    @for month in &view.summaries {
                        tr {
                            td { (month.month) }
                            td.num { (month.reports) } td.num { (month.urls) } td.num { (month.best) }
                            td.num { (format!("{:.1}", month.average)) } td.num { (month.lowest) }
                        }
                    }
                }
            } }
        }
    };
    let mut html = Html::ok(shell(
        &format!("robots.txt reports of {domain}"),
        &head,
        body,
    ));
    html.robots = robots_header(&indexing);
    html
}
