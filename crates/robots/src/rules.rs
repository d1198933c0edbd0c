//! Rules, the group chosen for a crawler, and decisions with their reasons.

use std::fmt;
use std::time::Duration;

use crate::canon;
use crate::pattern::Pattern;

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
    #[cfg_attr(feature = "serde", serde(skip))]
    pub(crate) compiled: Pattern,
}

impl Rule {
    /// Compiles a rule value that starts with `/` or `*`.
    pub(crate) fn new(line: usize, kind: RuleKind, value: &[u8]) -> Rule {
        let compiled = if canon::is_canonical(value) {
            Pattern::from_canonical(value)
        } else {
            Pattern::from_canonical(&canon::canonicalize(value))
        };
        Rule {
            line,
            kind,
            pattern: String::from_utf8_lossy(value).into_owned(),
            compiled,
        }
    }

    /// The pattern in the canonical percent-encoded form it is matched in.
    pub fn canonical_pattern(&self) -> String {
        self.compiled.canonical()
    }

    /// The rule's specificity: the length of its canonical pattern.
    pub fn specificity(&self) -> usize {
        self.compiled.specificity()
    }

    /// Whether this rule matches `url` (absolute URL or path), regardless of other rules.
    pub fn matches(&self, url: &str) -> bool {
        with_canonical_target(url.as_bytes(), |path| self.compiled.matches(path))
    }
}

impl fmt::Display for Rule {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "line {}: {}: {}", self.line, self.kind, self.pattern)
    }
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

/// The rules one crawler follows: the chosen group's rules, merged and ordered for matching.
#[derive(Debug, Clone, PartialEq)]
pub struct AgentRules {
    group: GroupSelection,
    /// Most specific first; on equal specificity allow first; then file order.
    rules: Vec<Rule>,
    crawl_delay: Option<CrawlDelay>,
}

impl AgentRules {
    pub(crate) fn new(
        group: GroupSelection,
        mut rules: Vec<Rule>,
        crawl_delay: Option<CrawlDelay>,
    ) -> AgentRules {
        rules.sort_by(|a, b| {
            b.specificity()
                .cmp(&a.specificity())
                .then_with(|| (a.kind == RuleKind::Disallow).cmp(&(b.kind == RuleKind::Disallow)))
                .then_with(|| a.line.cmp(&b.line))
        });
        AgentRules {
            group,
            rules,
            crawl_delay,
        }
    }

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
    pub fn rules(&self) -> &[Rule] {
        &self.rules
    }

    /// The chosen group's crawl-delay (the largest if several were given).
    pub fn crawl_delay(&self) -> Option<CrawlDelay> {
        self.crawl_delay
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
            let rule = self.rules.iter().find(|rule| rule.compiled.matches(path));
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
    let Some(separator) = memchr::memmem::find(url, b"://") else {
        return url;
    };
    let scheme = &url[..separator];
    let is_scheme = scheme.first().is_some_and(u8::is_ascii_alphabetic)
        && scheme
            .iter()
            .all(|&b| b.is_ascii_alphanumeric() || matches!(b, b'+' | b'-' | b'.'));
    if !is_scheme {
        return url;
    }
    let after_scheme = &url[separator + 3..];
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
    pub rule: Option<&'r Rule>,
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
                pattern: rule.pattern.clone(),
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
