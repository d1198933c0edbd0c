//! RobotsTxtParser's analysis: one site's robots.txt, page head and sitemaps, audited and
//! scored out of 100.
//!
//! - [`audit_robots_txt`] audits a robots.txt body with no network (syntax, logic, sitemaps
//!   declared, crawler directory).
//! - [`Score::compute`] turns findings into a score and a grade, every point tied to a
//!   finding.
//! - [`directives`] reads X-Robots-Tag headers and robots meta tags.

#![forbid(unsafe_code)]
#![warn(missing_docs)]

pub mod analysis;
pub mod crawlers;
pub mod directives;
pub mod finding;
pub mod head;
pub mod net;
mod robots_audit;
pub mod score;
mod source;

pub use analysis::{analyze, analyze_file, analyze_with, Analysis, AnalysisError, Limits};
pub use finding::{Category, Check, CheckId, Evidence, Finding, Severity, CHECKS};
pub use net::Transport;
pub use robots_audit::{
    audit_robots_txt, sort_findings, FileAudit, FileContext, FileSummary, Omitted, LONG_LINE_BYTES,
    MAX_FINDINGS_PER_CHECK, MAX_RELATED_LINES, MAX_RULES_COMPARED,
};
pub use score::{Grade, Score};
