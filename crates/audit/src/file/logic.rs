//! Logic: what the rules mean taken together, for each crawler: duplicate groups, named groups
//! that drop the `*` rules, whole-site blocks, blocked stylesheets and scripts, the analysed
//! page.

use std::collections::HashSet;

use robots::{AgentRules, GroupSelection, RobotsTxt, Rule, RuleKind};

use crate::catalogue::CheckId;
use crate::collect::Findings;
use crate::cost::units::{CheckCost, RULE_COST};
use crate::cost::{AuditStage, Budget};
use crate::crawlers::{self, CrawlerAccess, Purpose, CRAWLERS};
use crate::finding::{Evidence, Finding};

use super::rules::{group_param, merged_rules, rule_set, to_u64, Compared, MAX_RULES_COMPARED};
use super::sets::{Crawlers, NamedToken, RuleSet};
use super::{line_text, FileContext, MAX_RELATED_LINES};

/// Whether a group holds an empty `Disallow:` (the allow-all idiom).
fn group_has_empty_disallow(robots: &RobotsTxt, group_index: usize) -> bool {
    robots.groups().get(group_index).is_some_and(|group| {
        group
            .empty_rules
            .iter()
            .any(|rule| rule.kind == RuleKind::Disallow)
    })
}

/// A URL a disallow rule is sure to match, if one can be built.
fn sample_url(rule: &Rule) -> Option<String> {
    let canonical = rule.canonical_pattern();
    let mut sample = canonical.trim_end_matches('$').replace('*', "");
    if !sample.starts_with('/') {
        sample.insert(0, '/');
    }
    rule.matches(&sample).then_some(sample)
}

pub(super) fn logic(
    robots: &RobotsTxt,
    context: &FileContext<'_>,
    table: &[CrawlerAccess],
    findings: &mut Findings,
    budget: &mut Budget,
) {
    let crawlers = Crawlers::of(robots);
    budget.stage(AuditStage::DuplicateGroups, |_| {
        duplicate_groups(robots, &crawlers, findings);
    });
    budget.stage(AuditStage::WholeSite, |_| {
        whole_site(robots, table, findings)
    });
    budget.stage(AuditStage::Resources, |budget| {
        resources(robots, findings, budget);
    });
    if let Some(page) = context.page {
        budget.stage(AuditStage::Page, |_| page_rules(robots, page, findings));
    }
    // The costliest part last: every other check is bounded by the file's size.
    budget.stage(AuditStage::RuleComparisons, |budget| {
        compare_rule_sets(robots, &crawlers, findings, budget);
    });
}

fn duplicate_groups(robots: &RobotsTxt, crawlers: &Crawlers, findings: &mut Findings) {
    let mut duplicate = |token: &str, line: usize, first: usize| {
        findings.push(
            Finding::new(
                CheckId::LogicDuplicateGroup,
                Evidence::line(line, line_text(robots, line)).with_related([first]),
            )
            .with("token", token)
            .with("first_line", first),
        );
    };
    for token in &crawlers.tokens {
        for line in token.group_lines.iter().skip(1) {
            duplicate(&token.spelling, *line, token.group_lines[0]);
        }
    }
    let groups = robots.groups();
    let global_groups = &crawlers.global_groups;
    if let Some(first) = global_groups.first().and_then(|index| groups.get(*index)) {
        for group in global_groups
            .iter()
            .skip(1)
            .filter_map(|index| groups.get(*index))
        {
            duplicate("*", group.line, first.line);
        }
    }
}

/// What a rule set drops of the `*` rules: how many, the first, and the lines to list.
struct Dropped {
    count: usize,
    first_line: usize,
    first_pattern: String,
    lines: Vec<usize>,
}

/// Each rule set compared once, in the order of [`Crawlers::sets`], while the budget lasts:
/// its rules with each other ([`rule_set`]), and, for named crawlers, against the `*` rules
/// they drop. Findings naming a crawler are then made for each crawler of the set.
fn compare_rule_sets(
    robots: &RobotsTxt,
    crawlers: &Crawlers,
    findings: &mut Findings,
    budget: &mut Budget,
) {
    let global = robots.global_rules();
    let global_disallows = if dropped_rules_wanted(&global) {
        deciding_global_disallows(robots, &global, budget)
    } else {
        Vec::new()
    };
    let mut dropped: Vec<Option<Dropped>> = (0..crawlers.sets.len()).map(|_| None).collect();
    let mut of_token = vec![usize::MAX; crawlers.tokens.len()];
    let (mut too_large, mut not_compared) = (0, 0);
    for (index, set) in crawlers.sets.iter().enumerate() {
        for &token in &set.tokens {
            of_token[token] = index;
        }
        if !budget.can_compare() {
            not_compared += 1;
            continue;
        }
        let rules_in_set: usize = (set.groups.iter())
            .filter_map(|&group| robots.groups().get(group))
            .map(|group| group.rules.len())
            .sum();
        if !budget.spend(to_u64(rules_in_set).saturating_mul(RULE_COST)) {
            not_compared += 1;
            continue;
        }
        let rules = crawlers.rules_of(robots, set);
        let line = set
            .groups
            .first()
            .and_then(|&group| robots.groups().get(group))
            .map(|group| group.line);
        match rule_set(robots, &rules, line, findings, budget) {
            Compared::Whole => {}
            Compared::TooLarge => too_large += 1,
            Compared::Stopped => {
                not_compared += 1;
                continue;
            }
        }
        if !set.global && !global_disallows.is_empty() {
            dropped[index] = dropped_by(robots, set, &rules, &global_disallows, budget);
        }
    }
    // In file order of the crawlers, as they are named.
    for (token, &set) in crawlers.tokens.iter().zip(&of_token) {
        if let Some(dropped) = dropped.get(set).and_then(Option::as_ref) {
            drops_global_rules(robots, token, dropped, findings);
        }
    }
    budget.rule_sets = crawlers.sets.len();
    budget.reached.rule_sets_too_large += too_large;
    budget.reached.rule_sets_not_compared += not_compared;
}

/// Whether named groups that drop `*` rules are worth reporting: not under an allow-list
/// (`*` may fetch nothing, and named groups differ from it on purpose).
fn dropped_rules_wanted(global: &AgentRules) -> bool {
    *global.group() != GroupSelection::Global || global.check("/").allowed
}

/// The `*` group's disallow rules that decide for a sample URL of their own.
fn deciding_global_disallows<'r>(
    robots: &'r RobotsTxt,
    global: &AgentRules,
    budget: &mut Budget,
) -> Vec<(&'r Rule, String)> {
    let mut distinct = HashSet::new();
    let candidates: Vec<(&Rule, String)> = merged_rules(robots, global)
        .into_iter()
        .filter(|rule| rule.kind == RuleKind::Disallow && distinct.insert(rule.canonical_pattern()))
        .take(MAX_RULES_COMPARED)
        .filter_map(|rule| sample_url(rule).map(|sample| (rule, sample)))
        .collect();
    let mut deciding = Vec::new();
    let rules_cost = CheckCost::of(global);
    for (rule, sample) in candidates {
        if !budget.spend(rules_cost.of_path(&sample)) {
            budget.cut_short(AuditStage::RuleComparisons);
            break;
        }
        let decider = global.check(&sample).rule.map(|decider| decider.line);
        if decider == Some(rule.line) {
            deciding.push((rule, sample));
        }
    }
    deciding
}

/// The `*` rules a named rule set drops (a crawler with a group of its own never reads `*`),
/// unless the set allows everything on purpose (no rule, and an empty `Disallow:`).
fn dropped_by(
    robots: &RobotsTxt,
    set: &RuleSet,
    rules: &AgentRules,
    global_disallows: &[(&Rule, String)],
    budget: &mut Budget,
) -> Option<Dropped> {
    let allow_all = rules.rule_count() == 0
        && set
            .groups
            .iter()
            .any(|&index| group_has_empty_disallow(robots, index));
    if allow_all {
        return None;
    }
    let mut dropped: Option<Dropped> = None;
    let rules_cost = CheckCost::of(rules);
    for (rule, sample) in global_disallows {
        if !budget.spend(rules_cost.of_path(sample)) {
            budget.cut_short(AuditStage::RuleComparisons);
            break;
        }
        let decision = rules.check(sample);
        if !(decision.allowed && decision.rule.is_none()) {
            continue;
        }
        let entry = dropped.get_or_insert_with(|| Dropped {
            count: 0,
            first_line: rule.line,
            first_pattern: rule.pattern.to_string(),
            lines: Vec::new(),
        });
        entry.count += 1;
        if entry.lines.len() < MAX_RELATED_LINES {
            entry.lines.push(rule.line);
        }
    }
    dropped
}

/// A named group that silently drops the `*` rules, for one crawler of its set (crawlers
/// that ignore `*` lose nothing).
fn drops_global_rules(
    robots: &RobotsTxt,
    token: &NamedToken,
    dropped: &Dropped,
    findings: &mut Findings,
) {
    if crawlers::find(&token.spelling).is_some_and(|c| c.ignores_global) {
        return;
    }
    let line = token.group_lines[0];
    findings.push(
        Finding::new(
            CheckId::LogicDropsGlobalRules,
            Evidence::line(line, line_text(robots, line)).with_related(dropped.lines.clone()),
        )
        .with("token", &token.spelling)
        .with("dropped", dropped.count)
        .with("example_line", dropped.first_line)
        .with("example_pattern", &dropped.first_pattern),
    );
}

/// The whole site closed: to every crawler, to the major search engines, to minor ones by
/// name.
fn whole_site(robots: &RobotsTxt, table: &[CrawlerAccess], findings: &mut Findings) {
    let global = robots.global_rules();
    let majors: Vec<(&'static str, AgentRules)> = CRAWLERS
        .iter()
        .filter(|crawler| crawler.major)
        .map(|crawler| (crawler.token, crawlers::rules_for(robots, crawler)))
        .collect();
    if *global.group() == GroupSelection::Global && !global.check("/").allowed {
        let decision = global.check("/").explain();
        let line = decision.rule.as_ref().map_or(0, |rule| rule.line);
        let any_major_allowed = majors.iter().any(|(_, rules)| rules.check("/").allowed);
        let id = if any_major_allowed {
            CheckId::PolicyAllowlist
        } else {
            CheckId::LogicBlocksAll
        };
        findings.push(Finding::new(
            id,
            Evidence::line(line, line_text(robots, line)),
        ));
        return;
    }
    for (token, rules) in &majors {
        let decision = rules.check("/");
        if let (false, Some(rule)) = (decision.allowed, decision.rule) {
            findings.push(
                Finding::new(
                    CheckId::LogicSearchEngineBlocked,
                    Evidence::line(rule.line, line_text(robots, rule.line)),
                )
                .with("crawler", token)
                .with("group", group_param(decision.group)),
            );
        }
    }
    let minor_blocked: Vec<(&str, usize)> = table
        .iter()
        .filter(|row| {
            row.purpose == Purpose::Search
                && crawlers::find(&row.token).is_some_and(|crawler| !crawler.major)
        })
        .filter_map(|row| match (row.root.allowed, &row.group, &row.root.rule) {
            (false, GroupSelection::Named(_), Some(rule)) => Some((row.token.as_str(), rule.line)),
            _ => None,
        })
        .collect();
    if let Some((_, line)) = minor_blocked.first() {
        let names: Vec<&str> = minor_blocked.iter().map(|(token, _)| *token).collect();
        findings.push(
            Finding::new(
                CheckId::PolicySearchEngineBlocked,
                Evidence::line(*line, line_text(robots, *line))
                    .with_related(minor_blocked.iter().map(|(_, line)| *line)),
            )
            .with("crawlers", names),
        );
    }
}

/// Stylesheets and scripts Googlebot may not fetch.
fn resources(robots: &RobotsTxt, findings: &mut Findings, budget: &mut Budget) {
    let Some(google) = crawlers::find("Googlebot").map(|c| crawlers::rules_for(robots, c)) else {
        return;
    };
    let resource_rules = merged_rules(robots, &google)
        .into_iter()
        .filter(|rule| rule.kind == RuleKind::Disallow)
        .filter_map(|rule| resource_probe(&rule.canonical_pattern()).map(|probe| (rule, probe)))
        .take(MAX_RULES_COMPARED);
    let rules_cost = CheckCost::of(&google);
    for (rule, probe) in resource_rules {
        if !budget.spend(rules_cost.of_path(&probe)) {
            budget.cut_short(AuditStage::Resources);
            return;
        }
        let decision = google.check(&probe);
        let decided_by_it = decision
            .rule
            .is_some_and(|decider| decider.line == rule.line);
        if !decision.allowed && decided_by_it {
            findings.push(
                Finding::new(
                    CheckId::LogicResourcesBlocked,
                    Evidence::line(rule.line, line_text(robots, rule.line)),
                )
                .with("url", probe),
            );
        }
    }
}

/// Whether `text` holds the extension `ext` (such as `.js`) ending at a boundary.
fn has_extension(text: &str, ext: &str) -> bool {
    text.match_indices(ext).any(|(at, _)| {
        matches!(
            text[at + ext.len()..].chars().next(),
            None | Some('$' | '?' | '*' | '&' | '#')
        )
    })
}

/// A stylesheet or script URL a disallow pattern aims at, if it aims at one.
fn resource_probe(canonical: &str) -> Option<String> {
    let lower = canonical.to_ascii_lowercase();
    let directory = |names: &[&str]| {
        names.iter().any(|name| {
            lower
                .split('/')
                .any(|segment| segment.trim_end_matches(['*', '$']) == *name)
        })
    };
    let css_file = has_extension(&lower, ".css");
    let js_file = has_extension(&lower, ".js");
    let css_dir = directory(&["css", "styles", "stylesheets"]);
    let js_dir = directory(&["js", "javascript", "scripts", "wp-includes"]);
    if !(css_file || js_file || css_dir || js_dir) {
        return None;
    }
    let base = canonical.trim_end_matches('$').replace('*', "x");
    if css_file || js_file {
        return Some(base);
    }
    let file = if js_dir { "app.js" } else { "style.css" };
    Some(if base.ends_with('/') {
        format!("{base}{file}")
    } else {
        format!("{base}/{file}")
    })
}

/// The analysed page, disallowed for `*` or a major search engine, or for the bot only.
fn page_rules(robots: &RobotsTxt, page: &str, findings: &mut Findings) {
    let mut blocked_for: Vec<&str> = Vec::new();
    let mut first_rule = None;
    for crawler in CRAWLERS.iter().filter(|crawler| crawler.major) {
        let rules = crawlers::rules_for(robots, crawler);
        let decision = rules.check(page);
        if !decision.allowed {
            blocked_for.push(crawler.token);
            if first_rule.is_none() {
                first_rule = decision
                    .rule
                    .map(|rule| (rule.line, rule.kind, rule.pattern.to_owned()));
            }
        }
    }
    let global = robots.global_rules();
    let global_decision = global.check(page);
    if !global_decision.allowed {
        blocked_for.insert(0, "*");
        if let Some(rule) = global_decision.rule {
            first_rule = Some((rule.line, rule.kind, rule.pattern.to_owned()));
        }
    }
    let (id, line, kind, pattern) = match first_rule {
        Some((line, kind, pattern)) => (CheckId::LogicPageDisallowed, line, kind, pattern),
        None => {
            let bot = robots.rules_for(&crawlers::BOT_TOKENS);
            let decision = bot.check(page);
            match (decision.allowed, decision.rule) {
                (false, Some(rule)) => (
                    CheckId::PolicyBotBlocked,
                    rule.line,
                    rule.kind,
                    rule.pattern.to_owned(),
                ),
                _ => return,
            }
        }
    };
    findings.push(
        Finding::new(
            id,
            Evidence::line(line, line_text(robots, line)).at_url(page),
        )
        .with("page", page)
        .with("crawlers", blocked_for)
        .with("kind", kind.to_string())
        .with("pattern", pattern),
    );
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn resource_probes() {
        assert_eq!(resource_probe("/*.js$").as_deref(), Some("/x.js"));
        assert_eq!(
            resource_probe("/wp-includes/").as_deref(),
            Some("/wp-includes/app.js")
        );
        assert_eq!(resource_probe("/admin/"), None);
        assert_eq!(resource_probe("/json.php"), None);
        assert_eq!(resource_probe("/a.jsp"), None);
        assert_eq!(resource_probe("/css/").as_deref(), Some("/css/style.css"));
        assert_eq!(resource_probe("/*.css?v=*").as_deref(), Some("/x.css?v=x"));
    }
}
