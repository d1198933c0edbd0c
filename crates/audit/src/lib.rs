//! RobotsTxtParser's analysis: one site's robots.txt, page head and sitemaps, audited and
//! scored out of 100.
//!
//! - [`analyze`] runs one analysis over the network, as the bot does it, on the fetcher's
//!   polite pipeline (`fetch::Polite`) under one overall budget
//!   ([`limits::ANALYSIS_BUDGET`]); [`analyze_file`] audits a provided file offline.
//! - [`audit_robots_txt`] audits a robots.txt body with no network (syntax, logic, sitemaps
//!   declared, crawler directory).
//! - [`Score::compute`] turns findings into a score and a grade, every point tied to a
//!   finding.
//! - The audit of a file costs at most [`AUDIT_CPU_BUDGET`] of CPU and [`COMPARISON_BUDGET`]
//!   of comparison work ([`cost`]); a report that reached a limit says what it left out
//!   ([`Analysis::limits_reached`](report::Analysis::limits_reached) and `audit.*` findings).
//! - The page's X-Robots-Tag headers and robots meta tags are read by the `page` crate.
//!
//! Modules depend downwards only: the entry points ([`analyze`]) use the network run, the
//! network checks (fetching, page, sitemaps) and the file audit; all of them use the findings
//! and the report types.

mod analyze;
pub mod catalogue;
mod collect;
pub mod cost;
pub mod crawlers;
mod error;
mod fetching;
mod file;
pub mod finding;
pub mod limits;
mod page_checks;
mod render;
pub mod report;
mod run;
pub mod score;
mod sitemaps;

pub use analyze::{
    analyze, analyze_file, analyze_file_with, analyze_keeping_head, analyze_with, Analyzed,
    ProvidedFile,
};
pub use catalogue::{Category, Check, CheckId, Severity, CHECKS};
pub use collect::{sort_findings, Omitted, MAX_FINDINGS_PER_CHECK};
pub use cost::{
    AuditCost, AuditLimits, AuditStage, LimitsReached, AUDIT_CPU_BUDGET, COMPARISON_BUDGET,
};
pub use error::{AnalysisError, AnalysisErrorKind, RequestFailed};
pub use file::{
    audit_robots_txt, audit_robots_txt_with, FileAudit, FileContext, FileSummary, LONG_LINE_BYTES,
    MAX_RELATED_LINES, MAX_RULES_COMPARED,
};
pub use finding::{Evidence, Finding};
pub use limits::Limits;
pub use page_checks::PageHead;
pub use report::{Analysis, REPORT_VERSION};
pub use score::{Grade, Score};
pub use sitemaps::sniff_sitemap;
