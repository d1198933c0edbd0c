//! `RobotsTxt`: one robots.txt file, parsed for each crawler that asks.

use std::borrow::Cow;
use std::collections::VecDeque;
use std::sync::{Arc, Mutex, OnceLock};

use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::pybacked::PyBackedBytes;
use pyo3::types::{PyBytes, PyString};

use crate::agents::{Agents, Key};
use crate::decision::{Decision, Diagnostic};

/// A body of at least this many bytes is parsed with the GIL released, so other Python threads
/// run meanwhile. Smaller ones parse in less time (under 64 µs for the one-crawler parse) than
/// handing the GIL over can cost: taking it back waits for the thread holding it to yield.
pub(crate) const PARSE_WITHOUT_GIL_BYTES: usize = 64 * 1024;

/// How many user agents' rules one `RobotsTxt` keeps, most recent first. A crawler asks with one
/// or two; a file checked for many agents re-parses for those it dropped.
pub(crate) const MAX_CACHED_AGENTS: usize = 8;

/// One crawler's rules, and the tokens its user agent was read as.
struct Rules {
    tokens: robots::ProductTokens,
    rules: robots::AgentRules,
}

/// A user agent as given, and the rules it was read to.
struct Cached {
    key: Key,
    rules: Arc<Rules>,
}

/// A robots.txt file, read exactly as JittyBot's engine reads it (RFC 9309).
///
/// The body is kept as given; each crawler's rules are parsed on its first question (the
/// engine's one-crawler parse) and kept for the next ones; the whole file is parsed once, on
/// first need, for `explain`, `sitemaps` and `diagnostics`.
#[pyclass(frozen, module = "jittybot_robots")]
pub(crate) struct RobotsTxt {
    body: PyBackedBytes,
    full: OnceLock<robots::RobotsTxt>,
    agents: Mutex<VecDeque<Cached>>,
}

/// The error for a URL no robots.txt governs.
fn url_error(url: &str, error: robots::TargetError) -> PyErr {
    PyValueError::new_err(format!("{url:?}: {error}"))
}

impl RobotsTxt {
    /// Runs `parse` on the body, without the GIL when the body is large.
    fn parse<T: Send>(&self, py: Python<'_>, parse: impl FnOnce(&[u8]) -> T + Send) -> T {
        let body: &[u8] = &self.body;
        if body.len() >= PARSE_WITHOUT_GIL_BYTES {
            py.detach(|| parse(body))
        } else {
            parse(body)
        }
    }

    /// The whole file, parsed on first use.
    fn full(&self, py: Python<'_>) -> &robots::RobotsTxt {
        if let Some(full) = self.full.get() {
            return full;
        }
        let parsed = self.parse(py, robots::RobotsTxt::parse);
        // Another thread may have parsed it meanwhile (the GIL was released): keep one.
        self.full.get_or_init(|| parsed)
    }

    /// The rules for `agents`, from the cache or parsed now.
    ///
    /// The lock is never held while parsing: the parse may release the GIL, and a thread
    /// waiting for the lock while holding the GIL would then never let it finish.
    fn rules(&self, py: Python<'_>, agents: &Agents<'_, '_>) -> PyResult<Arc<Rules>> {
        if let Some(rules) = self.cached(|entry| agents.is(&entry.key)) {
            return Ok(rules);
        }
        let tokens = agents.tokens()?;
        // Another user agent read as the same tokens shares their rules.
        let rules = match self.cached(|entry| entry.rules.tokens == tokens) {
            Some(rules) => rules,
            None => {
                let rules = match self.full.get() {
                    Some(full) => full.rules_for(&tokens),
                    None => self.parse(py, |body| robots::AgentRules::parse(body, &tokens)),
                };
                Arc::new(Rules { tokens, rules })
            }
        };
        let mut cache = self
            .agents
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        cache.push_front(Cached {
            key: agents.key(),
            rules: Arc::clone(&rules),
        });
        cache.truncate(MAX_CACHED_AGENTS);
        Ok(rules)
    }

    /// The first cached rules whose entry passes `wanted`, moved to the front.
    fn cached(&self, wanted: impl Fn(&Cached) -> bool) -> Option<Arc<Rules>> {
        let mut cache = self
            .agents
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        let position = cache.iter().position(wanted)?;
        if position > 0 {
            let entry = cache.remove(position)?;
            cache.push_front(entry);
        }
        cache.front().map(|entry| Arc::clone(&entry.rules))
    }
}

#[pymethods]
impl RobotsTxt {
    /// Reads `body`, the robots.txt file as served (`bytes`, or `str`, encoded as UTF-8).
    #[new]
    fn new(body: &Bound<'_, PyAny>) -> PyResult<RobotsTxt> {
        let body = if let Ok(bytes) = body.cast::<PyBytes>() {
            PyBackedBytes::from(bytes.clone())
        } else if let Ok(text) = body.cast::<PyString>() {
            PyBackedBytes::from(text.encode_utf8()?)
        } else {
            let kind = body
                .get_type()
                .name()
                .map_or_else(|_| "?".to_owned(), |name| name.to_string());
            return Err(PyTypeError::new_err(format!(
                "RobotsTxt() takes the file as bytes or str, not {kind}"
            )));
        };
        Ok(RobotsTxt {
            body,
            full: OnceLock::new(),
            agents: Mutex::new(VecDeque::new()),
        })
    }

    /// Whether `user_agent` may fetch `url`.
    fn allowed(
        &self,
        py: Python<'_>,
        url: Cow<'_, str>,
        user_agent: &Bound<'_, PyAny>,
    ) -> PyResult<bool> {
        let agents = Agents::extract(user_agent)?;
        let rules = self.rules(py, &agents)?;
        let decision = rules
            .rules
            .try_check(&url)
            .map_err(|error| url_error(&url, error))?;
        Ok(decision.allowed)
    }

    /// Whether `user_agent` may fetch `url`, with the deciding line, rule and group.
    fn explain(
        &self,
        py: Python<'_>,
        url: Cow<'_, str>,
        user_agent: &Bound<'_, PyAny>,
    ) -> PyResult<Decision> {
        let agents = Agents::extract(user_agent)?;
        let rules = self.rules(py, &agents)?;
        let decision = rules
            .rules
            .try_check(&url)
            .map_err(|error| url_error(&url, error))?;
        Ok(Decision::new(&decision, &rules.tokens, self.full(py)))
    }

    /// The crawl-delay in seconds of the group `user_agent` follows, or `None`.
    fn crawl_delay(&self, py: Python<'_>, user_agent: &Bound<'_, PyAny>) -> PyResult<Option<f64>> {
        let agents = Agents::extract(user_agent)?;
        let rules = self.rules(py, &agents)?;
        Ok(rules.rules.crawl_delay().map(|delay| delay.seconds))
    }

    /// The group `user_agent` follows: its product token, `"*"`, or `None` when none applies.
    fn group(&self, py: Python<'_>, user_agent: &Bound<'_, PyAny>) -> PyResult<Option<String>> {
        let agents = Agents::extract(user_agent)?;
        let rules = self.rules(py, &agents)?;
        Ok(match rules.rules.group() {
            robots::GroupSelection::Named(token) => Some(token.clone()),
            robots::GroupSelection::Global => Some("*".to_owned()),
            robots::GroupSelection::None => None,
        })
    }

    /// The sitemap URLs the file lists, in file order (absolute http(s) URLs only).
    #[getter]
    fn sitemaps(&self, py: Python<'_>) -> Vec<String> {
        let full = self.full(py);
        full.sitemaps()
            .iter()
            .map(|sitemap| sitemap.url.clone())
            .collect()
    }

    /// What the parser ignored, repaired or found suspicious, in line order.
    #[getter]
    fn diagnostics(&self, py: Python<'_>) -> Vec<Diagnostic> {
        self.full(py)
            .diagnostics()
            .iter()
            .map(Diagnostic::new)
            .collect()
    }

    /// How many bytes of the body are read: at most `MAX_ROBOTS_TXT_BYTES`.
    #[getter]
    fn bytes_read(&self, py: Python<'_>) -> usize {
        self.full(py).bytes_read()
    }

    fn __repr__(&self) -> String {
        format!("<RobotsTxt of {} bytes>", self.body.len())
    }
}
