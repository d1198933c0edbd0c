//! Choosing and merging the groups one crawler follows, from a full parse.

use crate::agent::AgentRules;
use crate::decision::GroupSelection;
use crate::file::{Group, RobotsTxt, UserAgentProduct};
use crate::rule::CrawlDelay;
use crate::store::RuleStoreBuilder;
use crate::tokens::ProductTokens;

/// The rules of `groups`, merged in file order, with the largest of their delays.
fn merge(selection: GroupSelection, groups: &[&Group]) -> AgentRules {
    let mut store = RuleStoreBuilder::default();
    for rule in groups.iter().flat_map(|group| group.rules.iter()) {
        store.push_rule(rule);
    }
    let delay = groups
        .iter()
        .filter_map(|group| group.crawl_delay)
        .reduce(|a, b| CrawlDelay::larger(Some(a), b));
    AgentRules::new(selection, store.finish(), delay)
}

/// Whether some user-agent line of `group` names token `index` of `tokens`.
fn names(group: &Group, tokens: &ProductTokens, index: usize, wanted: &str) -> bool {
    group.user_agents.iter().any(|agent| match &agent.product {
        UserAgentProduct::Token(token) if token.eq_ignore_ascii_case(wanted) => true,
        _ if tokens.has_names_beyond_rfc() => {
            tokens.named_by(index, wanted, agent.value.as_bytes())
        }
        _ => false,
    })
}

fn is_global(group: &Group) -> bool {
    group
        .user_agents
        .iter()
        .any(|agent| agent.product == UserAgentProduct::Global)
}

impl RobotsTxt {
    /// The rules one crawler follows. `tokens` are its product tokens in order of preference:
    /// the first token some group names wins (all groups naming it, merged); otherwise the `*`
    /// groups; otherwise none (everything allowed).
    pub fn rules_for(&self, tokens: &ProductTokens) -> AgentRules {
        for (index, token) in tokens.iter().enumerate() {
            let groups: Vec<&Group> = (self.groups.iter())
                .filter(|group| names(group, tokens, index, token))
                .collect();
            if !groups.is_empty() {
                return merge(GroupSelection::Named(token.to_owned()), &groups);
            }
        }
        self.global_rules()
    }

    /// The rules of the `*` groups, merged: what a crawler with no group of its own follows.
    /// No `*` group means no rules ([`GroupSelection::None`]).
    pub fn global_rules(&self) -> AgentRules {
        let global: Vec<&Group> = self.groups.iter().filter(|g| is_global(g)).collect();
        if global.is_empty() {
            AgentRules::empty()
        } else {
            merge(GroupSelection::Global, &global)
        }
    }

    /// The rules of the groups at `indices` (positions in [`RobotsTxt::groups`]), merged in
    /// file order as for one crawler, named `selection`; indices past the end are ignored.
    /// For audits that have already worked out which groups name a token: equal to
    /// [`RobotsTxt::rules_for`] given the same groups, without looking at every group again
    /// (a file naming thousands of tokens would cost thousands of passes over its groups).
    pub fn rules_of_groups(&self, selection: GroupSelection, indices: &[usize]) -> AgentRules {
        let mut sorted = indices.to_vec();
        sorted.sort_unstable();
        sorted.dedup();
        let groups: Vec<&Group> = sorted
            .iter()
            .filter_map(|&index| self.groups.get(index))
            .collect();
        merge(selection, &groups)
    }

    /// One-off check of `url` for a crawler. Builds the crawler's rules each time: to check
    /// many URLs, keep the result of [`RobotsTxt::rules_for`] instead.
    pub fn is_allowed(&self, tokens: &ProductTokens, url: &str) -> bool {
        self.rules_for(tokens).is_allowed(url)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rules_of_groups_equal_rules_for_the_same_groups() {
        let file = RobotsTxt::parse(
            b"User-agent: a\nDisallow: /x\n\nUser-agent: b\nUser-agent: A\nAllow: /x/y\nCrawl-delay: 3\n\nUser-agent: *\nDisallow: /\n",
        );
        let tokens = ProductTokens::new(["a"]).unwrap();
        let named = GroupSelection::Named("a".to_owned());
        assert_eq!(
            file.rules_of_groups(named.clone(), &[1, 0, 1, 9]),
            file.rules_for(&tokens)
        );
        assert_eq!(
            file.rules_of_groups(GroupSelection::Global, &[2]),
            file.global_rules()
        );
        assert_eq!(file.rules_of_groups(named, &[]).rule_count(), 0);
    }
}
