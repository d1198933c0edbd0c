//! The budget of one file audit as it runs.

use std::time::Duration;

use super::{thread_cpu_time, AuditCost, AuditLimits, AuditStage, LimitsReached};

/// How much comparison work passes between two looks at the CPU clock (each look is a
/// system call): about a millisecond of work.
const CLOCK_EVERY: u64 = 1_000_000;

/// The budget of one file audit as it runs: comparison work left, CPU time used, and what
/// was left out.
#[derive(Debug)]
pub(crate) struct Budget {
    limits: AuditLimits,
    /// The thread's CPU time when the audit started.
    started: Duration,
    /// Comparison work done.
    spent: u64,
    /// `spent` at the last look at the clock.
    clock_checked_at: u64,
    out_of_time: bool,
    out_of_comparisons: bool,
    /// How many rule sets the file has (for the report, when some were left out).
    pub(crate) rule_sets: usize,
    pub(crate) reached: LimitsReached,
}

impl Budget {
    /// A budget starting now, on this thread.
    pub(crate) fn start(limits: &AuditLimits) -> Budget {
        Budget {
            limits: *limits,
            started: thread_cpu_time(),
            spent: 0,
            clock_checked_at: 0,
            out_of_time: false,
            out_of_comparisons: false,
            rule_sets: 0,
            reached: LimitsReached::default(),
        }
    }

    /// Whether the CPU budget has run out (looks at the clock: call it between pieces of
    /// work that each take well under a millisecond or so).
    pub(crate) fn out_of_time(&mut self) -> bool {
        if !self.out_of_time
            && thread_cpu_time().saturating_sub(self.started) >= self.limits.cpu_budget
        {
            self.out_of_time = true;
            self.reached.cpu_budget_ms =
                Some(u64::try_from(self.limits.cpu_budget.as_millis()).unwrap_or(u64::MAX));
        }
        self.out_of_time
    }

    /// Counts `units` of comparison work; false once the comparison budget or the CPU budget
    /// has run out (the work should then stop).
    pub(crate) fn spend(&mut self, units: u64) -> bool {
        self.spent = self.spent.saturating_add(units);
        if self.spent > self.limits.comparison_budget {
            self.out_of_comparisons = true;
        }
        if self.spent - self.clock_checked_at >= CLOCK_EVERY {
            self.clock_checked_at = self.spent;
            self.out_of_time();
        }
        !self.out_of_comparisons && !self.out_of_time
    }

    /// The comparison budget in effect.
    pub(crate) fn comparison_budget(&self) -> u64 {
        self.limits.comparison_budget
    }

    /// Whether comparison work may go on.
    pub(crate) fn can_compare(&self) -> bool {
        !self.out_of_comparisons && !self.out_of_time
    }

    /// Runs `stage` unless the CPU budget has already run out; records it as skipped if it
    /// was not run, or ran out of time while it ran.
    pub(crate) fn stage(&mut self, stage: AuditStage, run: impl FnOnce(&mut Budget)) {
        if !self.out_of_time() {
            run(self);
            if !self.out_of_time() {
                return;
            }
        }
        self.reached.skipped.push(stage);
    }

    /// Records that `stage` was cut short by the comparison budget.
    pub(crate) fn cut_short(&mut self, stage: AuditStage) {
        if !self.reached.cut_short.contains(&stage) {
            self.reached.cut_short.push(stage);
        }
    }

    /// What the audit has cost so far.
    pub(crate) fn cost(&self) -> AuditCost {
        let cpu = thread_cpu_time().saturating_sub(self.started);
        AuditCost {
            cpu_us: u64::try_from(cpu.as_micros()).unwrap_or(u64::MAX),
            comparison_work: self.spent,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_comparison_budget_runs_out_and_stays_out() {
        let limits = AuditLimits {
            comparison_budget: 100,
            ..AuditLimits::default()
        };
        let mut budget = Budget::start(&limits);
        assert!(budget.spend(60));
        assert!(budget.spend(40));
        assert!(!budget.spend(1));
        assert!(!budget.can_compare());
        assert_eq!(budget.cost().comparison_work, 101);
    }

    #[test]
    fn a_spent_cpu_budget_skips_every_stage_after_it() {
        let limits = AuditLimits {
            cpu_budget: Duration::ZERO,
            ..AuditLimits::default()
        };
        let mut budget = Budget::start(&limits);
        let mut ran = false;
        budget.stage(AuditStage::Syntax, |_| ran = true);
        budget.stage(AuditStage::Sitemaps, |_| ran = true);
        assert!(!ran);
        assert_eq!(
            budget.reached.skipped,
            [AuditStage::Syntax, AuditStage::Sitemaps]
        );
        assert_eq!(budget.reached.cpu_budget_ms, Some(0));
        assert!(!budget.can_compare());
    }
}
