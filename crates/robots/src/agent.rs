//! One crawler's rules and the decisions made with them.

use std::sync::OnceLock;

use crate::decision::{Decision, GroupSelection, RuleRef};
use crate::index::Index;
use crate::rule::{CrawlDelay, RuleKind};
use crate::store::RuleStore;
use crate::target::{self, TargetError};

/// The rules one crawler follows: the chosen group's rules, merged.
///
/// Made by [`AgentRules::parse`] (one crawler, the hot path) or [`crate::RobotsTxt::rules_for`]
/// (from a full parse); both give equal values for the same file and tokens.
#[derive(Debug, Clone)]
pub struct AgentRules {
    group: GroupSelection,
    store: RuleStore,
    crawl_delay: Option<CrawlDelay>,
    /// Built on the first check, so parsing alone never pays for it.
    index: OnceLock<Index>,
}

impl PartialEq for AgentRules {
    /// Same group, same delay, and the same rules in matching order.
    fn eq(&self, other: &AgentRules) -> bool {
        self.group == other.group
            && self.crawl_delay == other.crawl_delay
            && self.rules() == other.rules()
    }
}

impl AgentRules {
    pub(crate) fn new(
        group: GroupSelection,
        store: RuleStore,
        crawl_delay: Option<CrawlDelay>,
    ) -> AgentRules {
        AgentRules {
            group,
            store,
            crawl_delay,
            index: OnceLock::new(),
        }
    }

    /// No group and no rules: everything is allowed. What a crawler gets from a file that has
    /// no group for it, and a neutral value to start from.
    pub fn empty() -> AgentRules {
        AgentRules::new(GroupSelection::None, RuleStore::default(), None)
    }

    /// Which group applies.
    pub fn group(&self) -> &GroupSelection {
        &self.group
    }

    /// The rules of the chosen group, most specific first (the order in which they win).
    pub fn rules(&self) -> Vec<RuleRef<'_>> {
        let mut ordered: Vec<usize> = (0..self.store.len()).collect();
        ordered.sort_by_key(|&position| self.store.order_key(position));
        ordered.into_iter().map(|rule| self.view(rule)).collect()
    }

    /// How many rules the chosen group has.
    pub fn rule_count(&self) -> usize {
        self.store.len()
    }

    /// The chosen group's crawl-delay (the largest if several were given).
    pub fn crawl_delay(&self) -> Option<CrawlDelay> {
        self.crawl_delay
    }

    fn view(&self, position: usize) -> RuleRef<'_> {
        // The canonical pattern found once gives both the body and the anchor.
        let canonical = self.store.canonical(position);
        let (body, anchored) = match canonical.split_last() {
            Some((b'$', body)) => (body, true),
            _ => (canonical, false),
        };
        RuleRef::new(
            self.store.line(position),
            self.store.kind(position),
            self.store.pattern(position),
            body,
            anchored,
        )
    }

    /// Decides whether `url` may be fetched. `url` is an absolute URL
    /// (`scheme://authority/path?query`, any scheme) or a path starting with `/`; only its path
    /// and query count.
    ///
    /// A URL with no authority (`mailto:a@example.net`) is not governed by any robots.txt: the
    /// decision is "not allowed", with [`Decision::refused`] saying why. Use
    /// [`AgentRules::try_check`] to get that as an error.
    pub fn check(&self, url: &str) -> Decision<'_> {
        self.check_bytes(url.as_bytes())
    }

    /// [`AgentRules::check`] for a URL given as bytes.
    pub fn check_bytes(&self, url: &[u8]) -> Decision<'_> {
        self.try_check_bytes(url)
            .unwrap_or_else(|refused| Decision {
                allowed: false,
                rule: None,
                group: &self.group,
                robots_txt_exemption: false,
                refused: Some(refused),
            })
    }

    /// Decides whether `url` may be fetched, refusing a URL no robots.txt governs (see
    /// [`TargetError`]).
    pub fn try_check(&self, url: &str) -> Result<Decision<'_>, TargetError> {
        self.try_check_bytes(url.as_bytes())
    }

    /// [`AgentRules::try_check`] for a URL given as bytes.
    pub fn try_check_bytes(&self, url: &[u8]) -> Result<Decision<'_>, TargetError> {
        target::with_canonical_target(url, |path| self.decide(path))
    }

    /// Shorthand for `self.check(url).allowed`.
    pub fn is_allowed(&self, url: &str) -> bool {
        self.check(url).allowed
    }

    /// The decision for a canonical path and query.
    fn decide(&self, path: &[u8]) -> Decision<'_> {
        if target::is_robots_txt(path) {
            return Decision {
                allowed: true,
                rule: None,
                group: &self.group,
                robots_txt_exemption: true,
                refused: None,
            };
        }
        let index = self.index.get_or_init(|| Index::build(&self.store));
        let rule = index
            .best(&self.store, path)
            .map(|position| self.view(position));
        Decision {
            allowed: rule.is_none_or(|rule| rule.kind == RuleKind::Allow),
            rule,
            group: &self.group,
            robots_txt_exemption: false,
            refused: None,
        }
    }
}
