//! The fetch rules of one analysis, on tokio's paused clock with the fetcher's scripted web
//! (`fetch::testing`, the one seam both bots' tests script): which requests are made, in
//! which order, when, and which are skipped, read from the web's request log. One test
//! binary, one module per step of the analysis.

mod fake;
mod page;
mod robots_txt;
mod sitemaps;
