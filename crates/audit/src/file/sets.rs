//! The crawlers a file names, grouped by the groups they follow: crawlers that follow the
//! same groups have the same merged rules, so those rules are built and compared once, however
//! many crawlers share them (a file may name 20,000 crawlers in one group).

use std::collections::{HashMap, HashSet};

use robots::{AgentRules, GroupSelection, RobotsTxt, UserAgentProduct};

use crate::crawlers;

/// A token some group names, as first spelled, with the groups naming it.
pub(super) struct NamedToken {
    /// As first written.
    pub(super) spelling: String,
    /// The first user-agent line naming it in each of its groups, in file order.
    pub(super) group_lines: Vec<usize>,
    /// Its groups (indices in [`RobotsTxt::groups`]), ascending.
    pub(super) group_indices: Vec<usize>,
}

/// The crawlers that follow the same groups: one set of merged rules.
pub(super) struct RuleSet {
    /// The groups (indices in [`RobotsTxt::groups`]), ascending.
    pub(super) groups: Vec<usize>,
    /// The named tokens following exactly these groups (indices in [`Crawlers::tokens`]), in
    /// file order.
    pub(super) tokens: Vec<usize>,
    /// Whether these are the `*` groups.
    pub(super) global: bool,
}

/// The crawlers of a file: its named tokens, its `*` groups, and the rule sets they make.
pub(super) struct Crawlers {
    /// Every named token, in order of first appearance.
    pub(super) tokens: Vec<NamedToken>,
    /// The `*` groups, ascending.
    pub(super) global_groups: Vec<usize>,
    /// The rule sets: the `*` set first (when the file has `*` groups), then sets naming a
    /// crawler of the directory, then the others, each in order of first appearance. When
    /// the comparison budget runs out, the sets left over are the least notable ones.
    pub(super) sets: Vec<RuleSet>,
}

impl Crawlers {
    /// Reads the file's user-agent lines once: linear in the number of lines.
    pub(super) fn of(robots: &RobotsTxt) -> Crawlers {
        let (tokens, global_groups) = named_tokens(robots);
        let mut sets: Vec<RuleSet> = Vec::new();
        let mut by_groups: HashMap<&[usize], usize> = HashMap::new();
        if !global_groups.is_empty() {
            sets.push(RuleSet {
                groups: global_groups.clone(),
                tokens: Vec::new(),
                global: true,
            });
            by_groups.insert(&global_groups, 0);
        }
        for (index, token) in tokens.iter().enumerate() {
            let slot = *by_groups
                .entry(token.group_indices.as_slice())
                .or_insert_with(|| {
                    sets.push(RuleSet {
                        groups: token.group_indices.clone(),
                        tokens: Vec::new(),
                        global: false,
                    });
                    sets.len() - 1
                });
            sets[slot].tokens.push(index);
        }
        // Notable crawlers first (a stable sort keeps the order of appearance otherwise).
        let notable = |set: &RuleSet| {
            set.global
                || set
                    .tokens
                    .iter()
                    .any(|&token| crawlers::find(&tokens[token].spelling).is_some())
        };
        sets.sort_by_key(|set| !notable(set));
        Crawlers {
            tokens,
            global_groups,
            sets,
        }
    }

    /// The merged rules of `set`, named as the engine names the group it picks.
    pub(super) fn rules_of(&self, robots: &RobotsTxt, set: &RuleSet) -> AgentRules {
        let selection = match set.tokens.first() {
            _ if set.global => GroupSelection::Global,
            Some(&token) => GroupSelection::Named(self.tokens[token].spelling.clone()),
            None => GroupSelection::None,
        };
        robots.rules_of_groups(selection, &set.groups)
    }
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn crawlers_following_the_same_groups_share_one_set() {
        let robots = RobotsTxt::parse(
            b"User-agent: a\nUser-agent: b\nUser-agent: *\nDisallow: /x\n\n\
              User-agent: c\nUser-agent: a\nUser-agent: b\nAllow: /x/y\n\n\
              User-agent: Googlebot\nUser-agent: d\nDisallow: /g\n\n\
              User-agent: e\nDisallow: /e\n\nUser-agent: f\nDisallow: /f\n\n\
              User-agent: d\nUser-agent: googlebot\nDisallow: /h\n",
        );
        let crawlers = Crawlers::of(&robots);
        let sets: Vec<(Vec<usize>, Vec<&str>, bool)> = crawlers
            .sets
            .iter()
            .map(|set| {
                let names = set
                    .tokens
                    .iter()
                    .map(|&t| crawlers.tokens[t].spelling.as_str())
                    .collect();
                (set.groups.clone(), names, set.global)
            })
            .collect();
        assert_eq!(
            sets,
            [
                (vec![0], vec![], true),
                (vec![2, 5], vec!["Googlebot", "d"], false),
                (vec![0, 1], vec!["a", "b"], false),
                (vec![1], vec!["c"], false),
                (vec![3], vec!["e"], false),
                (vec![4], vec!["f"], false),
            ]
        );
        // The same rules as the engine's own choice for each crawler.
        for set in &crawlers.sets {
            for &token in &set.tokens {
                let spelling = crawlers.tokens[token].spelling.as_str();
                assert_eq!(
                    crawlers.rules_of(&robots, set).rules(),
                    crawlers::rules_for_tokens(&robots, &[spelling]).rules(),
                    "{spelling}"
                );
            }
        }
        assert_eq!(
            crawlers.rules_of(&robots, &crawlers.sets[0]),
            robots.global_rules()
        );
    }

    #[test]
    fn a_token_in_exactly_the_star_groups_joins_the_star_set() {
        let robots = RobotsTxt::parse(b"User-agent: *\nUser-agent: a\nDisallow: /x\n");
        let crawlers = Crawlers::of(&robots);
        assert_eq!(crawlers.sets.len(), 1);
        assert!(crawlers.sets[0].global);
        assert_eq!(crawlers.sets[0].tokens, [0]);
    }
}
