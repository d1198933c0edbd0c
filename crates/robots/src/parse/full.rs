//! The full parse: every group, every sitemap, every diagnostic, and the numbered lines.

use std::sync::Arc;

use super::{usable_pattern, walk, Opening, Sink, Unusable};
use crate::diagnostics::{Diagnostic, DiagnosticKind};
use crate::file::{Group, RobotsTxt, Sitemap, Text, UserAgent, UserAgentProduct};
use crate::lines::{self, Bom, Directive, Line, Product};
use crate::rule::{CrawlDelay, EmptyRule, Rule, RuleKind};
use crate::text::SourceText;

#[derive(Default)]
struct FullSink {
    /// The body, when it is valid UTF-8 (so no line needs checking): the state machine walks
    /// these very bytes, and rule patterns and user-agent values are pieces of it.
    source: Option<Arc<str>>,
    groups: Vec<Group>,
    sitemaps: Vec<Sitemap>,
    diagnostics: Vec<Diagnostic>,
    /// Where each line starts in the body.
    line_starts: Vec<u32>,
}

impl FullSink {
    /// `piece` (a slice of the bytes being walked) as text: a piece of the shared source when
    /// the body is valid UTF-8, an owned lossy copy otherwise.
    fn text(&self, piece: &[u8]) -> SourceText {
        if let Some(source) = &self.source {
            // Where `piece` lies in `source`: only a slice of it can start inside it.
            let base = source.as_ptr() as usize;
            let start = (piece.as_ptr() as usize).checked_sub(base);
            let shared = start.and_then(|start| {
                SourceText::shared(source, start..start.checked_add(piece.len())?)
            });
            if let Some(shared) = shared {
                return shared;
            }
        }
        SourceText::from(lines::lossy_string(piece))
    }

    fn report(&mut self, line: usize, kind: DiagnosticKind, raw: &[u8]) {
        let text = if raw.len() <= Diagnostic::MAX_TEXT_CHARS {
            self.text(raw)
        } else {
            SourceText::from(Diagnostic::excerpt(raw))
        };
        self.diagnostics.push(Diagnostic::new(line, kind, text));
    }

    /// What a user-agent value names, reporting what is odd about it.
    fn product(&mut self, line: usize, raw: &[u8], value: &[u8]) -> UserAgentProduct {
        match lines::product(value) {
            Product::Global => {
                if value.len() > 1 {
                    let token = self.text(value.get(..1).unwrap_or_default());
                    self.report(line, DiagnosticKind::UserAgentNotAToken { token }, raw);
                }
                UserAgentProduct::Global
            }
            Product::Token(token) => {
                if token.len() < value.len() {
                    let kind = DiagnosticKind::UserAgentNotAToken {
                        token: self.text(token),
                    };
                    self.report(line, kind, raw);
                }
                UserAgentProduct::Token(self.text(token))
            }
            Product::StarredName(name) => {
                let name = self.text(name);
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
        if self.source.is_none() && std::str::from_utf8(line.raw).is_err() {
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
        let value = self.text(value);
        if let Some(group) = self.groups.last_mut() {
            group.user_agents.push(UserAgent {
                line,
                value,
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
                let rule = Rule::new(line, kind, value, self.text(value));
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
                field: self.text(field),
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
        let source: Option<Arc<str>> = std::str::from_utf8(prepared.body).ok().map(Arc::from);
        let mut sink = FullSink {
            source: source.clone(),
            ..FullSink::default()
        };
        match prepared.bom {
            Bom::None => {}
            Bom::Whole => sink.report(1, DiagnosticKind::ByteOrderMark, b""),
            Bom::Partial => sink.report(1, DiagnosticKind::PartialByteOrderMark, b""),
        }
        // Walk the shared copy, so that the pieces the sink keeps are slices of it.
        let body = source.as_deref().map_or(prepared.body, str::as_bytes);
        walk(body, &mut sink);
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
            text: match source {
                Some(source) => Text::Shared(source),
                None => Text::Raw(prepared.body.into()),
            },
            line_starts: sink.line_starts,
        }
    }
}
