//! JittyBot the crawler: the frontier in a store, origins and their pacing,
//! sitemaps, WARC output. See the crate README.

pub mod crawler;
pub mod directives;
pub mod event;
pub mod html;
pub mod input;
pub mod normal;
pub mod origins;
pub mod site;
pub mod sitemap;
pub mod store;
pub mod warc;
