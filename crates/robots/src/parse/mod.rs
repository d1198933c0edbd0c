//! The grouping state machine, shared by the full parse and the one-crawler parse.

mod agent;
mod full;

use crate::lines::{Directive, Directives, Line};
use crate::rule::RuleKind;

/// How a user-agent line relates to the group before it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Opening {
    /// It follows another user-agent line: it names the same group.
    Continues,
    /// It opens a new group (the first one, or one after rules).
    NewGroup,
    /// It opens a new group only because a crawl-delay closed the list of user-agents above;
    /// parsers that ignore crawl-delay would add it to the group above.
    AfterCrawlDelay {
        /// The crawl-delay line that closed the list.
        crawl_delay_line: usize,
    },
}

/// What the state machine reports, line by line.
trait Sink<'a> {
    /// A user-agent line.
    fn user_agent(&mut self, line: usize, raw: &'a [u8], value: &'a [u8], opening: Opening);
    /// An allow or disallow line inside a group.
    fn rule(&mut self, line: &Line<'a>, kind: RuleKind, value: &'a [u8]);
    /// A crawl-delay line inside a group.
    fn crawl_delay(&mut self, line: usize, raw: &'a [u8], value: &'a [u8]);
    /// Everything else, including rules and delays outside any group.
    fn other(&mut self, line: usize, raw: &'a [u8], directive: Directive<'a>);
    /// Every line, before what it says is reported.
    fn line(&mut self, _line: &Line<'a>) {}
    /// Whether the values of the next rule, crawl-delay and sitemap lines matter; when not,
    /// they are not read (user-agent values always are).
    fn wants_values(&self) -> bool {
        true
    }
}

/// Where the state machine is.
#[derive(Default)]
struct State {
    /// A user-agent line has been seen: rules and delays have a group.
    in_group: bool,
    /// The last group line was a user-agent line: another one joins its group.
    collecting_agents: bool,
    /// The crawl-delay that closed the current list of user-agents, while no rule followed.
    closing_delay: Option<usize>,
}

/// Drives `sink` over `body`: user-agent lines open a group unless they follow another
/// user-agent line (sitemap, unknown and invalid lines in between do not count); rules and
/// crawl-delays belong to the current group, and a user-agent line after one of them opens the
/// next group.
fn walk<'a>(body: &'a [u8], sink: &mut impl Sink<'a>) {
    let mut state = State::default();
    let mut lines = Directives::new(body);
    loop {
        lines.skip_values = !sink.wants_values();
        let Some(line) = lines.next() else {
            break;
        };
        sink.line(&line);
        let Line {
            number,
            raw,
            directive,
            ..
        } = line;
        match directive {
            Directive::UserAgent(value) => {
                let opening = match (state.collecting_agents, state.closing_delay) {
                    (true, _) => Opening::Continues,
                    (false, None) => Opening::NewGroup,
                    (false, Some(crawl_delay_line)) => {
                        Opening::AfterCrawlDelay { crawl_delay_line }
                    }
                };
                sink.user_agent(number, raw, value, opening);
                state = State {
                    in_group: true,
                    collecting_agents: true,
                    closing_delay: None,
                };
            }
            Directive::Allow(value) | Directive::Disallow(value) if state.in_group => {
                let kind = match directive {
                    Directive::Allow(_) => RuleKind::Allow,
                    _ => RuleKind::Disallow,
                };
                sink.rule(&line, kind, value);
                state.collecting_agents = false;
                state.closing_delay = None;
            }
            Directive::CrawlDelay(value) if state.in_group => {
                // A delay belongs to the agents above it: a user-agent after it opens a new
                // group, as in the interpretation page's "treat media differently" example.
                sink.crawl_delay(number, raw, value);
                if state.collecting_agents {
                    state.closing_delay = Some(number);
                }
                state.collecting_agents = false;
            }
            directive => sink.other(number, raw, directive),
        }
    }
}

/// Why a rule value adds no rule.
enum Unusable {
    Empty,
    NotAPath,
}

fn usable_pattern(value: &[u8]) -> Result<(), Unusable> {
    match value.first() {
        None => Err(Unusable::Empty),
        Some(b'/' | b'*') => Ok(()),
        Some(_) => Err(Unusable::NotAPath),
    }
}
