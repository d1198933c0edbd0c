//! JittyBot's robots.txt engine: RFC 9309 parsing and matching, exactly as JittyBot reads it.
//!
//! Pure and synchronous: bytes in, rules and decisions out. Parsing never fails and never
//! panics; whatever it ignores or repairs becomes a [`Diagnostic`]. Every [`Decision`] names
//! the rule (line, kind, pattern as written) and the group that decided it.
//!
//! Two entry points:
//! - [`AgentRules::parse`] reads a file for one crawler (its [`ProductTokens`] in order of
//!   preference) and skips the groups it does not need: the crawler's hot path.
//! - [`RobotsTxt::parse`] reads everything: all groups, sitemaps, diagnostics and the numbered
//!   lines, for audits and caches serving several crawlers. [`RobotsTxt::rules_for`] then
//!   gives one crawler's rules.
//!
//! ```
//! use robots::{AgentRules, ProductTokens};
//!
//! let file = b"User-agent: JittyBot\nDisallow: /search\nAllow: /search/help\n";
//! let rules = AgentRules::parse(file, &ProductTokens::JITTYBOT);
//! let decision = rules.check("https://example.com/search?q=1");
//! assert!(!decision.allowed);
//! assert_eq!(decision.to_string(), "line 2: Disallow: /search, group JittyBot");
//! assert!(rules.is_allowed("/search/help"));
//! assert!(!rules.is_allowed("ftp://example.com/search"));
//! assert!(rules.try_check("mailto:robots@example.com").is_err());
//! ```
//!
//! How JittyBot reads the standard, in short (the crate's README has the full list):
//! the first 500 KiB are read; lines end at CR, LF or CRLF; `#` starts a comment; field names
//! are case-insensitive; a user-agent value is reduced to its product token; all groups naming
//! the chosen token are merged, and a named group never inherits the `*` rules; the longest
//! matching rule in canonical percent-encoded form wins, allow on a tie; `/robots.txt` is always
//! allowed.

mod agent;
mod canon;
mod decision;
mod diagnostics;
mod file;
mod index;
mod lines;
mod parse;
mod pattern;
mod rule;
mod select;
mod store;
mod target;
mod text;
mod tokens;
mod useragent;
mod word;

pub use agent::AgentRules;
pub use canon::canonicalize;
pub use decision::{DecidingRule, Decision, Explanation, GroupSelection, RuleRef};
pub use diagnostics::{Diagnostic, DiagnosticKind};
pub use file::{Group, RobotsTxt, Sitemap, UserAgent, UserAgentProduct};
pub use lines::MAX_ROBOTS_TXT_BYTES;
pub use rule::{CrawlDelay, EmptyRule, Rule, RuleKind};
pub use target::TargetError;
pub use text::SourceText;
pub use tokens::{
    product_token, AgentNote, ProductTokenError, ProductTokens, MAX_PREFERRED_TOKENS,
};
pub use useragent::crawler_token;
