//! The site's own 404 and error pages.

use axum::http::StatusCode;
use maud::{html, Markup};

use super::Html;
use crate::html::{page, Head};

/// An error page: never indexed.
fn error_page(status: StatusCode, title: &str, body: Markup) -> Html {
    Html {
        status,
        markup: page(title, &Head::default(), body),
        robots: vec!["noindex".to_owned()],
        cache: None,
    }
}

/// Nothing at this address.
pub(crate) fn not_found() -> Html {
    error_page(
        StatusCode::NOT_FOUND,
        "Page not found",
        html! {
            h1 { "Page not found" }
            p { "There is nothing at this address. A report that was removed at its site's \
                 request, or a mistyped address, ends here." }
            p { a href="/" { "Analyse a site or browse the ranking" } }
        },
    )
}

/// The store failed; the details are in the log, not on the page.
pub(crate) fn server_error() -> Html {
    error_page(
        StatusCode::INTERNAL_SERVER_ERROR,
        "Something went wrong",
        html! {
            h1 { "Something went wrong" }
            p { "The service could not read its data just now. Please try again in a minute." }
            p { a href="/" { "Back to the home page" } }
        },
    )
}

/// One report whose stored data cannot be read (a damaged row); every other page still works.
pub(crate) fn unreadable() -> Html {
    error_page(
        StatusCode::INTERNAL_SERVER_ERROR,
        "This report cannot be shown",
        html! {
            h1 { "This report cannot be shown" }
            p { "The stored data of this report is damaged and cannot be read. The rest of the \
                 site is not affected; analysing the address again makes a new report." }
            p { a href="/" { "Analyse a site or browse the ranking" } }
        },
    )
}
