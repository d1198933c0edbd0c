//! The home page's ranking: six domains of each grade, picked at random every 30 minutes, the
//! same pick for everyone within a window, and the totals by grade.
//!
//! "Random" is a hash of the window's number and the domain name: no state to share between
//! processes, the same answer from every `serve` behind one database, and a new window
//! reshuffles every domain.

use std::collections::BTreeMap;

use audit::Grade;
use jiff::Timestamp;

use crate::data::CurrentReport;

/// How many domains of each grade the ranking shows.
pub const PER_GRADE: usize = 6;

/// How long one pick lasts, in seconds (30 minutes).
pub const WINDOW_SECONDS: i64 = 30 * 60;

/// Every grade, best first.
pub const GRADES: [Grade; 5] = [Grade::A, Grade::B, Grade::C, Grade::D, Grade::F];

/// One domain in the ranking.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RankedDomain {
    /// The domain.
    pub domain: String,
    /// Its best current score (over the URLs that may be indexed).
    pub score: u8,
    /// Whether it has an icon.
    pub has_icon: bool,
}

/// The ranking of one window.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Ranking {
    /// The window's number (seconds since the epoch / [`WINDOW_SECONDS`]).
    pub window: i64,
    /// The picked domains of each grade, in [`GRADES`] order, best score first.
    pub picks: Vec<(Grade, Vec<RankedDomain>)>,
    /// How many sites (domains) have each grade, by their best current score, in [`GRADES`]
    /// order.
    pub totals: Vec<(Grade, u64)>,
}

/// The window `now` falls in.
pub fn window_of(now: Timestamp) -> i64 {
    now.as_second().div_euclid(WINDOW_SECONDS)
}

/// The ranking at `now` from the newest report of every URL.
pub fn rank(current: &[CurrentReport], now: Timestamp) -> Ranking {
    let window = window_of(now);
    let mut rankable: BTreeMap<&str, RankedDomain> = BTreeMap::new();
    let mut best_of_all: BTreeMap<&str, u8> = BTreeMap::new();
    for report in current {
        let best = best_of_all.entry(&report.domain).or_insert(0);
        *best = (*best).max(report.score);
        if report.domain_off_ranking || !report.indexable {
            continue;
        }
        let entry = rankable
            .entry(&report.domain)
            .or_insert_with(|| RankedDomain {
                domain: report.domain.clone(),
                score: 0,
                has_icon: report.has_icon,
            });
        entry.score = entry.score.max(report.score);
    }
    let picks = GRADES
        .iter()
        .map(|&grade| (grade, pick(&rankable, grade, window)))
        .collect();
    let totals = GRADES
        .iter()
        .map(|&grade| {
            let count = best_of_all
                .values()
                .filter(|&&score| Grade::from_score(score) == grade)
                .count();
            (grade, count as u64)
        })
        .collect();
    Ranking {
        window,
        picks,
        totals,
    }
}

fn pick(rankable: &BTreeMap<&str, RankedDomain>, grade: Grade, window: i64) -> Vec<RankedDomain> {
    let mut of_grade: Vec<(u64, &RankedDomain)> = rankable
        .values()
        .filter(|domain| Grade::from_score(domain.score) == grade)
        .map(|domain| (shuffle_key(window, &domain.domain), domain))
        .collect();
    of_grade.sort_by(|a, b| a.0.cmp(&b.0).then_with(|| a.1.domain.cmp(&b.1.domain)));
    let mut picked: Vec<RankedDomain> = of_grade
        .into_iter()
        .take(PER_GRADE)
        .map(|(_, domain)| domain.clone())
        .collect();
    picked.sort_by(|a, b| b.score.cmp(&a.score).then_with(|| a.domain.cmp(&b.domain)));
    picked
}

/// A well-mixed 64-bit key of (window, domain): FNV-1a of the name, then SplitMix64's
/// finaliser with the window folded in.
fn shuffle_key(window: i64, domain: &str) -> u64 {
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    for byte in domain.bytes() {
        hash ^= u64::from(byte);
        hash = hash.wrapping_mul(0x0100_0000_01b3);
    }
    let mut z = hash ^ (window as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn windows_are_thirty_minutes() {
        let start: Timestamp = "2026-12-03T08:00:00Z".parse().unwrap();
        let later = start + jiff::SignedDuration::from_secs(WINDOW_SECONDS - 1);
        let next = start + jiff::SignedDuration::from_secs(WINDOW_SECONDS);
        assert_eq!(window_of(start), window_of(later));
        assert_eq!(window_of(start) + 1, window_of(next));
    }

    #[test]
    fn keys_differ_between_windows() {
        assert_ne!(shuffle_key(1, "a.test"), shuffle_key(2, "a.test"));
        assert_ne!(shuffle_key(1, "a.test"), shuffle_key(1, "b.test"));
    }
}
