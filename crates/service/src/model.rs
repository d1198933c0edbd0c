//! The report model: what the store keeps and what the API and the pages show, one type per
//! idea. The pages (`crates/site`) render these types; they hold no model of their own.

use std::fmt;
use std::str::FromStr;

use audit::{Analysis, Grade};
use jiff::tz::TimeZone;
use jiff::Timestamp;
use serde::{Deserialize, Serialize};
use url::Url;

use crate::ids::ReportId;
use crate::indexing::Indexing;

/// Where a report is in its life.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ReportState {
    /// Waiting for a worker.
    Queued,
    /// Being analysed.
    Running,
    /// Finished: the report is there.
    Done,
    /// The analysis could not run (the error says why).
    Failed,
}

impl ReportState {
    /// The stored name.
    pub fn as_str(self) -> &'static str {
        match self {
            ReportState::Queued => "queued",
            ReportState::Running => "running",
            ReportState::Done => "done",
            ReportState::Failed => "failed",
        }
    }

    /// The state of a stored name; `None` for a name this build does not know (a newer
    /// build wrote it).
    pub fn parse(text: &str) -> Option<ReportState> {
        match text {
            "queued" => Some(ReportState::Queued),
            "running" => Some(ReportState::Running),
            "done" => Some(ReportState::Done),
            "failed" => Some(ReportState::Failed),
            _ => None,
        }
    }
}

/// One report's columns (everything but the document and the robots.txt bytes).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ReportRow {
    /// Its unguessable id.
    pub id: ReportId,
    /// The registrable domain (none for a paste).
    pub domain: Option<String>,
    /// The URL analysed (none for a paste).
    pub url: Option<Url>,
    /// A pasted or uploaded file: never listed, ranked or published.
    pub is_paste: bool,
    /// Queued by the schedule rather than by a person.
    pub scheduled: bool,
    /// Where it is in its life.
    pub state: ReportState,
    /// When it was asked for.
    pub created_at: Timestamp,
    /// When the analysis ran (done reports).
    pub analysed_at: Option<Timestamp>,
    /// The score, 0–100 (done reports).
    pub score: Option<u8>,
    /// The grade (done reports).
    pub grade: Option<Grade>,
    /// Whether the page may be indexed and ranked, by this report alone (see
    /// [`crate::indexing`]; the URL's newest report decides for its older ones).
    pub indexable: bool,
    /// Why the analysis could not run (failed reports), in words for the person who asked.
    pub error: Option<String>,
}

impl ReportRow {
    /// The page's path of this report (`/score/{domain}/{id}`, `/paste/{id}`).
    pub fn path(&self) -> String {
        match (&self.domain, self.is_paste) {
            (Some(domain), false) => crate::paths::report(domain, &self.id),
            _ => crate::paths::paste(&self.id),
        }
    }
}

/// A report with its document.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct StoredReport {
    /// Its columns.
    #[serde(flatten)]
    pub row: ReportRow,
    /// The full analysis, when done (robots.txt's text restored from the stored bytes).
    pub report: Option<Analysis>,
    /// robots.txt as stored (bytes), when done.
    #[serde(skip)]
    pub robots_body: Option<Vec<u8>>,
}

/// What a report's page shows: the report, the previous report of its URL (what changed), and
/// what search engines are told about it.
#[derive(Clone, Debug, PartialEq)]
pub struct ReportPage {
    /// The report.
    pub report: StoredReport,
    /// The newest finished report of the same URL before this one, if it can be read.
    pub previous: Option<Analysis>,
    /// Whether search engines may index the page (the URL's newest report decides).
    pub indexing: Indexing,
}

/// What a report's address (`/score/{domain}/{id}`) leads to.
#[derive(Clone, Debug, PartialEq)]
pub enum ReportLookup {
    /// The report.
    Found(Box<ReportPage>),
    /// It was folded into its domain's monthly summaries: the domain page has what is left.
    Folded,
    /// No such report of this domain.
    Missing,
}

/// A calendar month (UTC), the unit reports are folded in: `2026-01`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Month {
    year: i16,
    month: i8,
}

/// Why a text is not a month.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("not a month (YYYY-MM)")]
pub struct BadMonth;

impl Month {
    /// The month `year-month`, if it is one (years 1–9999).
    pub fn new(year: i16, month: i8) -> Option<Month> {
        ((1..=9999).contains(&year) && (1..=12).contains(&month)).then_some(Month { year, month })
    }

    /// The month (UTC) `at` falls in.
    pub fn of(at: Timestamp) -> Month {
        let date = at.to_zoned(TimeZone::UTC).date();
        Month {
            year: date.year(),
            month: date.month(),
        }
    }

    /// The year.
    pub fn year(self) -> i16 {
        self.year
    }

    /// The month of the year, 1 to 12.
    pub fn number(self) -> i8 {
        self.month
    }

    /// Its first instant (UTC).
    pub fn start(self) -> Timestamp {
        jiff::civil::Date::new(self.year, self.month, 1)
            .and_then(|date| date.to_zoned(TimeZone::UTC))
            .map_or(Timestamp::UNIX_EPOCH, |zoned| zoned.timestamp())
    }
}

impl fmt::Display for Month {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:04}-{:02}", self.year, self.month)
    }
}

impl FromStr for Month {
    type Err = BadMonth;

    fn from_str(text: &str) -> Result<Month, BadMonth> {
        let (year, month) = text.split_once('-').ok_or(BadMonth)?;
        if year.len() != 4 || month.len() != 2 {
            return Err(BadMonth);
        }
        let year = year.parse().map_err(|_| BadMonth)?;
        let month = month.parse().map_err(|_| BadMonth)?;
        Month::new(year, month).ok_or(BadMonth)
    }
}

impl Serialize for Month {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_str(self)
    }
}

impl<'de> Deserialize<'de> for Month {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Month, D::Error> {
        let text = String::deserialize(deserializer)?;
        text.parse().map_err(serde::de::Error::custom)
    }
}

/// One month of a domain's reports, folded: what is left of them after retention.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct MonthlySummary {
    /// The month (UTC).
    pub month: Month,
    /// Reports folded.
    pub reports: u64,
    /// Distinct URLs they covered.
    pub urls: u64,
    /// Best score.
    pub best: u8,
    /// Average score.
    pub average: f64,
    /// Lowest score.
    pub lowest: u8,
}

/// A domain's page: its reports (newest first) and monthly summaries (newest month first).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct DomainView {
    /// The domain.
    pub domain: String,
    /// Its reports, newest first, at most [`crate::limits::MAX_DOMAIN_REPORTS`].
    pub reports: Vec<ReportRow>,
    /// How many reports it has in all.
    pub total_reports: u64,
    /// The monthly summaries of earlier reports.
    pub summaries: Vec<MonthlySummary>,
    /// Whether it is kept off the ranking.
    pub off_ranking: bool,
    /// Whether search engines may index the domain's page: when at least one of its URLs may
    /// be indexed, by that URL's newest report.
    pub indexable: bool,
    /// Whether it has an icon (the page shows it; not part of the API's answer).
    #[serde(skip)]
    pub has_icon: bool,
}

impl DomainView {
    /// What search engines are told about the domain's page.
    pub fn indexing(&self) -> Indexing {
        if self.indexable {
            Indexing::default()
        } else {
            Indexing::forbidden(crate::indexing::NoindexReason::NoIndexableUrl)
        }
    }

    /// The finished reports (the page lists those).
    pub fn finished(&self) -> impl Iterator<Item = &ReportRow> {
        self.reports
            .iter()
            .filter(|row| row.state == ReportState::Done && row.score.is_some())
    }
}

/// The newest finished report of one URL (no pastes): what the ranking, its totals, the
/// statistics and the sitemap are made of.
#[derive(Clone, Debug, PartialEq)]
pub struct CurrentReport {
    /// The domain.
    pub domain: String,
    /// The report.
    pub id: ReportId,
    /// The URL.
    pub url: Url,
    /// When it was asked for.
    pub created_at: Timestamp,
    /// Its score.
    pub score: u8,
    /// Whether the URL may be indexed and ranked (this newest report decides).
    pub indexable: bool,
    /// Whether its domain is kept off the ranking.
    pub off_ranking: bool,
    /// Whether its domain has an icon.
    pub has_icon: bool,
}

/// A submission accepted: the report that answers it.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Submitted {
    /// The report's id.
    pub id: ReportId,
    /// Its state now.
    pub state: ReportState,
    /// Whether it is a report of less than 10 minutes ago, given again instead of a new one.
    pub reused: bool,
    /// The report's page on this site (`/score/{domain}/{id}`, `/paste/{id}`).
    #[serde(skip)]
    pub path: String,
    /// The report's page, absolute.
    pub address: String,
    /// The report as JSON (`/api/report/{id}`), absolute.
    pub api: String,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn months_read_and_write_as_yyyy_mm() {
        let month: Month = "2026-01".parse().unwrap();
        assert_eq!((month.year(), month.number()), (2026, 1));
        assert_eq!(month.to_string(), "2026-01");
        assert_eq!(month.start().to_string(), "2026-01-01T00:00:00Z");
        assert_eq!(Month::of("2026-01-31T23:59:59Z".parse().unwrap()), month);
        for bad in [
            "2026-13", "2026-1", "26-01", "2026", "", "2026-00", "abcd-ef",
        ] {
            assert!(bad.parse::<Month>().is_err(), "{bad}");
        }
        assert_eq!(serde_json::to_string(&month).unwrap(), "\"2026-01\"");
    }

    #[test]
    fn states_round_trip_and_unknown_ones_are_not_read() {
        for state in [
            ReportState::Queued,
            ReportState::Running,
            ReportState::Done,
            ReportState::Failed,
        ] {
            assert_eq!(ReportState::parse(state.as_str()), Some(state));
        }
        assert_eq!(ReportState::parse("archived"), None);
    }
}
