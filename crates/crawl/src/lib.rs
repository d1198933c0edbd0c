//! JittyBot the crawler (issues 8 and 9): the frontier in a store, origins and their pacing,
//! sitemaps, WARC output. See the crate README.

#![forbid(unsafe_code)]
#![warn(missing_docs)]

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
