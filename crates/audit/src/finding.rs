//! Findings: what the audit found, where, with which parameters.
//!
//! A finding is stored (the service keeps reports for years), so it holds data, not prose: the
//! id of its check, the check's severity and category at the time (what the score was computed
//! from), its evidence (line, text as written, header, URL, related lines) and the parameters
//! its title is rendered from (a field name, a status, the limit in effect...). Titles and
//! explanations come from the catalogue ([`crate::catalogue`]) when a finding is shown, so a
//! report written today renders with the wording of the day it is read, and a retired check
//! still loads.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::catalogue::{Category, CheckId, Severity};

/// Where a finding was seen. Every field is optional; a finding shows what it has.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Evidence {
    /// 1-based line of robots.txt.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub line: Option<usize>,
    /// The line (or other text) as written, cut to [`MAX_EVIDENCE_CHARS`].
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub text: Option<String>,
    /// A response header, as `Name: value`.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub header: Option<String>,
    /// A URL (or a path, or a sitemap URL as declared, which may not be a valid URL).
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub url: Option<String>,
    /// Other lines involved (for example the rule that wins over this one).
    #[serde(skip_serializing_if = "Vec::is_empty", default)]
    pub related_lines: Vec<usize>,
}

/// The longest evidence text or text parameter kept, in characters.
pub const MAX_EVIDENCE_CHARS: usize = 200;

/// Cuts `text` to [`MAX_EVIDENCE_CHARS`] characters.
pub(crate) fn excerpt(text: &str) -> String {
    text.chars().take(MAX_EVIDENCE_CHARS).collect()
}

impl Evidence {
    /// Evidence at a robots.txt line.
    pub fn line(line: usize, text: impl AsRef<str>) -> Evidence {
        Evidence {
            line: Some(line),
            text: Some(excerpt(text.as_ref())),
            ..Evidence::default()
        }
    }

    /// Evidence in a response header.
    pub fn header(name: &str, value: &str) -> Evidence {
        Evidence {
            header: Some(excerpt(&format!("{name}: {value}"))),
            ..Evidence::default()
        }
    }

    /// Evidence at a URL.
    pub fn url(url: impl Into<String>) -> Evidence {
        Evidence {
            url: Some(url.into()),
            ..Evidence::default()
        }
    }

    /// Evidence as free text.
    pub fn text(text: impl AsRef<str>) -> Evidence {
        Evidence {
            text: Some(excerpt(text.as_ref())),
            ..Evidence::default()
        }
    }

    /// Adds a URL.
    pub fn at_url(mut self, url: impl Into<String>) -> Evidence {
        self.url = Some(url.into());
        self
    }

    /// Adds related lines.
    pub fn with_related(mut self, lines: impl IntoIterator<Item = usize>) -> Evidence {
        self.related_lines.extend(lines);
        self
    }
}

/// One finding of the audit.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Finding {
    /// The check that found it; its stable id.
    pub id: CheckId,
    /// How likely it is a mistake, as the catalogue said when the finding was made (the score
    /// was computed from it).
    pub severity: Severity,
    /// The check's category.
    pub category: Category,
    /// Where it was found.
    #[serde(flatten)]
    pub evidence: Evidence,
    /// What the title is rendered from (names and values of this occurrence).
    #[serde(skip_serializing_if = "Map::is_empty", default)]
    pub params: Map<String, Value>,
}

impl Finding {
    /// A finding of check `id` with the catalogue's severity and category. (A check the
    /// catalogue does not know gets [`Severity::Info`], which never costs points.)
    pub fn new(id: CheckId, evidence: Evidence) -> Finding {
        let (severity, category) = id
            .check()
            .map_or((Severity::Info, Category::Logic), |check| {
                (check.severity, check.category)
            });
        Finding {
            id,
            severity,
            category,
            evidence,
            params: Map::new(),
        }
    }

    /// Adds a parameter. Text is cut to [`MAX_EVIDENCE_CHARS`] characters.
    pub fn with(mut self, name: &str, value: impl Serialize) -> Finding {
        let value = match serde_json::to_value(value) {
            Ok(Value::String(text)) => Value::String(excerpt(&text)),
            Ok(value) => value,
            // Only maps with non-string keys fail to serialise; no parameter is one.
            Err(_) => Value::Null,
        };
        self.params.insert(name.to_owned(), value);
        self
    }

    /// A text parameter.
    pub fn text(&self, name: &str) -> Option<&str> {
        self.params.get(name).and_then(Value::as_str)
    }

    /// A number parameter.
    pub fn number(&self, name: &str) -> Option<u64> {
        self.params.get(name).and_then(Value::as_u64)
    }

    /// A yes/no parameter (absent: no).
    pub fn flag(&self, name: &str) -> bool {
        self.params
            .get(name)
            .and_then(Value::as_bool)
            .unwrap_or(false)
    }

    /// A list-of-text parameter.
    pub fn list(&self, name: &str) -> Option<Vec<&str>> {
        self.params
            .get(name)
            .and_then(Value::as_array)
            .map(|items| items.iter().filter_map(Value::as_str).collect())
    }

    /// The robots.txt line, if the finding has one.
    pub fn line(&self) -> Option<usize> {
        self.evidence.line
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finding_serialises_flat_with_its_parameters() {
        let finding = Finding::new(CheckId::SyntaxUnknownField, Evidence::line(3, "Foo: /a"))
            .with("field", "Foo");
        let json = serde_json::to_value(&finding).unwrap();
        assert_eq!(json["id"], "syntax.unknown-field");
        assert_eq!(json["severity"], "warning");
        assert_eq!(json["line"], 3);
        assert_eq!(json["params"]["field"], "Foo");
        assert!(json.get("url").is_none());
        assert!(json.get("title").is_none() && json.get("why").is_none());
        let back: Finding = serde_json::from_value(json).unwrap();
        assert_eq!(back, finding);
        assert_eq!(back.title(), "unknown field \"Foo\" is ignored");
    }

    #[test]
    fn evidence_and_text_parameters_are_cut() {
        let long = "x".repeat(MAX_EVIDENCE_CHARS * 2);
        assert_eq!(
            Evidence::text(&long).text.unwrap().chars().count(),
            MAX_EVIDENCE_CHARS
        );
        let finding =
            Finding::new(CheckId::SyntaxUnknownField, Evidence::default()).with("field", &long);
        assert_eq!(
            finding.text("field").unwrap().chars().count(),
            MAX_EVIDENCE_CHARS
        );
    }
}
