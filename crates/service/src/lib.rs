//! RobotsTxtParser the service: the store of reports, the analysis queue, the schedule,
//! retention and the JSON API behind `jittybot serve` (seed 004).
//!
//! - [`Store`] is the typed store on [`db::Db`] (SQLite or PostgreSQL, [`SCHEMA`]'s versioned
//!   migrations).
//! - [`indexing`] decides which reports may be published.
//! - Every limit is a named constant in [`limits`].

#![forbid(unsafe_code)]
#![warn(missing_docs)]

mod error;
pub mod ids;
pub mod indexing;
pub mod limits;
mod schema;
pub mod store;

pub use error::ServiceError;
pub use ids::{registrable_domain, site_of, ReportId};
pub use schema::SCHEMA;
pub use store::{ReportRow, ReportState, Store};
