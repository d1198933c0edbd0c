//! One crawler's merged rules compared with each other: repeated rules, identical Allow and
//! Disallow, rules that never decide because another always wins, rules another covers.

use std::collections::HashMap;

use robots::{AgentRules, GroupSelection, RobotsTxt, Rule, RuleKind};

use crate::catalogue::CheckId;
use crate::collect::Findings;
use crate::cost::units::{PAIR_COST, PIECE_COST};
use crate::cost::Budget;
use crate::finding::{Evidence, Finding};

use super::line_text;

/// A rule set (the merged rules of the crawlers following the same groups) with more rules
/// than this is not searched for shadowed or redundant rules (the comparison is quadratic),
/// and at most this many rules of a set are probed for the other logic checks.
pub const MAX_RULES_COMPARED: usize = 1_000;

/// The `group` parameter of a finding: the token, `*`, or empty for no group.
pub(super) fn group_param(selection: &GroupSelection) -> &str {
    match selection {
        GroupSelection::Named(token) => token,
        GroupSelection::Global => "*",
        GroupSelection::None => "",
    }
}

/// A finding at a rule's line, naming the rule (`kind`, `pattern`).
pub(super) fn at_rule(id: CheckId, robots: &RobotsTxt, rule: &Rule) -> Finding {
    Finding::new(id, Evidence::line(rule.line, line_text(robots, rule.line)))
        .with("kind", rule.kind.to_string())
        .with("pattern", &rule.pattern)
}

/// A crawler's merged rules as the full parse's [`Rule`]s, most specific first (the
/// engine's matching order).
pub(super) fn merged_rules<'r>(robots: &'r RobotsTxt, agent: &AgentRules) -> Vec<&'r Rule> {
    agent
        .rules()
        .iter()
        .filter_map(|rule| robots.rule_of(rule))
        .collect()
}

/// The literal a pattern matches at least, and whether it is anchored with `$`. Only for
/// patterns whose sole wildcard is a trailing `*` (which changes nothing) or a final `$`.
pub(super) fn literal_probe(canonical: &str) -> Option<(String, bool)> {
    let trimmed = canonical.trim_end_matches('*');
    let (literal, anchored) = match trimmed.strip_suffix('$') {
        Some(literal) if trimmed.len() == canonical.len() => (literal, true),
        Some(_) => return None,
        None => (trimmed, false),
    };
    if literal.is_empty()
        || literal.contains('*')
        || literal.contains('$')
        || !literal.starts_with('/')
    {
        return None;
    }
    Some((literal.to_owned(), anchored))
}

/// The literal text before a pattern's first wildcard.
fn literal_prefix(canonical: &str) -> &str {
    let end = canonical.find(['*', '$']).unwrap_or(canonical.len());
    &canonical[..end]
}

struct Compiled<'r> {
    rule: &'r Rule,
    canonical: String,
    probe: Option<(String, bool)>,
    /// What matching a path against this rule costs besides the path's length: one
    /// substring search per `*`-separated piece.
    match_cost: u64,
}

/// Whether `broad` matches every URL `narrow` matches; adds the comparison's cost to `work`.
fn covers(broad: &Compiled<'_>, narrow: &Compiled<'_>, work: &mut u64) -> bool {
    let Some((literal, anchored)) = &narrow.probe else {
        return false;
    };
    if !anchored && broad.canonical.ends_with('$') {
        return false;
    }
    *work += PAIR_COST + to_u64(literal.len()) + broad.match_cost;
    broad.rule.matches(literal)
}

fn beats(winner: &Rule, loser: &Rule) -> bool {
    winner.specificity() > loser.specificity()
        || (winner.specificity() == loser.specificity()
            && winner.kind == RuleKind::Allow
            && loser.kind == RuleKind::Disallow)
}

/// How far the comparison of one rule set went.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Compared {
    /// Every pair compared.
    Whole,
    /// More rules than [`MAX_RULES_COMPARED`]: only repeated rules were looked for.
    TooLarge,
    /// The budget ran out part of the way.
    Stopped,
}

/// Checks one crawler's merged rules: identical, repeated, shadowed and redundant rules.
/// `line` is where the set's first group starts (the evidence when the set is too large).
/// The caller has counted the merge ([`RULE_COST`](crate::cost::RULE_COST) per rule); each
/// comparison of two rules counts [`PAIR_COST`], the length of the path matched and
/// [`PIECE_COST`] per `*` of the pattern matched.
pub(super) fn rule_set(
    robots: &RobotsTxt,
    rules: &AgentRules,
    line: Option<usize>,
    findings: &mut Findings,
    budget: &mut Budget,
) -> Compared {
    let merged = merged_rules(robots, rules);
    let group = group_param(rules.group());
    repeated(robots, &merged, group, findings);
    if merged.len() > MAX_RULES_COMPARED {
        let evidence = match line {
            Some(line) => Evidence::line(line, line_text(robots, line)),
            None => Evidence::default(),
        };
        findings.push(
            Finding::new(CheckId::AuditLimited, evidence)
                .with("group", group)
                .with("rules", merged.len()),
        );
        return Compared::TooLarge;
    }
    let compiled: Vec<Compiled<'_>> = merged
        .iter()
        .map(|&rule| {
            let canonical = rule.canonical_pattern();
            let probe = literal_probe(&canonical);
            let pieces = canonical.bytes().filter(|&b| b == b'*').count();
            Compiled {
                rule,
                probe,
                match_cost: to_u64(pieces).saturating_mul(PIECE_COST),
                canonical,
            }
        })
        .collect();
    for narrow in compiled.iter().filter(|rule| rule.probe.is_some()) {
        let mut work = 0;
        let finding = never_decides(robots, narrow, &compiled, &mut work);
        if let Some(finding) = finding {
            findings.push(finding);
        }
        if !budget.spend(work) {
            return Compared::Stopped;
        }
    }
    Compared::Whole
}

/// A count as comparison units.
pub(super) fn to_u64(count: usize) -> u64 {
    u64::try_from(count).unwrap_or(u64::MAX)
}

/// Rules repeated, or the same path both allowed and disallowed, in file order.
fn repeated(robots: &RobotsTxt, merged: &[&Rule], group: &str, findings: &mut Findings) {
    let mut by_pattern: HashMap<String, Vec<&Rule>> = HashMap::new();
    let mut in_file_order: Vec<&Rule> = merged.to_vec();
    in_file_order.sort_by_key(|rule| rule.line);
    for rule in in_file_order {
        let earlier = by_pattern.entry(rule.canonical_pattern()).or_default();
        let same = earlier.iter().find(|other| other.kind == rule.kind);
        let opposite = earlier.iter().find(|other| other.kind != rule.kind);
        let finding = match (same, opposite) {
            (Some(same), _) => Some(
                at_rule(CheckId::LogicRuleRepeated, robots, rule).with("other_line", same.line),
            ),
            (None, Some(opposite)) => Some(
                at_rule(CheckId::LogicAllowDisallowSame, robots, rule)
                    .with("other_line", opposite.line)
                    .with("other_kind", opposite.kind.to_string()),
            ),
            (None, None) => None,
        };
        if let Some(mut finding) = finding {
            if let Some(other) = finding.number("other_line") {
                finding.evidence.related_lines.push(other as usize);
            }
            findings.push(finding.with("group", group));
        }
        // Keep the first rule of each kind: enough to name what a later one repeats.
        if same.is_none() {
            earlier.push(rule);
        }
    }
}

/// Whether `narrow` never decides: another rule always beats it (shadowed, or redundant when
/// of the same kind), or a broader rule of its kind covers it with no exception in between.
fn never_decides(
    robots: &RobotsTxt,
    narrow: &Compiled<'_>,
    compiled: &[Compiled<'_>],
    work: &mut u64,
) -> Option<Finding> {
    let different = |broad: &&Compiled<'_>| broad.canonical != narrow.canonical;
    let winner = compiled
        .iter()
        .filter(different)
        .find(|broad| beats(broad.rule, narrow.rule) && covers(broad, narrow, work));
    let (other, always_wins) = match winner {
        Some(winner) => (winner, true),
        None => {
            let broader = compiled
                .iter()
                .filter(different)
                .find(|broad| broad.rule.kind == narrow.rule.kind && covers(broad, narrow, work))?;
            let space = literal_prefix(&broader.canonical);
            *work += to_u64(compiled.len()) * PAIR_COST;
            let exception_possible = compiled.iter().any(|other| {
                other.rule.kind != narrow.rule.kind && {
                    let prefix = literal_prefix(&other.canonical);
                    prefix.len() <= 1 || prefix.starts_with(space) || space.starts_with(prefix)
                }
            });
            if exception_possible {
                return None;
            }
            (broader, false)
        }
    };
    let id = if other.rule.kind == narrow.rule.kind {
        CheckId::LogicRuleRedundant
    } else {
        CheckId::LogicRuleShadowed
    };
    let mut finding = at_rule(id, robots, narrow.rule)
        .with("always_wins", always_wins)
        .with("other_line", other.rule.line)
        .with("other_kind", other.rule.kind.to_string())
        .with("other_pattern", &other.rule.pattern);
    finding.evidence.related_lines.push(other.rule.line);
    Some(finding)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn literal_probes() {
        assert_eq!(literal_probe("/a"), Some(("/a".into(), false)));
        assert_eq!(literal_probe("/a*"), Some(("/a".into(), false)));
        assert_eq!(literal_probe("/a$"), Some(("/a".into(), true)));
        assert_eq!(literal_probe("/*.js"), None);
    }
}
