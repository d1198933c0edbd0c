//! Logic: what the rules mean taken together, for each crawler: duplicate groups, named groups
//! that drop the `*` rules, whole-site blocks, blocked stylesheets and scripts, the analysed
//! page.

use std::collections::{HashMap, HashSet};

use robots::{AgentRules, GroupSelection, RobotsTxt, Rule, RuleKind, UserAgentProduct};

use crate::catalogue::CheckId;
use crate::collect::Findings;
use crate::crawlers::{self, CrawlerAccess, Purpose, CRAWLERS};
use crate::finding::{Evidence, Finding};

use super::rules::{group_param, merged_rules, rule_set, MAX_RULES_COMPARED};
use super::{line_text, FileContext, MAX_RELATED_LINES};

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
                            spelling: token.to_string(),
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
) {
    let (tokens, global_groups) = named_tokens(robots);
    let global = robots.global_rules();
    duplicate_groups(robots, &tokens, &global_groups, findings);
    if *global.group() == GroupSelection::Global {
        rule_set(robots, &global, findings);
    }
    for token in &tokens {
        let rules = crawlers::rules_for_tokens(robots, &[token.spelling.as_str()]);
        rule_set(robots, &rules, findings);
    }
    dropped_global_rules(robots, &tokens, findings);
    whole_site(robots, table, findings);
    resources(robots, findings);
    if let Some(page) = context.page {
        page_rules(robots, page, findings);
    }
}

fn duplicate_groups(
    robots: &RobotsTxt,
    tokens: &[NamedToken],
    global_groups: &[usize],
    findings: &mut Findings,
) {
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
    for token in tokens {
        for line in token.group_lines.iter().skip(1) {
            duplicate(&token.spelling, *line, token.group_lines[0]);
        }
    }
    let groups = robots.groups();
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

/// The `*` group's disallow rules that decide for a sample URL of their own.
fn deciding_global_disallows<'r>(
    robots: &'r RobotsTxt,
    global: &AgentRules,
) -> Vec<(&'r Rule, String)> {
    let mut distinct = HashSet::new();
    merged_rules(robots, global)
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
        .collect()
}

/// Named groups that silently drop the `*` rules (a crawler with a group of its own never
/// reads `*`).
fn dropped_global_rules(robots: &RobotsTxt, tokens: &[NamedToken], findings: &mut Findings) {
    let global = robots.global_rules();
    // Under an allow-list (* may fetch nothing), named groups differ on purpose.
    if *global.group() == GroupSelection::Global && !global.check("/").allowed {
        return;
    }
    let global_disallows = deciding_global_disallows(robots, &global);
    if global_disallows.is_empty() {
        return;
    }
    for token in tokens {
        // Crawlers that ignore * lose nothing.
        if crawlers::find(&token.spelling).is_some_and(|c| c.ignores_global) {
            continue;
        }
        let rules = crawlers::rules_for_tokens(robots, &[token.spelling.as_str()]);
        let allow_all = rules.rule_count() == 0
            && token
                .group_indices
                .iter()
                .any(|&index| group_has_empty_disallow(robots, index));
        if allow_all {
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
            findings.push(
                Finding::new(
                    CheckId::LogicDropsGlobalRules,
                    Evidence::line(line, line_text(robots, line))
                        .with_related(dropped.iter().take(MAX_RELATED_LINES).map(|rule| rule.line)),
                )
                .with("token", &token.spelling)
                .with("dropped", dropped.len())
                .with("example_line", first.line)
                .with("example_pattern", &first.pattern),
            );
        }
    }
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
fn resources(robots: &RobotsTxt, findings: &mut Findings) {
    let Some(google) = crawlers::find("Googlebot").map(|c| crawlers::rules_for(robots, c)) else {
        return;
    };
    let resource_rules = merged_rules(robots, &google)
        .into_iter()
        .filter(|rule| rule.kind == RuleKind::Disallow)
        .filter_map(|rule| resource_probe(&rule.canonical_pattern()).map(|probe| (rule, probe)))
        .take(MAX_RULES_COMPARED);
    for (rule, probe) in resource_rules {
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
