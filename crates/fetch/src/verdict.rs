//! The answer to "may I fetch this URL as these tokens?".

use std::time::Duration;

use robots::{AgentRules, CrawlDelay, Explanation};
use url::Url;

/// Where the rules behind a [`Verdict`] came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RulesSource {
    /// A robots.txt fetched (or revalidated) for this answer.
    Fresh,
    /// A cached robots.txt within its lifetime.
    Cached,
    /// A cached robots.txt past its lifetime, used because refreshing it failed.
    Stale,
    /// No robots.txt (4xx): everything allowed.
    NoFile,
    /// The robots.txt could not be fetched (5xx, network error, redirect loop or too many
    /// redirects) and no usable copy exists: everything disallowed.
    Unreachable,
    /// The site answered 429 and no usable copy exists: everything disallowed until a retry
    /// succeeds.
    BackingOff,
}

impl std::fmt::Display for RulesSource {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            RulesSource::Fresh => "fresh",
            RulesSource::Cached => "cached",
            RulesSource::Stale => "stale after failed refresh",
            RulesSource::NoFile => "no file (4xx)",
            RulesSource::Unreachable => "unreachable (5xx or network error)",
            RulesSource::BackingOff => "backing off (429)",
        })
    }
}

/// May this URL be fetched, why, and for how long the answer holds.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct Verdict {
    /// Whether the URL may be fetched.
    pub allowed: bool,
    /// The engine's explanation, when a robots.txt decided.
    pub explanation: Option<Explanation>,
    /// Where the rules came from.
    pub source: RulesSource,
    /// The crawl-delay of the group that applies, if any.
    pub crawl_delay: Option<CrawlDelay>,
    /// How long from now the answer holds: until the copy expires, or until the next retry
    /// when the site is unreachable or backing off (`None` if unknown).
    pub valid_for: Option<Duration>,
    /// The robots.txt whose answer this is.
    pub robots_url: Option<Url>,
}

impl Verdict {
    pub(crate) fn from_rules(
        rules: &AgentRules,
        url: &str,
        source: RulesSource,
        valid_for: Option<Duration>,
        robots_url: Option<&Url>,
    ) -> Verdict {
        let explanation = rules.check(url).explain();
        Verdict {
            allowed: explanation.allowed,
            explanation: Some(explanation),
            source,
            crawl_delay: rules.crawl_delay(),
            valid_for,
            robots_url: robots_url.cloned(),
        }
    }

    pub(crate) fn without_rules(
        source: RulesSource,
        valid_for: Option<Duration>,
        robots_url: Option<&Url>,
    ) -> Verdict {
        Verdict {
            allowed: source == RulesSource::NoFile,
            explanation: None,
            source,
            crawl_delay: None,
            valid_for,
            robots_url: robots_url.cloned(),
        }
    }

    /// The deciding line and rule (`(line, "Disallow: /x")`), when a rule decided.
    pub fn deciding_rule(&self) -> Option<(usize, String)> {
        let rule = self.explanation.as_ref()?.rule.as_ref()?;
        Some((rule.line, format!("{}: {}", rule.kind, rule.pattern)))
    }

    /// The crawl-delay as a duration, if the group sets one.
    pub fn crawl_delay(&self) -> Option<Duration> {
        self.crawl_delay.map(|delay| delay.duration())
    }

    /// Why: the engine's explanation, or what the site's robots.txt status implies.
    pub fn reason(&self) -> String {
        match (&self.explanation, self.source) {
            (Some(explanation), _) => explanation.to_string(),
            (None, RulesSource::NoFile) => "no robots.txt (4xx): no restrictions".to_owned(),
            (None, RulesSource::BackingOff) => {
                "robots.txt answered 429: backing off, nothing may be fetched".to_owned()
            }
            (None, _) => {
                "robots.txt unreachable (5xx or network error): everything disallowed".to_owned()
            }
        }
    }
}
