//! Syntax: lines crawlers ignore or read differently.

use robots::{Diagnostic, DiagnosticKind, RobotsTxt, RuleKind};

use crate::catalogue::CheckId;
use crate::collect::Findings;
use crate::finding::{Evidence, Finding};

use crate::cost::Budget;

use super::readings::{agent_list_split, empty_rule_kind, user_agent_at, Readings};
use super::sitemaps::invalid_sitemap;
use super::{line_text, FileContext};

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
        // The distance is at least the difference in length: most names need no table.
        let close_in_length = squashed.len().abs_diff(known_squashed.len()) <= limit;
        if squashed == known_squashed
            || (close_in_length && edit_distance(&squashed, &known_squashed) <= limit)
        {
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

/// How many lines are checked between two looks at the CPU clock.
const CLOCK_EVERY_LINES: usize = 1024;

pub(super) fn syntax(
    robots: &RobotsTxt,
    context: &FileContext<'_>,
    findings: &mut Findings,
    budget: &mut Budget,
) {
    let mut readings = Readings::default();
    for (count, diagnostic) in robots.diagnostics().iter().enumerate() {
        if count % CLOCK_EVERY_LINES == 0 && budget.out_of_time() {
            return;
        }
        if let Some(finding) = diagnostic_finding(robots, context, diagnostic, &mut readings) {
            findings.push(finding);
        }
    }
    let rules = robots.groups().iter().flat_map(|group| group.rules.iter());
    for (count, rule) in rules.enumerate() {
        if count % CLOCK_EVERY_LINES == 0 && budget.out_of_time() {
            return;
        }
        if let Some(regex) = regex_syntax(&rule.pattern) {
            findings.push(
                Finding::new(
                    CheckId::SyntaxRegex,
                    Evidence::line(rule.line, line_text(robots, rule.line)),
                )
                .with("regex", regex)
                .with("pattern", &rule.pattern),
            );
        }
    }
}

/// The finding a diagnostic of the engine makes, if any.
fn diagnostic_finding(
    robots: &RobotsTxt,
    context: &FileContext<'_>,
    diagnostic: &Diagnostic,
    readings: &mut Readings,
) -> Option<Finding> {
    let line = diagnostic.line;
    let at_line = |id: CheckId| Finding::new(id, Evidence::line(line, line_text(robots, line)));
    Some(match &diagnostic.kind {
        DiagnosticKind::ByteOrderMark => bom(false),
        DiagnosticKind::PartialByteOrderMark => bom(true),
        DiagnosticKind::InvalidUtf8 => at_line(CheckId::SyntaxInvalidUtf8),
        DiagnosticKind::TruncatedAtLimit { ignored_bytes } => {
            too_large(robots, context, line, *ignored_bytes)
        }
        DiagnosticKind::UnknownField { field } => field_finding(field, at_line),
        DiagnosticKind::UserAgentNotAToken { token } => {
            let value = user_agent_at(robots, line).map_or_else(
                || field_value(robots, line),
                |agent| agent.value.to_string(),
            );
            let full_string = value.contains('(')
                || value.contains(';')
                || value.to_ascii_lowercase().starts_with("mozilla/");
            let finding = if full_string {
                at_line(CheckId::SyntaxUserAgentFullString)
            } else {
                at_line(CheckId::SyntaxUserAgentNotAToken).with("value", value)
            };
            finding.with("token", token)
        }
        DiagnosticKind::EmptyRule => match empty_rule_kind(robots, line) {
            Some(RuleKind::Allow) => at_line(CheckId::SyntaxEmptyAllow),
            _ => at_line(CheckId::SyntaxEmptyDisallow),
        },
        DiagnosticKind::StarredUserAgent { name } => {
            readings.starred_user_agent(robots, line, name)
        }
        DiagnosticKind::AgentListSplitByCrawlDelay {
            group_line,
            crawl_delay_line,
        } => agent_list_split(robots, line, *group_line, *crawl_delay_line),
        DiagnosticKind::PatternNotAPath => {
            let lower = line_text(robots, line).to_ascii_lowercase();
            at_line(CheckId::SyntaxPatternNotAPath).with(
                "full_url",
                lower.contains("http://") || lower.contains("https://"),
            )
        }
        DiagnosticKind::SitemapNotAbsolute => invalid_sitemap(
            at_line(CheckId::SitemapInvalidUrl),
            &field_value(robots, line),
        ),
        kind => at_line(simple_check(kind)?),
    })
}

/// A byte order mark opened the file (`partial`: only its first one or two bytes).
fn bom(partial: bool) -> Finding {
    let finding = Finding::new(
        CheckId::SyntaxBom,
        Evidence {
            line: Some(1),
            ..Evidence::default()
        },
    );
    if partial {
        finding.with("partial", true)
    } else {
        finding
    }
}

/// A file longer than the engine reads, reported at the first line not read.
fn too_large(
    robots: &RobotsTxt,
    context: &FileContext<'_>,
    line: usize,
    ignored_bytes: usize,
) -> Finding {
    let finding = Finding::new(
        CheckId::FetchTooLarge,
        Evidence {
            line: Some(line),
            ..Evidence::default()
        },
    )
    .with("limit", robots::MAX_ROBOTS_TXT_BYTES);
    // When the reader stopped at the limit, the file's size is unknown.
    if context.cut_by_reader {
        finding
    } else {
        finding
            .with("bytes", robots.bytes_total())
            .with("ignored", ignored_bytes)
    }
}

/// The check of a diagnostic that needs no parameter.
fn simple_check(kind: &DiagnosticKind) -> Option<CheckId> {
    Some(match kind {
        DiagnosticKind::MissingColon => CheckId::SyntaxMissingColon,
        DiagnosticKind::RuleOutsideGroup => CheckId::SyntaxRuleOutsideGroup,
        DiagnosticKind::CrawlDelayOutsideGroup => CheckId::SyntaxCrawlDelayOutsideGroup,
        DiagnosticKind::EmptyUserAgent => CheckId::SyntaxEmptyUserAgent,
        DiagnosticKind::InvalidUserAgent => CheckId::SyntaxInvalidUserAgent,
        DiagnosticKind::DollarInPattern => CheckId::SyntaxDollarInPattern,
        DiagnosticKind::NonAsciiPattern => CheckId::SyntaxNonAscii,
        DiagnosticKind::InvalidCrawlDelay => CheckId::SyntaxInvalidCrawlDelay,
        DiagnosticKind::DuplicateCrawlDelay => CheckId::SyntaxDuplicateCrawlDelay,
        // A line cut by the size limit is part of the too-large finding.
        _ => return None,
    })
}

/// The finding an unknown field makes: a typo, Noindex, an extension or unknown.
fn field_finding(field: &str, at_line: impl Fn(CheckId) -> Finding) -> Finding {
    match classify_field(field) {
        FieldClass::Noindex => at_line(CheckId::SyntaxNoindex),
        FieldClass::Typo {
            meant,
            google_reads_it,
        } => at_line(CheckId::SyntaxFieldTypo)
            .with("field", field)
            .with("meant", meant)
            .with("google_reads_it", google_reads_it),
        FieldClass::Extension => at_line(CheckId::SyntaxExtensionField).with("field", field),
        FieldClass::Unknown => at_line(CheckId::SyntaxUnknownField).with("field", field),
    }
}

/// The value of line `line` (after the first colon, before a comment), trimmed.
fn field_value(robots: &RobotsTxt, line: usize) -> String {
    let text = line_text(robots, line);
    let text = text.split('#').next().unwrap_or_default();
    text.split_once(':')
        .map(|(_, value)| value.trim().to_owned())
        .unwrap_or_default()
}

/// Names the regular-expression syntax a pattern seems to use, if any (a key the title
/// renders).
fn regex_syntax(pattern: &str) -> Option<&'static str> {
    if pattern.starts_with('^') {
        return Some("caret");
    }
    if ["\\.", "\\?", "\\d", "\\w", "\\s", "\\/"]
        .iter()
        .any(|escape| pattern.contains(escape))
    {
        return Some("backslash");
    }
    if pattern.contains(".*") && !pattern.contains("*.*") && pattern.contains("/.*") {
        return Some("dot-star");
    }
    if pattern.contains(".+") {
        return Some("dot-plus");
    }
    if pattern.contains('(') && pattern.contains('|') && pattern.contains(')') {
        return Some("alternation");
    }
    if let (Some(open), Some(close)) = (pattern.find('['), pattern.rfind(']')) {
        if open < close && pattern[open..close].contains('-') {
            return Some("class");
        }
    }
    None
}

pub(super) fn long_lines(robots: &RobotsTxt, findings: &mut Findings) {
    for (line, raw) in robots.lines() {
        if raw.len() > LONG_LINE_BYTES {
            findings.push(
                Finding::new(
                    CheckId::SyntaxLongLine,
                    Evidence::line(line, String::from_utf8_lossy(&raw[..raw.len().min(200)])),
                )
                .with("bytes", raw.len())
                .with("limit", LONG_LINE_BYTES),
            );
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
