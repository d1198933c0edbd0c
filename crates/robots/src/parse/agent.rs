//! The one-crawler parse: only the groups naming one of the wanted tokens, or `*`.

use super::{usable_pattern, walk, Opening, Sink};
use crate::agent::AgentRules;
use crate::decision::GroupSelection;
use crate::lines::{self, Directive, Line, Product};
use crate::rule::{CrawlDelay, RuleKind};
use crate::store::RuleStoreBuilder;
use crate::tokens::ProductTokens;

/// Rules and delay gathered for one wanted token (or for `*`).
#[derive(Default)]
struct Bucket {
    named: bool,
    rules: RuleStoreBuilder,
    crawl_delay: Option<CrawlDelay>,
}

struct AgentSink<'t> {
    /// The wanted tokens, most preferred first (borrowed: no copy per parse).
    tokens: &'t ProductTokens,
    /// One bucket per wanted token, then one for `*`. Rules are compiled as they come: the
    /// bucket that wins is rarely known before the end, and compiling straight into it beats
    /// keeping a list to compile later.
    buckets: Vec<Bucket>,
    /// Which buckets the current group feeds: bit `i` for `buckets[i]`
    /// ([`crate::MAX_PREFERRED_TOKENS`] keeps `i` below 64).
    current: u64,
}

impl<'a> Sink<'a> for AgentSink<'_> {
    fn user_agent(&mut self, _line: usize, _raw: &'a [u8], value: &'a [u8], opening: Opening) {
        if opening != Opening::Continues {
            self.current = 0;
        }
        let bucket = match lines::product(value) {
            Product::Global => Some(self.tokens.len()),
            Product::Token(token) => self
                .tokens
                .iter()
                .position(|wanted| wanted.as_bytes().eq_ignore_ascii_case(token)),
            Product::StarredName(_) | Product::Nothing => None,
        };
        if let Some(index) = bucket {
            self.current |= 1 << index;
            self.buckets[index].named = true;
        }
        if self.tokens.has_names_beyond_rfc() {
            self.names_beyond_rfc(value);
        }
    }

    fn rule(&mut self, line: &Line<'a>, kind: RuleKind, value: &'a [u8]) {
        if self.current == 0 || usable_pattern(value).is_err() {
            return;
        }
        let mut groups = self.current;
        while groups != 0 {
            let index = groups.trailing_zeros() as usize;
            self.buckets[index].rules.push(line.number, kind, value);
            groups &= groups - 1;
        }
    }

    fn crawl_delay(&mut self, line: usize, _raw: &'a [u8], value: &'a [u8]) {
        if self.current == 0 {
            return;
        }
        if let Some(delay) = CrawlDelay::parse(line, value) {
            for (index, bucket) in self.buckets.iter_mut().enumerate() {
                if self.current & (1 << index) != 0 {
                    bucket.crawl_delay = Some(CrawlDelay::larger(bucket.crawl_delay, delay));
                }
            }
        }
    }

    fn other(&mut self, _line: usize, _raw: &'a [u8], _directive: Directive<'a>) {}

    fn wants_values(&self) -> bool {
        self.current != 0
    }
}

impl AgentSink<'_> {
    /// Adds the groups of a user-agent line to every bucket whose token is a name beyond RFC
    /// 9309 that the line names (an RFC token can be named by the same line too: `MJ12bot`
    /// names `MJ` as well).
    #[cold]
    fn names_beyond_rfc(&mut self, value: &[u8]) {
        for (index, token) in self.tokens.iter().enumerate() {
            if self.tokens.named_by(index, token, value) {
                self.current |= 1 << index;
                self.buckets[index].named = true;
            }
        }
    }
}

impl AgentRules {
    /// Parses `robots_txt` for one crawler, keeping only the groups it can need.
    ///
    /// `tokens` are its product tokens in order of preference (e.g.
    /// [`ProductTokens::JITTYBOT_IMAGE`]). Equal to
    /// `RobotsTxt::parse(robots_txt).rules_for(tokens)`, without the cost of the other groups
    /// and of the diagnostics.
    pub fn parse(robots_txt: &[u8], tokens: &ProductTokens) -> AgentRules {
        let mut sink = AgentSink {
            tokens,
            buckets: (0..=tokens.len()).map(|_| Bucket::default()).collect(),
            current: 0,
        };
        walk(lines::prepare(robots_txt).body, &mut sink);
        let Some(index) = sink.buckets.iter().position(|bucket| bucket.named) else {
            return AgentRules::empty();
        };
        let bucket = std::mem::take(&mut sink.buckets[index]);
        let group = match tokens.iter().nth(index) {
            Some(token) => GroupSelection::Named(token.to_owned()),
            None => GroupSelection::Global,
        };
        AgentRules::new(group, bucket.rules.finish(), bucket.crawl_delay)
    }
}
