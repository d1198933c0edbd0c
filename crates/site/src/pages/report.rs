//! `/score/{domain}/{report}` and `/paste/{id}`: one analysis, or its progress, or why it
//! failed.

use audit::Analysis;
use axum::http::StatusCode;
use maud::{html, Markup};

use super::report_parts as parts;
use super::{changes, Html};
use crate::data::{DataError, ReportState, SiteData, StoredReport};
use crate::html::{domain_href, page as shell, visible, Head};
use crate::indexing::Indexing;

/// How often a report in progress reloads itself, in seconds.
pub const REFRESH_SECONDS: u32 = 2;

/// What a report page shows besides the report.
pub(crate) struct Context {
    previous: Option<Analysis>,
    newest_indexable: Option<bool>,
}

impl Context {
    /// The previous report of the same URL and whether its newest report may be indexed.
    pub(crate) async fn load<D: SiteData>(
        data: &D,
        report: &StoredReport,
    ) -> Result<Context, DataError> {
        let ReportState::Done(analysis) = &report.state else {
            return Ok(Context {
                previous: None,
                newest_indexable: None,
            });
        };
        // Both at once: on a store over the network each is a round trip.
        let (previous, newest_indexable) = tokio::try_join!(
            data.previous_report(&report.url, analysis.analysed_at),
            data.url_indexable(&report.url)
        )?;
        Ok(Context {
            previous,
            newest_indexable,
        })
    }
}

/// A published report page.
pub(crate) fn page_for(report: &StoredReport, context: &Context) -> Html {
    match &report.state {
        ReportState::Queued | ReportState::Running => in_progress(report),
        ReportState::Failed(message) => failed(report, message),
        ReportState::Done(analysis) => {
            let mut indexing = Indexing::of(analysis);
            if context.newest_indexable == Some(false) {
                // The URL's newest report forbids indexing: its older reports follow it.
                indexing = Indexing::none();
            }
            done(report, analysis, context.previous.as_ref(), &indexing)
        }
    }
}

/// Same as [`page_for`].
pub(crate) fn page(report: &StoredReport, context: &Context) -> Html {
    page_for(report, context)
}

/// A paste: never published, so never indexed, never cached by others, no domain link.
pub(crate) fn paste(report: &StoredReport) -> Html {
    let mut html = match &report.state {
        ReportState::Queued | ReportState::Running => in_progress(report),
        ReportState::Failed(message) => failed(report, message),
        ReportState::Done(analysis) => {
            let head = Head {
                robots_meta: Indexing::none().meta_tags(),
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
    html.robots = Indexing::none().header_values();
    html.cache = Some("private, no-store");
    html
}

fn in_progress(report: &StoredReport) -> Html {
    let head = Head {
        robots_meta: Indexing::none().meta_tags(),
        refresh_seconds: Some(REFRESH_SECONDS),
    };
    let state = match report.state {
        ReportState::Queued => "waiting for its turn",
        _ => "running",
    };
    let body = html! {
        h1 { "Analysing " code { (visible(report.url.as_str())) } }
        p.notice role="status" { "The analysis is " (state) ". This page reloads itself every "
            (REFRESH_SECONDS) " seconds until the report is ready." }
        p { a href="" { "Reload now" } }
    };
    let mut html = Html::ok(shell("Analysis in progress", &head, body));
    html.robots = Indexing::none().header_values();
    html.cache = Some("no-store");
    html
}

fn failed(report: &StoredReport, message: &str) -> Html {
    let head = Head {
        robots_meta: Indexing::none().meta_tags(),
        refresh_seconds: None,
    };
    let body = html! {
        h1 { "The analysis of " code { (visible(report.url.as_str())) } " could not run" }
        div.error role="alert" { p { (visible(message)) } }
        p { "Nothing was scored, because nothing useful about the site was learned. "
            a href="/" { "Try another address" } "." }
    };
    let mut html = Html::ok(shell("Analysis failed", &head, body));
    html.robots = Indexing::none().header_values();
    html
}

fn done(
    report: &StoredReport,
    analysis: &Analysis,
    previous: Option<&Analysis>,
    indexing: &Indexing,
) -> Html {
    let head = Head {
        robots_meta: indexing.meta_tags(),
        refresh_seconds: None,
    };
    let title = format!("robots.txt report for {}", report.url);
    let body = html! {
        p { a href=(domain_href(&report.domain)) { "Every report of " (visible(&report.domain)) } }
        h1 { "robots.txt report for " code { (visible(report.url.as_str())) } }
        @if let Some(reason) = indexing.noindex {
            p.notice { "Search engines are asked not to index this report: " (reason.describe()) "." }
        }
        (parts::report_body_with(analysis, changes_section(analysis, previous)))
    };
    let mut html = Html::ok(shell(&title, &head, body));
    html.robots = indexing.header_values();
    html.status = StatusCode::OK;
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
