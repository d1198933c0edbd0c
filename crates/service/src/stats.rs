//! The statistics of `/stats` ("the state of the web"), worked out from the store: grades of
//! every URL's current report, the crawlers named and blocked and the most common findings
//! (from the newest [`MAX_STATS_DOCUMENTS`] current reports' documents), and month by month
//! the reports made, their average score and the share blocking an AI crawler.
//!
//! A document that cannot be read is skipped and logged: one bad row never takes the page down.

use std::collections::{BTreeMap, BTreeSet};

use audit::crawlers::Purpose;
use audit::{Analysis, Grade};
use robots::GroupSelection;
use serde::Serialize;

use crate::error::ServiceError;
use crate::model::{CurrentReport, Month};
use crate::ranking::GRADES;
use crate::store::Store;

/// How many of the most common findings `/stats` lists.
pub const TOP_FINDINGS: usize = 15;

/// How many months `/stats` shows, newest last.
pub const MONTHS_SHOWN: usize = 24;

/// The most documents one statistics pass reads (the newest current reports): the crawler and
/// finding figures are a sample of that size, so the pass stays a few seconds on any store.
pub const MAX_STATS_DOCUMENTS: usize = 5_000;

/// How many sites name and block one notable crawler.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct CrawlerStat {
    /// Its product token.
    pub token: String,
    /// Who runs it.
    pub operator: String,
    /// What it is for.
    pub purpose: Purpose,
    /// Sites whose robots.txt has a group naming it.
    pub named: u64,
    /// Sites whose robots.txt keeps it off `/`.
    pub blocked: u64,
}

impl CrawlerStat {
    /// Whether it is an AI crawler (training, search or user fetches).
    pub fn is_ai(&self) -> bool {
        is_ai(self.purpose)
    }
}

/// One month of reports.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct MonthStat {
    /// The month.
    pub month: Month,
    /// Reports made that month (folded ones included).
    pub reports: u64,
    /// Their average score.
    pub average: f64,
    /// Reports read in full that keep at least one AI crawler off `/`.
    pub blocking_ai: u64,
    /// Reports read in full that month, for the share above.
    pub detailed: u64,
}

/// A finding and how many current reports have it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct FindingStat {
    /// The check's id.
    pub id: String,
    /// The check's title.
    pub title: String,
    /// Reports with at least one such finding.
    pub count: u64,
}

/// What `/stats` shows.
#[derive(Debug, Clone, PartialEq, Default, Serialize)]
pub struct Stats {
    /// URLs with a current report.
    pub sites: u64,
    /// Current reports by grade, in [`GRADES`] order.
    pub grades: Vec<(Grade, u64)>,
    /// Current reports read in full for the crawler and finding figures (at most
    /// [`MAX_STATS_DOCUMENTS`], the newest).
    pub detailed: u64,
    /// Notable crawlers, most often named or blocked first.
    pub crawlers: Vec<CrawlerStat>,
    /// The most common findings, at most [`TOP_FINDINGS`].
    pub findings: Vec<FindingStat>,
    /// Month by month, oldest first, at most [`MONTHS_SHOWN`].
    pub months: Vec<MonthStat>,
}

#[derive(Default)]
struct MonthAcc {
    reports: u64,
    score_sum: f64,
    blocking_ai: u64,
    detailed: u64,
}

/// Builds [`Stats`] from what a store reads.
#[derive(Default)]
struct StatsBuilder {
    sites: u64,
    grades: BTreeMap<Grade, u64>,
    detailed: u64,
    crawlers: BTreeMap<String, CrawlerStat>,
    findings: BTreeMap<String, (String, u64)>,
    months: BTreeMap<Month, MonthAcc>,
}

impl StatsBuilder {
    /// A finished report known by its month and score.
    fn add_score(&mut self, month: Month, score: u8) {
        let acc = self.months.entry(month).or_default();
        acc.reports += 1;
        acc.score_sum += f64::from(score);
    }

    /// A URL's current report, by its score.
    fn add_current(&mut self, score: u8) {
        self.sites += 1;
        *self.grades.entry(Grade::from_score(score)).or_default() += 1;
    }

    /// The full document of a URL's current report: crawlers, findings, and its month's share
    /// of reports blocking an AI crawler.
    fn add_document(&mut self, analysis: &Analysis) {
        self.detailed += 1;
        let blocks_ai = analysis
            .crawlers
            .iter()
            .any(|row| !row.root.allowed && is_ai(row.purpose));
        let acc = self
            .months
            .entry(Month::of(analysis.analysed_at))
            .or_default();
        acc.detailed += 1;
        acc.blocking_ai += u64::from(blocks_ai);
        for row in &analysis.crawlers {
            let stat = self
                .crawlers
                .entry(row.token.clone())
                .or_insert_with(|| CrawlerStat {
                    token: row.token.clone(),
                    operator: row.operator.clone(),
                    purpose: row.purpose,
                    named: 0,
                    blocked: 0,
                });
            stat.named += u64::from(matches!(row.group, GroupSelection::Named(_)));
            stat.blocked += u64::from(!row.root.allowed);
        }
        let mut seen = BTreeSet::new();
        for finding in &analysis.findings {
            let id = finding.id.to_string();
            if seen.insert(id.clone()) {
                let title = finding
                    .id
                    .check()
                    .map_or_else(|| id.clone(), |check| check.title.to_owned());
                self.findings.entry(id).or_insert((title, 0)).1 += 1;
            }
        }
    }

    /// A month of folded reports: how many, and the sum of their scores.
    fn add_folded(&mut self, month: Month, reports: u64, score_sum: u64) {
        let acc = self.months.entry(month).or_default();
        acc.reports += reports;
        acc.score_sum += score_sum as f64;
    }

    fn finish(self) -> Stats {
        let grades = GRADES
            .iter()
            .map(|grade| (*grade, self.grades.get(grade).copied().unwrap_or(0)))
            .collect();
        let mut crawlers: Vec<CrawlerStat> = self.crawlers.into_values().collect();
        crawlers.sort_by(|a, b| {
            (b.named + b.blocked)
                .cmp(&(a.named + a.blocked))
                .then_with(|| a.token.cmp(&b.token))
        });
        let mut findings: Vec<FindingStat> = self
            .findings
            .into_iter()
            .map(|(id, (title, count))| FindingStat { id, title, count })
            .collect();
        findings.sort_by(|a, b| b.count.cmp(&a.count).then_with(|| a.id.cmp(&b.id)));
        findings.truncate(TOP_FINDINGS);
        let skip = self.months.len().saturating_sub(MONTHS_SHOWN);
        let months = self
            .months
            .into_iter()
            .skip(skip)
            .map(|(month, acc)| MonthStat {
                month,
                reports: acc.reports,
                average: if acc.reports == 0 {
                    0.0
                } else {
                    acc.score_sum / acc.reports as f64
                },
                blocking_ai: acc.blocking_ai,
                detailed: acc.detailed,
            })
            .collect();
        Stats {
            sites: self.sites,
            grades,
            detailed: self.detailed,
            crawlers,
            findings,
            months,
        }
    }
}

fn is_ai(purpose: Purpose) -> bool {
    matches!(
        purpose,
        Purpose::AiTraining | Purpose::AiSearch | Purpose::AiUserFetch
    )
}

/// Work out the statistics from `store`, given every URL's current report.
pub(crate) async fn build(store: &Store, current: &[CurrentReport]) -> Result<Stats, ServiceError> {
    let mut builder = StatsBuilder::default();
    for (at, score) in store.done_scores().await? {
        builder.add_score(Month::of(at), score);
    }
    for report in current {
        builder.add_current(report.score);
    }
    let mut newest: Vec<&CurrentReport> = current.iter().collect();
    newest.sort_by_key(|report| std::cmp::Reverse(report.created_at));
    for report in newest.into_iter().take(MAX_STATS_DOCUMENTS) {
        match store.report(&report.id).await {
            Ok(Some(stored)) => {
                if let Some(analysis) = &stored.report {
                    builder.add_document(analysis);
                }
            }
            Ok(None) => {}
            // A stored document that does not decode is left out, not the whole page.
            Err(error) if error.is_bad_row() => {
                tracing::warn!(id = %report.id, error = %error, "statistics: report skipped");
            }
            Err(error) => return Err(error),
        }
    }
    for (month, reports, score_sum) in store.monthly_totals().await? {
        builder.add_folded(month, reports, score_sum);
    }
    Ok(builder.finish())
}
