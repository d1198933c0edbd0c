//! RobotsTxtParser the service: the store of reports, the analysis queue, the schedule,
//! retention and the JSON API behind `jittybot serve`.
//!
//! - [`Store`] is the typed store on [`db::Db`] (SQLite or PostgreSQL, [`SCHEMA`]'s versioned
//!   migrations).
//! - [`indexing`] decides which reports may be published.
//! - [`Service`] is the handle the API and the pages share: submit an analysis or a paste,
//!   read reports, domains and the ranking; its workers run the queue.
//! - [`router`] is the JSON API; merge the HTML pages into it.
//! - Every limit is a named constant in [`limits`].

pub mod analyzer;
pub mod api;
pub mod clock;
mod error;
pub mod icons;
pub mod ids;
pub mod indexing;
pub mod limits;
pub mod ranking;
pub mod ratelimit;
pub mod schedule;
mod schema;
pub mod serve;
mod service;
pub mod site_data;
pub mod store;
mod worker;

pub use api::{router, ApiError};
pub use clock::{Clock, ManualClock, SystemClock};
pub use error::ServiceError;
pub use ids::{registrable_domain, site_of, ReportId};
pub use schedule::{Scheduler, Tick};
pub use schema::SCHEMA;
pub use serve::{serve, ServeOptions};
pub use service::{DomainView, Service, ServiceConfig, SubmitError, Submitted};
pub use site_data::ServiceData;
pub use store::{ReportRow, ReportState, Store};
pub use worker::failure_message;
