//! Rules, the group chosen for a crawler, and decisions with their reasons.

use std::fmt;
use std::sync::OnceLock;
use std::time::Duration;

use crate::canon;
use crate::pattern::{self, Shape};

/// Whether a rule allows or disallows.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[cfg_attr(
    feature = "serde",
    derive(serde::Serialize, serde::Deserialize),
    serde(rename_all = "lowercase")
)]
pub enum RuleKind {
    /// An `Allow:` line.
    Allow,
    /// A `Disallow:` line.
    Disallow,
}

impl fmt::Display for RuleKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            RuleKind::Allow => "Allow",
            RuleKind::Disallow => "Disallow",
        })
    }
}

/// One allow or disallow rule, as written and compiled.
#[derive(Debug, Clone, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
pub struct Rule {
    /// 1-based line number.
    pub line: usize,
    /// Allow or disallow.
    pub kind: RuleKind,
    /// The path pattern as written (comment and surrounding whitespace removed).
    pub pattern: String,
    /// The canonical pattern without its anchor.
    #[cfg_attr(feature = "serde", serde(skip))]
    body: Box<[u8]>,
    #[cfg_attr(feature = "serde", serde(skip))]
    shape: Shape,
}

impl Rule {
    /// Compiles a rule value that starts with `/` or `*`.
    pub(crate) fn new(line: usize, kind: RuleKind, value: &[u8]) -> Rule {
        let mut canonical = Vec::with_capacity(value.len());
        push_canonical(value, &mut canonical);
        let (shape, body_len) = Shape::of(&canonical);
        canonical.truncate(body_len);
        Rule {
            line,
            kind,
            pattern: String::from_utf8_lossy(value).into_owned(),
            body: canonical.into_boxed_slice(),
            shape,
        }
    }

    /// The pattern in the canonical percent-encoded form it is matched in.
    pub fn canonical_pattern(&self) -> String {
        canonical_text(&self.body, self.shape.anchored)
    }

    /// The rule's specificity: the length of its canonical pattern.
    pub fn specificity(&self) -> usize {
        self.shape.specificity as usize
    }

    /// Whether this rule matches `url` (absolute URL or path), regardless of other rules.
    pub fn matches(&self, url: &str) -> bool {
        with_canonical_target(url.as_bytes(), |path| {
            pattern::matches(&self.body, self.shape, path)
        })
    }
}

impl fmt::Display for Rule {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "line {}: {}: {}", self.line, self.kind, self.pattern)
    }
}

fn push_canonical(value: &[u8], out: &mut Vec<u8>) {
    if canon::is_canonical(value) {
        out.extend_from_slice(value);
    } else {
        canon::canonicalize_into(value, out);
    }
}

fn canonical_text(body: &[u8], anchored: bool) -> String {
    let mut text = String::from_utf8_lossy(body).into_owned();
    if anchored {
        text.push('$');
    }
    text
}

/// A crawl-delay, in seconds.
#[derive(Debug, Clone, Copy, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
pub struct CrawlDelay {
    /// 1-based line number.
    pub line: usize,
    /// The delay in seconds (finite, not negative).
    pub seconds: f64,
}

impl CrawlDelay {
    /// Parses `10`, `2.5` or `.5`; anything else (signs, exponents, units) is refused.
    pub(crate) fn parse(line: usize, value: &[u8]) -> Option<CrawlDelay> {
        let (whole, fraction) = match memchr::memchr(b'.', value) {
            Some(dot) => (&value[..dot], Some(&value[dot + 1..])),
            None => (value, None),
        };
        let digits = |part: &[u8]| part.iter().all(u8::is_ascii_digit);
        let valid = digits(whole)
            && fraction.is_none_or(digits)
            && (!whole.is_empty() || fraction.is_some_and(|f| !f.is_empty()));
        if !valid {
            return None;
        }
        let seconds: f64 = std::str::from_utf8(value).ok()?.parse().ok()?;
        seconds.is_finite().then_some(CrawlDelay { line, seconds })
    }

    /// The delay as a [`Duration`], saturating at [`Duration::MAX`].
    pub fn duration(&self) -> Duration {
        Duration::try_from_secs_f64(self.seconds).unwrap_or(Duration::MAX)
    }
}

/// Which group of the file applies to the crawler.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
#[cfg_attr(
    feature = "serde",
    derive(serde::Serialize, serde::Deserialize),
    serde(tag = "type", content = "token", rename_all = "snake_case")
)]
pub enum GroupSelection {
    /// The groups naming this product token (as the caller spelled it), merged.
    Named(String),
    /// The `*` groups, merged.
    Global,
    /// No group applies: everything is allowed.
    None,
}

impl fmt::Display for GroupSelection {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            GroupSelection::Named(token) => f.write_str(token),
            GroupSelection::Global => f.write_str("*"),
            GroupSelection::None => f.write_str("none"),
        }
    }
}

/// One rule inside [`AgentRules`]: offsets into its two text arenas. Kept small, because
/// parsing writes one per rule; what only matching needs lives in the [`Index`].
#[derive(Debug, Clone, Copy)]
struct CompactRule {
    line: u32,
    kind: RuleKind,
    /// Whether the pattern ended in `$` (which follows the body in the arena).
    anchored: bool,
    /// Canonical body in `AgentRules::canonical`, without the anchor.
    body: (u32, u32),
    /// Pattern as written in `AgentRules::written`; [`SAME_AS_CANONICAL`] when it was already
    /// canonical, and so is the canonical text itself (anchor included).
    written: (u32, u32),
}

/// [`CompactRule::written`] of a rule written in canonical form.
const SAME_AS_CANONICAL: (u32, u32) = (u32::MAX, u32::MAX);

impl CompactRule {
    /// Length of the canonical pattern, anchor included.
    fn specificity(&self) -> u32 {
        (self.body.1 - self.body.0).saturating_add(u32::from(self.anchored))
    }

    /// Matching order: most specific first, then allow before disallow, then file order.
    fn order_key(&self) -> u64 {
        let specificity = u64::from(u32::MAX - self.specificity());
        let disallow = u64::from(self.kind == RuleKind::Disallow);
        specificity << 32 | disallow << 31 | u64::from(self.line.min(u32::MAX >> 1))
    }
}

/// The first bytes of a text packed into a word, with a mask of how many count.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Fingerprint {
    bytes: u64,
    mask: u64,
}

impl Fingerprint {
    /// The first `min(len, 8)` bytes of `text`.
    fn of(text: &[u8], len: usize) -> Fingerprint {
        let len = len.min(8).min(text.len());
        let mut word = [0u8; 8];
        word[..len].copy_from_slice(&text[..len]);
        let mask = if len == 8 {
            u64::MAX
        } else {
            (1u64 << (8 * len)) - 1
        };
        Fingerprint {
            bytes: u64::from_le_bytes(word),
            mask,
        }
    }

    /// Whether a text starting with `prefix` (its first eight bytes) can start with this head.
    fn admits(&self, prefix: u64) -> bool {
        prefix & self.mask == self.bytes
    }
}

/// Collects rules into the arenas of an [`AgentRules`].
#[derive(Default)]
pub(crate) struct AgentRulesBuilder {
    canonical: Vec<u8>,
    written: String,
    rules: Vec<CompactRule>,
}

fn span(start: usize, end: usize) -> (u32, u32) {
    // Bodies come from at most MAX_ROBOTS_TXT_BYTES of input (canonical form at most triples it).
    (
        u32::try_from(start).unwrap_or(u32::MAX),
        u32::try_from(end).unwrap_or(u32::MAX),
    )
}

impl AgentRulesBuilder {
    /// Adds a rule whose value starts with `/` or `*`.
    pub(crate) fn push(&mut self, line: usize, kind: RuleKind, value: &[u8]) {
        let start = self.canonical.len();
        let written = if canon::is_canonical(value) {
            self.canonical.extend_from_slice(value);
            SAME_AS_CANONICAL
        } else {
            canon::canonicalize_into(value, &mut self.canonical);
            let written_start = self.written.len();
            match std::str::from_utf8(value) {
                Ok(text) => self.written.push_str(text),
                Err(_) => self.written.push_str(&String::from_utf8_lossy(value)),
            }
            span(written_start, self.written.len())
        };
        self.push_canonical(line, kind, start, written);
    }

    /// Adds an already compiled rule.
    pub(crate) fn push_rule(&mut self, rule: &Rule) {
        let start = self.canonical.len();
        self.canonical.extend_from_slice(&rule.body);
        if rule.shape.anchored {
            self.canonical.push(b'$');
        }
        let written = if rule.pattern.as_bytes() == &self.canonical[start..] {
            SAME_AS_CANONICAL
        } else {
            let written_start = self.written.len();
            self.written.push_str(&rule.pattern);
            span(written_start, self.written.len())
        };
        self.push_canonical(line_u32(rule.line) as usize, rule.kind, start, written);
    }

    /// Records the canonical pattern that starts at `start` and runs to the arena's end.
    fn push_canonical(&mut self, line: usize, kind: RuleKind, start: usize, written: (u32, u32)) {
        let anchored = self.canonical.last() == Some(&b'$') && self.canonical.len() > start;
        let body_end = self.canonical.len() - usize::from(anchored);
        self.rules.push(CompactRule {
            line: line_u32(line),
            kind,
            anchored,
            body: span(start, body_end),
            written,
        });
    }

    /// Seals the rules; the matching index is built on the first check.
    pub(crate) fn finish(
        self,
        group: GroupSelection,
        crawl_delay: Option<CrawlDelay>,
    ) -> AgentRules {
        // No sort: a check looks at every candidate anyway (most URLs match nothing, so an early
        // exit rarely helps) and keeps the best by `order_key`, which saves parse time.
        // Canonical text is ASCII, so this never falls back.
        let canonical = String::from_utf8(self.canonical)
            .unwrap_or_else(|error| String::from_utf8_lossy(error.as_bytes()).into_owned());
        AgentRules {
            group,
            canonical,
            written: self.written,
            rules: self.rules,
            crawl_delay,
            index: OnceLock::new(),
        }
    }
}

fn line_u32(line: usize) -> u32 {
    u32::try_from(line).unwrap_or(u32::MAX)
}

/// Groups with more rules than this get buckets; smaller ones are scanned in full.
const BUCKET_THRESHOLD: usize = 8;

/// Rule positions grouped by one byte, in compressed rows.
#[derive(Debug, Clone)]
struct Buckets {
    /// `items[starts[b]..starts[b + 1]]` holds the rules keyed by byte `b`.
    starts: Box<[u32; 257]>,
    items: Vec<u32>,
}

impl Buckets {
    fn build(keyed: &[(u8, u32)]) -> Buckets {
        let mut starts = Box::new([0u32; 257]);
        for (key, _) in keyed {
            starts[usize::from(*key) + 1] += 1;
        }
        for i in 1..257 {
            starts[i] += starts[i - 1];
        }
        let mut next = *starts;
        let mut items = vec![0u32; keyed.len()];
        for (key, position) in keyed {
            let slot = &mut next[usize::from(*key)];
            items[*slot as usize] = *position;
            *slot += 1;
        }
        Buckets { starts, items }
    }

    fn get(&self, key: u8) -> &[u32] {
        let key = usize::from(key);
        self.items
            .get(self.starts[key] as usize..self.starts[key + 1] as usize)
            .unwrap_or_default()
    }
}

/// What matching needs beyond the rules themselves, built on the first check so that parsing
/// alone never pays for it.
///
/// Per rule: its shape (wildcards, anchor), an eight-byte fingerprint of its literal head and a
/// byte-presence filter. Large groups also get buckets, so a URL only tries the rules that can
/// match it:
/// - a rule whose literal head is `/` plus at least one byte can only match a path with the
///   same second byte;
/// - otherwise, an anchored rule can only match a path ending in its last byte;
/// - the rest (`/`, `/*foo`, `*foo` ...) are always tried.
#[derive(Debug, Clone)]
struct Index {
    matchers: Vec<Matcher>,
    buckets: Option<(Buckets, Buckets)>,
    /// Rules tried for every URL (all of them when there are no buckets).
    general: Vec<u32>,
}

/// What matching one rule needs, in one record so a candidate costs one cache line.
#[derive(Debug, Clone, Copy)]
struct Matcher {
    /// Up to the first eight bytes of the literal head: most non-matches are turned away
    /// without touching the rule text.
    head: Fingerprint,
    /// [`byte_set`] of a wildcard rule's literal bytes (0 for literal rules, which the head and
    /// one comparison settle).
    needs: u64,
    /// [`CompactRule::order_key`].
    order: u64,
    /// The canonical body in the arena.
    body: (u32, u32),
    shape: Shape,
    /// A literal rule of at most eight bytes: `head` is the whole pattern.
    head_is_pattern: bool,
}

impl Index {
    fn build(rules: &[CompactRule], canonical: &[u8]) -> Index {
        let body_of = |rule: &CompactRule| &canonical[rule.body.0 as usize..rule.body.1 as usize];
        let matchers: Vec<Matcher> = rules
            .iter()
            .map(|rule| {
                let body = body_of(rule);
                let end = rule.body.1 as usize + usize::from(rule.anchored);
                let (shape, _) = Shape::of(&canonical[rule.body.0 as usize..end]);
                Matcher {
                    shape,
                    order: rule.order_key(),
                    body: rule.body,
                    head: Fingerprint::of(body, shape.head_len(body)),
                    head_is_pattern: !shape.has_wildcard() && body.len() <= 8,
                    needs: if shape.has_wildcard() {
                        byte_set(body)
                    } else {
                        0
                    },
                }
            })
            .collect();
        let all = || (0..rules.len()).map(|position| u32::try_from(position).unwrap_or(u32::MAX));
        if rules.len() <= BUCKET_THRESHOLD {
            return Index {
                matchers,
                buckets: None,
                general: all().collect(),
            };
        }
        let mut by_second = Vec::new();
        let mut by_last = Vec::new();
        let mut general = Vec::new();
        for (position, (rule, matcher)) in all().zip(rules.iter().zip(&matchers)) {
            match body_of(rule) {
                [b'/', second, ..] if matcher.shape.head_len(body_of(rule)) >= 2 => {
                    by_second.push((*second, position))
                }
                [.., last] if rule.anchored && *last != b'*' => by_last.push((*last, position)),
                _ => general.push(position),
            }
        }
        Index {
            matchers,
            buckets: Some((Buckets::build(&by_second), Buckets::build(&by_last))),
            general,
        }
    }
}

/// A 64-bit summary of which bytes occur in a text (byte value modulo 64): a rule needing a
/// byte the path lacks cannot match, which turns most wildcard rules away cheaply.
fn byte_set(text: &[u8]) -> u64 {
    text.iter()
        .filter(|&&b| b != b'*')
        .fold(0, |set, &b| set | 1 << (b & 63))
}

/// The rules one crawler follows: the chosen group's rules, merged and ordered for matching.
#[derive(Debug, Clone)]
pub struct AgentRules {
    group: GroupSelection,
    /// Canonical rule patterns (with their anchors), back to back.
    canonical: String,
    /// Rule patterns as written, back to back.
    written: String,
    /// In file order; `CompactRule::order_key` ranks them.
    rules: Vec<CompactRule>,
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
    /// Parses `robots_txt` for one crawler, keeping only the groups it can need.
    ///
    /// `tokens` are product tokens in order of preference (e.g. `["JittyBot-Image", "JittyBot"]`).
    /// Equivalent to `RobotsTxt::parse(robots_txt).rules_for(tokens)`, without the cost of the
    /// other groups and of the diagnostics.
    pub fn parse(robots_txt: &[u8], tokens: &[&str]) -> AgentRules {
        crate::parse::parse_for_agent(robots_txt, tokens)
    }

    /// Which group applies.
    pub fn group(&self) -> &GroupSelection {
        &self.group
    }

    /// The rules of the chosen group, most specific first.
    pub fn rules(&self) -> Vec<RuleRef<'_>> {
        let mut ordered: Vec<&CompactRule> = self.rules.iter().collect();
        ordered.sort_by_key(|rule| rule.order_key());
        ordered.into_iter().map(|rule| self.view(rule)).collect()
    }

    /// How many rules the chosen group has.
    pub fn rule_count(&self) -> usize {
        self.rules.len()
    }

    /// The chosen group's crawl-delay (the largest if several were given).
    pub fn crawl_delay(&self) -> Option<CrawlDelay> {
        self.crawl_delay
    }

    fn view(&self, rule: &CompactRule) -> RuleRef<'_> {
        RuleRef {
            line: rule.line as usize,
            kind: rule.kind,
            pattern: if rule.written == SAME_AS_CANONICAL {
                let end = rule.body.1 as usize + usize::from(rule.anchored);
                self.canonical.get(rule.body.0 as usize..end)
            } else {
                self.written
                    .get(rule.written.0 as usize..rule.written.1 as usize)
            }
            .unwrap_or_default(),
            body: self.body(rule),
            anchored: rule.anchored,
        }
    }

    fn body(&self, rule: &CompactRule) -> &[u8] {
        &self.canonical.as_bytes()[rule.body.0 as usize..rule.body.1 as usize]
    }

    /// The best-ranked rule that matches `path`.
    fn deciding_rule(&self, path: &[u8]) -> Option<&CompactRule> {
        let index = self
            .index
            .get_or_init(|| Index::build(&self.rules, self.canonical.as_bytes()));
        let mut best: Option<(u64, usize)> = None;
        let prefix = Fingerprint::of(path, 8).bytes;
        // Only wildcard rules need the path's byte set: worked out once, when first needed.
        let mut has: Option<u64> = None;
        let canonical = self.canonical.as_bytes();
        let mut consider = |position: u32| {
            let position = position as usize;
            let Some(matcher) = index.matchers.get(position) else {
                return;
            };
            if !matcher.head.admits(prefix)
                || best.is_some_and(|(best_key, _)| matcher.order >= best_key)
            {
                return;
            }
            if matcher.needs != 0
                && matcher.needs & !*has.get_or_insert_with(|| byte_set(path)) != 0
            {
                return;
            }
            let matched = if matcher.head_is_pattern {
                // The fingerprint already compared the whole pattern.
                !matcher.shape.anchored || path.len() == (matcher.body.1 - matcher.body.0) as usize
            } else {
                let body = &canonical[matcher.body.0 as usize..matcher.body.1 as usize];
                pattern::matches(body, matcher.shape, path)
            };
            if matched {
                best = Some((matcher.order, position));
            }
        };
        if let Some((by_second_byte, by_last_byte)) = &index.buckets {
            if let [b'/', second, ..] = path {
                by_second_byte
                    .get(*second)
                    .iter()
                    .copied()
                    .for_each(&mut consider);
            }
            if let Some(last) = path.last() {
                by_last_byte
                    .get(*last)
                    .iter()
                    .copied()
                    .for_each(&mut consider);
            }
        }
        index.general.iter().copied().for_each(&mut consider);
        best.map(|(_, position)| &self.rules[position])
    }

    /// Decides whether `url` may be fetched. `url` is an absolute URL or a path starting with
    /// `/`; only its path and query count.
    pub fn check(&self, url: &str) -> Decision<'_> {
        self.check_bytes(url.as_bytes())
    }

    /// [`AgentRules::check`] for a URL given as bytes.
    pub fn check_bytes(&self, url: &[u8]) -> Decision<'_> {
        with_canonical_target(url, |path| {
            if is_robots_txt(path) {
                return Decision {
                    allowed: true,
                    rule: None,
                    group: &self.group,
                    robots_txt_exemption: true,
                };
            }
            let rule = self.deciding_rule(path).map(|rule| self.view(rule));
            Decision {
                allowed: rule.is_none_or(|rule| rule.kind == RuleKind::Allow),
                rule,
                group: &self.group,
                robots_txt_exemption: false,
            }
        })
    }

    /// Shorthand for `self.check(url).allowed`.
    pub fn is_allowed(&self, url: &str) -> bool {
        self.check(url).allowed
    }
}

/// A rule of an [`AgentRules`], borrowed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RuleRef<'r> {
    /// 1-based line number.
    pub line: usize,
    /// Allow or disallow.
    pub kind: RuleKind,
    /// The path pattern as written.
    pub pattern: &'r str,
    body: &'r [u8],
    anchored: bool,
}

impl RuleRef<'_> {
    /// The pattern in the canonical percent-encoded form it is matched in.
    pub fn canonical_pattern(&self) -> String {
        canonical_text(self.body, self.anchored)
    }

    /// The rule's specificity: the length of its canonical pattern.
    pub fn specificity(&self) -> usize {
        self.body.len() + usize::from(self.anchored)
    }
}

impl fmt::Display for RuleRef<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "line {}: {}: {}", self.line, self.kind, self.pattern)
    }
}

fn is_robots_txt(path: &[u8]) -> bool {
    let path_only = match memchr::memchr(b'?', path) {
        Some(query) => &path[..query],
        None => path,
    };
    path_only == b"/robots.txt"
}

/// Extracts the path and query of `url`, canonicalises them and hands them to `f`.
///
/// An absolute URL (`scheme://authority/path?query#fragment`) loses its scheme, authority and
/// fragment; anything else is taken as a path. An empty path is `/`.
fn with_canonical_target<T>(url: &[u8], f: impl FnOnce(&[u8]) -> T) -> T {
    let target = path_and_query(url);
    let target = match memchr::memchr(b'#', target) {
        Some(fragment) => &target[..fragment],
        None => target,
    };
    if target.first() == Some(&b'/') && canon::is_canonical(target) {
        return f(target);
    }
    let mut buffer = Vec::with_capacity(target.len() + 8);
    if target.first() != Some(&b'/') {
        buffer.push(b'/');
    }
    canon::canonicalize_into(target, &mut buffer);
    f(&buffer)
}

fn path_and_query(url: &[u8]) -> &[u8] {
    if url.first() == Some(&b'/') {
        return url;
    }
    // A scheme is a letter, then letters, digits, `+`, `-` or `.`, then `://`.
    let scheme_len = url
        .iter()
        .position(|&b| !(b.is_ascii_alphanumeric() || matches!(b, b'+' | b'-' | b'.')))
        .unwrap_or(url.len());
    let is_absolute = url.first().is_some_and(u8::is_ascii_alphabetic)
        && url.get(scheme_len..scheme_len + 3) == Some(b"://");
    if !is_absolute {
        return url;
    }
    let after_scheme = &url[scheme_len + 3..];
    let authority_end = after_scheme
        .iter()
        .position(|&b| matches!(b, b'/' | b'?' | b'#'))
        .unwrap_or(after_scheme.len());
    &after_scheme[authority_end..]
}

/// The answer to "may this URL be fetched?", with its reason.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Decision<'r> {
    /// Whether the URL may be fetched.
    pub allowed: bool,
    /// The deciding rule, if any rule matched.
    pub rule: Option<RuleRef<'r>>,
    /// Which group was used.
    pub group: &'r GroupSelection,
    /// True when the URL is `/robots.txt` itself, which is always allowed.
    pub robots_txt_exemption: bool,
}

impl Decision<'_> {
    /// An owned copy of this decision, to keep or send elsewhere.
    pub fn explain(&self) -> Explanation {
        Explanation {
            allowed: self.allowed,
            rule: self.rule.map(|rule| DecidingRule {
                line: rule.line,
                kind: rule.kind,
                pattern: rule.pattern.to_owned(),
            }),
            group: self.group.clone(),
            robots_txt_exemption: self.robots_txt_exemption,
        }
    }
}

impl fmt::Display for Decision<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.explain().fmt(f)
    }
}

/// The rule that decided, as reported in an [`Explanation`].
#[derive(Debug, Clone, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct DecidingRule {
    /// 1-based line number.
    pub line: usize,
    /// Allow or disallow.
    pub kind: RuleKind,
    /// The pattern as written.
    pub pattern: String,
}

/// An owned [`Decision`].
#[derive(Debug, Clone, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct Explanation {
    /// Whether the URL may be fetched.
    pub allowed: bool,
    /// The deciding rule, if any rule matched.
    pub rule: Option<DecidingRule>,
    /// Which group was used.
    pub group: GroupSelection,
    /// True when the URL is `/robots.txt` itself, which is always allowed.
    pub robots_txt_exemption: bool,
}

impl fmt::Display for Explanation {
    /// `line 3: Disallow: /search, group JittyBot`, or why no rule decided.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match (&self.rule, &self.group) {
            (Some(rule), group) => write!(
                f,
                "line {}: {}: {}, group {group}",
                rule.line, rule.kind, rule.pattern
            ),
            (None, _) if self.robots_txt_exemption => f.write_str("/robots.txt is always allowed"),
            (None, GroupSelection::None) => f.write_str("no group applies"),
            (None, group) => write!(f, "no matching rule, group {group}"),
        }
    }
}
