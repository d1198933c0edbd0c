//! The ranking (the bot page, "Where the data is published"): each domain by its best current
//! score, six domains of each grade picked at random every 30 minutes (the same pick for
//! everyone within a window), and totals by grade of every domain that may be ranked.

use std::collections::BTreeMap;

use audit::Grade;
use jiff::Timestamp;
use serde::Serialize;

use crate::limits::{RANKING_PER_GRADE, RANKING_WINDOW};
use crate::store::RankingRow;

/// The grades, best first.
pub const GRADES: [Grade; 5] = [Grade::A, Grade::B, Grade::C, Grade::D, Grade::F];

/// A domain in the ranking, by its best current score.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct RankedDomain {
    /// The domain.
    pub domain: String,
    /// Its best current score.
    pub score: u8,
    /// The grade of that score.
    pub grade: String,
    /// The report with that score.
    pub report: String,
    /// The URL of that report.
    pub url: String,
}

/// The ranking of one 30-minute window.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Ranking {
    /// When this window's pick started.
    pub window_start: Timestamp,
    /// Up to [`RANKING_PER_GRADE`] domains per grade, best score first.
    pub picks: BTreeMap<String, Vec<RankedDomain>>,
    /// Domains per grade, all of them.
    pub totals: BTreeMap<String, u64>,
}

/// A 64-bit mix (splitmix64): the same input, the same pick.
fn mix(mut x: u64) -> u64 {
    x = x.wrapping_add(0x9e37_79b9_7f4a_7c15);
    x = (x ^ (x >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    x = (x ^ (x >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    x ^ (x >> 31)
}

fn key(window: u64, domain: &str) -> u64 {
    domain
        .bytes()
        .fold(mix(window), |h, b| mix(h ^ u64::from(b)))
}

/// Build the ranking of the window containing `now` from every URL's current report.
pub fn ranking(rows: &[RankingRow], now: Timestamp) -> Ranking {
    let mut best: BTreeMap<&str, &RankingRow> = BTreeMap::new();
    for row in rows {
        let entry = best.entry(row.domain.as_str()).or_insert(row);
        if row.score > entry.score {
            *entry = row;
        }
    }
    let window_secs = RANKING_WINDOW.as_secs().max(1);
    let window = u64::try_from(now.as_second()).unwrap_or(0) / window_secs;
    let window_start = Timestamp::from_second(i64::try_from(window * window_secs).unwrap_or(0))
        .unwrap_or(Timestamp::UNIX_EPOCH);
    let mut picks: BTreeMap<String, Vec<RankedDomain>> = BTreeMap::new();
    let mut totals: BTreeMap<String, u64> = GRADES.iter().map(|g| (g.to_string(), 0)).collect();
    let mut by_grade: BTreeMap<String, Vec<(u64, RankedDomain)>> = BTreeMap::new();
    for (domain, row) in best {
        let grade = Grade::from_score(row.score).to_string();
        *totals.entry(grade.clone()).or_default() += 1;
        let ranked = RankedDomain {
            domain: domain.to_owned(),
            score: row.score,
            grade: grade.clone(),
            report: row.id.clone(),
            url: row.url.clone(),
        };
        by_grade
            .entry(grade)
            .or_default()
            .push((key(window, domain), ranked));
    }
    for grade in GRADES {
        let mut all = by_grade.remove(&grade.to_string()).unwrap_or_default();
        all.sort_by_key(|(k, _)| *k);
        let mut chosen: Vec<RankedDomain> = all
            .into_iter()
            .take(RANKING_PER_GRADE)
            .map(|(_, d)| d)
            .collect();
        chosen.sort_by(|a, b| b.score.cmp(&a.score).then_with(|| a.domain.cmp(&b.domain)));
        picks.insert(grade.to_string(), chosen);
    }
    Ranking {
        window_start,
        picks,
        totals,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(domain: &str, url: &str, score: u8) -> RankingRow {
        RankingRow {
            domain: domain.into(),
            url: url.into(),
            id: format!("id-{url}"),
            score,
            grade: Grade::from_score(score).to_string(),
        }
    }

    #[test]
    fn six_per_grade_by_best_score_the_same_within_a_window() {
        let mut rows: Vec<RankingRow> = (0..20)
            .map(|n| row(&format!("a{n}.test"), &format!("https://a{n}.test/"), 95))
            .collect();
        rows.push(row("b.test", "https://b.test/1", 50));
        rows.push(row("b.test", "https://b.test/2", 85));
        let t: Timestamp = "2026-03-01T10:05:00Z".parse().unwrap();
        let r = ranking(&rows, t);
        assert_eq!(r.picks["A"].len(), RANKING_PER_GRADE);
        assert_eq!(r.totals["A"], 20);
        assert_eq!(r.picks["B"][0].domain, "b.test", "by its best score");
        assert_eq!(r.totals["F"], 0, "b.test counted once");
        assert_eq!(r.window_start.to_string(), "2026-03-01T10:00:00Z");
        let same = ranking(&rows, "2026-03-01T10:29:59Z".parse().unwrap());
        assert_eq!(r.picks, same.picks);
        let windows: std::collections::BTreeSet<Vec<String>> = (0..8)
            .map(|w| {
                let t = Timestamp::from_second(1_800 * (1_000_000 + w)).unwrap();
                ranking(&rows, t).picks["A"]
                    .iter()
                    .map(|d| d.domain.clone())
                    .collect()
            })
            .collect();
        assert!(windows.len() > 1, "the pick changes between windows");
    }
}
