//! Rules and crawl-delays as written in the file.

use std::fmt;
use std::time::Duration;

use crate::canon::{self, Side};
use crate::pattern::{self, Shape};
use crate::target::{self, TargetError};
use crate::text::SourceText;

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
    /// The path pattern as written (comment and surrounding whitespace removed): a piece of
    /// the parse's text, which reads as a `str`.
    pub pattern: SourceText,
    /// The canonical pattern without its anchor, when it differs from `pattern` (most
    /// patterns are written canonically, and then `pattern` serves, saving an allocation).
    #[cfg_attr(feature = "serde", serde(skip))]
    canonical_body: Option<Box<[u8]>>,
    #[cfg_attr(feature = "serde", serde(skip))]
    shape: Shape,
}

impl Rule {
    /// Compiles a rule value that starts with `/` or `*`; `pattern` is the value as text.
    pub(crate) fn new(line: usize, kind: RuleKind, value: &[u8], pattern: SourceText) -> Rule {
        if canon::is_canonical(value, Side::Pattern) {
            let (shape, _) = Shape::of(value);
            return Rule {
                line,
                kind,
                pattern,
                canonical_body: None,
                shape,
            };
        }
        let mut canonical = Vec::with_capacity(value.len() + 8);
        canon::canonicalize_into(value, Side::Pattern, &mut canonical);
        Rule::from_canonical(line, kind, pattern, canonical)
    }

    /// A rule from its pattern as written and its canonical pattern (anchor included).
    pub(crate) fn from_canonical(
        line: usize,
        kind: RuleKind,
        pattern: SourceText,
        mut canonical: Vec<u8>,
    ) -> Rule {
        let (shape, body_len) = Shape::of(&canonical);
        let canonical_body = (canonical != pattern.as_bytes()).then(|| {
            canonical.truncate(body_len);
            canonical.into_boxed_slice()
        });
        Rule {
            line,
            kind,
            pattern,
            canonical_body,
            shape,
        }
    }

    /// Whether the pattern was written in canonical form (and so is ASCII, with no literal
    /// `$`).
    pub(crate) fn written_canonically(&self) -> bool {
        self.canonical_body.is_none()
    }

    /// The canonical pattern without its anchor.
    pub(crate) fn body(&self) -> &[u8] {
        match &self.canonical_body {
            Some(body) => body,
            None => {
                let pattern = self.pattern.as_bytes();
                let anchor = usize::from(self.shape.anchored);
                pattern.get(..pattern.len() - anchor).unwrap_or_default()
            }
        }
    }

    /// Whether the pattern ends in the `$` anchor.
    pub(crate) fn anchored(&self) -> bool {
        self.shape.anchored
    }

    /// The pattern in the canonical percent-encoded form it is matched in.
    pub fn canonical_pattern(&self) -> String {
        canonical_text(self.body(), self.shape.anchored)
    }

    /// The rule's specificity: the length of its canonical pattern.
    pub fn specificity(&self) -> usize {
        self.shape.specificity as usize
    }

    /// Whether this rule matches `url` (absolute URL or path), regardless of other rules.
    /// A URL that cannot be checked (see [`TargetError`]) matches nothing.
    pub fn matches(&self, url: &str) -> bool {
        self.try_matches(url).unwrap_or(false)
    }

    /// [`Rule::matches`], saying why a URL cannot be checked.
    pub fn try_matches(&self, url: &str) -> Result<bool, TargetError> {
        target::with_canonical_target(url.as_bytes(), |path| {
            pattern::matches(self.body(), self.shape, path)
        })
    }
}

impl fmt::Display for Rule {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "line {}: {}: {}", self.line, self.kind, self.pattern)
    }
}

/// An allow or disallow line with an empty value: it adds no rule, but it is a rule line (it
/// closes the list of user-agents above it), and `Disallow:` is the usual way to say "allow
/// everything".
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
pub struct EmptyRule {
    /// 1-based line number.
    pub line: usize,
    /// Allow or disallow.
    pub kind: RuleKind,
}

/// Appends the canonical form of a rule value to `out`, copying it as it is when it already
/// is; says whether it already was.
pub(crate) fn push_canonical_pattern(value: &[u8], out: &mut Vec<u8>) -> bool {
    if canon::is_canonical(value, Side::Pattern) {
        out.extend_from_slice(value);
        true
    } else {
        canon::canonicalize_into(value, Side::Pattern, out);
        false
    }
}

/// A canonical pattern as text: its body, then the anchor when it has one.
pub(crate) fn canonical_text(body: &[u8], anchored: bool) -> String {
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

    /// The larger of `current` and `new`: several delays for one crawler mean the largest.
    pub(crate) fn larger(current: Option<CrawlDelay>, new: CrawlDelay) -> CrawlDelay {
        match current {
            Some(current) if current.seconds >= new.seconds => current,
            _ => new,
        }
    }
}
