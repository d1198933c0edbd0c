//! The score out of 100 and the letter grade: deterministic, every point tied to a finding.
//!
//! The method (published in `SCORING.md`):
//! 1. Start at 100.
//! 2. Each finding deducts the points of its severity ([`points`]): info never deducts. The
//!    severity is the one stored in the finding, so a stored report scores the same later.
//! 3. A check deducts for at most [`MAX_OCCURRENCES_PER_CHECK`] of its findings.
//! 4. Notices deduct at most [`MAX_NOTICE_POINTS`] in all.
//! 5. The score cannot go below 0.
//! 6. Any critical finding caps the score at [`CRITICAL_CAP`] (grade F); any error caps it at
//!    [`ERROR_CAP`] (no A with an error).
//! 7. Grades: A from [`GRADE_A`], B from [`GRADE_B`], C from [`GRADE_C`], D from [`GRADE_D`],
//!    F below.

use std::collections::BTreeMap;
use std::fmt;

use serde::{Deserialize, Serialize};

use crate::catalogue::{CheckId, Severity};
use crate::finding::Finding;

/// The version of the scoring method; bumped whenever a score could change.
///
/// 2: a robots.txt answering an unexpected status (3xx without `Location`, 1xx, 6xx and above)
/// or redirecting too many times or in a loop is critical, as the bot disallows everything.
/// 3: two new warnings, for lines crawlers read in two ways: a `Crawl-delay` splitting a list
/// of `User-agent` lines, and a `User-agent: *name*`.
pub const SCORING_VERSION: &str = "3";
/// The score of a file with no deducting finding.
pub const MAX_SCORE: u8 = 100;
/// A check deducts for at most this many of its findings.
pub const MAX_OCCURRENCES_PER_CHECK: usize = 3;
/// Notices deduct at most this many points in all.
pub const MAX_NOTICE_POINTS: u32 = 5;
/// With any critical finding the score is at most this (grade F).
pub const CRITICAL_CAP: u8 = 39;
/// With any error the score is at most this (grade B at best).
pub const ERROR_CAP: u8 = 89;
/// Lowest score of grade A.
pub const GRADE_A: u8 = 90;
/// Lowest score of grade B.
pub const GRADE_B: u8 = 80;
/// Lowest score of grade C.
pub const GRADE_C: u8 = 70;
/// Lowest score of grade D.
pub const GRADE_D: u8 = 60;

/// Points one finding of this severity deducts.
pub const fn points(severity: Severity) -> u32 {
    match severity {
        Severity::Critical => 40,
        Severity::Error => 12,
        Severity::Warning => 5,
        Severity::Notice => 1,
        Severity::Info => 0,
    }
}

/// A letter grade.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub enum Grade {
    /// 90–100.
    A,
    /// 80–89.
    B,
    /// 70–79.
    C,
    /// 60–69.
    D,
    /// 0–59.
    F,
}

impl Grade {
    /// The grade of a score.
    pub fn from_score(score: u8) -> Grade {
        match score {
            s if s >= GRADE_A => Grade::A,
            s if s >= GRADE_B => Grade::B,
            s if s >= GRADE_C => Grade::C,
            s if s >= GRADE_D => Grade::D,
            _ => Grade::F,
        }
    }
}

impl fmt::Display for Grade {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Grade::A => "A",
            Grade::B => "B",
            Grade::C => "C",
            Grade::D => "D",
            Grade::F => "F",
        })
    }
}

/// The points one check deducted.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Deduction {
    /// The check.
    pub id: CheckId,
    /// Its severity.
    pub severity: Severity,
    /// How many findings it made.
    pub findings: usize,
    /// How many of them deducted (at most [`MAX_OCCURRENCES_PER_CHECK`]).
    pub counted: usize,
    /// Points deducted, after the notice cap.
    pub points: u32,
}

/// A cap that lowered the score.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CapApplied {
    /// The finding that imposed it (the first of its severity).
    pub id: CheckId,
    /// The cap.
    pub max_score: u8,
}

/// The score and how it was reached.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Score {
    /// 0–100.
    pub score: u8,
    /// The letter grade.
    pub grade: Grade,
    /// Points deducted per check, in catalogue order.
    pub deductions: Vec<Deduction>,
    /// The cap that applied, if any lowered the score.
    pub cap: Option<CapApplied>,
    /// The scoring method's version ([`SCORING_VERSION`]).
    pub method_version: String,
}

impl Score {
    /// Scores a list of findings, by the severity each finding carries.
    pub fn compute(findings: &[Finding]) -> Score {
        // Per check: how many findings, and the severity of the first.
        let mut per_check: BTreeMap<&CheckId, (usize, Severity)> = BTreeMap::new();
        for finding in findings {
            per_check
                .entry(&finding.id)
                .or_insert((0, finding.severity))
                .0 += 1;
        }
        let mut deductions = Vec::new();
        let mut notice_points = 0u32;
        let mut total = 0u32;
        for (&id, &(count, severity)) in &per_check {
            let counted = count.min(MAX_OCCURRENCES_PER_CHECK);
            let mut deducted = points(severity).saturating_mul(counted as u32);
            if severity == Severity::Notice {
                deducted = deducted.min(MAX_NOTICE_POINTS - notice_points);
                notice_points += deducted;
            }
            total = total.saturating_add(deducted);
            if points(severity) > 0 {
                deductions.push(Deduction {
                    id: id.clone(),
                    severity,
                    findings: count,
                    counted,
                    points: deducted,
                });
            }
        }
        let raw = u32::from(MAX_SCORE).saturating_sub(total);
        let raw = u8::try_from(raw).unwrap_or(MAX_SCORE);
        let worst = |wanted: Severity| {
            per_check
                .iter()
                .find(|(_, (_, severity))| *severity == wanted)
                .map(|(&id, _)| id.clone())
        };
        let cap = [
            (Severity::Critical, CRITICAL_CAP),
            (Severity::Error, ERROR_CAP),
        ]
        .into_iter()
        .find_map(|(severity, max)| worst(severity).map(|id| (id, max)));
        let (score, cap) = match cap {
            Some((id, max_score)) if raw > max_score => {
                (max_score, Some(CapApplied { id, max_score }))
            }
            _ => (raw, None),
        };
        Score {
            score,
            grade: Grade::from_score(score),
            deductions,
            cap,
            method_version: SCORING_VERSION.to_owned(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::catalogue::CHECKS;
    use crate::finding::Evidence;

    fn findings(ids: &[CheckId]) -> Vec<Finding> {
        ids.iter()
            .map(|id| Finding::new(id.clone(), Evidence::default()))
            .collect()
    }

    #[test]
    fn no_findings_is_a_perfect_a() {
        let score = Score::compute(&[]);
        assert_eq!(score.score, 100);
        assert_eq!(score.grade, Grade::A);
        assert!(score.deductions.is_empty());
        assert_eq!(score.method_version, SCORING_VERSION);
    }

    #[test]
    fn info_never_deducts() {
        let infos: Vec<CheckId> = CHECKS
            .iter()
            .filter(|check| check.severity == Severity::Info)
            .map(|check| check.id.clone())
            .collect();
        assert!(!infos.is_empty());
        let score = Score::compute(&findings(&infos));
        assert_eq!(score.score, 100);
        assert!(score.deductions.is_empty());
    }

    #[test]
    fn a_check_counts_at_most_three_times() {
        let score = Score::compute(&findings(&vec![CheckId::SyntaxUnknownField; 7]));
        assert_eq!(score.score, 85);
        assert_eq!(score.deductions[0].findings, 7);
        assert_eq!(score.deductions[0].counted, 3);
        assert_eq!(score.deductions[0].points, 15);
    }

    #[test]
    fn notices_deduct_at_most_five_in_all() {
        let ids = [
            CheckId::SyntaxBom,
            CheckId::SyntaxNonAscii,
            CheckId::SyntaxNonAscii,
            CheckId::LogicRuleRepeated,
            CheckId::LogicRuleRepeated,
            CheckId::LogicRuleRedundant,
            CheckId::SitemapDuplicate,
        ];
        let score = Score::compute(&findings(&ids));
        assert_eq!(score.score, 95);
        let total: u32 = score.deductions.iter().map(|d| d.points).sum();
        assert_eq!(total, 5);
    }

    #[test]
    fn a_critical_finding_caps_at_f() {
        let score = Score::compute(&findings(&[CheckId::LogicBlocksAll]));
        assert_eq!(score.score, 39);
        assert_eq!(score.grade, Grade::F);
        assert_eq!(
            score.cap,
            Some(CapApplied {
                id: CheckId::LogicBlocksAll,
                max_score: 39
            })
        );
    }

    #[test]
    fn an_error_rules_out_an_a() {
        let score = Score::compute(&findings(&[CheckId::SyntaxMissingColon]));
        assert_eq!(score.score, 88);
        assert_eq!(score.grade, Grade::B);
        assert_eq!(score.cap, None);
    }

    #[test]
    fn the_score_floors_at_zero() {
        let ids = [
            CheckId::FetchServerError,
            CheckId::LogicBlocksAll,
            CheckId::FetchUnreachable,
        ];
        let score = Score::compute(&findings(&ids));
        assert_eq!(score.score, 0);
        assert_eq!(score.grade, Grade::F);
    }

    #[test]
    fn grade_bands_are_pinned() {
        assert_eq!(Grade::from_score(100), Grade::A);
        assert_eq!(Grade::from_score(GRADE_A), Grade::A);
        assert_eq!(Grade::from_score(89), Grade::B);
        assert_eq!(Grade::from_score(GRADE_B), Grade::B);
        assert_eq!(Grade::from_score(79), Grade::C);
        assert_eq!(Grade::from_score(GRADE_C), Grade::C);
        assert_eq!(Grade::from_score(69), Grade::D);
        assert_eq!(Grade::from_score(GRADE_D), Grade::D);
        assert_eq!(Grade::from_score(59), Grade::F);
        assert_eq!(Grade::from_score(0), Grade::F);
    }

    #[test]
    fn stored_severities_score_even_for_unknown_checks() {
        // A report stored with a check this version no longer knows scores as it did.
        let mut retired = Finding::new(
            CheckId::Unknown("syntax.retired".into()),
            Evidence::default(),
        );
        retired.severity = Severity::Error;
        let score = Score::compute(&[retired]);
        assert_eq!(score.score, 88);
        assert_eq!(
            score.deductions[0].id,
            CheckId::Unknown("syntax.retired".into())
        );
        // And the severity stored wins over today's catalogue.
        let mut softened = Finding::new(CheckId::LogicBlocksAll, Evidence::default());
        softened.severity = Severity::Warning;
        assert_eq!(Score::compute(&[softened]).score, 95);
    }

    #[test]
    fn every_deducted_point_is_tied_to_a_check() {
        let ids = [
            CheckId::SitemapNone,
            CheckId::SyntaxFieldTypo,
            CheckId::SyntaxBom,
        ];
        let score = Score::compute(&findings(&ids));
        let total: u32 = score.deductions.iter().map(|d| d.points).sum();
        assert_eq!(u32::from(MAX_SCORE) - total, u32::from(score.score));
        assert_eq!(score.score, 100 - 5 - 12 - 1);
    }
}
