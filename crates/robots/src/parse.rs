//! The grouping state machine, shared by the full parse and the one-crawler parse.

use crate::diagnostics::{Diagnostic, DiagnosticKind};
use crate::lines::{self, Directive, Directives, Product};
use crate::rules::{AgentRules, AgentRulesBuilder, CrawlDelay, GroupSelection, Rule, RuleKind};
use crate::{Group, RobotsTxt, Sitemap, UserAgent, UserAgentProduct};

/// What the state machine reports, line by line.
trait Sink<'a> {
    /// A user-agent line; `new_group` when it opens a group rather than extending one.
    fn user_agent(&mut self, line: usize, raw: &'a [u8], value: &'a [u8], new_group: bool);
    /// An allow or disallow line inside a group.
    fn rule(&mut self, line: usize, raw: &'a [u8], kind: RuleKind, value: &'a [u8]);
    /// A crawl-delay line inside a group.
    fn crawl_delay(&mut self, line: usize, raw: &'a [u8], value: &'a [u8]);
    /// Everything else, including rules and delays outside any group.
    fn other(&mut self, line: usize, raw: &'a [u8], directive: Directive<'a>, in_group: bool);
    /// Every line, before what it says is reported.
    fn line(&mut self, _line: usize, _raw: &'a [u8]) {}
}

/// Drives `sink` over `body`: user-agent lines open a group unless they follow another
/// user-agent line (sitemap, unknown and invalid lines in between do not count); rules and
/// crawl-delays belong to the current group, and a user-agent line after one of them opens the
/// next group.
fn walk<'a>(body: &'a [u8], sink: &mut impl Sink<'a>) {
    let mut in_group = false;
    let mut collecting_agents = false;
    for (number, raw, directive) in Directives::new(body) {
        sink.line(number, raw);
        match directive {
            Directive::UserAgent(value) => {
                sink.user_agent(number, raw, value, !collecting_agents);
                in_group = true;
                collecting_agents = true;
            }
            Directive::Allow(value) if in_group => {
                sink.rule(number, raw, RuleKind::Allow, value);
                collecting_agents = false;
            }
            Directive::Disallow(value) if in_group => {
                sink.rule(number, raw, RuleKind::Disallow, value);
                collecting_agents = false;
            }
            Directive::CrawlDelay(value) if in_group => {
                // A delay belongs to the agents above it: a user-agent after it opens a new
                // group, as in the interpretation page's "treat media differently" example.
                sink.crawl_delay(number, raw, value);
                collecting_agents = false;
            }
            directive => sink.other(number, raw, directive, in_group),
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

fn is_absolute_http_url(value: &[u8]) -> bool {
    let lower_starts = |prefix: &[u8]| {
        value.len() > prefix.len() && value[..prefix.len()].eq_ignore_ascii_case(prefix)
    };
    let rest = if lower_starts(b"https://") {
        &value[8..]
    } else if lower_starts(b"http://") {
        &value[7..]
    } else {
        return false;
    };
    !matches!(rest.first(), None | Some(b'/' | b'?' | b'#'))
        && !rest.iter().any(|b| b.is_ascii_whitespace())
}

// ---------------------------------------------------------------------------------------------
// The full parse: every group, every sitemap, every diagnostic.

struct FullSink {
    groups: Vec<Group>,
    sitemaps: Vec<Sitemap>,
    diagnostics: Vec<Diagnostic>,
    /// The number of the last line read.
    last_line: usize,
}

impl FullSink {
    fn report(&mut self, line: usize, kind: DiagnosticKind, raw: &[u8]) {
        self.diagnostics.push(Diagnostic::new(line, kind, raw));
    }
}

impl<'a> Sink<'a> for FullSink {
    fn line(&mut self, line: usize, raw: &'a [u8]) {
        self.last_line = line;
        if std::str::from_utf8(raw).is_err() {
            self.report(line, DiagnosticKind::InvalidUtf8, raw);
        }
    }

    fn user_agent(&mut self, line: usize, raw: &'a [u8], value: &'a [u8], new_group: bool) {
        if new_group || self.groups.is_empty() {
            self.groups.push(Group {
                line,
                user_agents: Vec::new(),
                rules: Vec::new(),
                crawl_delay: None,
            });
        }
        let product = match lines::product(value) {
            Product::Global => {
                if value.len() > 1 {
                    self.report(
                        line,
                        DiagnosticKind::UserAgentNotAToken {
                            token: "*".to_owned(),
                        },
                        raw,
                    );
                }
                UserAgentProduct::Global
            }
            Product::Token(token) => {
                let token = String::from_utf8_lossy(token).into_owned();
                if token.len() < value.len() {
                    self.report(
                        line,
                        DiagnosticKind::UserAgentNotAToken {
                            token: token.clone(),
                        },
                        raw,
                    );
                }
                UserAgentProduct::Token(token)
            }
            Product::Nothing if value.is_empty() => {
                self.report(line, DiagnosticKind::EmptyUserAgent, raw);
                UserAgentProduct::Nothing
            }
            Product::Nothing => {
                self.report(line, DiagnosticKind::InvalidUserAgent, raw);
                UserAgentProduct::Nothing
            }
        };
        if let Some(group) = self.groups.last_mut() {
            group.user_agents.push(UserAgent {
                line,
                value: String::from_utf8_lossy(value).into_owned(),
                product,
            });
        }
    }

    fn rule(&mut self, line: usize, raw: &'a [u8], kind: RuleKind, value: &'a [u8]) {
        match usable_pattern(value) {
            Err(Unusable::Empty) => self.report(line, DiagnosticKind::EmptyRule, raw),
            Err(Unusable::NotAPath) => self.report(line, DiagnosticKind::PatternNotAPath, raw),
            Ok(()) => {
                if let Some(dollar) = memchr::memchr(b'$', value) {
                    if dollar + 1 < value.len() {
                        self.report(line, DiagnosticKind::DollarInPattern, raw);
                    }
                }
                if !value.is_ascii() {
                    self.report(line, DiagnosticKind::NonAsciiPattern, raw);
                }
                if let Some(group) = self.groups.last_mut() {
                    group.rules.push(Rule::new(line, kind, value));
                }
            }
        }
    }

    fn crawl_delay(&mut self, line: usize, raw: &'a [u8], value: &'a [u8]) {
        let Some(delay) = CrawlDelay::parse(line, value) else {
            self.report(line, DiagnosticKind::InvalidCrawlDelay, raw);
            return;
        };
        let duplicate = match self.groups.last_mut() {
            Some(group) => {
                let duplicate = group.crawl_delay.is_some();
                group.crawl_delay = Some(larger_delay(group.crawl_delay, delay));
                duplicate
            }
            None => false,
        };
        if duplicate {
            self.report(line, DiagnosticKind::DuplicateCrawlDelay, raw);
        }
    }

    fn other(&mut self, line: usize, raw: &'a [u8], directive: Directive<'a>, _in_group: bool) {
        match directive {
            Directive::Blank => {}
            Directive::MissingColon => self.report(line, DiagnosticKind::MissingColon, raw),
            Directive::Unknown { field, .. } => {
                let field = String::from_utf8_lossy(field).into_owned();
                self.report(line, DiagnosticKind::UnknownField { field }, raw);
            }
            Directive::Allow(_) | Directive::Disallow(_) => {
                self.report(line, DiagnosticKind::RuleOutsideGroup, raw)
            }
            Directive::CrawlDelay(_) => {
                self.report(line, DiagnosticKind::CrawlDelayOutsideGroup, raw)
            }
            Directive::Sitemap(value) => {
                if is_absolute_http_url(value) {
                    self.sitemaps.push(Sitemap {
                        line,
                        url: String::from_utf8_lossy(value).into_owned(),
                    });
                } else {
                    self.report(line, DiagnosticKind::SitemapNotAbsolute, raw);
                }
            }
            Directive::UserAgent(_) => {}
        }
    }
}

fn larger_delay(current: Option<CrawlDelay>, new: CrawlDelay) -> CrawlDelay {
    match current {
        Some(current) if current.seconds >= new.seconds => current,
        _ => new,
    }
}

pub(crate) fn parse_full(input: &[u8]) -> RobotsTxt {
    let prepared = lines::prepare(input);
    let mut sink = FullSink {
        groups: Vec::new(),
        sitemaps: Vec::new(),
        diagnostics: Vec::new(),
        last_line: 0,
    };
    if prepared.had_bom {
        sink.report(1, DiagnosticKind::ByteOrderMark, b"");
    }
    walk(prepared.body, &mut sink);
    let last_line = sink.last_line;
    if prepared.cut_line {
        sink.report(last_line + 1, DiagnosticKind::LineCutByLimit, b"");
    }
    if prepared.ignored_bytes > 0 {
        sink.report(
            last_line + 1,
            DiagnosticKind::TruncatedAtLimit {
                ignored_bytes: prepared.ignored_bytes,
            },
            b"",
        );
    }
    sink.diagnostics.sort_by_key(|diagnostic| diagnostic.line);
    RobotsTxt {
        groups: sink.groups,
        sitemaps: sink.sitemaps,
        diagnostics: sink.diagnostics,
        lines: last_line,
        bytes_read: input.len() - prepared.ignored_bytes,
        bytes_total: input.len(),
    }
}

// ---------------------------------------------------------------------------------------------
// The one-crawler parse: only the groups naming one of the wanted tokens, or `*`.

/// Rules and delay gathered for one wanted token (or for `*`).
#[derive(Default)]
struct Bucket {
    named: bool,
    rules: AgentRulesBuilder,
    crawl_delay: Option<CrawlDelay>,
}

struct AgentSink<'t> {
    tokens: Vec<&'t [u8]>,
    /// One bucket per wanted token, then one for `*`. Rules are compiled as they come: the
    /// bucket that wins is rarely known before the end, and compiling straight into it beats
    /// keeping a list to compile later.
    buckets: Vec<Bucket>,
    /// Which buckets the current group feeds: bit `i` for `buckets[i]`.
    current: u64,
}

/// At most this many preferred tokens are honoured; later ones are ignored.
pub const MAX_PREFERRED_TOKENS: usize = 63;

impl<'a> Sink<'a> for AgentSink<'a> {
    fn user_agent(&mut self, _line: usize, _raw: &'a [u8], value: &'a [u8], new_group: bool) {
        if new_group {
            self.current = 0;
        }
        let bucket = match lines::product(value) {
            Product::Global => Some(self.tokens.len()),
            Product::Token(token) => self
                .tokens
                .iter()
                .position(|wanted| wanted.eq_ignore_ascii_case(token)),
            Product::Nothing => None,
        };
        if let Some(index) = bucket {
            self.current |= 1 << index;
            self.buckets[index].named = true;
        }
    }

    fn rule(&mut self, line: usize, _raw: &'a [u8], kind: RuleKind, value: &'a [u8]) {
        if self.current == 0 || usable_pattern(value).is_err() {
            return;
        }
        let mut groups = self.current;
        while groups != 0 {
            let index = groups.trailing_zeros() as usize;
            self.buckets[index].rules.push(line, kind, value);
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
                    bucket.crawl_delay = Some(larger_delay(bucket.crawl_delay, delay));
                }
            }
        }
    }

    fn other(&mut self, _line: usize, _raw: &'a [u8], _directive: Directive<'a>, _in: bool) {}
}

/// Reduces the caller's tokens to product tokens, dropping ones that are not tokens.
fn wanted_tokens<'t>(tokens: &[&'t str]) -> Vec<(&'t str, &'t [u8])> {
    tokens
        .iter()
        .filter_map(|token| match lines::product(token.as_bytes()) {
            Product::Token(product) => Some((*token, product)),
            _ => None,
        })
        .take(MAX_PREFERRED_TOKENS)
        .collect()
}

/// Names the group by the caller's own spelling of the token when it is a bare token.
fn named_group(caller: &str, product: &[u8]) -> GroupSelection {
    if caller.len() == product.len() {
        GroupSelection::Named(caller.to_owned())
    } else {
        GroupSelection::Named(String::from_utf8_lossy(product).into_owned())
    }
}

pub(crate) fn parse_for_agent(input: &[u8], tokens: &[&str]) -> AgentRules {
    let wanted = wanted_tokens(tokens);
    let mut sink = AgentSink {
        tokens: wanted.iter().map(|(_, product)| *product).collect(),
        buckets: (0..=wanted.len()).map(|_| Bucket::default()).collect(),
        current: 0,
    };
    walk(lines::prepare(input).body, &mut sink);
    let Some(index) = sink.buckets.iter().position(|bucket| bucket.named) else {
        return AgentRulesBuilder::default().finish(GroupSelection::None, None);
    };
    let bucket = std::mem::take(&mut sink.buckets[index]);
    let group = match wanted.get(index) {
        Some((token, product)) => named_group(token, product),
        None => GroupSelection::Global,
    };
    bucket.rules.finish(group, bucket.crawl_delay)
}

pub(crate) fn rules_for(robots: &RobotsTxt, tokens: &[&str]) -> AgentRules {
    let wanted = wanted_tokens(tokens);
    let names = |group: &Group, wanted: &[u8]| {
        group.user_agents.iter().any(|agent| match &agent.product {
            UserAgentProduct::Token(token) => token.as_bytes().eq_ignore_ascii_case(wanted),
            _ => false,
        })
    };
    let is_global = |group: &Group| {
        group
            .user_agents
            .iter()
            .any(|agent| agent.product == UserAgentProduct::Global)
    };
    let merge = |selection: GroupSelection, groups: Vec<&Group>| {
        let mut builder = AgentRulesBuilder::default();
        for rule in groups.iter().flat_map(|group| group.rules.iter()) {
            builder.push_rule(rule);
        }
        let delay = groups
            .iter()
            .filter_map(|group| group.crawl_delay)
            .reduce(|a, b| larger_delay(Some(a), b));
        builder.finish(selection, delay)
    };
    for (token, product) in &wanted {
        let groups: Vec<&Group> = robots.groups.iter().filter(|g| names(g, product)).collect();
        if !groups.is_empty() {
            return merge(named_group(token, product), groups);
        }
    }
    let global: Vec<&Group> = robots.groups.iter().filter(|g| is_global(g)).collect();
    if global.is_empty() {
        AgentRulesBuilder::default().finish(GroupSelection::None, None)
    } else {
        merge(GroupSelection::Global, global)
    }
}
