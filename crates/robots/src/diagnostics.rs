//! What the parser ignored or found suspicious, line by line.

use std::fmt;

use crate::text::SourceText;

/// One thing the parser ignored, repaired or found suspicious.
#[derive(Debug, Clone, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
pub struct Diagnostic {
    /// 1-based line number (line 1 for file-wide findings such as a BOM).
    pub line: usize,
    /// What was found, in machine-readable form.
    #[cfg_attr(feature = "serde", serde(flatten))]
    pub kind: DiagnosticKind,
    /// The line as written (lossily decoded, cut to [`Diagnostic::MAX_TEXT_CHARS`] characters):
    /// a piece of the parse's text, which reads as a `str`.
    pub text: SourceText,
}

impl Diagnostic {
    /// The longest excerpt of a line kept in [`Diagnostic::text`].
    pub const MAX_TEXT_CHARS: usize = 200;

    pub(crate) fn new(line: usize, kind: DiagnosticKind, text: SourceText) -> Diagnostic {
        Diagnostic { line, kind, text }
    }

    /// The excerpt kept of a line of more than [`Diagnostic::MAX_TEXT_CHARS`] bytes (shorter
    /// lines are kept whole: that many bytes are at most that many characters).
    pub(crate) fn excerpt(raw: &[u8]) -> String {
        String::from_utf8_lossy(raw)
            .chars()
            .take(Self::MAX_TEXT_CHARS)
            .collect()
    }
}

impl fmt::Display for Diagnostic {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "line {}: {}", self.line, self.kind)?;
        if !self.text.is_empty() {
            write!(f, ": {}", self.text)?;
        }
        Ok(())
    }
}

/// The kinds of [`Diagnostic`]. Each says what the parser did about it.
#[derive(Debug, Clone, PartialEq)]
#[cfg_attr(
    feature = "serde",
    derive(serde::Serialize),
    serde(tag = "kind", rename_all = "snake_case")
)]
#[non_exhaustive]
pub enum DiagnosticKind {
    /// A UTF-8 byte order mark opened the file; it was skipped.
    ByteOrderMark,
    /// The file opened with the first one or two bytes of a UTF-8 byte order mark (`EF` or
    /// `EF BB`), not followed by the rest of a character; they were skipped like a whole mark,
    /// so the first line still counts.
    PartialByteOrderMark,
    /// The line is not valid UTF-8; it was still read byte by byte.
    InvalidUtf8,
    /// The file is longer than [`crate::MAX_ROBOTS_TXT_BYTES`]; the rest was not read.
    TruncatedAtLimit {
        /// How many bytes were not read.
        ignored_bytes: usize,
    },
    /// The line was cut by the size limit and dropped.
    LineCutByLimit,
    /// A non-blank line without a colon; ignored.
    MissingColon,
    /// A field other than user-agent, allow, disallow, sitemap and crawl-delay; ignored.
    UnknownField {
        /// The field name as written.
        field: SourceText,
    },
    /// An allow or disallow line before any user-agent line; ignored.
    RuleOutsideGroup,
    /// A crawl-delay line before any user-agent line; ignored.
    CrawlDelayOutsideGroup,
    /// A user-agent line with an empty value: it names no crawler.
    EmptyUserAgent,
    /// A user-agent value with no product token (it must start with a letter, `_` or `-`):
    /// it names no crawler.
    InvalidUserAgent,
    /// A user-agent value that starts with `*` but goes on to name something (`*OrkashBot*`,
    /// `*libwww*`). It is not the `*` group (RFC 9309 §2.2.1: only `*` is; so also Google) and
    /// not a product token, so it names no crawler. Parsers that only look at the first
    /// character read it as `*`, and would apply its rules to every crawler.
    StarredUserAgent {
        /// The first token-like run after the `*` (`OrkashBot`).
        name: SourceText,
    },
    /// A user-agent line that opens a new group only because a crawl-delay stands between it
    /// and the user-agent lines above (this line). JittyBot closes the list of user-agents at a
    /// crawl-delay (the interpretation page's "treat media differently" example); RFC 9309
    /// parsers and Google ignore the crawl-delay line and add this user-agent to the group above,
    /// which then also gets the rules below.
    AgentListSplitByCrawlDelay {
        /// The first user-agent line of the group above, which other parsers would extend.
        group_line: usize,
        /// The crawl-delay line that closed its list of user-agents.
        crawl_delay_line: usize,
    },
    /// A user-agent value with text after its product token, which was ignored
    /// (`JittyBot/1.0` means `JittyBot`; a full browser-style string means its first word).
    UserAgentNotAToken {
        /// The product token the value was reduced to.
        token: SourceText,
    },
    /// An allow or disallow line with an empty value; it adds no rule (it still ends the
    /// list of user-agents above it).
    EmptyRule,
    /// A rule path that starts with neither `/` nor `*`: it can never match.
    PatternNotAPath,
    /// A `$` that is not the last character of a rule: it is a literal `$`, not an anchor.
    DollarInPattern,
    /// A rule path with raw non-ASCII characters; they were percent-encoded for matching.
    NonAsciiPattern,
    /// A crawl-delay value that is not a non-negative decimal number of seconds; ignored.
    InvalidCrawlDelay,
    /// A second crawl-delay in one group; the largest value is used.
    DuplicateCrawlDelay,
    /// A sitemap value that is not an absolute `http`/`https` URL; ignored.
    SitemapNotAbsolute,
}

impl DiagnosticKind {
    /// The message of a kind that carries no value.
    fn fixed_message(&self) -> Option<&'static str> {
        Some(match self {
            DiagnosticKind::ByteOrderMark => "byte order mark skipped",
            DiagnosticKind::PartialByteOrderMark => "incomplete byte order mark skipped",
            DiagnosticKind::InvalidUtf8 => "invalid UTF-8 (read byte-wise)",
            DiagnosticKind::LineCutByLimit => "line cut by the size limit; dropped",
            DiagnosticKind::MissingColon => "no colon; line ignored",
            DiagnosticKind::RuleOutsideGroup => "rule before any user-agent line; ignored",
            DiagnosticKind::CrawlDelayOutsideGroup => {
                "crawl-delay before any user-agent line; ignored"
            }
            DiagnosticKind::EmptyUserAgent => "empty user-agent names no crawler",
            DiagnosticKind::InvalidUserAgent => "user-agent has no product token; names no crawler",
            DiagnosticKind::EmptyRule => "rule with an empty path adds no rule",
            DiagnosticKind::PatternNotAPath => {
                "path starts with neither '/' nor '*'; never matches"
            }
            DiagnosticKind::DollarInPattern => "'$' before the end of a path is a literal '$'",
            DiagnosticKind::NonAsciiPattern => "raw non-ASCII path; percent-encoded for matching",
            DiagnosticKind::InvalidCrawlDelay => "crawl-delay is not a number of seconds; ignored",
            DiagnosticKind::DuplicateCrawlDelay => {
                "more than one crawl-delay in the group; the largest applies"
            }
            DiagnosticKind::SitemapNotAbsolute => "sitemap is not an absolute http(s) URL; ignored",
            DiagnosticKind::TruncatedAtLimit { .. }
            | DiagnosticKind::UnknownField { .. }
            | DiagnosticKind::StarredUserAgent { .. }
            | DiagnosticKind::AgentListSplitByCrawlDelay { .. }
            | DiagnosticKind::UserAgentNotAToken { .. } => return None,
        })
    }
}

impl fmt::Display for DiagnosticKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if let Some(message) = self.fixed_message() {
            return f.write_str(message);
        }
        match self {
            DiagnosticKind::TruncatedAtLimit { ignored_bytes } => write!(
                f,
                "file exceeds {} bytes; {ignored_bytes} bytes not read",
                crate::MAX_ROBOTS_TXT_BYTES
            ),
            DiagnosticKind::UnknownField { field } => {
                write!(f, "unknown field {field:?}; line ignored")
            }
            DiagnosticKind::StarredUserAgent { name } => write!(
                f,
                "user-agent starts with '*' but names {name:?}: not the '*' group, names no \
                 crawler (parsers that read only the '*' apply it to every crawler)"
            ),
            DiagnosticKind::AgentListSplitByCrawlDelay {
                group_line,
                crawl_delay_line,
            } => write!(
                f,
                "user-agent after the crawl-delay of line {crawl_delay_line} opens a new group; \
                 RFC 9309 parsers and Google add it to the group of line {group_line}"
            ),
            DiagnosticKind::UserAgentNotAToken { token } => write!(
                f,
                "user-agent is not a bare product token; read as {token:?}"
            ),
            _ => Ok(()),
        }
    }
}
