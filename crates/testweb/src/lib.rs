//! A scripted web for network tests: real HTTP and HTTPS servers on 127.0.0.1 serving named
//! virtual sites, each path with scripted replies, and a record of every request.
//!
//! No test in the project touches the internet: tests pin site names to this web's ports
//! (`--resolve`-style) and opt into private addresses.
//!
//! ```no_run
//! # async fn demo() {
//! use std::time::Duration;
//! use testweb::{Reply, TestWeb};
//!
//! let web = TestWeb::start().await;
//! web.site("example.test").path("/robots.txt").script([
//!     Reply::status(503),
//!     Reply::status(503).header("Retry-After", "120"),
//!     Reply::ok().body("User-agent: *\nDisallow: /private\n"),
//! ]);
//! web.site("slow.test").path("/").respond(Reply::ok().delay(Duration::from_secs(5)));
//! let url = web.http_url("example.test", "/robots.txt");
//! // ... fetch `url` with web.pins("example.test") as --resolve pins ...
//! assert_eq!(web.requests_to("example.test", "/robots.txt").len(), 0);
//! # }
//! ```
//!
//! A path's script is played in order, one reply per request; the last reply repeats. A
//! [`Reply::conditional`] reply answers `If-None-Match` / `If-Modified-Since` with `304` as a
//! real server does; the log records each request's answer status and body bytes.
//! Unknown sites and paths answer `404`, unless a generator ([`TestWeb::generate`], e.g.
//! [`linked_pages`] for a big site of linked pages) makes a reply.
//!
//! [`MultiWeb`] serves the same sites on several loopback addresses (127.0.0.2 upwards), one
//! per origin, each listening for HTTP and HTTPS on one shared port, with certificates per
//! host name (or shared by a group of names) and hosts that refuse HTTPS.

mod body;
mod conn;
mod generate;
mod multi;
mod reply;
mod script;
mod server;

pub use generate::{linked_pages, LinkedPages};
pub use multi::{MultiWeb, MAX_ADDRESSES};
pub use reply::{Action, Reply};
pub use script::{script_links, script_pages, ScriptPages};
pub use server::{RecordedRequest, Route, Site, TestWeb, CERTIFICATE_NAMES};
