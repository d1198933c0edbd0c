//! The full parse: every group, every sitemap, every diagnostic, and the numbered lines.

use super::{usable_pattern, walk, Opening, Sink, Unusable};
use crate::diagnostics::{Diagnostic, DiagnosticKind};
use crate::file::{Group, RobotsTxt, Sitemap, UserAgent, UserAgentProduct};
use crate::lines::{self, Bom, Directive, Line, Product};
use crate::rule::{CrawlDelay, EmptyRule, Rule, RuleKind};

#[derive(Default)]
struct FullSink {
    /// The whole body is valid UTF-8, so no line needs checking.
    valid_utf8: bool,
    groups: Vec<Group>,
    sitemaps: Vec<Sitemap>,
    diagnostics: Vec<Diagnostic>,
    /// Where each line starts in the body.
    line_starts: Vec<u32>,
}

impl FullSink {
    fn report(&mut self, line: usize, kind: DiagnosticKind, raw: &[u8]) {
        self.diagnostics.push(Diagnostic::new(line, kind, raw));
    }

    /// What a user-agent value names, reporting what is odd about it.
    fn product(&mut self, line: usize, raw: &[u8], value: &[u8]) -> UserAgentProduct {
        let lossy = lines::lossy_string;
        match lines::product(value) {
            Product::Global => {
                if value.len() > 1 {
                    let token = "*".to_owned();
                    self.report(line, DiagnosticKind::UserAgentNotAToken { token }, raw);
                }
                UserAgentProduct::Global
            }
            Product::Token(token) => {
                let token = lossy(token);
                if token.len() < value.len() {
                    let kind = DiagnosticKind::UserAgentNotAToken {
                        token: token.clone(),
                    };
                    self.report(line, kind, raw);
                }
                UserAgentProduct::Token(token)
            }
            Product::StarredName(name) => {
                let name = lossy(name);
                self.report(line, DiagnosticKind::StarredUserAgent { name }, raw);
                UserAgentProduct::Nothing
            }
            Product::Nothing if value.is_empty() => {
                self.report(line, DiagnosticKind::EmptyUserAgent, raw);
                UserAgentProduct::Nothing
            }
            Product::Nothing => {
                self.report(line, DiagnosticKind::InvalidUserAgent, raw);
                UserAgentProduct::Nothing
            }
        }
    }
}

impl<'a> Sink<'a> for FullSink {
    fn line(&mut self, line: &Line<'a>) {
        self.line_starts
            .push(u32::try_from(line.start).unwrap_or(u32::MAX));
        if !self.valid_utf8 && std::str::from_utf8(line.raw).is_err() {
            self.report(line.number, DiagnosticKind::InvalidUtf8, line.raw);
        }
    }

    fn user_agent(&mut self, line: usize, raw: &'a [u8], value: &'a [u8], opening: Opening) {
        if let (Opening::AfterCrawlDelay { crawl_delay_line }, Some(group)) =
            (opening, self.groups.last())
        {
            let kind = DiagnosticKind::AgentListSplitByCrawlDelay {
                group_line: group.line,
                crawl_delay_line,
            };
            self.report(line, kind, raw);
        }
        if opening != Opening::Continues || self.groups.is_empty() {
            self.groups.push(Group {
                line,
                user_agents: Vec::new(),
                rules: Vec::new(),
                empty_rules: Vec::new(),
                crawl_delay: None,
            });
        }
        let product = self.product(line, raw, value);
        if let Some(group) = self.groups.last_mut() {
            group.user_agents.push(UserAgent {
                line,
                value: lines::lossy_string(value),
                product,
            });
        }
    }

    fn rule(&mut self, line: &Line<'a>, kind: RuleKind, value: &'a [u8]) {
        let (line, raw) = (line.number, line.raw);
        match usable_pattern(value) {
            Err(Unusable::Empty) => {
                self.report(line, DiagnosticKind::EmptyRule, raw);
                if let Some(group) = self.groups.last_mut() {
                    group.empty_rules.push(EmptyRule { line, kind });
                }
            }
            Err(Unusable::NotAPath) => self.report(line, DiagnosticKind::PatternNotAPath, raw),
            Ok(()) => {
                let rule = Rule::new(line, kind, value);
                if !rule.written_canonically() {
                    if let Some(dollar) = memchr::memchr(b'$', value) {
                        if dollar + 1 < value.len() {
                            self.report(line, DiagnosticKind::DollarInPattern, raw);
                        }
                    }
                    if !value.is_ascii() {
                        self.report(line, DiagnosticKind::NonAsciiPattern, raw);
                    }
                }
                if let Some(group) = self.groups.last_mut() {
                    group.rules.push(rule);
                }
            }
        }
    }

    fn crawl_delay(&mut self, line: usize, raw: &'a [u8], value: &'a [u8]) {
        let Some(delay) = CrawlDelay::parse(line, value) else {
            self.report(line, DiagnosticKind::InvalidCrawlDelay, raw);
            return;
        };
        let duplicate = match self.groups.last_mut() {
            Some(group) => {
                let duplicate = group.crawl_delay.is_some();
                group.crawl_delay = Some(CrawlDelay::larger(group.crawl_delay, delay));
                duplicate
            }
            None => false,
        };
        if duplicate {
            self.report(line, DiagnosticKind::DuplicateCrawlDelay, raw);
        }
    }

    fn other(&mut self, line: usize, raw: &'a [u8], directive: Directive<'a>) {
        let kind = match directive {
            Directive::Blank | Directive::UserAgent(_) => return,
            Directive::MissingColon => DiagnosticKind::MissingColon,
            Directive::Unknown { field, .. } => DiagnosticKind::UnknownField {
                field: lines::lossy_string(field),
            },
            Directive::Allow(_) | Directive::Disallow(_) => DiagnosticKind::RuleOutsideGroup,
            Directive::CrawlDelay(_) => DiagnosticKind::CrawlDelayOutsideGroup,
            Directive::Sitemap(value) if is_absolute_http_url(value) => {
                let url = lines::lossy_string(value);
                self.sitemaps.push(Sitemap { line, url });
                return;
            }
            Directive::Sitemap(_) => DiagnosticKind::SitemapNotAbsolute,
        };
        self.report(line, kind, raw);
    }
}

fn is_absolute_http_url(value: &[u8]) -> bool {
    let lower_starts = |prefix: &[u8]| {
        value.len() > prefix.len() && value[..prefix.len()].eq_ignore_ascii_case(prefix)
    };
    let rest = if lower_starts(b"https://") {
        &value[8..]
    } else if lower_starts(b"http://") {
        &value[7..]
    } else {
        return false;
    };
    !matches!(rest.first(), None | Some(b'/' | b'?' | b'#'))
        && !rest.iter().any(|b| b.is_ascii_whitespace())
}

impl RobotsTxt {
    /// Parses a robots.txt body: every group, sitemap and diagnostic, and its lines. Never
    /// fails: see [`RobotsTxt::diagnostics`] for what was ignored.
    pub fn parse(robots_txt: &[u8]) -> RobotsTxt {
        let prepared = lines::prepare(robots_txt);
        let mut sink = FullSink {
            valid_utf8: std::str::from_utf8(prepared.body).is_ok(),
            ..FullSink::default()
        };
        match prepared.bom {
            Bom::None => {}
            Bom::Whole => sink.report(1, DiagnosticKind::ByteOrderMark, b""),
            Bom::Partial => sink.report(1, DiagnosticKind::PartialByteOrderMark, b""),
        }
        walk(prepared.body, &mut sink);
        let after_last = sink.line_starts.len() + 1;
        if prepared.cut_line {
            sink.report(after_last, DiagnosticKind::LineCutByLimit, b"");
        }
        if prepared.ignored_bytes > 0 {
            let ignored_bytes = prepared.ignored_bytes;
            let kind = DiagnosticKind::TruncatedAtLimit { ignored_bytes };
            sink.report(after_last, kind, b"");
        }
        sink.diagnostics.sort_by_key(|diagnostic| diagnostic.line);
        RobotsTxt {
            groups: sink.groups,
            sitemaps: sink.sitemaps,
            diagnostics: sink.diagnostics,
            lines: sink.line_starts.len(),
            bytes_read: robots_txt.len() - prepared.ignored_bytes,
            bytes_total: robots_txt.len(),
            text: prepared.body.into(),
            line_starts: sink.line_starts,
        }
    }
}
