//! The aggregates of `/stats` ("State of the web") and the builder a store feeds its reports
//! into.

use std::collections::BTreeMap;

use audit::crawlers::Purpose;
use audit::{Analysis, Grade};
use jiff::Timestamp;
use robots::GroupSelection;
use serde::{Deserialize, Serialize};

use crate::data::MonthlySummary;
use crate::ranking::GRADES;

/// How many of the most common findings `/stats` lists.
pub const TOP_FINDINGS: usize = 15;

/// How many months `/stats` shows, newest last.
pub const MONTHS_SHOWN: usize = 24;

/// How many sites name and block one notable crawler.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
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
        matches!(
            self.purpose,
            Purpose::AiTraining | Purpose::AiSearch | Purpose::AiUserFetch
        )
    }
}

/// One month of reports.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MonthStat {
    /// `2026-11`.
    pub month: String,
    /// Reports made that month (folded ones included).
    pub reports: u64,
    /// Their average score.
    pub average: f64,
    /// Reports (still stored) that keep at least one AI crawler off `/`.
    pub blocking_ai: u64,
    /// Reports still stored, for the share above.
    pub detailed: u64,
}

/// What `/stats` shows.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct Stats {
    /// Sites (current reports) counted.
    pub sites: u64,
    /// Current reports by grade, in [`GRADES`] order.
    pub grades: Vec<(Grade, u64)>,
    /// Notable crawlers, most often named first.
    pub crawlers: Vec<CrawlerStat>,
    /// The most common findings: check id, title and how many sites have one.
    pub findings: Vec<(String, String, u64)>,
    /// Month by month, oldest first.
    pub months: Vec<MonthStat>,
}

#[derive(Default)]
struct MonthAcc {
    reports: u64,
    score_sum: f64,
    blocking_ai: u64,
    detailed: u64,
}

/// Builds [`Stats`]: feed every stored report once with [`StatsBuilder::add`] (saying
/// whether it is its URL's newest), and every monthly summary with
/// [`StatsBuilder::add_summary`].
#[derive(Default)]
pub struct StatsBuilder {
    sites: u64,
    grades: BTreeMap<Grade, u64>,
    crawlers: BTreeMap<String, CrawlerStat>,
    findings: BTreeMap<String, (String, u64)>,
    months: BTreeMap<String, MonthAcc>,
}

impl StatsBuilder {
    /// An empty builder.
    pub fn new() -> StatsBuilder {
        StatsBuilder::default()
    }

    /// Counts one report; `current` when it is the newest of its URL (the state of the web
    /// now is made of those).
    pub fn add(&mut self, analysis: &Analysis, current: bool) {
        self.add_score(analysis.analysed_at, analysis.score);
        self.add_month_detail(analysis);
        if current {
            self.add_current(analysis);
        }
    }

    /// Counts a report known only by its time and score (a store's cheap column read), for
    /// the month-by-month figures.
    pub fn add_score(&mut self, at: Timestamp, score: u8) {
        let acc = self.months.entry(month_of(at)).or_default();
        acc.reports += 1;
        acc.score_sum += f64::from(score);
    }

    /// Counts the full document of a URL's newest report: grades, crawlers, findings, and
    /// its month's share of sites blocking an AI crawler. Use with [`StatsBuilder::add_score`]
    /// for the same report.
    pub fn add_current_document(&mut self, analysis: &Analysis) {
        self.add_month_detail(analysis);
        self.add_current(analysis);
    }

    fn add_month_detail(&mut self, analysis: &Analysis) {
        let blocks_ai = analysis
            .crawlers
            .iter()
            .any(|row| !row.root.allowed && is_ai(row.purpose));
        let acc = self
            .months
            .entry(month_of(analysis.analysed_at))
            .or_default();
        acc.detailed += 1;
        acc.blocking_ai += u64::from(blocks_ai);
    }

    fn add_current(&mut self, analysis: &Analysis) {
        self.sites += 1;
        *self.grades.entry(analysis.grade).or_default() += 1;
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
        let mut seen = std::collections::BTreeSet::new();
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

    /// Counts a month of folded reports.
    pub fn add_summary(&mut self, summary: &MonthlySummary) {
        let month = format!("{:04}-{:02}", summary.year, summary.month);
        let acc = self.months.entry(month).or_default();
        acc.reports += u64::from(summary.reports);
        acc.score_sum += summary.average * f64::from(summary.reports);
    }

    /// The aggregates.
    pub fn finish(self) -> Stats {
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
        let mut findings: Vec<(String, String, u64)> = self
            .findings
            .into_iter()
            .map(|(id, (title, count))| (id, title, count))
            .collect();
        findings.sort_by(|a, b| b.2.cmp(&a.2).then_with(|| a.0.cmp(&b.0)));
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
            crawlers,
            findings,
            months,
        }
    }
}

fn month_of(at: Timestamp) -> String {
    at.strftime("%Y-%m").to_string()
}

fn is_ai(purpose: Purpose) -> bool {
    matches!(
        purpose,
        Purpose::AiTraining | Purpose::AiSearch | Purpose::AiUserFetch
    )
}
