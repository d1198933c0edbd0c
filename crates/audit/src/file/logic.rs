//! Logic: what the rules mean taken together, for each crawler.

use std::collections::{HashMap, HashSet};

use robots::{
    AgentRules, DiagnosticKind, GroupSelection, RobotsTxt, Rule, RuleKind, UserAgentProduct,
};

use crate::collect::Findings;
use crate::crawlers::{self, CrawlerAccess, Purpose, BOT_TOKEN, CRAWLERS};
use crate::finding::{CheckId, Evidence, Finding};
use crate::source::Source;

use super::{FileContext, MAX_RELATED_LINES};

/// A group with more rules than this is not searched for shadowed or redundant rules (the
/// comparison is quadratic), and at most this many rules of a group are probed for the other
/// logic checks.
pub const MAX_RULES_COMPARED: usize = 1_000;

/// The literal a pattern matches at least, and whether it is anchored with `$`. Only for
/// patterns whose sole wildcard is a trailing `*` (which changes nothing) or a final `$`.
fn literal_probe(canonical: &str) -> Option<(String, bool)> {
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
}

/// Whether `broad` matches every URL `narrow` matches.
fn covers(broad: &Compiled<'_>, narrow: &Compiled<'_>) -> bool {
    let Some((literal, anchored)) = &narrow.probe else {
        return false;
    };
    if !anchored && broad.canonical.ends_with('$') {
        return false;
    }
    broad.rule.matches(literal)
}

fn beats(winner: &Rule, loser: &Rule) -> bool {
    winner.specificity() > loser.specificity()
        || (winner.specificity() == loser.specificity()
            && winner.kind == RuleKind::Allow
            && loser.kind == RuleKind::Disallow)
}

fn rule_evidence(source: &Source<'_>, line: usize) -> Evidence {
    Evidence::line(line, source.text(line))
}

fn group_label(selection: &GroupSelection) -> String {
    match selection {
        GroupSelection::Named(token) => format!("User-agent: {token}"),
        GroupSelection::Global => "User-agent: *".to_owned(),
        GroupSelection::None => "no group".to_owned(),
    }
}

/// The file's rules by line, to get from the engine's borrowed rules back to [`Rule`]s.
struct RulesByLine<'r> {
    rules: HashMap<usize, &'r Rule>,
}

impl<'r> RulesByLine<'r> {
    fn new(robots: &'r RobotsTxt) -> RulesByLine<'r> {
        let rules = robots
            .groups()
            .iter()
            .flat_map(|group| group.rules.iter())
            .map(|rule| (rule.line, rule))
            .collect();
        RulesByLine { rules }
    }

    /// A crawler's merged rules, most specific first (the engine's matching order).
    fn of(&self, agent: &AgentRules) -> Vec<&'r Rule> {
        agent
            .rules()
            .into_iter()
            .filter_map(|rule| self.rules.get(&rule.line).copied())
            .collect()
    }
}

/// Checks one crawler's merged rules: identical, repeated, shadowed and redundant rules.
fn rule_set(
    rules: &AgentRules,
    by_line: &RulesByLine<'_>,
    source: &Source<'_>,
    findings: &mut Findings,
) {
    let merged = by_line.of(rules);
    let label = group_label(rules.group());
    let mut by_pattern: HashMap<String, Vec<&Rule>> = HashMap::new();
    let mut in_file_order: Vec<&Rule> = merged.clone();
    in_file_order.sort_by_key(|rule| rule.line);
    for rule in &in_file_order {
        let canonical = rule.canonical_pattern();
        let earlier = by_pattern.entry(canonical).or_default();
        if let Some(same) = earlier.iter().find(|other| other.kind == rule.kind) {
            findings.push(Finding::new(
                CheckId::LogicRuleRepeated,
                format!("line {}: repeats line {} for {label}", rule.line, same.line),
                rule_evidence(source, rule.line).with_related([same.line]),
            ));
        } else if let Some(opposite) = earlier.iter().find(|other| other.kind != rule.kind) {
            findings.push(Finding::new(
                CheckId::LogicAllowDisallowSame,
                format!(
                    "line {}: {} and line {}: {} name the same path for {label}",
                    rule.line, rule.kind, opposite.line, opposite.kind
                ),
                rule_evidence(source, rule.line).with_related([opposite.line]),
            ));
        }
        // Keep the first rule of each kind: enough to name what a later one repeats.
        if !earlier.iter().any(|other| other.kind == rule.kind) {
            earlier.push(rule);
        }
    }
    if merged.len() > MAX_RULES_COMPARED {
        findings.push(Finding::new(
            CheckId::AuditLimited,
            format!(
                "{label} has {} rules; shadowed and redundant rules were not looked for",
                merged.len()
            ),
            Evidence::default(),
        ));
        return;
    }
    let compiled: Vec<Compiled<'_>> = merged
        .iter()
        .map(|&rule| {
            let canonical = rule.canonical_pattern();
            let probe = literal_probe(&canonical);
            Compiled {
                rule,
                canonical,
                probe,
            }
        })
        .collect();
    for narrow in &compiled {
        if narrow.probe.is_none() {
            continue;
        }
        let winner = compiled.iter().find(|broad| {
            broad.canonical != narrow.canonical
                && beats(broad.rule, narrow.rule)
                && covers(broad, narrow)
        });
        if let Some(winner) = winner {
            let id = if winner.rule.kind == narrow.rule.kind {
                CheckId::LogicRuleRedundant
            } else {
                CheckId::LogicRuleShadowed
            };
            findings.push(Finding::new(
                id,
                format!(
                    "line {}: {}: {} never decides; line {}: {}: {} always wins",
                    narrow.rule.line,
                    narrow.rule.kind,
                    narrow.rule.pattern,
                    winner.rule.line,
                    winner.rule.kind,
                    winner.rule.pattern
                ),
                rule_evidence(source, narrow.rule.line).with_related([winner.rule.line]),
            ));
            continue;
        }
        let broader = compiled.iter().find(|broad| {
            broad.canonical != narrow.canonical
                && broad.rule.kind == narrow.rule.kind
                && covers(broad, narrow)
        });
        let Some(broader) = broader else { continue };
        let space = literal_prefix(&broader.canonical);
        let exception_possible = compiled.iter().any(|other| {
            other.rule.kind != narrow.rule.kind && {
                let prefix = literal_prefix(&other.canonical);
                prefix.len() <= 1 || prefix.starts_with(space) || space.starts_with(prefix)
            }
        });
        if !exception_possible {
            findings.push(Finding::new(
                CheckId::LogicRuleRedundant,
                format!(
                    "line {}: {}: {} is already covered by line {}: {}: {}",
                    narrow.rule.line,
                    narrow.rule.kind,
                    narrow.rule.pattern,
                    broader.rule.line,
                    broader.rule.kind,
                    broader.rule.pattern
                ),
                rule_evidence(source, narrow.rule.line).with_related([broader.rule.line]),
            ));
        }
    }
}

/// A named token as first spelled, with the lines of the groups naming it.
struct NamedToken {
    spelling: String,
    group_lines: Vec<usize>,
    group_indices: Vec<usize>,
}

fn named_tokens(robots: &RobotsTxt) -> (Vec<NamedToken>, Vec<usize>) {
    let mut tokens: Vec<NamedToken> = Vec::new();
    let mut index: HashMap<String, usize> = HashMap::new();
    let mut global_groups = Vec::new();
    for (group_index, group) in robots.groups().iter().enumerate() {
        let mut named_here = HashSet::new();
        for agent in &group.user_agents {
            match &agent.product {
                UserAgentProduct::Token(token) => {
                    let key = token.to_ascii_lowercase();
                    if !named_here.insert(key.clone()) {
                        continue;
                    }
                    let slot = *index.entry(key).or_insert_with(|| {
                        tokens.push(NamedToken {
                            spelling: token.clone(),
                            group_lines: Vec::new(),
                            group_indices: Vec::new(),
                        });
                        tokens.len() - 1
                    });
                    tokens[slot].group_lines.push(agent.line);
                    tokens[slot].group_indices.push(group_index);
                }
                UserAgentProduct::Global => {
                    if named_here.insert("*".to_owned()) {
                        global_groups.push(group_index);
                    }
                }
                UserAgentProduct::Nothing => {}
            }
        }
    }
    (tokens, global_groups)
}

/// Whether a group holds an empty `Disallow:` (the allow-all idiom).
fn group_has_empty_disallow(robots: &RobotsTxt, group_index: usize) -> bool {
    let groups = robots.groups();
    let Some(group) = groups.get(group_index) else {
        return false;
    };
    let end = groups
        .get(group_index + 1)
        .map_or(usize::MAX, |next| next.line);
    robots.diagnostics().iter().any(|diagnostic| {
        diagnostic.kind == DiagnosticKind::EmptyRule
            && diagnostic.line > group.line
            && diagnostic.line < end
            && diagnostic
                .text
                .trim_start()
                .to_ascii_lowercase()
                .starts_with("disallow")
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
    source: &Source<'_>,
    context: &FileContext<'_>,
    table: &[CrawlerAccess],
    findings: &mut Findings,
) {
    let (tokens, global_groups) = named_tokens(robots);
    let by_line = RulesByLine::new(robots);
    let global = robots.rules_for(&[]);

    // Duplicate groups.
    for token in &tokens {
        for line in token.group_lines.iter().skip(1) {
            findings.push(Finding::new(
                CheckId::LogicDuplicateGroup,
                format!(
                    "line {line}: {} already has a group at line {}",
                    token.spelling, token.group_lines[0]
                ),
                Evidence::line(*line, source.text(*line)).with_related([token.group_lines[0]]),
            ));
        }
    }
    for index in global_groups.iter().skip(1) {
        if let (Some(group), Some(first)) = (
            robots.groups().get(*index),
            global_groups.first().and_then(|i| robots.groups().get(*i)),
        ) {
            findings.push(Finding::new(
                CheckId::LogicDuplicateGroup,
                format!(
                    "line {}: * already has a group at line {}",
                    group.line, first.line
                ),
                Evidence::line(group.line, source.text(group.line)).with_related([first.line]),
            ));
        }
    }

    // Each crawler's merged rules.
    if *global.group() == GroupSelection::Global {
        rule_set(&global, &by_line, source, findings);
    }
    let global_blocks_everything =
        *global.group() == GroupSelection::Global && !global.check("/").allowed;
    let mut distinct = HashSet::new();
    let global_disallows: Vec<(&Rule, String)> = by_line
        .of(&global)
        .into_iter()
        .filter(|rule| rule.kind == RuleKind::Disallow && distinct.insert(rule.canonical_pattern()))
        .take(MAX_RULES_COMPARED)
        .filter_map(|rule| sample_url(rule).map(|sample| (rule, sample)))
        .filter(|(rule, sample)| {
            global
                .check(sample)
                .rule
                .is_some_and(|decider| decider.line == rule.line)
        })
        .collect();
    for token in &tokens {
        let rules = robots.rules_for(&[token.spelling.as_str()]);
        rule_set(&rules, &by_line, source, findings);
        // A named group that silently drops the * rules (crawlers that ignore * lose nothing).
        let ignores_global = crawlers::find(&token.spelling).is_some_and(|c| c.ignores_global);
        // Under an allow-list (* may fetch nothing), named groups differ on purpose.
        if global_disallows.is_empty() || ignores_global || global_blocks_everything {
            continue;
        }
        if rules.rule_count() == 0
            && token
                .group_indices
                .iter()
                .any(|&index| group_has_empty_disallow(robots, index))
        {
            continue;
        }
        let dropped: Vec<&Rule> = global_disallows
            .iter()
            .filter(|(_, sample)| {
                let decision = rules.check(sample);
                decision.allowed && decision.rule.is_none()
            })
            .map(|(rule, _)| *rule)
            .collect();
        if let Some(first) = dropped.first() {
            let line = token.group_lines[0];
            findings.push(Finding::new(
                CheckId::LogicDropsGlobalRules,
                format!(
                    "User-agent: {} (line {line}) does not repeat {} rule(s) of the * group, such as line {}: Disallow: {}",
                    token.spelling,
                    dropped.len(),
                    first.line,
                    first.pattern
                ),
                Evidence::line(line, source.text(line))
                    .with_related(dropped.iter().take(MAX_RELATED_LINES).map(|rule| rule.line)),
            ));
        }
    }

    // Whole-site blocks.
    let access =
        |token: &str| crawlers::find(token).map(|crawler| crawlers::rules_for(robots, crawler));
    let majors: Vec<(&'static str, AgentRules)> = CRAWLERS
        .iter()
        .filter(|crawler| crawler.major)
        .map(|crawler| (crawler.token, crawlers::rules_for(robots, crawler)))
        .collect();
    let global_blocks_root =
        *global.group() == GroupSelection::Global && !global.check("/").allowed;
    if global_blocks_root {
        let decision = global.check("/").explain();
        let line = decision.rule.as_ref().map_or(0, |rule| rule.line);
        let any_major_allowed = majors.iter().any(|(_, rules)| rules.check("/").allowed);
        if any_major_allowed {
            findings.push(Finding::new(
                CheckId::PolicyAllowlist,
                format!(
                    "line {line}: * may not crawl; only crawlers with a group of their own may"
                ),
                Evidence::line(line, source.text(line)),
            ));
        } else {
            findings.push(Finding::new(
                CheckId::LogicBlocksAll,
                format!("line {line}: Disallow: / applies to every crawler, Googlebot and Bingbot included"),
                Evidence::line(line, source.text(line)),
            ));
        }
    } else {
        for (token, rules) in &majors {
            let decision = rules.check("/");
            if let (false, Some(rule)) = (decision.allowed, decision.rule) {
                findings.push(Finding::new(
                    CheckId::LogicSearchEngineBlocked,
                    format!(
                        "line {}: {token} may not crawl the site ({})",
                        rule.line,
                        group_label(decision.group)
                    ),
                    rule_evidence(source, rule.line),
                ));
            }
        }
        let minor_blocked: Vec<(&str, usize)> = table
            .iter()
            .filter(|row| {
                row.purpose == Purpose::Search
                    && crawlers::find(&row.token).is_some_and(|crawler| !crawler.major)
            })
            .filter_map(|row| match (row.root.allowed, &row.group, &row.root.rule) {
                (false, GroupSelection::Named(_), Some(rule)) => {
                    Some((row.token.as_str(), rule.line))
                }
                _ => None,
            })
            .collect();
        if let Some((_, line)) = minor_blocked.first() {
            let names: Vec<&str> = minor_blocked.iter().map(|(token, _)| *token).collect();
            findings.push(Finding::new(
                CheckId::PolicySearchEngineBlocked,
                format!("search engines blocked by name: {}", names.join(", ")),
                Evidence::line(*line, source.text(*line))
                    .with_related(minor_blocked.iter().map(|(_, line)| *line)),
            ));
        }
    }

    // CSS and JavaScript.
    if let Some(google) = access("Googlebot") {
        let resource_rules = by_line
            .of(&google)
            .into_iter()
            .filter(|rule| rule.kind == RuleKind::Disallow)
            .filter_map(|rule| resource_probe(&rule.canonical_pattern()).map(|probe| (rule, probe)))
            .take(MAX_RULES_COMPARED);
        for (rule, probe) in resource_rules {
            let decision = google.check(&probe);
            if !decision.allowed
                && decision
                    .rule
                    .is_some_and(|decider| decider.line == rule.line)
            {
                findings.push(Finding::new(
                    CheckId::LogicResourcesBlocked,
                    format!("line {}: Googlebot may not fetch {probe}", rule.line),
                    rule_evidence(source, rule.line),
                ));
            }
        }
    }

    // The analysed page.
    if let Some(page) = context.page {
        page_rules(robots, source, page, findings);
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

fn page_rules(robots: &RobotsTxt, source: &Source<'_>, page: &str, findings: &mut Findings) {
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
    let global = robots.rules_for(&[]);
    let global_decision = global.check(page);
    if !global_decision.allowed {
        blocked_for.insert(0, "*");
        if let Some(rule) = global_decision.rule {
            first_rule = Some((rule.line, rule.kind, rule.pattern.to_owned()));
        }
    }
    if let Some((line, kind, pattern)) = first_rule {
        findings.push(Finding::new(
            CheckId::LogicPageDisallowed,
            format!(
                "{page} is disallowed for {} by line {line}: {kind}: {pattern}",
                blocked_for.join(", ")
            ),
            Evidence {
                url: Some(page.to_owned()),
                ..Evidence::line(line, source.text(line))
            },
        ));
        return;
    }
    let bot = robots.rules_for(&[BOT_TOKEN]);
    let decision = bot.check(page);
    if let (false, Some(rule)) = (decision.allowed, decision.rule) {
        findings.push(Finding::new(
            CheckId::PolicyBotBlocked,
            format!(
                "{page} is disallowed for {BOT_TOKEN} by line {}: {}: {}",
                rule.line, rule.kind, rule.pattern
            ),
            Evidence {
                url: Some(page.to_owned()),
                ..rule_evidence(source, rule.line)
            },
        ));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn probes() {
        assert_eq!(literal_probe("/a"), Some(("/a".into(), false)));
        assert_eq!(literal_probe("/a*"), Some(("/a".into(), false)));
        assert_eq!(literal_probe("/a$"), Some(("/a".into(), true)));
        assert_eq!(literal_probe("/*.js"), None);
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
