//! The answers handed to Python: a decision with its reason, and a diagnostic.

use pyo3::prelude::*;

/// Whether a URL may be fetched, and why: the deciding line, its rule and the group.
#[pyclass(frozen, get_all, module = "jittybot_robots")]
pub(crate) struct Decision {
    /// Whether the URL may be fetched.
    allowed: bool,
    /// The deciding rule's line number (1-based), or `None` when no rule matched.
    line: Option<usize>,
    /// The deciding line as written in the file (comment included), or `None`.
    text: Option<String>,
    /// The deciding rule: `"allow"` or `"disallow"`, or `None`.
    kind: Option<&'static str>,
    /// The deciding rule's path pattern as written, or `None`.
    pattern: Option<String>,
    /// The group followed: the product token it names, `"*"`, or `None` when no group applies.
    group: Option<String>,
    /// The product tokens the user agent was read as, most preferred first.
    tokens: Vec<String>,
    /// Whether the URL is `/robots.txt` itself, which is always allowed.
    robots_txt_exemption: bool,
    /// The reason in words: `line 3: Disallow: /search, group JittyBot`.
    reason: String,
}

impl Decision {
    /// `decision` made with the rules for `tokens`, its line's text read from `file`.
    pub(crate) fn new(
        decision: &robots::Decision<'_>,
        tokens: &robots::ProductTokens,
        file: &robots::RobotsTxt,
    ) -> Decision {
        let rule = decision.rule;
        let group = match decision.group {
            robots::GroupSelection::Named(token) => Some(token.clone()),
            robots::GroupSelection::Global => Some("*".to_owned()),
            robots::GroupSelection::None => None,
        };
        Decision {
            allowed: decision.allowed,
            line: rule.map(|rule| rule.line),
            text: rule
                .and_then(|rule| file.line(rule.line))
                .map(|line| String::from_utf8_lossy(line).into_owned()),
            kind: rule.map(|rule| match rule.kind {
                robots::RuleKind::Allow => "allow",
                robots::RuleKind::Disallow => "disallow",
            }),
            pattern: rule.map(|rule| rule.pattern.to_owned()),
            group,
            tokens: tokens.iter().map(str::to_owned).collect(),
            robots_txt_exemption: decision.robots_txt_exemption,
            reason: decision.to_string(),
        }
    }
}

#[pymethods]
impl Decision {
    /// The deciding rule as `Kind: pattern` (`"Disallow: /search"`), or `None`.
    #[getter]
    fn rule(&self) -> Option<String> {
        let kind = match self.kind? {
            "allow" => "Allow",
            _ => "Disallow",
        };
        Some(format!(
            "{kind}: {}",
            self.pattern.as_deref().unwrap_or_default()
        ))
    }

    fn __str__(&self) -> &str {
        &self.reason
    }

    fn __repr__(&self) -> String {
        let python_str = |text: Option<&str>| match text {
            Some(text) => format!("{text:?}"),
            None => "None".to_owned(),
        };
        format!(
            "Decision(allowed={}, line={}, rule={}, group={})",
            if self.allowed { "True" } else { "False" },
            self.line
                .map_or_else(|| "None".to_owned(), |line| line.to_string()),
            python_str(self.rule().as_deref()),
            python_str(self.group.as_deref()),
        )
    }
}

/// Something the parser ignored, repaired or found suspicious, on one line.
#[pyclass(frozen, get_all, module = "jittybot_robots")]
pub(crate) struct Diagnostic {
    /// 1-based line number (line 1 for findings about the whole file).
    line: usize,
    /// What was found, as a stable snake_case name: `"unknown_field"`, `"empty_rule"`, ...
    kind: String,
    /// What was found and what the engine did about it, in words.
    message: String,
    /// The line as written (cut to 200 characters).
    text: String,
}

impl Diagnostic {
    pub(crate) fn new(diagnostic: &robots::Diagnostic) -> Diagnostic {
        // The kind's name is its serialised tag, the one the command line's --json prints.
        let kind = serde_json::to_value(&diagnostic.kind)
            .ok()
            .and_then(|value| value.get("kind")?.as_str().map(str::to_owned))
            .unwrap_or_default();
        Diagnostic {
            line: diagnostic.line,
            kind,
            message: diagnostic.kind.to_string(),
            text: diagnostic.text.to_string(),
        }
    }
}

#[pymethods]
impl Diagnostic {
    fn __str__(&self) -> String {
        if self.text.is_empty() {
            format!("line {}: {}", self.line, self.message)
        } else {
            format!("line {}: {}: {}", self.line, self.message, self.text)
        }
    }

    fn __repr__(&self) -> String {
        format!(
            "Diagnostic(line={}, kind={:?}, message={:?})",
            self.line, self.kind, self.message
        )
    }
}
