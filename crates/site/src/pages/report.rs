//! `/score/{domain}/{report}` and `/paste/{id}`: one analysis, or its progress, or why it
//! failed.

use audit::Analysis;
use maud::{html, Markup};
use service::indexing::Indexing;
use service::{paths, ReportPage, ReportState, StoredReport};

use super::report_parts as parts;
use super::{changes, robots_header, robots_meta, unpublished, Html};
use crate::html::{page as shell, visible, Head};

/// How often a report in progress reloads itself, in seconds.
pub const REFRESH_SECONDS: u32 = 2;

/// What a report shows of its address: the URL, or a paste's name.
fn shown_url(report: &StoredReport) -> &str {
    report
        .row
        .url
        .as_ref()
        .map_or("your robots.txt", |url| url.as_str())
}

/// A published report page.
pub(crate) fn page(page: &ReportPage) -> Html {
    let report = &page.report;
    match (report.row.state, &report.report) {
        (ReportState::Queued | ReportState::Running, _) => in_progress(report),
        (ReportState::Done, Some(analysis)) => {
            done(report, analysis, page.previous.as_ref(), &page.indexing)
        }
        (ReportState::Done, None) => super::errors::unreadable(),
        (ReportState::Failed, _) => failed(report),
    }
}

/// A paste: never published, so never indexed, never cached by others, no domain link.
pub(crate) fn paste(report: &StoredReport) -> Html {
    let mut html = match (report.row.state, &report.report) {
        (ReportState::Queued | ReportState::Running, _) => in_progress(report),
        (ReportState::Failed, _) => failed(report),
        (ReportState::Done, None) => super::errors::unreadable(),
        (ReportState::Done, Some(analysis)) => {
            let head = Head {
                robots_meta: robots_meta(&unpublished()),
                refresh_seconds: None,
            };
            let body = html! {
                h1 { "Your robots.txt" }
                p.notice { "This report is private: it is shown only at this address, which is \
                            not linked or listed anywhere. Keep the address to come back to it." }
                (parts::report_body(analysis))
            };
            Html::ok(shell("Your robots.txt", &head, body))
        }
    };
    html.robots = robots_header(&unpublished());
    html.cache = Some("private, no-store");
    html
}

fn in_progress(report: &StoredReport) -> Html {
    let head = Head {
        robots_meta: robots_meta(&unpublished()),
        refresh_seconds: Some(REFRESH_SECONDS),
    };
    let state = match report.row.state {
        ReportState::Queued => "waiting for its turn",
        _ => "running",
    };
    let body = html! {
        h1 { "Analysing " code { (visible(shown_url(report))) } }
        p.notice role="status" { "The analysis is " (state) ". This page reloads itself every "
            (REFRESH_SECONDS) " seconds until the report is ready." }
        p { a href="" { "Reload now" } }
    };
    let mut html = Html::ok(shell("Analysis in progress", &head, body));
    html.robots = robots_header(&unpublished());
    html.cache = Some("no-store");
    html
}

fn failed(report: &StoredReport) -> Html {
    let head = Head {
        robots_meta: robots_meta(&unpublished()),
        refresh_seconds: None,
    };
    let message = report.row.error.as_deref().unwrap_or("the analysis failed");
    let body = html! {
        h1 { "The analysis of " code { (visible(shown_url(report))) } " could not run" }
        div.error role="alert" { p { (visible(message)) } }
        p { "Nothing was scored, because nothing useful about the site was learned. "
            a href="/" { "Try another address" } "." }
    };
    let mut html = Html::ok(shell("Analysis failed", &head, body));
    html.robots = robots_header(&unpublished());
    html
}

fn done(
    report: &StoredReport,
    analysis: &Analysis,
    previous: Option<&Analysis>,
    indexing: &Indexing,
) -> Html {
    let head = Head {
        robots_meta: robots_meta(indexing),
        refresh_seconds: None,
    };
    let url = shown_url(report);
    let domain = report.row.domain.as_deref().unwrap_or_default();
    let title = format!("robots.txt report for {url}");
    let body = html! {
        p { a href=(paths::domain(domain)) { "Every report of " (visible(domain)) } }
        h1 { "robots.txt report for " code { (visible(url)) } }
        @if let Some(reason) = indexing.noindex {
            p.notice { "Search engines are asked not to index this report: " (reason.describe()) "." }
        }
        (parts::report_body_with(analysis, changes_section(analysis, previous)))
    };
    let mut html = Html::ok(shell(&title, &head, body));
    html.robots = robots_header(indexing);
    html
}

fn changes_section(analysis: &Analysis, previous: Option<&Analysis>) -> Markup {
    match previous {
        Some(previous) => changes::section(previous, analysis),
        None => html! {
            h2 #changes { "What changed" }
            p { "This is the first report of this address: the next one will show what changed." }
        },
    }
}
