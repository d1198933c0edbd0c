//! `/score/{domain}`: every report of the domain, newest first, the monthly summaries of
//! earlier ones, and the score over time.

use maud::html;

use super::Html;
use crate::data::DomainHistory;
use crate::html::{grade_badge, icon_href, page as shell, report_href, time, visible, Head};
use crate::indexing::Indexing;
use crate::svg;

/// Whether search engines may index the domain page: when at least one of its URLs may be
/// indexed.
pub fn domain_indexable(history: &DomainHistory) -> bool {
    history.reports.iter().any(|report| report.indexable)
}

/// The domain page.
pub(crate) fn page_for(domain: &str, history: &DomainHistory) -> Html {
    let indexing = if domain_indexable(history) {
        Indexing::default()
    } else {
        Indexing::none()
    };
    let head = Head {
        robots_meta: indexing.meta_tags(),
        refresh_seconds: None,
    };
    let mut points: Vec<_> = history
        .reports
        .iter()
        .map(|report| (report.analysed_at, report.score))
        .collect();
    for month in &history.months {
        if let Ok(date) = jiff::civil::Date::new(month.year, month.month, 1) {
            if let Ok(at) = date.to_zoned(jiff::tz::TimeZone::UTC) {
                points.push((
                    at.timestamp(),
                    month.average.round().clamp(0.0, 100.0) as u8,
                ));
            }
        }
    }
    let chart_label = format!("Score of {domain} over time");
    let body = html! {
        h1 {
            @if history.has_icon { img.icon src=(icon_href(domain)) alt="" width="20" height="20"; " " }
            "robots.txt reports of " (visible(domain))
        }
        @if !points.is_empty() {
            h2 { "Score over time" }
            (svg::score_over_time(&chart_label, &points))
            p.hint { "Each report's score; a monthly summary is drawn at its average." }
        }
        h2 { "Reports" }
        @if history.reports.is_empty() {
            p { "No report is kept in full any more; the monthly summaries below remain." }
        } @else {
            div.table-wrap { table {
                thead { tr { th scope="col" { "Address" } th scope="col" { "Analysed" } th scope="col" { "Grade" } th.num scope="col" { "Score" } } }
                tbody {
                    @for report in &history.reports {
                        tr {
                            td { a href=(report_href(domain, &report.id)) { code { (visible(report.url.as_str())) } } }
                            td { (time(report.analysed_at)) }
                            td { (grade_badge(report.grade)) }
                            td.num { (report.score) }
                        }
                    }
                }
            } }
        }
        @if !history.months.is_empty() {
            h2 { "Monthly summaries" }
            p { "Reports older than 6 months are folded into one summary per month." }
            div.table-wrap { table {
                thead { tr {
                    th scope="col" { "Month" } th.num scope="col" { "Reports" } th.num scope="col" { "Addresses" }
                    th.num scope="col" { "Best" } th.num scope="col" { "Average" } th.num scope="col" { "Lowest" }
                } }
                tbody {
                    @for month in &history.months {
                        tr {
                            td { (format!("{:04}-{:02}", month.year, month.month)) }
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
    html.robots = indexing.header_values();
    html
}

/// Same as [`page_for`].
pub(crate) fn page(domain: &str, history: &DomainHistory) -> Html {
    page_for(domain, history)
}
