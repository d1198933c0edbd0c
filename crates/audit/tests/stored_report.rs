//! Reports are stored for years: a report written by an earlier version must load in this one.
//!
//! `fixtures/report-v1.json` is a report of version 1 as this code wrote it (a scripted site:
//! a robots.txt behind a redirect, a typo, a repeated rule, three sitemaps, a page with
//! robots meta tags). Never regenerate it: when the shape changes, add a fixture of the new
//! version and keep loading this one.

use audit::{Analysis, CheckId, Score, Severity, REPORT_VERSION};

fn fixture(name: &str) -> (String, serde_json::Value) {
    let path = format!("{}/tests/fixtures/{name}", env!("CARGO_MANIFEST_DIR"));
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
    let value = serde_json::from_str(&text).unwrap_or_else(|e| panic!("{path}: {e}"));
    (text, value)
}

#[test]
fn a_version_1_report_loads_whole() {
    let (text, stored) = fixture("report-v1.json");
    let report: Analysis = serde_json::from_str(&text).expect("a v1 report loads");
    assert_eq!(report.report_version, 1);
    assert!(REPORT_VERSION >= report.report_version);
    // Nothing is lost or renamed: written again, it is the same document.
    assert_eq!(serde_json::to_value(&report).unwrap(), stored);
    // Typed on the way in.
    assert_eq!(
        report.robots.redirects[0].status,
        http::StatusCode::MOVED_PERMANENTLY
    );
    assert_eq!(report.page.status, Some(http::StatusCode::OK));
    assert_eq!(
        report.url.as_ref().map(url::Url::as_str),
        Some("http://example.test/page")
    );
    assert_eq!(report.analysed_at.to_string(), stored["analysed_at"]);
    // Its findings render from their parameters, and score as they did.
    for finding in &report.findings {
        assert!(finding.specific_title().is_some(), "{finding:?}");
    }
    let typo = report
        .findings
        .iter()
        .find(|f| f.id == CheckId::SyntaxFieldTypo)
        .expect("the typo");
    assert_eq!(
        typo.title(),
        "\"Dissallow\" is ignored by RFC 9309 parsers, but Google reads it as Disallow"
    );
    // Scored again by today's method from the stored severities: the same points (the
    // method's version is today's; the stored one says which method made the report).
    let again = Score::compute(&report.findings);
    assert_eq!(report.scoring.method_version, "2");
    assert_eq!(
        Score {
            method_version: report.scoring.method_version.clone(),
            ..again
        },
        report.scoring
    );
}

#[test]
fn a_report_naming_a_retired_check_still_loads_and_scores() {
    let (text, stored) = fixture("report-v1-retired-check.json");
    let report: Analysis =
        serde_json::from_str(&text).expect("a report with a retired check loads");
    let retired = CheckId::Unknown("syntax.retired-check".into());
    let finding = report
        .findings
        .iter()
        .find(|f| f.id == retired)
        .expect("the retired check's finding");
    assert_eq!(finding.severity, Severity::Error);
    assert_eq!(finding.title(), "syntax.retired-check");
    assert_eq!(finding.why(), "");
    assert_eq!(finding.text("something"), Some("kept"));
    // The id string survives a round trip, and the stored severities give the same score.
    assert_eq!(serde_json::to_value(&report).unwrap(), stored);
    assert_eq!(Score::compute(&report.findings).score, report.score);
}
