//! The audit of one robots.txt file: syntax, logic, sitemaps and crawlers. Needs no network.

use std::collections::{BTreeMap, HashMap, HashSet};

use robots::{
    AgentRules, DiagnosticKind, GroupSelection, RobotsTxt, Rule, RuleKind, UserAgentProduct,
};
use serde::{Deserialize, Serialize};
use url::Url;

use crate::crawlers::{self, CrawlerAccess, Purpose, BOT_TOKEN, CRAWLERS};
use crate::finding::{CheckId, Evidence, Finding};
use crate::source::Source;

/// Lines longer than this many bytes are cut by Google's parser (2,083 × 8).
pub const LONG_LINE_BYTES: usize = 16_664;
/// A group with more rules than this is not searched for shadowed or redundant rules (the
/// comparison is quadratic), and at most this many rules of a group are probed for the other
/// logic checks.
pub const MAX_RULES_COMPARED: usize = 1_000;
/// At most this many findings of one check are listed; the rest are only counted.
pub const MAX_FINDINGS_PER_CHECK: usize = 20;
/// At most this many related lines are listed in one finding.
pub const MAX_RELATED_LINES: usize = 10;

/// What the file audit knows besides the file.
#[derive(Debug, Clone, Default)]
pub struct FileContext<'a> {
    /// Where the file was served (`https://host/robots.txt`), when known.
    pub robots_url: Option<&'a Url>,
    /// The analysed page (absolute URL or path), to check against the rules.
    pub page: Option<&'a str>,
}

/// Findings of one check left out of the list because of [`MAX_FINDINGS_PER_CHECK`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Omitted {
    /// The check.
    pub id: CheckId,
    /// How many findings were left out.
    pub count: usize,
}

/// Size and shape of the file.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FileSummary {
    /// Bytes in the file.
    pub bytes: usize,
    /// Bytes read (at most 500 KiB).
    pub bytes_read: usize,
    /// Lines read.
    pub lines: usize,
    /// Groups.
    pub groups: usize,
    /// Allow and disallow rules.
    pub rules: usize,
    /// Declared sitemaps (absolute URLs).
    pub sitemaps: Vec<String>,
}

/// The result of auditing one file.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FileAudit {
    /// The findings, worst first, then by line.
    pub findings: Vec<Finding>,
    /// Findings counted but not listed.
    pub omitted: Vec<Omitted>,
    /// What each notable crawler may fetch.
    pub crawlers: Vec<CrawlerAccess>,
    /// Size and shape of the file.
    pub summary: FileSummary,
}

/// What makes two findings the same: check, line, related lines and URL.
type FindingKey = (CheckId, Option<usize>, Vec<usize>, Option<String>);

/// Collects findings, deduplicating and capping them per check.
#[derive(Default)]
pub(crate) struct Findings {
    list: Vec<Finding>,
    seen: HashSet<FindingKey>,
    counts: BTreeMap<CheckId, usize>,
}

impl Findings {
    pub(crate) fn push(&mut self, finding: Finding) {
        let key = (
            finding.id,
            finding.evidence.line,
            finding.evidence.related_lines.clone(),
            finding.evidence.url.clone(),
        );
        if !self.seen.insert(key) {
            return;
        }
        let count = self.counts.entry(finding.id).or_default();
        *count += 1;
        if *count <= MAX_FINDINGS_PER_CHECK {
            self.list.push(finding);
        }
    }

    pub(crate) fn has(&self, id: CheckId) -> bool {
        self.counts.contains_key(&id)
    }

    pub(crate) fn finish(mut self) -> (Vec<Finding>, Vec<Omitted>) {
        sort_findings(&mut self.list);
        let omitted = self
            .counts
            .iter()
            .filter(|(_, &count)| count > MAX_FINDINGS_PER_CHECK)
            .map(|(&id, &count)| Omitted {
                id,
                count: count - MAX_FINDINGS_PER_CHECK,
            })
            .collect();
        (self.list, omitted)
    }
}

/// Sorts findings worst first, then by line, then by check.
pub fn sort_findings(findings: &mut [Finding]) {
    findings.sort_by(|a, b| {
        a.severity
            .cmp(&b.severity)
            .then_with(|| {
                a.evidence
                    .line
                    .unwrap_or(usize::MAX)
                    .cmp(&b.evidence.line.unwrap_or(usize::MAX))
            })
            .then_with(|| a.id.cmp(&b.id))
    });
}

/// Audits a robots.txt body. Never fails and never panics.
pub fn audit_robots_txt(body: &[u8], context: &FileContext<'_>) -> FileAudit {
    let robots = RobotsTxt::parse(body);
    let mut findings = Findings::default();
    let crawlers = crawlers::table(&robots, context.page);
    audit_parsed(&robots, body, context, &crawlers, &mut findings);
    let (findings, omitted) = findings.finish();
    FileAudit {
        findings,
        omitted,
        crawlers,
        summary: crate::analysis::summary_of(&robots),
    }
}

pub(crate) fn audit_parsed(
    robots: &RobotsTxt,
    body: &[u8],
    context: &FileContext<'_>,
    table: &[CrawlerAccess],
    findings: &mut Findings,
) {
    let source = Source::new(body);
    if body.iter().all(u8::is_ascii_whitespace) {
        findings.push(Finding::new(
            CheckId::FetchEmpty,
            "robots.txt is empty: no rules",
            Evidence::default(),
        ));
    } else if let Some(kind) = looks_like_html(body) {
        let (id, title) = match kind {
            HtmlKind::Challenge => (
                CheckId::FetchChallenge,
                "robots.txt is a bot challenge page, not rules",
            ),
            HtmlKind::Page => (CheckId::FetchHtml, "robots.txt is an HTML page, not rules"),
        };
        findings.push(Finding::new(id, title, Evidence::line(1, source.text(1))));
        // The markup's lines are all invalid: listing them would only be noise.
        return;
    }
    syntax(robots, &source, findings);
    long_lines(&source, findings);
    logic(robots, &source, context, table, findings);
    sitemaps(robots, &source, context, findings);
    crawler_policy(table, findings);
}

/// What an HTML body looks like.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum HtmlKind {
    /// A bot challenge (Cloudflare, captcha...).
    Challenge,
    /// Any other HTML page.
    Page,
}

/// Whether a body is HTML rather than robots.txt rules.
pub(crate) fn looks_like_html(body: &[u8]) -> Option<HtmlKind> {
    let start = body
        .iter()
        .position(|b| !b.is_ascii_whitespace())
        .unwrap_or(body.len());
    let body = body.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(&body[start..]);
    let head: Vec<u8> = body.iter().take(1024).map(u8::to_ascii_lowercase).collect();
    let html = [
        "<!doctype html",
        "<html",
        "<head",
        "<!--",
        "<body",
        "<script",
        "<meta",
    ]
    .iter()
    .any(|prefix| head.starts_with(prefix.as_bytes()));
    if !html {
        return None;
    }
    let whole: Vec<u8> = body
        .iter()
        .take(64 * 1024)
        .map(u8::to_ascii_lowercase)
        .collect();
    let challenge = [
        &b"just a moment"[..],
        b"cf-challenge",
        b"challenge-platform",
        b"captcha",
        b"attention required",
        b"checking your browser",
    ]
    .iter()
    .any(|marker| contains(&whole, marker));
    Some(if challenge {
        HtmlKind::Challenge
    } else {
        HtmlKind::Page
    })
}

fn contains(haystack: &[u8], needle: &[u8]) -> bool {
    !needle.is_empty()
        && haystack
            .windows(needle.len())
            .any(|window| window == needle)
}

// ---------------------------------------------------------------------------------------------
// Syntax

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

fn syntax(robots: &RobotsTxt, source: &Source<'_>, findings: &mut Findings) {
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

fn long_lines(source: &Source<'_>, findings: &mut Findings) {
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

// ---------------------------------------------------------------------------------------------
// Logic

/// The literal a pattern matches at least, and whether it is anchored with `$`. Only for
/// patterns whose sole wildcard is a trailing `*` (which changes nothing) or a final `$`.
fn literal_probe(canonical: &str) -> Option<(String, bool)> {
    let trimmed = canonical.trim_end_matches('*');
    let (literal, anchored) = match trimmed.strip_suffix('$') {
        Some(literal) if trimmed.len() == canonical.len() => (literal, true),
        Some(_) => return None,
        None => (trimmed, false),
    };
    if literal.is_empty()
        || literal.contains('*')
        || literal.contains('$')
        || !literal.starts_with('/')
    {
        return None;
    }
    Some((literal.to_owned(), anchored))
}

/// The literal text before a pattern's first wildcard.
fn literal_prefix(canonical: &str) -> &str {
    let end = canonical.find(['*', '$']).unwrap_or(canonical.len());
    &canonical[..end]
}

struct Compiled<'r> {
    rule: &'r Rule,
    canonical: String,
    probe: Option<(String, bool)>,
}

/// Whether `broad` matches every URL `narrow` matches.
fn covers(broad: &Compiled<'_>, narrow: &Compiled<'_>) -> bool {
    let Some((literal, anchored)) = &narrow.probe else {
        return false;
    };
    if !anchored && broad.canonical.ends_with('$') {
        return false;
    }
    broad.rule.matches(literal)
}

fn beats(winner: &Rule, loser: &Rule) -> bool {
    winner.specificity() > loser.specificity()
        || (winner.specificity() == loser.specificity()
            && winner.kind == RuleKind::Allow
            && loser.kind == RuleKind::Disallow)
}

fn rule_evidence(source: &Source<'_>, line: usize) -> Evidence {
    Evidence::line(line, source.text(line))
}

fn group_label(selection: &GroupSelection) -> String {
    match selection {
        GroupSelection::Named(token) => format!("User-agent: {token}"),
        GroupSelection::Global => "User-agent: *".to_owned(),
        GroupSelection::None => "no group".to_owned(),
    }
}

/// The file's rules by line, to get from the engine's borrowed rules back to [`Rule`]s.
struct RulesByLine<'r> {
    rules: HashMap<usize, &'r Rule>,
}

impl<'r> RulesByLine<'r> {
    fn new(robots: &'r RobotsTxt) -> RulesByLine<'r> {
        let rules = robots
            .groups()
            .iter()
            .flat_map(|group| group.rules.iter())
            .map(|rule| (rule.line, rule))
            .collect();
        RulesByLine { rules }
    }

    /// A crawler's merged rules, most specific first (the engine's matching order).
    fn of(&self, agent: &AgentRules) -> Vec<&'r Rule> {
        agent
            .rules()
            .into_iter()
            .filter_map(|rule| self.rules.get(&rule.line).copied())
            .collect()
    }
}

/// Checks one crawler's merged rules: identical, repeated, shadowed and redundant rules.
fn rule_set(
    rules: &AgentRules,
    by_line: &RulesByLine<'_>,
    source: &Source<'_>,
    findings: &mut Findings,
) {
    let merged = by_line.of(rules);
    let label = group_label(rules.group());
    let mut by_pattern: HashMap<String, Vec<&Rule>> = HashMap::new();
    let mut in_file_order: Vec<&Rule> = merged.clone();
    in_file_order.sort_by_key(|rule| rule.line);
    for rule in &in_file_order {
        let canonical = rule.canonical_pattern();
        let earlier = by_pattern.entry(canonical).or_default();
        if let Some(same) = earlier.iter().find(|other| other.kind == rule.kind) {
            findings.push(Finding::new(
                CheckId::LogicRuleRepeated,
                format!("line {}: repeats line {} for {label}", rule.line, same.line),
                rule_evidence(source, rule.line).with_related([same.line]),
            ));
        } else if let Some(opposite) = earlier.iter().find(|other| other.kind != rule.kind) {
            findings.push(Finding::new(
                CheckId::LogicAllowDisallowSame,
                format!(
                    "line {}: {} and line {}: {} name the same path for {label}",
                    rule.line, rule.kind, opposite.line, opposite.kind
                ),
                rule_evidence(source, rule.line).with_related([opposite.line]),
            ));
        }
        // Keep the first rule of each kind: enough to name what a later one repeats.
        if !earlier.iter().any(|other| other.kind == rule.kind) {
            earlier.push(rule);
        }
    }
    if merged.len() > MAX_RULES_COMPARED {
        findings.push(Finding::new(
            CheckId::AuditLimited,
            format!(
                "{label} has {} rules; shadowed and redundant rules were not looked for",
                merged.len()
            ),
            Evidence::default(),
        ));
        return;
    }
    let compiled: Vec<Compiled<'_>> = merged
        .iter()
        .map(|&rule| {
            let canonical = rule.canonical_pattern();
            let probe = literal_probe(&canonical);
            Compiled {
                rule,
                canonical,
                probe,
            }
        })
        .collect();
    for narrow in &compiled {
        if narrow.probe.is_none() {
            continue;
        }
        let winner = compiled.iter().find(|broad| {
            broad.canonical != narrow.canonical
                && beats(broad.rule, narrow.rule)
                && covers(broad, narrow)
        });
        if let Some(winner) = winner {
            let id = if winner.rule.kind == narrow.rule.kind {
                CheckId::LogicRuleRedundant
            } else {
                CheckId::LogicRuleShadowed
            };
            findings.push(Finding::new(
                id,
                format!(
                    "line {}: {}: {} never decides; line {}: {}: {} always wins",
                    narrow.rule.line,
                    narrow.rule.kind,
                    narrow.rule.pattern,
                    winner.rule.line,
                    winner.rule.kind,
                    winner.rule.pattern
                ),
                rule_evidence(source, narrow.rule.line).with_related([winner.rule.line]),
            ));
            continue;
        }
        let broader = compiled.iter().find(|broad| {
            broad.canonical != narrow.canonical
                && broad.rule.kind == narrow.rule.kind
                && covers(broad, narrow)
        });
        let Some(broader) = broader else { continue };
        let space = literal_prefix(&broader.canonical);
        let exception_possible = compiled.iter().any(|other| {
            other.rule.kind != narrow.rule.kind && {
                let prefix = literal_prefix(&other.canonical);
                prefix.len() <= 1 || prefix.starts_with(space) || space.starts_with(prefix)
            }
        });
        if !exception_possible {
            findings.push(Finding::new(
                CheckId::LogicRuleRedundant,
                format!(
                    "line {}: {}: {} is already covered by line {}: {}: {}",
                    narrow.rule.line,
                    narrow.rule.kind,
                    narrow.rule.pattern,
                    broader.rule.line,
                    broader.rule.kind,
                    broader.rule.pattern
                ),
                rule_evidence(source, narrow.rule.line).with_related([broader.rule.line]),
            ));
        }
    }
}

/// A named token as first spelled, with the lines of the groups naming it.
struct NamedToken {
    spelling: String,
    group_lines: Vec<usize>,
    group_indices: Vec<usize>,
}

fn named_tokens(robots: &RobotsTxt) -> (Vec<NamedToken>, Vec<usize>) {
    let mut tokens: Vec<NamedToken> = Vec::new();
    let mut index: HashMap<String, usize> = HashMap::new();
    let mut global_groups = Vec::new();
    for (group_index, group) in robots.groups().iter().enumerate() {
        let mut named_here = HashSet::new();
        for agent in &group.user_agents {
            match &agent.product {
                UserAgentProduct::Token(token) => {
                    let key = token.to_ascii_lowercase();
                    if !named_here.insert(key.clone()) {
                        continue;
                    }
                    let slot = *index.entry(key).or_insert_with(|| {
                        tokens.push(NamedToken {
                            spelling: token.clone(),
                            group_lines: Vec::new(),
                            group_indices: Vec::new(),
                        });
                        tokens.len() - 1
                    });
                    tokens[slot].group_lines.push(agent.line);
                    tokens[slot].group_indices.push(group_index);
                }
                UserAgentProduct::Global => {
                    if named_here.insert("*".to_owned()) {
                        global_groups.push(group_index);
                    }
                }
                UserAgentProduct::Nothing => {}
            }
        }
    }
    (tokens, global_groups)
}

/// Whether a group holds an empty `Disallow:` (the allow-all idiom).
fn group_has_empty_disallow(robots: &RobotsTxt, group_index: usize) -> bool {
    let groups = robots.groups();
    let Some(group) = groups.get(group_index) else {
        return false;
    };
    let end = groups
        .get(group_index + 1)
        .map_or(usize::MAX, |next| next.line);
    robots.diagnostics().iter().any(|diagnostic| {
        diagnostic.kind == DiagnosticKind::EmptyRule
            && diagnostic.line > group.line
            && diagnostic.line < end
            && diagnostic
                .text
                .trim_start()
                .to_ascii_lowercase()
                .starts_with("disallow")
    })
}

/// A URL a disallow rule is sure to match, if one can be built.
fn sample_url(rule: &Rule) -> Option<String> {
    let canonical = rule.canonical_pattern();
    let mut sample = canonical.trim_end_matches('$').replace('*', "");
    if !sample.starts_with('/') {
        sample.insert(0, '/');
    }
    rule.matches(&sample).then_some(sample)
}

fn logic(
    robots: &RobotsTxt,
    source: &Source<'_>,
    context: &FileContext<'_>,
    table: &[CrawlerAccess],
    findings: &mut Findings,
) {
    let (tokens, global_groups) = named_tokens(robots);
    let by_line = RulesByLine::new(robots);
    let global = robots.global_rules();

    // Duplicate groups.
    for token in &tokens {
        for line in token.group_lines.iter().skip(1) {
            findings.push(Finding::new(
                CheckId::LogicDuplicateGroup,
                format!(
                    "line {line}: {} already has a group at line {}",
                    token.spelling, token.group_lines[0]
                ),
                Evidence::line(*line, source.text(*line)).with_related([token.group_lines[0]]),
            ));
        }
    }
    for index in global_groups.iter().skip(1) {
        if let (Some(group), Some(first)) = (
            robots.groups().get(*index),
            global_groups.first().and_then(|i| robots.groups().get(*i)),
        ) {
            findings.push(Finding::new(
                CheckId::LogicDuplicateGroup,
                format!(
                    "line {}: * already has a group at line {}",
                    group.line, first.line
                ),
                Evidence::line(group.line, source.text(group.line)).with_related([first.line]),
            ));
        }
    }

    // Each crawler's merged rules.
    if *global.group() == GroupSelection::Global {
        rule_set(&global, &by_line, source, findings);
    }
    let global_blocks_everything =
        *global.group() == GroupSelection::Global && !global.check("/").allowed;
    let mut distinct = HashSet::new();
    let global_disallows: Vec<(&Rule, String)> = by_line
        .of(&global)
        .into_iter()
        .filter(|rule| rule.kind == RuleKind::Disallow && distinct.insert(rule.canonical_pattern()))
        .take(MAX_RULES_COMPARED)
        .filter_map(|rule| sample_url(rule).map(|sample| (rule, sample)))
        .filter(|(rule, sample)| {
            global
                .check(sample)
                .rule
                .is_some_and(|decider| decider.line == rule.line)
        })
        .collect();
    for token in &tokens {
        let rules = crawlers::rules_for_tokens(robots, &[token.spelling.as_str()]);
        rule_set(&rules, &by_line, source, findings);
        // A named group that silently drops the * rules (crawlers that ignore * lose nothing).
        let ignores_global = crawlers::find(&token.spelling).is_some_and(|c| c.ignores_global);
        // Under an allow-list (* may fetch nothing), named groups differ on purpose.
        if global_disallows.is_empty() || ignores_global || global_blocks_everything {
            continue;
        }
        if rules.rule_count() == 0
            && token
                .group_indices
                .iter()
                .any(|&index| group_has_empty_disallow(robots, index))
        {
            continue;
        }
        let dropped: Vec<&Rule> = global_disallows
            .iter()
            .filter(|(_, sample)| {
                let decision = rules.check(sample);
                decision.allowed && decision.rule.is_none()
            })
            .map(|(rule, _)| *rule)
            .collect();
        if let Some(first) = dropped.first() {
            let line = token.group_lines[0];
            findings.push(Finding::new(
                CheckId::LogicDropsGlobalRules,
                format!(
                    "User-agent: {} (line {line}) does not repeat {} rule(s) of the * group, such as line {}: Disallow: {}",
                    token.spelling,
                    dropped.len(),
                    first.line,
                    first.pattern
                ),
                Evidence::line(line, source.text(line))
                    .with_related(dropped.iter().take(MAX_RELATED_LINES).map(|rule| rule.line)),
            ));
        }
    }

    // Whole-site blocks.
    let access =
        |token: &str| crawlers::find(token).map(|crawler| crawlers::rules_for(robots, crawler));
    let majors: Vec<(&'static str, AgentRules)> = CRAWLERS
        .iter()
        .filter(|crawler| crawler.major)
        .map(|crawler| (crawler.token, crawlers::rules_for(robots, crawler)))
        .collect();
    let global_blocks_root =
        *global.group() == GroupSelection::Global && !global.check("/").allowed;
    if global_blocks_root {
        let decision = global.check("/").explain();
        let line = decision.rule.as_ref().map_or(0, |rule| rule.line);
        let any_major_allowed = majors.iter().any(|(_, rules)| rules.check("/").allowed);
        if any_major_allowed {
            findings.push(Finding::new(
                CheckId::PolicyAllowlist,
                format!(
                    "line {line}: * may not crawl; only crawlers with a group of their own may"
                ),
                Evidence::line(line, source.text(line)),
            ));
        } else {
            findings.push(Finding::new(
                CheckId::LogicBlocksAll,
                format!("line {line}: Disallow: / applies to every crawler, Googlebot and Bingbot included"),
                Evidence::line(line, source.text(line)),
            ));
        }
    } else {
        for (token, rules) in &majors {
            let decision = rules.check("/");
            if let (false, Some(rule)) = (decision.allowed, decision.rule) {
                findings.push(Finding::new(
                    CheckId::LogicSearchEngineBlocked,
                    format!(
                        "line {}: {token} may not crawl the site ({})",
                        rule.line,
                        group_label(decision.group)
                    ),
                    rule_evidence(source, rule.line),
                ));
            }
        }
        let minor_blocked: Vec<(&str, usize)> = table
            .iter()
            .filter(|row| {
                row.purpose == Purpose::Search
                    && crawlers::find(&row.token).is_some_and(|crawler| !crawler.major)
            })
            .filter_map(|row| match (row.root.allowed, &row.group, &row.root.rule) {
                (false, GroupSelection::Named(_), Some(rule)) => {
                    Some((row.token.as_str(), rule.line))
                }
                _ => None,
            })
            .collect();
        if let Some((_, line)) = minor_blocked.first() {
            let names: Vec<&str> = minor_blocked.iter().map(|(token, _)| *token).collect();
            findings.push(Finding::new(
                CheckId::PolicySearchEngineBlocked,
                format!("search engines blocked by name: {}", names.join(", ")),
                Evidence::line(*line, source.text(*line))
                    .with_related(minor_blocked.iter().map(|(_, line)| *line)),
            ));
        }
    }

    // CSS and JavaScript.
    if let Some(google) = access("Googlebot") {
        let resource_rules = by_line
            .of(&google)
            .into_iter()
            .filter(|rule| rule.kind == RuleKind::Disallow)
            .filter_map(|rule| resource_probe(&rule.canonical_pattern()).map(|probe| (rule, probe)))
            .take(MAX_RULES_COMPARED);
        for (rule, probe) in resource_rules {
            let decision = google.check(&probe);
            if !decision.allowed
                && decision
                    .rule
                    .is_some_and(|decider| decider.line == rule.line)
            {
                findings.push(Finding::new(
                    CheckId::LogicResourcesBlocked,
                    format!("line {}: Googlebot may not fetch {probe}", rule.line),
                    rule_evidence(source, rule.line),
                ));
            }
        }
    }

    // The analysed page.
    if let Some(page) = context.page {
        page_rules(robots, source, page, findings);
    }
}

/// Whether `text` holds the extension `ext` (such as `.js`) ending at a boundary.
fn has_extension(text: &str, ext: &str) -> bool {
    text.match_indices(ext).any(|(at, _)| {
        matches!(
            text[at + ext.len()..].chars().next(),
            None | Some('$' | '?' | '*' | '&' | '#')
        )
    })
}

/// A stylesheet or script URL a disallow pattern aims at, if it aims at one.
fn resource_probe(canonical: &str) -> Option<String> {
    let lower = canonical.to_ascii_lowercase();
    let directory = |names: &[&str]| {
        names.iter().any(|name| {
            lower
                .split('/')
                .any(|segment| segment.trim_end_matches(['*', '$']) == *name)
        })
    };
    let css_file = has_extension(&lower, ".css");
    let js_file = has_extension(&lower, ".js");
    let css_dir = directory(&["css", "styles", "stylesheets"]);
    let js_dir = directory(&["js", "javascript", "scripts", "wp-includes"]);
    if !(css_file || js_file || css_dir || js_dir) {
        return None;
    }
    let base = canonical.trim_end_matches('$').replace('*', "x");
    if css_file || js_file {
        return Some(base);
    }
    let file = if js_dir { "app.js" } else { "style.css" };
    Some(if base.ends_with('/') {
        format!("{base}{file}")
    } else {
        format!("{base}/{file}")
    })
}

fn page_rules(robots: &RobotsTxt, source: &Source<'_>, page: &str, findings: &mut Findings) {
    let mut blocked_for: Vec<&str> = Vec::new();
    let mut first_rule = None;
    for crawler in CRAWLERS.iter().filter(|crawler| crawler.major) {
        let rules = crawlers::rules_for(robots, crawler);
        let decision = rules.check(page);
        if !decision.allowed {
            blocked_for.push(crawler.token);
            if first_rule.is_none() {
                first_rule = decision
                    .rule
                    .map(|rule| (rule.line, rule.kind, rule.pattern.to_owned()));
            }
        }
    }
    let global = robots.global_rules();
    let global_decision = global.check(page);
    if !global_decision.allowed {
        blocked_for.insert(0, "*");
        if let Some(rule) = global_decision.rule {
            first_rule = Some((rule.line, rule.kind, rule.pattern.to_owned()));
        }
    }
    if let Some((line, kind, pattern)) = first_rule {
        findings.push(Finding::new(
            CheckId::LogicPageDisallowed,
            format!(
                "{page} is disallowed for {} by line {line}: {kind}: {pattern}",
                blocked_for.join(", ")
            ),
            Evidence {
                url: Some(page.to_owned()),
                ..Evidence::line(line, source.text(line))
            },
        ));
        return;
    }
    let bot = robots.rules_for(&crawlers::BOT_TOKENS);
    let decision = bot.check(page);
    if let (false, Some(rule)) = (decision.allowed, decision.rule) {
        findings.push(Finding::new(
            CheckId::PolicyBotBlocked,
            format!(
                "{page} is disallowed for {BOT_TOKEN} by line {}: {}: {}",
                rule.line, rule.kind, rule.pattern
            ),
            Evidence {
                url: Some(page.to_owned()),
                ..rule_evidence(source, rule.line)
            },
        ));
    }
}

// ---------------------------------------------------------------------------------------------
// Sitemaps

/// Scheme, host and port of a URL.
pub(crate) fn origin(url: &Url) -> (String, String, Option<u16>) {
    (
        url.scheme().to_owned(),
        url.host_str().unwrap_or_default().to_ascii_lowercase(),
        url.port_or_known_default(),
    )
}

fn sitemaps(
    robots: &RobotsTxt,
    source: &Source<'_>,
    context: &FileContext<'_>,
    findings: &mut Findings,
) {
    let declared = robots.sitemaps();
    if declared.is_empty() && !findings.has(CheckId::SitemapInvalidUrl) {
        findings.push(Finding::new(
            CheckId::SitemapNone,
            "no Sitemap line",
            Evidence::default(),
        ));
    }
    let mut seen: HashMap<String, usize> = HashMap::new();
    // Whom the sitemap is for: every crawler, unless * is shut out on purpose (an allow-list),
    // and the major search engines in any case.
    let global = robots.global_rules();
    let mut audiences: Vec<(AgentRules, &str)> = Vec::new();
    if *global.group() != GroupSelection::Global || global.check("/").allowed {
        audiences.push((global, "every crawler"));
    }
    for crawler in CRAWLERS.iter().filter(|crawler| crawler.major) {
        audiences.push((crawlers::rules_for(robots, crawler), crawler.token));
    }
    for sitemap in declared {
        let evidence = || Evidence {
            url: Some(sitemap.url.clone()),
            ..Evidence::line(sitemap.line, source.text(sitemap.line))
        };
        if let Some(first) = seen.get(&sitemap.url) {
            findings.push(Finding::new(
                CheckId::SitemapDuplicate,
                format!(
                    "line {}: sitemap already declared at line {first}",
                    sitemap.line
                ),
                evidence().with_related([*first]),
            ));
            continue;
        }
        seen.insert(sitemap.url.clone(), sitemap.line);
        let url = match Url::parse(&sitemap.url) {
            Ok(url) if url.host_str().is_some_and(|host| !host.is_empty()) => url,
            _ => {
                findings.push(Finding::new(
                    CheckId::SitemapInvalidUrl,
                    format!(
                        "line {}: \"{}\" is not a valid URL",
                        sitemap.line,
                        crate::finding::excerpt(&sitemap.url)
                    ),
                    evidence(),
                ));
                continue;
            }
        };
        let same_site = context
            .robots_url
            .is_none_or(|robots_url| origin(robots_url) == origin(&url));
        if !same_site {
            findings.push(Finding::new(
                CheckId::SitemapOtherHost,
                format!(
                    "line {}: sitemap on another host ({})",
                    sitemap.line,
                    url.host_str().unwrap_or_default()
                ),
                evidence(),
            ));
            continue;
        }
        let target = &url[url::Position::BeforePath..];
        for (rules, who) in &audiences {
            let decision = rules.check(target);
            if let (false, Some(rule)) = (decision.allowed, decision.rule) {
                findings.push(Finding::new(
                    CheckId::SitemapDisallowed,
                    format!(
                        "line {}: the sitemap {target} is disallowed for {who} by line {}: {}: {}",
                        sitemap.line, rule.line, rule.kind, rule.pattern
                    ),
                    evidence().with_related([rule.line]),
                ));
                break;
            }
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Crawlers

fn crawler_policy(table: &[CrawlerAccess], findings: &mut Findings) {
    let blocked = |row: &CrawlerAccess| !row.root.allowed;
    let named_block =
        |row: &CrawlerAccess| blocked(row) && matches!(row.group, GroupSelection::Named(_));
    let training: Vec<&CrawlerAccess> = table
        .iter()
        .filter(|row| row.purpose == Purpose::AiTraining && named_block(row))
        .collect();
    if !training.is_empty() {
        let names: Vec<&str> = training.iter().map(|row| row.token.as_str()).collect();
        let lines = training
            .iter()
            .filter_map(|row| row.root.rule.as_ref().map(|rule| rule.line));
        findings.push(Finding::new(
            CheckId::PolicyAiTrainingBlocked,
            format!("AI training crawlers blocked: {}", names.join(", ")),
            Evidence::default().with_related(lines.take(MAX_RELATED_LINES)),
        ));
    }
    let others: Vec<&CrawlerAccess> = table
        .iter()
        .filter(|row| {
            matches!(
                row.purpose,
                Purpose::AiSearch
                    | Purpose::AiUserFetch
                    | Purpose::SeoTool
                    | Purpose::SocialPreview
                    | Purpose::Ads
            ) && named_block(row)
        })
        .collect();
    if !others.is_empty() {
        let names: Vec<String> = others
            .iter()
            .map(|row| format!("{} ({})", row.token, row.purpose.label()))
            .collect();
        findings.push(Finding::new(
            CheckId::PolicyCrawlerBlocked,
            format!("notable crawlers blocked by name: {}", names.join(", ")),
            Evidence::default().with_related(
                others
                    .iter()
                    .filter_map(|row| row.root.rule.as_ref().map(|rule| rule.line))
                    .take(MAX_RELATED_LINES),
            ),
        ));
    }
    // Incoherence: a visible use refused while training is allowed.
    let mut operators: Vec<&str> = table.iter().map(|row| row.operator.as_str()).collect();
    operators.dedup();
    for operator in operators {
        let rows: Vec<&CrawlerAccess> = table
            .iter()
            .filter(|row| row.operator == operator)
            .collect();
        let training_allowed = rows
            .iter()
            .find(|row| row.purpose == Purpose::AiTraining && !blocked(row));
        let Some(training) = training_allowed else {
            continue;
        };
        for row in rows.iter().filter(|row| {
            matches!(row.purpose, Purpose::AiSearch | Purpose::AiUserFetch) && named_block(row)
        }) {
            let line = row.root.rule.as_ref().map_or(0, |rule| rule.line);
            findings.push(Finding::new(
                CheckId::CrawlersIncoherent,
                format!(
                    "{operator}: {} ({}) is blocked but {} (AI training) may crawl",
                    row.token,
                    row.purpose.label(),
                    training.token
                ),
                Evidence {
                    line: (line > 0).then_some(line),
                    ..Evidence::default()
                },
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
    fn probes() {
        assert_eq!(literal_probe("/a"), Some(("/a".into(), false)));
        assert_eq!(literal_probe("/a*"), Some(("/a".into(), false)));
        assert_eq!(literal_probe("/a$"), Some(("/a".into(), true)));
        assert_eq!(literal_probe("/*.js"), None);
        assert_eq!(resource_probe("/*.js$").as_deref(), Some("/x.js"));
        assert_eq!(
            resource_probe("/wp-includes/").as_deref(),
            Some("/wp-includes/app.js")
        );
        assert_eq!(resource_probe("/admin/"), None);
        assert_eq!(resource_probe("/json.php"), None);
        assert_eq!(resource_probe("/a.jsp"), None);
        assert_eq!(resource_probe("/css/").as_deref(), Some("/css/style.css"));
        assert_eq!(resource_probe("/*.css?v=*").as_deref(), Some("/x.css?v=x"));
    }

    #[test]
    fn edit_distance_works() {
        assert_eq!(edit_distance("disallow", "disalow"), 1);
        assert_eq!(edit_distance("", "abc"), 3);
        assert_eq!(edit_distance("kitten", "sitting"), 3);
    }

    #[test]
    fn named_constants() {
        assert_eq!(LONG_LINE_BYTES, 2_083 * 8);
        assert_eq!(MAX_FINDINGS_PER_CHECK, 20);
        assert_eq!(MAX_RULES_COMPARED, 1_000);
    }
}
