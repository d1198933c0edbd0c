//! JittyBot's robots.txt engine: RFC 9309 parsing and matching, exactly as JittyBot reads it.
//!
//! Pure and synchronous: bytes in, rules and decisions out. Parsing never fails and never
//! panics; whatever it ignores or repairs becomes a [`Diagnostic`]. Every [`Decision`] names
//! the rule (line, kind, pattern as written) and the group that decided it.
//!
//! Two entry points:
//! - [`AgentRules::parse`] reads a file for one crawler (its product tokens in order of
//!   preference) and skips the groups it does not need: the crawler's hot path.
//! - [`RobotsTxt::parse`] reads everything: all groups, sitemaps and diagnostics, for audits
//!   and caches serving several crawlers. [`RobotsTxt::rules_for`] then gives one crawler's
//!   rules.
//!
//! ```
//! use robots::AgentRules;
//!
//! let file = b"User-agent: JittyBot\nDisallow: /search\nAllow: /search/help\n";
//! let rules = AgentRules::parse(file, &["JittyBot"]);
//! let decision = rules.check("https://example.com/search?q=1");
//! assert!(!decision.allowed);
//! assert_eq!(decision.to_string(), "line 2: Disallow: /search, group JittyBot");
//! assert!(rules.is_allowed("/search/help"));
//! ```
//!
//! How JittyBot reads the standard, in short (the crate's README has the full list):
//! the first 500 KiB are read; lines end at CR, LF or CRLF; `#` starts a comment; field names
//! are case-insensitive; a user-agent value is reduced to its product token; all groups naming
//! the chosen token are merged, and a named group never inherits the `*` rules; the longest
//! matching rule in canonical percent-encoded form wins, allow on a tie; `/robots.txt` is always
//! allowed.

#![forbid(unsafe_code)]
#![warn(missing_docs)]

mod canon;
mod diagnostics;
mod lines;
mod parse;
mod pattern;
mod rules;

pub use canon::canonicalize;
pub use diagnostics::{Diagnostic, DiagnosticKind};
pub use lines::MAX_ROBOTS_TXT_BYTES;
pub use parse::MAX_PREFERRED_TOKENS;
pub use rules::{
    AgentRules, CrawlDelay, DecidingRule, Decision, Explanation, GroupSelection, Rule, RuleKind,
    RuleRef,
};

/// A whole parsed robots.txt file.
#[derive(Debug, Clone, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
pub struct RobotsTxt {
    groups: Vec<Group>,
    sitemaps: Vec<Sitemap>,
    diagnostics: Vec<Diagnostic>,
    lines: usize,
    bytes_read: usize,
    bytes_total: usize,
}

impl RobotsTxt {
    /// Parses a robots.txt body. Never fails: see [`RobotsTxt::diagnostics`] for what was
    /// ignored.
    pub fn parse(robots_txt: &[u8]) -> RobotsTxt {
        parse::parse_full(robots_txt)
    }

    /// The groups in file order (not merged).
    pub fn groups(&self) -> &[Group] {
        &self.groups
    }

    /// The absolute sitemap URLs, in file order.
    pub fn sitemaps(&self) -> &[Sitemap] {
        &self.sitemaps
    }

    /// Everything ignored or suspicious, by line.
    pub fn diagnostics(&self) -> &[Diagnostic] {
        &self.diagnostics
    }

    /// How many lines were read.
    pub fn line_count(&self) -> usize {
        self.lines
    }

    /// How many bytes of the input were read (at most [`MAX_ROBOTS_TXT_BYTES`]).
    pub fn bytes_read(&self) -> usize {
        self.bytes_read
    }

    /// The size of the input.
    pub fn bytes_total(&self) -> usize {
        self.bytes_total
    }

    /// The rules one crawler follows. `tokens` are its product tokens in order of preference:
    /// the first token some group names wins; otherwise the `*` groups; otherwise none.
    pub fn rules_for(&self, tokens: &[&str]) -> AgentRules {
        parse::rules_for(self, tokens)
    }

    /// One-off check of `url` for a crawler. Builds the crawler's rules each time: to check
    /// many URLs, keep the result of [`RobotsTxt::rules_for`] instead.
    pub fn is_allowed(&self, tokens: &[&str], url: &str) -> bool {
        self.rules_for(tokens).is_allowed(url)
    }
}

/// One group: user-agent lines and the rules after them.
#[derive(Debug, Clone, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
pub struct Group {
    /// Line of the group's first user-agent line.
    pub line: usize,
    /// The user-agent lines naming this group.
    pub user_agents: Vec<UserAgent>,
    /// Allow and disallow rules in file order (empty and non-path values are left out).
    pub rules: Vec<Rule>,
    /// The group's crawl-delay (the largest if several were given).
    pub crawl_delay: Option<CrawlDelay>,
}

/// One user-agent line.
#[derive(Debug, Clone, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
pub struct UserAgent {
    /// 1-based line number.
    pub line: usize,
    /// The value as written.
    pub value: String,
    /// What the value names.
    pub product: UserAgentProduct,
}

/// What a user-agent line names.
#[derive(Debug, Clone, PartialEq, Eq)]
#[cfg_attr(
    feature = "serde",
    derive(serde::Serialize),
    serde(tag = "type", content = "token", rename_all = "snake_case")
)]
pub enum UserAgentProduct {
    /// `*`.
    Global,
    /// A product token (the leading run of `[A-Za-z_-]`).
    Token(String),
    /// Nothing: the value was empty or had no product token.
    Nothing,
}

/// A `Sitemap:` line with an absolute URL.
#[derive(Debug, Clone, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
pub struct Sitemap {
    /// 1-based line number.
    pub line: usize,
    /// The URL as written.
    pub url: String,
}
