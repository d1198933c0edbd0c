//! `/score/{domain}`: every report of the domain, newest first and page by page
//! ([`DOMAIN_PAGE_REPORTS`] to a page, `?page=N`), the monthly summaries of earlier ones, the
//! score over time and the next scheduled check.

use jiff::Timestamp;
use maud::{html, Markup};
use service::limits::DOMAIN_PAGE_REPORTS;
use service::{paths, DomainView};

use super::{robots_header, robots_meta, Html};
use crate::html::{grade_badge, page as shell, time, visible, Head};
use crate::svg;

/// The page number asked for by the query string (`page=N`, from 1; 1 without one);
/// `None` for anything else, answered as not found.
pub(crate) fn page_number(query: Option<&str>) -> Option<u64> {
    let Some(query) = query.filter(|q| !q.is_empty()) else {
        return Some(1);
    };
    let mut number = None;
    for pair in query.split('&') {
        match pair.split_once('=') {
            Some(("page", value)) if number.is_none() => number = value.parse::<u64>().ok(),
            _ => return None,
        }
    }
    number.filter(|n| *n >= 1)
}

/// How many pages `total` reports fill (at least one).
fn page_count(total: u64) -> u64 {
    total.div_ceil(DOMAIN_PAGE_REPORTS as u64).max(1)
}

/// The address of page `n` of `domain`'s page.
fn page_link(domain: &str, n: u64) -> String {
    if n <= 1 {
        paths::domain(domain)
    } else {
        format!("{}?page={n}", paths::domain(domain))
    }
}

/// "Newer" and "older" links around page `n` of `pages`.
fn pager(domain: &str, n: u64, pages: u64) -> Markup {
    html! {
        @if pages > 1 {
            nav.pager aria-label="Pages of reports" {
                @if n > 1 { a href=(page_link(domain, n - 1)) rel="prev" { "Newer reports" } " " }
                "Page " (n) " of " (pages)
                @if n < pages { " " a href=(page_link(domain, n + 1)) rel="next" { "Older reports" } }
            }
        }
    }
}

/// The domain page: page `n` of its reports, and when it is checked next.
pub(crate) fn page(view: &DomainView, n: u64, next_check: Option<Timestamp>) -> Html {
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
        @if let Some(next) = next_check {
            p.next-check { "Next scheduled check: " (time(next)) "." }
        }
        h2 { "Reports" }
        p { (view.total_reports) " report" @if view.total_reports != 1 { "s" } ", newest first." }
        (pager(domain, n, page_count(view.total_reports)))
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
            (pager(domain, n, page_count(view.total_reports)))
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn page_numbers_from_the_query() {
        assert_eq!(page_number(None), Some(1));
        assert_eq!(page_number(Some("")), Some(1));
        assert_eq!(page_number(Some("page=3")), Some(3));
        for bad in [
            "page=0",
            "page=x",
            "page=-1",
            "other=1",
            "page=1&page=2",
            "page",
        ] {
            assert_eq!(page_number(Some(bad)), None, "{bad}");
        }
        assert_eq!(page_count(0), 1);
        assert_eq!(page_count(100), 1);
        assert_eq!(page_count(101), 2);
    }
}
