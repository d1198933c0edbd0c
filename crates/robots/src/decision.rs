//! Decisions and their reasons: the group used, the deciding rule, or why a URL was refused.

use std::fmt;

use crate::pattern::{self, Shape};
use crate::rule::{self, Rule, RuleKind};
use crate::target::{self, TargetError};

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

/// A rule of an [`crate::AgentRules`], borrowed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RuleRef<'r> {
    /// 1-based line number: with [`crate::RobotsTxt::rule_at`], it leads back to the [`Rule`]
    /// of the full parse.
    pub line: usize,
    /// Allow or disallow.
    pub kind: RuleKind,
    /// The path pattern as written.
    pub pattern: &'r str,
    body: &'r [u8],
    anchored: bool,
}

impl<'r> RuleRef<'r> {
    pub(crate) fn new(
        line: usize,
        kind: RuleKind,
        pattern: &'r str,
        body: &'r [u8],
        anchored: bool,
    ) -> RuleRef<'r> {
        RuleRef {
            line,
            kind,
            pattern,
            body,
            anchored,
        }
    }

    /// The pattern in the canonical percent-encoded form it is matched in.
    pub fn canonical_pattern(&self) -> String {
        rule::canonical_text(self.body, self.anchored)
    }

    /// The rule's specificity: the length of its canonical pattern.
    pub fn specificity(&self) -> usize {
        self.body.len() + usize::from(self.anchored)
    }

    /// Whether this rule matches `url` (absolute URL or path), regardless of other rules.
    /// A URL that cannot be checked (see [`TargetError`]) matches nothing.
    pub fn matches(&self, url: &str) -> bool {
        self.try_matches(url).unwrap_or(false)
    }

    /// [`RuleRef::matches`], saying why a URL cannot be checked.
    pub fn try_matches(&self, url: &str) -> Result<bool, TargetError> {
        let shape = Shape::of_body(self.body, self.anchored);
        target::with_canonical_target(url.as_bytes(), |path| {
            pattern::matches(self.body, shape, path)
        })
    }

    /// An owned copy of the rule, equal to the [`Rule`] the full parse made of its line.
    pub fn to_rule(&self) -> Rule {
        let mut canonical = Vec::with_capacity(self.body.len() + 1);
        canonical.extend_from_slice(self.body);
        if self.anchored {
            canonical.push(b'$');
        }
        Rule::from_canonical(self.line, self.kind, self.pattern.into(), canonical)
    }
}

impl fmt::Display for RuleRef<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "line {}: {}: {}", self.line, self.kind, self.pattern)
    }
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
    /// Set when the URL could not be checked (a URL with no authority, see [`TargetError`]):
    /// the decision is then "not allowed", since no robots.txt governs that URL. See
    /// [`crate::AgentRules::try_check`] to get the refusal as an error instead.
    pub refused: Option<TargetError>,
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
            refused: self.refused,
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
    /// Why the URL could not be checked, if it could not (absent in stored explanations made
    /// before this field existed).
    #[cfg_attr(
        feature = "serde",
        serde(default, skip_serializing_if = "Option::is_none")
    )]
    pub refused: Option<TargetError>,
}

impl fmt::Display for Explanation {
    /// `line 3: Disallow: /search, group JittyBot`, or why no rule decided.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if let Some(refused) = self.refused {
            return write!(f, "not checked: {refused}");
        }
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
