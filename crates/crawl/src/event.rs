//! What a crawl reports as it goes: one event per line with `--json`, log lines otherwise,
//! and the counters of the live progress display.

use std::time::Duration;

use jiff::Timestamp;

/// One thing that happened.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
#[serde(tag = "event", rename_all = "snake_case")]
pub enum Event {
    /// A URL was fetched (any status), or answered 304.
    Fetch {
        /// The URL requested first.
        url: String,
        /// The final URL after redirects.
        final_url: String,
        /// The HTTP status.
        status: u16,
        /// Body bytes (decoded).
        bytes: u64,
        /// `noindex,nofollow` directives that applied.
        #[serde(skip_serializing_if = "String::is_empty")]
        directives: String,
        /// Media rather than a page.
        media: bool,
    },
    /// A URL was not fetched.
    Skip {
        /// The URL.
        url: String,
        /// Why.
        reason: SkipReason,
    },
    /// A request failed and the URL was queued again or given up.
    Error {
        /// The URL.
        url: String,
        /// The error.
        error: String,
        /// Attempts so far.
        attempts: u32,
        /// Whether it was given up.
        given_up: bool,
    },
    /// An origin backs off.
    Backoff {
        /// The origin.
        origin: String,
        /// Failures in a row.
        failures: u32,
        /// Until when.
        until: Timestamp,
    },
    /// An origin is paused until a probe succeeds.
    Pause {
        /// The origin.
        origin: String,
        /// When the next probe may go.
        probe_at: Timestamp,
    },
    /// A paused origin's probe succeeded.
    Resume {
        /// The origin.
        origin: String,
    },
    /// Two origins became one.
    Merge {
        /// The origin absorbed.
        absorbed: String,
        /// The origin that remains.
        into: String,
        /// The evidence that linked them.
        evidence: MergeEvidence,
    },
    /// The run ended with only URLs of sites whose robots.txt is unreachable left: they stay
    /// queued for a later run.
    RobotsWaiting {
        /// The URLs left queued.
        urls: u64,
    },
    /// The crawl ended.
    Done {
        /// Pages and media fetched in this run.
        fetched: u64,
        /// Why it ended (`finished`, `max_pages`, `interrupted`).
        reason: EndReason,
        /// Seconds it ran.
        seconds: f64,
    },
}

/// Why a URL was not fetched.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum SkipReason {
    /// robots.txt disallows it.
    Disallowed,
    /// A redirect led out of the crawl's sites.
    OutOfScope,
    /// Its URL cannot be fetched (not HTTP(S), no host, ...).
    NotFetchable,
}

impl std::fmt::Display for SkipReason {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            SkipReason::Disallowed => "disallowed",
            SkipReason::OutOfScope => "out_of_scope",
            SkipReason::NotFetchable => "not_fetchable",
        })
    }
}

/// What showed that two origins are one.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum MergeEvidence {
    /// Hosts answering from the same addresses.
    Addresses,
    /// Hosts serving the same TLS certificate.
    Certificate,
    /// Hosts naming the same backend in their response headers.
    Backend,
    /// The evidence stored by earlier runs groups them (found when the store is loaded).
    #[serde(rename = "stored evidence")]
    Stored,
}

impl std::fmt::Display for MergeEvidence {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            MergeEvidence::Addresses => "addresses",
            MergeEvidence::Certificate => "certificate",
            MergeEvidence::Backend => "backend",
            MergeEvidence::Stored => "stored evidence",
        })
    }
}

/// Why the crawl ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum EndReason {
    /// Nothing left to fetch.
    Finished,
    /// `--max-pages` reached.
    MaxPages,
    /// Stopped (Ctrl-C).
    Interrupted,
}

impl std::fmt::Display for EndReason {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            EndReason::Finished => "finished",
            EndReason::MaxPages => "max_pages",
            EndReason::Interrupted => "interrupted",
        })
    }
}

/// Counters for the progress display and the final summary.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Counters {
    /// Responses received.
    pub fetched: u64,
    /// URLs skipped.
    pub skipped: u64,
    /// Failed requests.
    pub errors: u64,
    /// Body bytes.
    pub bytes: u64,
}

impl Event {
    /// The event as one JSON line.
    pub fn json(&self) -> String {
        serde_json::to_string(self)
            .unwrap_or_else(|_| String::from("{\"event\":\"unserialisable\"}"))
    }
}

/// `1.5 s` style.
pub fn seconds(d: Duration) -> f64 {
    (d.as_secs_f64() * 1000.0).round() / 1000.0
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `--json` lines are read by scripts: the typed reasons serialise to the words they
    /// always had.
    #[test]
    fn reasons_keep_their_json_words() {
        let skip = |reason| Event::Skip {
            url: "https://a.test/x".into(),
            reason,
        };
        assert_eq!(
            skip(SkipReason::Disallowed).json(),
            r#"{"event":"skip","url":"https://a.test/x","reason":"disallowed"}"#
        );
        for (reason, word) in [
            (SkipReason::OutOfScope, "out_of_scope"),
            (SkipReason::NotFetchable, "not_fetchable"),
        ] {
            assert!(skip(reason)
                .json()
                .ends_with(&format!(r#""reason":"{word}"}}"#)));
            assert_eq!(reason.to_string(), word);
        }
        let merge = |evidence| Event::Merge {
            absorbed: "a.test".into(),
            into: "b.test".into(),
            evidence,
        };
        assert_eq!(
            merge(MergeEvidence::Stored).json(),
            r#"{"event":"merge","absorbed":"a.test","into":"b.test","evidence":"stored evidence"}"#
        );
        for (evidence, word) in [
            (MergeEvidence::Addresses, "addresses"),
            (MergeEvidence::Certificate, "certificate"),
            (MergeEvidence::Backend, "backend"),
            (MergeEvidence::Stored, "stored evidence"),
        ] {
            assert!(merge(evidence)
                .json()
                .ends_with(&format!(r#""evidence":"{word}"}}"#)));
            assert_eq!(evidence.to_string(), word);
        }
    }
}
