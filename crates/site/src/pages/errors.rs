//! The site's own 404 and error pages.

use axum::http::StatusCode;
use maud::html;

use super::Html;
use crate::html::{page, Head};

/// Nothing at this address.
pub(crate) fn not_found() -> Html {
    let markup = page(
        "Page not found",
        &Head::default(),
        html! {
            h1 { "Page not found" }
            p { "There is nothing at this address. A report that was removed at its site's \
                 request, or a mistyped address, ends here." }
            p { a href="/" { "Analyse a site or browse the ranking" } }
        },
    );
    Html {
        status: StatusCode::NOT_FOUND,
        markup,
        robots: vec!["noindex".to_owned()],
        cache: None,
    }
}

/// The store failed; the details are in the log, not on the page.
pub(crate) fn server_error() -> Html {
    let markup = page(
        "Something went wrong",
        &Head::default(),
        html! {
            h1 { "Something went wrong" }
            p { "The service could not read its data just now. Please try again in a minute." }
            p { a href="/" { "Back to the home page" } }
        },
    );
    Html {
        status: StatusCode::INTERNAL_SERVER_ERROR,
        markup,
        robots: vec!["noindex".to_owned()],
        cache: None,
    }
}
