//! The ranking (the bot page, "Where the data is published"): six domains of each grade,
//! picked at random every 30 minutes, each by its best current score, with totals for every
//! site analysed. The home page and `GET /api/ranking` show this one ranking.
//!
//! "Random" is a hash of the window's number and the domain name: no state to share between
//! processes, the same pick from every `serve` behind one database, and a new window
//! reshuffles every domain.

use std::collections::BTreeMap;

use audit::Grade;
use jiff::Timestamp;
use serde::Serialize;
use url::Url;

use crate::ids::ReportId;
use crate::limits::{RANKING_PER_GRADE, RANKING_WINDOW};
use crate::model::CurrentReport;

/// The grades, best first.
pub const GRADES: [Grade; 5] = [Grade::A, Grade::B, Grade::C, Grade::D, Grade::F];

/// A domain in the ranking, by its best current score among the URLs that may be indexed.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct RankedDomain {
    /// The domain.
    pub domain: String,
    /// Its best current score.
    pub score: u8,
    /// The grade of that score.
    pub grade: Grade,
    /// The report with that score.
    pub report: ReportId,
    /// The URL of that report.
    pub url: Url,
    /// Whether the domain has an icon (the home page shows it).
    #[serde(skip)]
    pub has_icon: bool,
}

/// The ranking of one 30-minute window.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Ranking {
    /// When this window's pick started.
    pub window_start: Timestamp,
    /// Up to [`RANKING_PER_GRADE`] domains of each grade (every grade present), best score
    /// first.
    pub picks: BTreeMap<Grade, Vec<RankedDomain>>,
    /// Every domain analysed, by the grade of its best current score (every grade present):
    /// domains kept off the ranking and URLs that may not be indexed count here too.
    pub totals: BTreeMap<Grade, u64>,
}

/// One 30-minute ranking window, numbered from the Unix epoch: the pick is the same
/// throughout a window, and its number seeds the shuffle. Ordered, so that a ranking of a later
/// window is never replaced by one of an earlier window.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct RankingWindow(i64);

impl RankingWindow {
    /// The seconds of one window (at least 1, so that a window always has a number).
    fn seconds() -> i64 {
        i64::try_from(RANKING_WINDOW.as_secs())
            .unwrap_or(i64::MAX)
            .max(1)
    }

    /// The window `now` falls in.
    pub fn of(now: Timestamp) -> RankingWindow {
        RankingWindow(now.as_second().div_euclid(Self::seconds()))
    }

    /// When this window starts.
    pub fn start(self) -> Timestamp {
        Timestamp::from_second(self.0.saturating_mul(Self::seconds()))
            .unwrap_or(Timestamp::UNIX_EPOCH)
    }

    /// The window's number: windows since the Unix epoch.
    pub fn number(self) -> i64 {
        self.0
    }
}

impl std::ops::Add<i64> for RankingWindow {
    type Output = RankingWindow;

    /// The window `windows` later (earlier when negative).
    fn add(self, windows: i64) -> RankingWindow {
        RankingWindow(self.0.saturating_add(windows))
    }
}

/// The window `now` falls in.
pub fn window_of(now: Timestamp) -> RankingWindow {
    RankingWindow::of(now)
}

/// The ranking of the window containing `now`, from every URL's current report.
pub fn rank(current: &[CurrentReport], now: Timestamp) -> Ranking {
    let window = window_of(now);
    // In (domain, URL) order, so that of two URLs with the same best score the first wins
    // whatever order the store answered in.
    let mut ordered: Vec<&CurrentReport> = current.iter().collect();
    ordered.sort_by(|a, b| (&a.domain, a.url.as_str()).cmp(&(&b.domain, b.url.as_str())));
    let mut rankable: BTreeMap<&str, &CurrentReport> = BTreeMap::new();
    let mut best_of_all: BTreeMap<&str, u8> = BTreeMap::new();
    for report in ordered {
        let best = best_of_all.entry(&report.domain).or_insert(0);
        *best = (*best).max(report.score);
        if report.off_ranking || !report.indexable {
            continue;
        }
        let entry = rankable.entry(&report.domain).or_insert(report);
        if report.score > entry.score {
            *entry = report;
        }
    }
    let mut picks: BTreeMap<Grade, Vec<RankedDomain>> =
        GRADES.iter().map(|&grade| (grade, Vec::new())).collect();
    let mut keyed: BTreeMap<Grade, Vec<(u64, &CurrentReport)>> = BTreeMap::new();
    for (domain, report) in rankable {
        let grade = Grade::from_score(report.score);
        keyed
            .entry(grade)
            .or_default()
            .push((shuffle_key(window, domain), report));
    }
    for (grade, mut of_grade) in keyed {
        of_grade.sort_by(|a, b| a.0.cmp(&b.0).then_with(|| a.1.domain.cmp(&b.1.domain)));
        let mut chosen: Vec<RankedDomain> = of_grade
            .into_iter()
            .take(RANKING_PER_GRADE)
            .map(|(_, report)| RankedDomain {
                domain: report.domain.clone(),
                score: report.score,
                grade,
                report: report.id.clone(),
                url: report.url.clone(),
                has_icon: report.has_icon,
            })
            .collect();
        chosen.sort_by(|a, b| b.score.cmp(&a.score).then_with(|| a.domain.cmp(&b.domain)));
        picks.insert(grade, chosen);
    }
    let mut totals: BTreeMap<Grade, u64> = GRADES.iter().map(|&grade| (grade, 0)).collect();
    for score in best_of_all.values() {
        *totals.entry(Grade::from_score(*score)).or_default() += 1;
    }
    Ranking {
        window_start: window.start(),
        picks,
        totals,
    }
}

/// A well-mixed 64-bit key of (window, domain): FNV-1a of the name, then SplitMix64's
/// finaliser with the window folded in.
fn shuffle_key(window: RankingWindow, domain: &str) -> u64 {
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    for byte in domain.bytes() {
        hash ^= u64::from(byte);
        hash = hash.wrapping_mul(0x0100_0000_01b3);
    }
    let mut z = hash
        ^ u64::from_ne_bytes(window.number().to_ne_bytes()).wrapping_mul(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn current(domain: &str, url: &str, score: u8) -> CurrentReport {
        CurrentReport {
            domain: domain.into(),
            id: ReportId::random().unwrap(),
            url: Url::parse(url).unwrap(),
            created_at: Timestamp::UNIX_EPOCH,
            score,
            indexable: true,
            off_ranking: false,
            has_icon: false,
        }
    }

    #[test]
    fn windows_are_thirty_minutes() {
        let start: Timestamp = "2026-12-03T08:00:00Z".parse().unwrap();
        let later = start + jiff::SignedDuration::from_secs(1_799);
        let next = start + jiff::SignedDuration::from_secs(1_800);
        assert_eq!(window_of(start), window_of(later));
        assert_eq!(window_of(start) + 1, window_of(next));
        assert_eq!(window_of(later).start(), start);
    }

    #[test]
    fn keys_differ_between_windows_and_domains() {
        let (one, two) = (RankingWindow(1), RankingWindow(2));
        assert_ne!(shuffle_key(one, "a.test"), shuffle_key(two, "a.test"));
        assert_ne!(shuffle_key(one, "a.test"), shuffle_key(one, "b.test"));
    }

    #[test]
    fn six_per_grade_by_best_score_the_same_within_a_window() {
        let mut rows: Vec<CurrentReport> = (0..20)
            .map(|n| current(&format!("a{n}.test"), &format!("https://a{n}.test/"), 95))
            .collect();
        rows.push(current("b.test", "https://b.test/1", 50));
        rows.push(current("b.test", "https://b.test/2", 85));
        let t: Timestamp = "2026-03-01T10:05:00Z".parse().unwrap();
        let r = rank(&rows, t);
        assert_eq!(r.picks[&Grade::A].len(), RANKING_PER_GRADE);
        assert_eq!(r.totals[&Grade::A], 20);
        assert_eq!(r.picks[&Grade::B][0].domain, "b.test", "by its best score");
        assert_eq!(r.picks[&Grade::B][0].url.as_str(), "https://b.test/2");
        assert_eq!(r.totals[&Grade::F], 0, "b.test counted once");
        assert_eq!(r.window_start.to_string(), "2026-03-01T10:00:00Z");
        let same = rank(&rows, "2026-03-01T10:29:59Z".parse().unwrap());
        assert_eq!(r.picks, same.picks);
        assert_eq!(
            serde_json::to_value(&r).unwrap()["totals"],
            serde_json::json!({"A": 20, "B": 1, "C": 0, "D": 0, "F": 0})
        );
    }
}
