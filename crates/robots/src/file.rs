//! A whole parsed robots.txt file: groups, sitemaps, diagnostics and its numbered lines.

use std::sync::Arc;

use crate::decision::RuleRef;
use crate::diagnostics::Diagnostic;
use crate::rule::{CrawlDelay, EmptyRule, Rule};
use crate::text::SourceText;

/// A whole parsed robots.txt file, made by [`RobotsTxt::parse`].
#[derive(Debug, Clone, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
pub struct RobotsTxt {
    pub(crate) groups: Vec<Group>,
    pub(crate) sitemaps: Vec<Sitemap>,
    pub(crate) diagnostics: Vec<Diagnostic>,
    pub(crate) lines: usize,
    pub(crate) bytes_read: usize,
    pub(crate) bytes_total: usize,
    /// The bytes that were parsed: after any byte order mark, within the size limit.
    #[cfg_attr(feature = "serde", serde(skip))]
    pub(crate) text: Text,
    /// Where each line starts in `text`, line 1 first.
    #[cfg_attr(feature = "serde", serde(skip))]
    pub(crate) line_starts: Vec<u32>,
}

impl RobotsTxt {
    /// The groups in file order (not merged).
    pub fn groups(&self) -> &[Group] {
        &self.groups
    }

    /// The absolute sitemap URLs, in file order.
    pub fn sitemaps(&self) -> &[Sitemap] {
        &self.sitemaps
    }

    /// Everything ignored or suspicious, by line.
    pub fn diagnostics(&self) -> &[Diagnostic] {
        &self.diagnostics
    }

    /// How many lines were read.
    pub fn line_count(&self) -> usize {
        self.lines
    }

    /// How many bytes of the input were read (at most [`crate::MAX_ROBOTS_TXT_BYTES`]).
    pub fn bytes_read(&self) -> usize {
        self.bytes_read
    }

    /// The size of the input.
    pub fn bytes_total(&self) -> usize {
        self.bytes_total
    }

    /// The raw bytes of 1-based line `number`, without its line terminator, exactly as the
    /// engine numbers lines everywhere (diagnostics, rules, decisions): a byte order mark
    /// (whole or cut short) is not part of line 1; CR, LF and CRLF each end a line; nothing
    /// beyond [`crate::MAX_ROBOTS_TXT_BYTES`] is a line, nor a line the limit cut. `None` past
    /// the last line and for 0.
    pub fn line(&self, number: usize) -> Option<&[u8]> {
        let index = number.checked_sub(1)?;
        let start = *self.line_starts.get(index)? as usize;
        let text = self.text.bytes();
        let end = self
            .line_starts
            .get(index + 1)
            .map_or(text.len(), |next| *next as usize);
        let line = text.get(start..end)?;
        // A line never contains CR or LF, so what ends it is its terminator.
        let line = line.strip_suffix(b"\n").unwrap_or(line);
        Some(line.strip_suffix(b"\r").unwrap_or(line))
    }

    /// Every line with its 1-based number (see [`RobotsTxt::line`]).
    pub fn lines(&self) -> impl ExactSizeIterator<Item = (usize, &[u8])> + '_ {
        (0..self.line_starts.len()).map(|index| {
            let number = index + 1;
            (number, self.line(number).unwrap_or_default())
        })
    }

    /// The rule the full parse made of line `line`, if that line is a rule of some group.
    pub fn rule_at(&self, line: usize) -> Option<&Rule> {
        // Groups are in file order and each group's rules too, so both searches are binary.
        let after = self.groups.partition_point(|group| group.line <= line);
        let group = self.groups.get(after.checked_sub(1)?)?;
        let rules = &group.rules;
        let at = rules.binary_search_by_key(&line, |rule| rule.line).ok()?;
        rules.get(at)
    }

    /// The [`Rule`] behind a rule of [`RobotsTxt::rules_for`]: the same line, kind and
    /// pattern, with what the full parse knows besides.
    pub fn rule_of(&self, rule: &RuleRef<'_>) -> Option<&Rule> {
        self.rule_at(rule.line)
            .filter(|found| found.kind == rule.kind && found.pattern == rule.pattern)
    }
}

/// The text a full parse read.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Text {
    /// Valid UTF-8 (nearly every file): shared with the [`SourceText`] pieces of the parse.
    Shared(Arc<str>),
    /// Not valid UTF-8: the bytes as they are (each piece of the parse owns its lossy text).
    Raw(Box<[u8]>),
}

impl Text {
    fn bytes(&self) -> &[u8] {
        match self {
            Text::Shared(text) => text.as_bytes(),
            Text::Raw(bytes) => bytes,
        }
    }
}

/// One group: user-agent lines and the rules after them.
#[derive(Debug, Clone, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
pub struct Group {
    /// Line of the group's first user-agent line.
    pub line: usize,
    /// The user-agent lines naming this group.
    pub user_agents: Vec<UserAgent>,
    /// Allow and disallow rules in file order (empty and non-path values are left out).
    pub rules: Vec<Rule>,
    /// Allow and disallow lines with an empty value, in file order: they add no rule, but
    /// `Disallow:` is how many files say "everything allowed".
    pub empty_rules: Vec<EmptyRule>,
    /// The group's crawl-delay (the largest if several were given).
    pub crawl_delay: Option<CrawlDelay>,
}

/// One user-agent line.
#[derive(Debug, Clone, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
pub struct UserAgent {
    /// 1-based line number.
    pub line: usize,
    /// The value as written (a piece of the parse's text, which reads as a `str`).
    pub value: SourceText,
    /// What the value names.
    pub product: UserAgentProduct,
}

/// What a user-agent line names.
#[derive(Debug, Clone, PartialEq, Eq)]
#[cfg_attr(
    feature = "serde",
    derive(serde::Serialize),
    serde(tag = "type", content = "token", rename_all = "snake_case")
)]
pub enum UserAgentProduct {
    /// `*` (alone, or followed only by characters that cannot be part of a token: `*;`).
    Global,
    /// A product token (the leading run of `[A-Za-z_-]`), as written.
    Token(SourceText),
    /// Nothing: the value was empty, had no product token, or was a `*` followed by a name
    /// (`*libwww*`, see [`crate::DiagnosticKind::StarredUserAgent`]).
    Nothing,
}

/// A `Sitemap:` line with an absolute URL.
#[derive(Debug, Clone, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
pub struct Sitemap {
    /// 1-based line number.
    pub line: usize,
    /// The URL as written.
    pub url: String,
}
