//! Lines crawlers read in two ways: the finding shows both readings.
//!
//! - A `Crawl-delay` between two `User-agent` lines: JittyBot closes the list of agents there
//!   (the engine's `agent_list_split_by_crawl_delay`), RFC 9309 parsers and Google merge the
//!   agents into one group.
//! - A `User-agent` value that starts with `*` and names something (`*OrkashBot*`): no crawler
//!   for RFC 9309 parsers, Google and JittyBot (the engine's `starred_user_agent`); `*` for
//!   parsers that look only at the first character.

use std::collections::HashMap;

use robots::{Group, RobotsTxt, RuleKind, UserAgent};

use crate::catalogue::CheckId;
use crate::finding::{Evidence, Finding};

use super::{line_text, MAX_RELATED_LINES};

/// The group holding `line` (a user-agent line, a rule, an empty rule), if any.
pub(super) fn group_at(robots: &RobotsTxt, line: usize) -> Option<&Group> {
    let groups = robots.groups();
    let after = groups.partition_point(|group| group.line <= line);
    groups.get(after.checked_sub(1)?)
}

/// The user-agent line `line`, as the engine read it. (A group's lines are in file order:
/// searched by halves, as a group may have thousands.)
pub(super) fn user_agent_at(robots: &RobotsTxt, line: usize) -> Option<&UserAgent> {
    let agents = &group_at(robots, line)?.user_agents;
    let at = agents
        .binary_search_by_key(&line, |agent| agent.line)
        .ok()?;
    agents.get(at)
}

/// The kind of the empty `Allow:`/`Disallow:` on `line`.
pub(super) fn empty_rule_kind(robots: &RobotsTxt, line: usize) -> Option<RuleKind> {
    let empty = &group_at(robots, line)?.empty_rules;
    let at = empty.binary_search_by_key(&line, |rule| rule.line).ok()?;
    empty.get(at).map(|rule| rule.kind)
}

/// The first [`MAX_RELATED_LINES`] agents of a group as written, for a message
/// (`JittyBot, Googlebot`), and how many it has in all.
fn agents_of(group: &Group) -> (Vec<String>, usize) {
    let listed = group
        .user_agents
        .iter()
        .take(MAX_RELATED_LINES)
        .map(|agent| agent.value.to_string())
        .collect();
    (listed, group.user_agents.len())
}

/// What the readings of a file's lines share: per group, whether its own rules shut out
/// everything (worked out once, though a group may have thousands of starred agents).
#[derive(Default)]
pub(super) struct Readings {
    disallows_root: HashMap<usize, bool>,
}

/// A user-agent line that opens a group of its own only because of the crawl-delay above it.
pub(super) fn agent_list_split(
    robots: &RobotsTxt,
    line: usize,
    group_line: usize,
    crawl_delay_line: usize,
) -> Finding {
    let agent =
        user_agent_at(robots, line).map_or_else(String::new, |agent| agent.value.to_string());
    let (joined_agents, agents) = group_at(robots, group_line)
        .map(agents_of)
        .unwrap_or_default();
    // The rules the merged group would share: those of JittyBot's second group.
    let shared_rules = group_at(robots, line).map_or(0, |group| group.rules.len());
    let finding = Finding::new(
        CheckId::SyntaxAgentListSplit,
        Evidence::line(line, line_text(robots, line)).with_related([group_line, crawl_delay_line]),
    )
    .with("agent", agent)
    .with("group_line", group_line)
    .with("group_agents", &joined_agents)
    .with("crawl_delay_line", crawl_delay_line)
    .with("rules", shared_rules);
    if agents > joined_agents.len() {
        finding.with("group_agents_total", agents)
    } else {
        finding
    }
}

impl Readings {
    /// A user-agent value that starts with `*` and names something.
    pub(super) fn starred_user_agent(
        &mut self,
        robots: &RobotsTxt,
        line: usize,
        name: &str,
    ) -> Finding {
        let value =
            user_agent_at(robots, line).map_or_else(String::new, |agent| agent.value.to_string());
        let group = group_at(robots, line);
        let rules = group.map_or(0, |group| group.rules.len());
        let disallows_all = group.is_some_and(|group| {
            *self
                .disallows_root
                .entry(group.line)
                .or_insert_with(|| disallows_root(group))
        });
        Finding::new(
            CheckId::SyntaxStarredUserAgent,
            Evidence::line(line, line_text(robots, line)),
        )
        .with("value", value)
        .with("name", name)
        .with("rules", rules)
        .with("disallows_all", disallows_all)
    }
}

/// Whether a group's own rules, read alone, disallow `/`: the most specific rule matching
/// `/` decides, an allow winning a tie.
fn disallows_root(group: &Group) -> bool {
    group
        .rules
        .iter()
        .filter(|rule| rule.matches("/"))
        .max_by_key(|rule| (rule.specificity(), rule.kind == RuleKind::Allow))
        .is_some_and(|rule| rule.kind == RuleKind::Disallow)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_group_of_a_line_is_the_last_one_starting_before_it() {
        let robots = RobotsTxt::parse(
            b"User-agent: a\nCrawl-delay: 5\nUser-agent: b\nDisallow:\nDisallow: /x\n",
        );
        assert_eq!(group_at(&robots, 1).map(|g| g.line), Some(1));
        assert_eq!(group_at(&robots, 4).map(|g| g.line), Some(3));
        assert_eq!(
            user_agent_at(&robots, 3).map(|a| a.value.as_str()),
            Some("b")
        );
        assert_eq!(empty_rule_kind(&robots, 4), Some(RuleKind::Disallow));
        assert_eq!(empty_rule_kind(&robots, 5), None);
        let none = RobotsTxt::parse(b"Disallow: /\n");
        assert!(group_at(&none, 1).is_none());
    }

    #[test]
    fn a_root_disallow_is_read_as_the_group_alone_decides() {
        let robots = RobotsTxt::parse(
            b"User-agent: *a*\nDisallow: /\n\nUser-agent: *b*\nDisallow: /\nAllow: /\n\nUser-agent: *c*\nDisallow: /private\n",
        );
        let groups = robots.groups();
        assert!(disallows_root(&groups[0]));
        assert!(!disallows_root(&groups[1]));
        assert!(!disallows_root(&groups[2]));
    }
}
