//! What auditing one robots.txt file may cost, and what the report says when a limit is hit.
//!
//! A file of 500 KiB can name tens of thousands of crawlers and hold tens of thousands of
//! rules; compared naively, rule by rule and crawler by crawler, it costs minutes of CPU. The
//! audit bounds that work three ways:
//!
//! - crawlers that follow the same groups share one rule set, built and compared once;
//! - a deterministic budget of comparison work for the whole file ([`COMPARISON_BUDGET`], in
//!   units counted by [`units`]): past it, what is left of the comparisons is not done, and
//!   an `audit.comparisons-capped` finding says what;
//! - a CPU-time budget for the whole audit ([`AUDIT_CPU_BUDGET`]), measured on the thread
//!   that audits (`CLOCK_THREAD_CPUTIME_ID`, so a busy machine does not shorten it): past it,
//!   the checks not yet run are skipped, and an `audit.incomplete` finding lists them.
//!
//! The comparison budget makes the report the same on every machine; the CPU budget is the
//! backstop for what it does not foresee (a slow machine, a shape of file no one thought of).

mod budget;
pub mod units;

use std::time::Duration;

use serde::{Deserialize, Serialize};

pub(crate) use budget::Budget;

/// The CPU time one file audit may use (1 s), measured on the auditing thread from the
/// start of the audit (parsing included for a provided file). When it runs out, the check
/// under way stops and the checks after it are skipped; the report lists them
/// ([`LimitsReached::skipped`], and an `audit.incomplete` finding).
pub const AUDIT_CPU_BUDGET: Duration = Duration::from_secs(1);

/// The comparison work one file audit may do, in [`units`] of roughly a nanosecond of CPU
/// on the machine the crate README measures: merging rules into a crawler's rule set,
/// comparing two rules, checking a URL against a rule set. Past it, the rule sets not yet
/// compared are left out (the crawlers of the directory and `*` come first), and an
/// `audit.comparisons-capped` finding says how many.
pub const COMPARISON_BUDGET: u64 = 256_000_000;

/// The limits of one file audit; [`AuditLimits::default`] is the published set.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AuditLimits {
    /// See [`AUDIT_CPU_BUDGET`].
    pub cpu_budget: Duration,
    /// See [`COMPARISON_BUDGET`].
    pub comparison_budget: u64,
}

impl Default for AuditLimits {
    fn default() -> AuditLimits {
        AuditLimits {
            cpu_budget: AUDIT_CPU_BUDGET,
            comparison_budget: COMPARISON_BUDGET,
        }
    }
}

/// A part of the file audit, as the report names the parts a budget cut short.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum AuditStage {
    /// Lines crawlers ignore or read differently.
    Syntax,
    /// Lines longer than Google reads.
    LongLines,
    /// The declared sitemaps.
    Sitemaps,
    /// The policy towards notable crawlers.
    Policy,
    /// Groups naming a crawler twice.
    DuplicateGroups,
    /// The whole site closed to everyone or to search engines.
    WholeSite,
    /// Stylesheets and scripts blocked.
    Resources,
    /// The analysed page against the rules.
    Page,
    /// Each crawler's rules compared with each other, and with the `*` rules a named group
    /// drops.
    RuleComparisons,
}

impl AuditStage {
    /// Its name in the report.
    pub fn name(self) -> &'static str {
        match self {
            AuditStage::Syntax => "syntax",
            AuditStage::LongLines => "long_lines",
            AuditStage::Sitemaps => "sitemaps",
            AuditStage::Policy => "policy",
            AuditStage::DuplicateGroups => "duplicate_groups",
            AuditStage::WholeSite => "whole_site",
            AuditStage::Resources => "resources",
            AuditStage::Page => "page",
            AuditStage::RuleComparisons => "rule_comparisons",
        }
    }
}

/// The audit's own limits a report reached: what it left out. Absent from a report that
/// reached none (and from reports written before it was recorded).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct LimitsReached {
    /// Rule sets (crawlers following the same groups) with more rules than
    /// [`crate::MAX_RULES_COMPARED`]: their rules were not compared with each other.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub rule_sets_too_large: usize,
    /// Rule sets left uncompared, or compared only in part, because the comparison budget
    /// ([`COMPARISON_BUDGET`]) ran out.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub rule_sets_not_compared: usize,
    /// The parts of the audit cut short because the comparison budget ran out.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub cut_short: Vec<AuditStage>,
    /// The CPU budget in effect, in milliseconds, when it ran out (absent when it did not).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpu_budget_ms: Option<u64>,
    /// The parts of the audit cut short or skipped because the CPU budget ran out.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub skipped: Vec<AuditStage>,
}

fn is_zero(count: &usize) -> bool {
    *count == 0
}

impl LimitsReached {
    /// Whether no limit was reached.
    pub fn is_empty(&self) -> bool {
        *self == LimitsReached::default()
    }

    /// `Some` when a limit was reached.
    pub(crate) fn into_option(self) -> Option<LimitsReached> {
        (!self.is_empty()).then_some(self)
    }
}

/// What one file audit cost (not stored in reports: it varies from run to run).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct AuditCost {
    /// CPU time used on the auditing thread, in microseconds.
    pub cpu_us: u64,
    /// Comparison work done, in [`units`].
    pub comparison_work: u64,
}

/// The CPU time the calling thread has used so far (`CLOCK_THREAD_CPUTIME_ID`).
pub fn thread_cpu_time() -> Duration {
    let now = rustix::time::clock_gettime(rustix::time::ClockId::ThreadCPUTime);
    let seconds = u64::try_from(now.tv_sec).unwrap_or(0);
    let nanos = u32::try_from(now.tv_nsec).unwrap_or(0);
    Duration::new(seconds, nanos.min(999_999_999))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_thread_clock_moves_with_work_only() {
        let before = thread_cpu_time();
        let mut x = 0u64;
        for i in 0..2_000_000u64 {
            x = x.wrapping_mul(31).wrapping_add(i);
        }
        std::hint::black_box(x);
        assert!(thread_cpu_time() > before);
        // Sleeping uses no CPU.
        let before = thread_cpu_time();
        std::thread::sleep(Duration::from_millis(50));
        assert!(thread_cpu_time() - before < Duration::from_millis(25));
    }
}
