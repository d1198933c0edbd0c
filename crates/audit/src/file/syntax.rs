//! Syntax: lines crawlers ignore or read differently.

use robots::{DiagnosticKind, RobotsTxt};

use crate::collect::Findings;
use crate::finding::{CheckId, Evidence, Finding};
use crate::source::Source;

/// Lines longer than this many bytes are cut by Google's parser (2,083 × 8).
pub const LONG_LINE_BYTES: usize = 16_664;

/// Fields Google reads although RFC 9309 parsers ignore them (common misspellings).
const GOOGLE_ACCEPTED_TYPOS: &[(&str, &str)] = &[
    ("dissallow", "Disallow"),
    ("dissalow", "Disallow"),
    ("disalow", "Disallow"),
    ("diasllow", "Disallow"),
    ("disallaw", "Disallow"),
    ("useragent", "User-agent"),
    ("user agent", "User-agent"),
    ("site-map", "Sitemap"),
];

/// Fields some crawlers read as extensions.
const EXTENSION_FIELDS: &[&str] = &[
    "host",
    "clean-param",
    "request-rate",
    "visit-time",
    "content-signal",
    "content-usage",
    "nofollow",
    "noarchive",
    "ai-usage",
];

const KNOWN_FIELDS: &[&str] = &["User-agent", "Allow", "Disallow", "Sitemap", "Crawl-delay"];

/// How an unknown field is read.
enum FieldClass {
    Noindex,
    Typo {
        meant: &'static str,
        google_reads_it: bool,
    },
    Extension,
    Unknown,
}

fn classify_field(field: &str) -> FieldClass {
    let lower = field.trim().to_ascii_lowercase();
    if lower == "noindex" {
        return FieldClass::Noindex;
    }
    if let Some((_, meant)) = GOOGLE_ACCEPTED_TYPOS
        .iter()
        .find(|(typo, _)| *typo == lower)
    {
        return FieldClass::Typo {
            meant,
            google_reads_it: true,
        };
    }
    if EXTENSION_FIELDS.contains(&lower.as_str()) {
        return FieldClass::Extension;
    }
    let squashed: String = lower.chars().filter(|c| c.is_ascii_alphabetic()).collect();
    for known in KNOWN_FIELDS {
        let known_lower = known.to_ascii_lowercase();
        let known_squashed: String = known_lower
            .chars()
            .filter(|c| c.is_ascii_alphabetic())
            .collect();
        let limit = if known_squashed.len() >= 7 { 2 } else { 1 };
        if squashed == known_squashed || edit_distance(&squashed, &known_squashed) <= limit {
            return FieldClass::Typo {
                meant: known,
                google_reads_it: false,
            };
        }
    }
    FieldClass::Unknown
}

/// Levenshtein distance, for short field names only.
fn edit_distance(a: &str, b: &str) -> usize {
    let a: Vec<char> = a.chars().take(64).collect();
    let b: Vec<char> = b.chars().take(64).collect();
    let mut previous: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.iter().enumerate() {
        let mut current = vec![i + 1; b.len() + 1];
        for (j, cb) in b.iter().enumerate() {
            let substitution = previous[j] + usize::from(ca != cb);
            current[j + 1] = substitution.min(previous[j + 1] + 1).min(current[j] + 1);
        }
        previous = current;
    }
    previous[b.len()]
}

pub(super) fn syntax(robots: &RobotsTxt, source: &Source<'_>, findings: &mut Findings) {
    for diagnostic in robots.diagnostics() {
        let line = diagnostic.line;
        let evidence = || Evidence::line(line, source.text(line));
        let finding = match &diagnostic.kind {
            DiagnosticKind::ByteOrderMark => Finding::new(
                CheckId::SyntaxBom,
                "the file starts with a UTF-8 byte order mark",
                Evidence {
                    line: Some(1),
                    ..Evidence::default()
                },
            ),
            DiagnosticKind::InvalidUtf8 => Finding::new(
                CheckId::SyntaxInvalidUtf8,
                format!("line {line} is not valid UTF-8"),
                evidence(),
            ),
            DiagnosticKind::TruncatedAtLimit { ignored_bytes } => Finding::new(
                CheckId::FetchTooLarge,
                format!(
                    "robots.txt is {} bytes; the {ignored_bytes} bytes past {} are ignored",
                    robots.bytes_total(),
                    robots::MAX_ROBOTS_TXT_BYTES
                ),
                Evidence {
                    line: Some(line),
                    ..Evidence::default()
                },
            ),
            DiagnosticKind::LineCutByLimit => continue,
            DiagnosticKind::MissingColon => Finding::new(
                CheckId::SyntaxMissingColon,
                format!("line {line} has no colon and is ignored"),
                evidence(),
            ),
            DiagnosticKind::UnknownField { field } => match classify_field(field) {
                FieldClass::Noindex => Finding::new(
                    CheckId::SyntaxNoindex,
                    format!("line {line}: Noindex in robots.txt is ignored by search engines"),
                    evidence(),
                ),
                FieldClass::Typo {
                    meant,
                    google_reads_it: true,
                } => Finding::new(
                    CheckId::SyntaxFieldTypo,
                    format!(
                        "line {line}: \"{field}\" is ignored by RFC 9309 parsers, but Google reads it as {meant}"
                    ),
                    evidence(),
                ),
                FieldClass::Typo { meant, .. } => Finding::new(
                    CheckId::SyntaxFieldTypo,
                    format!("line {line}: \"{field}\" looks like a misspelt {meant}; crawlers ignore it"),
                    evidence(),
                )
                .with_why(format!(
                    "Crawlers, Google included, ignore a field they do not know: this line has no effect, though it was probably meant as {meant}."
                )),
                FieldClass::Extension => Finding::new(
                    CheckId::SyntaxExtensionField,
                    format!("line {line}: non-standard field \"{field}\""),
                    evidence(),
                ),
                FieldClass::Unknown => Finding::new(
                    CheckId::SyntaxUnknownField,
                    format!("line {line}: unknown field \"{}\" is ignored", crate::finding::excerpt(field)),
                    evidence(),
                ),
            },
            DiagnosticKind::RuleOutsideGroup => Finding::new(
                CheckId::SyntaxRuleOutsideGroup,
                format!("line {line}: rule before any User-agent applies to no crawler"),
                evidence(),
            ),
            DiagnosticKind::CrawlDelayOutsideGroup => Finding::new(
                CheckId::SyntaxCrawlDelayOutsideGroup,
                format!("line {line}: Crawl-delay before any User-agent applies to no crawler"),
                evidence(),
            ),
            DiagnosticKind::EmptyUserAgent => Finding::new(
                CheckId::SyntaxEmptyUserAgent,
                format!("line {line}: empty User-agent names no crawler"),
                evidence(),
            ),
            DiagnosticKind::InvalidUserAgent => Finding::new(
                CheckId::SyntaxInvalidUserAgent,
                format!("line {line}: User-agent value has no product token and matches no crawler"),
                evidence(),
            ),
            DiagnosticKind::UserAgentNotAToken { token } => {
                let value = user_agent_value(source, line);
                let full_string = value.contains('(')
                    || value.contains(';')
                    || value.to_ascii_lowercase().starts_with("mozilla/");
                if full_string {
                    Finding::new(
                        CheckId::SyntaxUserAgentFullString,
                        format!("line {line}: a full User-Agent string, read as \"{token}\""),
                        evidence(),
                    )
                } else {
                    Finding::new(
                        CheckId::SyntaxUserAgentNotAToken,
                        format!("line {line}: User-agent \"{}\" is read as \"{token}\"", crate::finding::excerpt(&value)),
                        evidence(),
                    )
                }
            }
            DiagnosticKind::EmptyRule => {
                let text = source.text(line);
                if text.to_ascii_lowercase().starts_with("allow") {
                    Finding::new(
                        CheckId::SyntaxEmptyAllow,
                        format!("line {line}: Allow with no path adds no rule"),
                        evidence(),
                    )
                } else {
                    Finding::new(
                        CheckId::SyntaxEmptyDisallow,
                        format!("line {line}: empty Disallow allows everything"),
                        evidence(),
                    )
                }
            }
            DiagnosticKind::PatternNotAPath => {
                let text = source.text(line);
                let lower = text.to_ascii_lowercase();
                let title = if lower.contains("http://") || lower.contains("https://") {
                    format!("line {line}: the rule is a full URL; rules take a path starting with /")
                } else {
                    format!("line {line}: the path starts with neither / nor * and never matches")
                };
                Finding::new(CheckId::SyntaxPatternNotAPath, title, evidence())
            }
            DiagnosticKind::DollarInPattern => Finding::new(
                CheckId::SyntaxDollarInPattern,
                format!("line {line}: $ before the end of the path is a literal dollar sign"),
                evidence(),
            ),
            DiagnosticKind::NonAsciiPattern => Finding::new(
                CheckId::SyntaxNonAscii,
                format!("line {line}: unencoded non-ASCII path"),
                evidence(),
            ),
            DiagnosticKind::InvalidCrawlDelay => Finding::new(
                CheckId::SyntaxInvalidCrawlDelay,
                format!("line {line}: Crawl-delay is not a number of seconds and is ignored"),
                evidence(),
            ),
            DiagnosticKind::DuplicateCrawlDelay => Finding::new(
                CheckId::SyntaxDuplicateCrawlDelay,
                format!("line {line}: a second Crawl-delay in the same group"),
                evidence(),
            ),
            DiagnosticKind::SitemapNotAbsolute => Finding::new(
                CheckId::SitemapInvalidUrl,
                format!("line {line}: the sitemap URL is not absolute and is ignored"),
                evidence(),
            ),
            _ => continue,
        };
        findings.push(finding);
    }
    for group in robots.groups() {
        for rule in &group.rules {
            if let Some(what) = regex_syntax(&rule.pattern) {
                findings.push(Finding::new(
                    CheckId::SyntaxRegex,
                    format!(
                        "line {}: {what} in \"{}\" is not a wildcard",
                        rule.line,
                        crate::finding::excerpt(&rule.pattern)
                    ),
                    Evidence::line(rule.line, source.text(rule.line)),
                ));
            }
        }
    }
}

fn user_agent_value(source: &Source<'_>, line: usize) -> String {
    let text = source.text(line);
    let text = text.split('#').next().unwrap_or_default();
    text.split_once(':')
        .map(|(_, value)| value.trim().to_owned())
        .unwrap_or_default()
}

/// Names the regular-expression syntax a pattern seems to use, if any.
fn regex_syntax(pattern: &str) -> Option<&'static str> {
    if pattern.starts_with('^') {
        return Some("a leading ^");
    }
    if ["\\.", "\\?", "\\d", "\\w", "\\s", "\\/"]
        .iter()
        .any(|escape| pattern.contains(escape))
    {
        return Some("a backslash escape");
    }
    if pattern.contains(".*") && !pattern.contains("*.*") && pattern.contains("/.*") {
        return Some("\".*\"");
    }
    if pattern.contains(".+") {
        return Some("\".+\"");
    }
    if pattern.contains('(') && pattern.contains('|') && pattern.contains(')') {
        return Some("an alternation (a|b)");
    }
    if let (Some(open), Some(close)) = (pattern.find('['), pattern.rfind(']')) {
        if open < close && pattern[open..close].contains('-') {
            return Some("a character class [...]");
        }
    }
    None
}

pub(super) fn long_lines(source: &Source<'_>, findings: &mut Findings) {
    for (line, raw) in source.iter() {
        if raw.len() > LONG_LINE_BYTES {
            findings.push(Finding::new(
                CheckId::SyntaxLongLine,
                format!(
                    "line {line} is {} bytes long; Google cuts it at {LONG_LINE_BYTES}",
                    raw.len()
                ),
                Evidence::line(line, String::from_utf8_lossy(&raw[..raw.len().min(200)])),
            ));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn typos_are_told_apart() {
        assert!(matches!(
            classify_field("Dissallow"),
            FieldClass::Typo {
                meant: "Disallow",
                google_reads_it: true
            }
        ));
        assert!(matches!(
            classify_field("Disalow"),
            FieldClass::Typo {
                google_reads_it: true,
                ..
            }
        ));
        assert!(matches!(
            classify_field("Dissallw"),
            FieldClass::Typo {
                meant: "Disallow",
                google_reads_it: false
            }
        ));
        assert!(matches!(
            classify_field("User_agent"),
            FieldClass::Typo {
                meant: "User-agent",
                google_reads_it: false
            }
        ));
        assert!(matches!(
            classify_field("Alow"),
            FieldClass::Typo { meant: "Allow", .. }
        ));
        assert!(matches!(
            classify_field("Sitemaps"),
            FieldClass::Typo {
                meant: "Sitemap",
                ..
            }
        ));
        assert!(matches!(classify_field("Host"), FieldClass::Extension));
        assert!(matches!(classify_field("noindex"), FieldClass::Noindex));
        assert!(matches!(classify_field("Foo"), FieldClass::Unknown));
    }

    #[test]
    fn regex_syntax_is_recognised() {
        assert!(regex_syntax("^/admin").is_some());
        assert!(regex_syntax("/.*\\.php").is_some());
        assert!(regex_syntax("/(a|b)/").is_some());
        assert!(regex_syntax("/[a-z]+").is_some());
        assert!(regex_syntax("/*.php$").is_none());
        assert!(regex_syntax("/search?q=*").is_none());
        assert!(regex_syntax("/*.*").is_none());
    }

    #[test]
    fn edit_distance_works() {
        assert_eq!(edit_distance("disallow", "disalow"), 1);
        assert_eq!(edit_distance("", "abc"), 3);
        assert_eq!(edit_distance("kitten", "sitting"), 3);
    }
}
