//! What a check is: how likely its findings are mistakes, and which part of the analysis it
//! belongs to.

use std::fmt;

use serde::{Deserialize, Serialize};

/// How likely a finding is a mistake (not how much it costs).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    /// Almost certainly a mistake with site-wide effect.
    Critical,
    /// Very likely a mistake: crawlers will not do what the file seems to ask.
    Error,
    /// Often a mistake, or something crawlers disagree about.
    Warning,
    /// Harmless but untidy or fragile.
    Notice,
    /// A fact or a deliberate policy: never a penalty.
    Info,
}

impl Severity {
    /// All severities, worst first.
    pub const ALL: [Severity; 5] = [
        Severity::Critical,
        Severity::Error,
        Severity::Warning,
        Severity::Notice,
        Severity::Info,
    ];

    /// The lowercase name used in reports.
    pub fn as_str(self) -> &'static str {
        match self {
            Severity::Critical => "critical",
            Severity::Error => "error",
            Severity::Warning => "warning",
            Severity::Notice => "notice",
            Severity::Info => "info",
        }
    }
}

impl fmt::Display for Severity {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// What part of the analysis a check belongs to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Category {
    /// How robots.txt was served.
    Fetching,
    /// Lines crawlers ignore or read differently.
    Syntax,
    /// What the rules mean taken together.
    Logic,
    /// The declared sitemaps.
    Sitemaps,
    /// The analysed page's headers and meta tags.
    Page,
    /// Notable crawlers and the policy towards them.
    Crawlers,
}

impl Category {
    /// The lowercase name used in reports.
    pub fn as_str(self) -> &'static str {
        match self {
            Category::Fetching => "fetching",
            Category::Syntax => "syntax",
            Category::Logic => "logic",
            Category::Sitemaps => "sitemaps",
            Category::Page => "page",
            Category::Crawlers => "crawlers",
        }
    }
}
