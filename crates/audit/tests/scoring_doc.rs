//! `SCORING.md` (rendered on the site as "How scoring works") matches the code.

use audit::score::{
    points, CRITICAL_CAP, ERROR_CAP, GRADE_A, GRADE_B, GRADE_C, GRADE_D, MAX_NOTICE_POINTS,
    MAX_OCCURRENCES_PER_CHECK, SCORING_VERSION,
};
use audit::{Severity, CHECKS};

fn doc() -> String {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../SCORING.md");
    std::fs::read_to_string(path).expect("SCORING.md at the repository root")
}

#[test]
fn every_check_is_listed_with_its_severity_and_points() {
    let doc = doc();
    for check in CHECKS {
        let row = format!(
            "| `{}` | {} | {} | {} |",
            check.id,
            check.title,
            check.severity,
            points(check.severity)
        );
        assert!(doc.contains(&row), "SCORING.md lacks or misstates: {row}");
    }
}

#[test]
fn the_constants_are_the_published_ones() {
    let doc = doc();
    assert!(doc.contains(&format!("scoring method version {SCORING_VERSION}")));
    for severity in Severity::ALL {
        assert!(doc.contains(&format!("| {severity} | {} |", points(severity))));
    }
    assert!(doc.contains(&format!("at most **{MAX_OCCURRENCES_PER_CHECK}**")));
    assert!(doc.contains(&format!("at most **{MAX_NOTICE_POINTS} points in all**")));
    assert!(doc.contains(&format!("at **{CRITICAL_CAP}**")));
    assert!(doc.contains(&format!("at **{ERROR_CAP}**")));
    for (grade, low) in [
        ("A", GRADE_A),
        ("B", GRADE_B),
        ("C", GRADE_C),
        ("D", GRADE_D),
    ] {
        assert!(
            doc.contains(&format!("| {grade} | {low}–")),
            "grade {grade}"
        );
    }
}

#[test]
fn the_worked_example_holds() {
    let body = b"User-agent: *\nDissallow: /a\nDisallow: /b\nDisallow: /b\n";
    let analysis = audit::analyze_file(audit::ProvidedFile::whole(body), None);
    assert_eq!(analysis.score, 82, "{:#?}", analysis.findings);
    assert_eq!(analysis.grade, audit::Grade::B);
}
