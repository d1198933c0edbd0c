//! RobotsTxtParser's web site: server-rendered pages (maud), one stylesheet, no script.
//!
//! [`router`] serves every page from a [`service::Service`]: the service owns the report model
//! and every decision (what may be indexed, the ranking, the statistics, what is published);
//! the site only renders them, so `jittybot serve` merges it beside the JSON API. Pages: `/`
//! (analyse and paste forms, the ranking, totals), `/score/{domain}`,
//! `/score/{domain}/{report}`, `/paste/{id}`, `/scoring`, `/bot`, `/stats`, `/icon/{domain}`,
//! `/robots.txt`, `/sitemap.xml`.
//!
//! Modules depend downwards: `routes` uses the pages, the pages use `html` and `svg`.

pub mod html;
mod pages;
mod routes;
pub mod security;
pub mod sitemap;
pub mod svg;

pub use routes::{ANALYZE_FORM_BODY_LIMIT, PASTE_FORM_BODY_LIMIT};

/// Every page of the site, with the security headers, over `service`.
pub fn router(service: service::Service) -> axum::Router {
    routes::router(service)
}
