//! The operator's levers for complaints ("we will adjust things directly"): kept in the
//! crawl's store, so every process crawling it obeys them within [`LEVERS_REFRESH`] (and the
//! scheduler's tick) of `jittybot crawl-control` pulling one.
//!
//! - `pace SITE DURATION` — the origins serving the site are paced at least that slowly
//!   (through fetch's pacer, so the floor is part of each origin's stored next start and holds
//!   across processes like a crawl-delay); `pace SITE default` removes it.
//! - `exclude SITE` / `include SITE` — no request of any kind to the site (pages, robots.txt,
//!   sitemaps, media, redirect hops, a rendered page's sub-requests: the pacer refuses the
//!   turn); its URLs stay queued and are not claimed. A run whose only work left is excluded
//!   ends, with those URLs still queued.
//! - `refresh-robots SITE` — the stored robots.txt copies of the site's hosts are deleted at
//!   once, and each process drops its cached copies at its next read of the levers, so the
//!   file is fetched again before the site's next request.
//!
//! A SITE is a domain or host name ([`SiteName`]): it covers that name and every name under
//! it. The crawler's hooks: [`Levers`] is the pacer's [`fetch::Overrides`]; the scheduler
//! calls [`Levers::refresh`] every [`LEVERS_REFRESH`], leaves [`Levers::parked_origins`] out
//! of its claims and asks [`Levers::only_held_left`] before waiting for work; a worker asks
//! [`Levers::holds`] before each URL and claims URLs without [`Levers::held_hosts`].

mod lever;
mod levers;
mod store;

pub use lever::{read_levers, Lever, LeverError, SiteName, MAX_PACE_FLOOR, MAX_SITE_BYTES};
pub use levers::{Levers, LeversError, LEVERS_REFRESH, MAX_CONTROL_FILE_BYTES};
pub use store::{apply, levers, SiteLevers, LEVERS_SCHEMA};
