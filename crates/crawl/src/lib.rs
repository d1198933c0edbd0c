//! JittyBot the crawler: the frontier in a store, origins and their pacing,
//! sitemaps (read by the `sitemap` crate), WARC output (written by the `warc` crate). See the
//! crate README.

pub mod control;
pub mod counters;
pub mod crawler;
pub mod event;
pub mod html;
pub mod input;
pub mod metrics;
pub mod normal;
pub mod origins;
pub mod site;
pub mod store;
