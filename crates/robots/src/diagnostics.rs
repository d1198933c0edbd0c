//! What the parser ignored or found suspicious, line by line.

use std::fmt;

/// One thing the parser ignored, repaired or found suspicious.
#[derive(Debug, Clone, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
pub struct Diagnostic {
    /// 1-based line number (line 1 for file-wide findings such as a BOM).
    pub line: usize,
    /// What was found, in machine-readable form.
    #[cfg_attr(feature = "serde", serde(flatten))]
    pub kind: DiagnosticKind,
    /// The line as written (lossily decoded, cut to [`Diagnostic::MAX_TEXT_CHARS`] characters).
    pub text: String,
}

impl Diagnostic {
    /// The longest excerpt of a line kept in [`Diagnostic::text`].
    pub const MAX_TEXT_CHARS: usize = 200;

    pub(crate) fn new(line: usize, kind: DiagnosticKind, raw: &[u8]) -> Diagnostic {
        let text: String = String::from_utf8_lossy(raw)
            .chars()
            .take(Self::MAX_TEXT_CHARS)
            .collect();
        Diagnostic { line, kind, text }
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
        field: String,
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
    /// A user-agent value with text after its product token, which was ignored
    /// (`JittyBot/1.0` means `JittyBot`; a full browser-style string means its first word).
    UserAgentNotAToken {
        /// The product token the value was reduced to.
        token: String,
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

impl fmt::Display for DiagnosticKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            DiagnosticKind::ByteOrderMark => f.write_str("byte order mark skipped"),
            DiagnosticKind::InvalidUtf8 => f.write_str("invalid UTF-8 (read byte-wise)"),
            DiagnosticKind::TruncatedAtLimit { ignored_bytes } => write!(
                f,
                "file exceeds {} bytes; {ignored_bytes} bytes not read",
                crate::MAX_ROBOTS_TXT_BYTES
            ),
            DiagnosticKind::LineCutByLimit => f.write_str("line cut by the size limit; dropped"),
            DiagnosticKind::MissingColon => f.write_str("no colon; line ignored"),
            DiagnosticKind::UnknownField { field } => {
                write!(f, "unknown field {field:?}; line ignored")
            }
            DiagnosticKind::RuleOutsideGroup => {
                f.write_str("rule before any user-agent line; ignored")
            }
            DiagnosticKind::CrawlDelayOutsideGroup => {
                f.write_str("crawl-delay before any user-agent line; ignored")
            }
            DiagnosticKind::EmptyUserAgent => f.write_str("empty user-agent names no crawler"),
            DiagnosticKind::InvalidUserAgent => {
                f.write_str("user-agent has no product token; names no crawler")
            }
            DiagnosticKind::UserAgentNotAToken { token } => {
                write!(
                    f,
                    "user-agent is not a bare product token; read as {token:?}"
                )
            }
            DiagnosticKind::EmptyRule => f.write_str("rule with an empty path adds no rule"),
            DiagnosticKind::PatternNotAPath => {
                f.write_str("path starts with neither '/' nor '*'; never matches")
            }
            DiagnosticKind::DollarInPattern => {
                f.write_str("'$' before the end of a path is a literal '$'")
            }
            DiagnosticKind::NonAsciiPattern => {
                f.write_str("raw non-ASCII path; percent-encoded for matching")
            }
            DiagnosticKind::InvalidCrawlDelay => {
                f.write_str("crawl-delay is not a number of seconds; ignored")
            }
            DiagnosticKind::DuplicateCrawlDelay => {
                f.write_str("more than one crawl-delay in the group; the largest applies")
            }
            DiagnosticKind::SitemapNotAbsolute => {
                f.write_str("sitemap is not an absolute http(s) URL; ignored")
            }
        }
    }
}
