//! Collecting findings: deduplicated, capped per check, sorted worst first.

use std::collections::{BTreeMap, HashSet};

use serde::{Deserialize, Serialize};

use crate::catalogue::CheckId;
use crate::finding::Finding;

/// At most this many findings of one check are listed; the rest are only counted.
pub const MAX_FINDINGS_PER_CHECK: usize = 20;

/// Findings of one check left out of the list because of [`MAX_FINDINGS_PER_CHECK`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Omitted {
    /// The check.
    pub id: CheckId,
    /// How many findings were left out.
    pub count: usize,
}

/// What makes two findings the same: check, line, related lines and URL.
type FindingKey = (CheckId, Option<usize>, Vec<usize>, Option<String>);

/// Collects findings, deduplicating and capping them per check.
#[derive(Default)]
pub(crate) struct Findings {
    list: Vec<Finding>,
    seen: HashSet<FindingKey>,
    counts: BTreeMap<CheckId, usize>,
}

impl Findings {
    pub(crate) fn push(&mut self, finding: Finding) {
        let key = (
            finding.id.clone(),
            finding.evidence.line,
            finding.evidence.related_lines.clone(),
            finding.evidence.url.clone(),
        );
        if !self.seen.insert(key) {
            return;
        }
        let count = self.counts.entry(finding.id.clone()).or_default();
        *count += 1;
        if *count <= MAX_FINDINGS_PER_CHECK {
            self.list.push(finding);
        }
    }

    pub(crate) fn has(&self, id: &CheckId) -> bool {
        self.counts.contains_key(id)
    }

    pub(crate) fn finish(mut self) -> (Vec<Finding>, Vec<Omitted>) {
        sort_findings(&mut self.list);
        let omitted = self
            .counts
            .iter()
            .filter(|(_, &count)| count > MAX_FINDINGS_PER_CHECK)
            .map(|(id, &count)| Omitted {
                id: id.clone(),
                count: count - MAX_FINDINGS_PER_CHECK,
            })
            .collect();
        (self.list, omitted)
    }
}

/// Sorts findings worst first, then by line, then by check.
pub fn sort_findings(findings: &mut [Finding]) {
    findings.sort_by(|a, b| {
        a.severity
            .cmp(&b.severity)
            .then_with(|| {
                a.evidence
                    .line
                    .unwrap_or(usize::MAX)
                    .cmp(&b.evidence.line.unwrap_or(usize::MAX))
            })
            .then_with(|| a.id.cmp(&b.id))
    });
}
