//! RobotsTxtParser the service: the report model and every decision about it, the store, the
//! analysis queue, the schedule, retention and the JSON API behind `jittybot serve`. The pages
//! (`crates/site`) render what this crate decides.
//!
//! - [`model`]: the report model (reports, domains, monthly summaries, current reports).
//! - [`Store`] is the typed store on [`db::Db`] (SQLite or PostgreSQL, [`SCHEMA`]'s versioned
//!   migrations).
//! - The decisions: [`indexing`] (what may be indexed and ranked), [`ranking`], [`stats`],
//!   [`published`] (the sitemap's pages), [`paths`] (every page's address).
//! - [`Service`] is the handle the API and the pages share: submit an analysis or a paste
//!   ([`submit`]), read reports, domains, the ranking and the statistics ([`read`]); its
//!   workers run the queue.
//! - [`router`] is the JSON API; merge the HTML pages into it.
//! - Every limit is a named constant in [`limits`].

pub mod analyzer;
pub mod api;
pub mod api_error;
pub mod client;
pub mod clock;
pub mod codec;
pub mod connections;
pub mod cpu;
mod error;
pub mod icon_source;
pub mod icons;
pub mod ids;
pub mod indexing;
pub mod limits;
pub mod model;
pub mod origin;
pub mod paths;
pub mod published;
pub mod ranking;
pub mod ratelimit;
pub mod read;
pub mod redact;
pub mod schedule;
mod schema;
pub mod serve;
mod service;
pub mod stats;
pub mod store;
pub mod submit;
#[cfg(feature = "testing")]
pub mod testing;
mod views;
mod worker;

pub use api::router;
pub use api_error::ApiError;
pub use clock::{Clock, ManualClock, SystemClock};
pub use error::{DamagedRow, ServiceError};
pub use ids::{registrable_domain, site_of, ReportId};
pub use model::{
    CurrentReport, DomainView, Month, MonthlySummary, ReportLookup, ReportPage, ReportRow,
    ReportState, StoredReport, Submitted,
};
pub use schedule::{Scheduler, Tick};
pub use schema::SCHEMA;
pub use serve::{serve, ServeOptions};
pub use service::{Service, ServiceConfig};
pub use store::Store;
pub use submit::SubmitError;
pub use worker::failure_message;
