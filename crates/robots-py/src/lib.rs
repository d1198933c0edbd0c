//! `jittybot_robots._robots`: JittyBot's robots.txt engine as a Python extension module.
//!
//! Glue only. How a robots.txt is read, how a URL is matched and how a user agent is read all
//! belong to the `robots` crate; this crate turns Python values into its inputs and its answers
//! into Python objects and exceptions. The package around it (`python/jittybot_robots`) adds
//! the type stubs and the Scrapy parser.

mod agents;
mod decision;
mod robots_txt;

use pyo3::prelude::*;

/// The product token a crawler's name or User-Agent string names, as the engine reads it:
/// `"Scrapy/2.13 (+https://scrapy.org)"` gives `"Scrapy"`, `"Mozilla/5.0 (compatible;
/// Googlebot/2.1; +http://www.google.com/bot.html)"` gives `"Googlebot"`, `"MJ12bot"` gives
/// `"MJ12bot"`; `None` when it names none (`""`, `"*"`).
#[pyfunction]
fn product_token(user_agent: std::borrow::Cow<'_, str>) -> Option<String> {
    robots::crawler_token(&user_agent).map(str::to_owned)
}

/// JittyBot's RFC 9309 robots.txt engine.
#[pymodule]
fn _robots(module: &Bound<'_, PyModule>) -> PyResult<()> {
    module.add_class::<robots_txt::RobotsTxt>()?;
    module.add_class::<decision::Decision>()?;
    module.add_class::<decision::Diagnostic>()?;
    module.add_function(wrap_pyfunction!(product_token, module)?)?;
    module.add("MAX_ROBOTS_TXT_BYTES", robots::MAX_ROBOTS_TXT_BYTES)?;
    module.add(
        "PARSE_WITHOUT_GIL_BYTES",
        robots_txt::PARSE_WITHOUT_GIL_BYTES,
    )?;
    module.add("MAX_CACHED_AGENTS", robots_txt::MAX_CACHED_AGENTS)?;
    Ok(())
}
