//! The offline audit: one crafted robots.txt per check, and score tests that pin the method.
//! Syntax and logic checks have a module each; policies, sitemaps, the crawler table, the
//! report's shape and the score are here.

mod logic;
mod syntax;

use audit::{
    analyze_file, audit_robots_txt, CheckId, FileContext, Finding, Grade, ProvidedFile, Score,
    Severity,
};

pub(crate) fn audit(body: &str) -> Vec<Finding> {
    audit_bytes(body.as_bytes(), None)
}

pub(crate) fn audit_bytes(body: &[u8], page: Option<&str>) -> Vec<Finding> {
    audit_robots_txt(
        body,
        &FileContext {
            robots_url: None,
            page,
            ..FileContext::default()
        },
    )
    .findings
}

pub(crate) fn find(findings: &[Finding], id: CheckId) -> Option<&Finding> {
    findings.iter().find(|finding| finding.id == id)
}

/// Every finding renders its own title: the parameters it stores are the ones its title needs.
#[track_caller]
pub(crate) fn renders(findings: &[Finding]) {
    for finding in findings {
        assert!(
            finding.specific_title().is_some(),
            "{} lacks a parameter of its title: {finding:?}",
            finding.id
        );
    }
}

#[track_caller]
pub(crate) fn expect(body: &str, id: CheckId, line: Option<usize>) -> Finding {
    let findings = audit(body);
    renders(&findings);
    let Some(finding) = find(&findings, id.clone()) else {
        let ids: Vec<&str> = findings.iter().map(|f| f.id.as_str()).collect();
        panic!("{id} not found in {ids:?}");
    };
    assert_eq!(finding.evidence.line, line, "{finding:?}");
    assert_eq!(Some(finding.severity), id.severity());
    finding.clone()
}

#[track_caller]
pub(crate) fn absent(body: &str, id: CheckId) {
    let findings = audit(body);
    let name = id.to_string();
    assert!(
        find(&findings, id).is_none(),
        "{name} unexpectedly found: {findings:#?}"
    );
}

pub(crate) const SITEMAP: &str = "Sitemap: https://example.com/sitemap.xml\n";

#[test]
fn a_sensible_file_is_perfect() {
    let body = format!(
        "# Example\nUser-agent: *\nDisallow: /admin/\nDisallow: /cart\nAllow: /admin/public/\n\n{SITEMAP}"
    );
    let findings = audit(&body);
    let score = Score::compute(&findings);
    assert_eq!(score.score, 100, "{findings:#?}");
    assert_eq!(score.grade, Grade::A);
}

#[test]
fn a_file_blocking_everything_by_mistake_fails() {
    let body = format!("User-agent: *\nDisallow: /\n{SITEMAP}");
    let finding = expect(&body, CheckId::LogicBlocksAll, Some(2));
    assert_eq!(finding.severity, Severity::Critical);
    let score = Score::compute(&audit(&body));
    assert!(score.score <= 39);
    assert_eq!(score.grade, Grade::F);
}

#[test]
fn an_allow_list_is_a_policy_not_a_penalty() {
    let body = format!("User-agent: Googlebot\nUser-agent: Bingbot\nDisallow: /tmp/\n\nUser-agent: *\nDisallow: /\n{SITEMAP}");
    absent(&body, CheckId::LogicBlocksAll);
    expect(&body, CheckId::PolicyAllowlist, Some(6));
    assert_eq!(Score::compute(&audit(&body)).score, 100);
}

#[test]
fn blocking_ai_training_is_info_only() {
    let body = format!(
        "User-agent: GPTBot\nUser-agent: CCBot\nUser-agent: Google-Extended\nDisallow: /\n\nUser-agent: *\nDisallow: /admin/\n{SITEMAP}"
    );
    let findings = audit(&body);
    assert!(find(&findings, CheckId::PolicyAiTrainingBlocked).is_some());
    assert_eq!(Score::compute(&findings).score, 100, "{findings:#?}");
}

#[test]
fn incoherent_operator_policy_is_a_warning() {
    let body =
        format!("User-agent: ChatGPT-User\nDisallow: /\n\nUser-agent: *\nDisallow:\n{SITEMAP}");
    let finding = expect(&body, CheckId::CrawlersIncoherent, Some(2));
    assert!(finding.title().contains("GPTBot"));
}

#[test]
fn sitemap_checks() {
    expect("User-agent: *\nDisallow: /a\n", CheckId::SitemapNone, None);
    expect(
        "User-agent: *\nDisallow: /a\nSitemap: /sitemap.xml\n",
        CheckId::SitemapInvalidUrl,
        Some(3),
    );
    absent(
        "User-agent: *\nDisallow: /a\nSitemap: /sitemap.xml\n",
        CheckId::SitemapNone,
    );
    expect(
        "User-agent: *\nDisallow: /sitemaps/\nSitemap: https://e.com/sitemaps/a.xml\n",
        CheckId::SitemapDisallowed,
        Some(3),
    );
    expect(
        "User-agent: *\nDisallow:\nSitemap: https://e.com/a.xml\nSitemap: https://e.com/a.xml\n",
        CheckId::SitemapDuplicate,
        Some(4),
    );
    let url = url::Url::parse("https://e.com/robots.txt").unwrap();
    let findings = audit_robots_txt(
        b"User-agent: *\nDisallow:\nSitemap: https://www.e.com/a.xml\n",
        &FileContext {
            robots_url: Some(&url),
            ..FileContext::default()
        },
    )
    .findings;
    assert!(find(&findings, CheckId::SitemapOtherHost).is_some());
}

#[test]
fn the_per_crawler_table_names_deciding_lines() {
    let analysis = analyze_file(
        ProvidedFile::whole(b"User-agent: GPTBot\nDisallow: /\n\nUser-agent: Googlebot\nDisallow: /nogoogle\n\nUser-agent: *\nDisallow: /private\n"),
        Some("/nogoogle/x"),
    );
    let row = |token: &str| analysis.crawlers.iter().find(|r| r.token == token).unwrap();
    assert_eq!(row("GPTBot").root.rule.as_ref().unwrap().line, 2);
    assert!(!row("GPTBot").root.allowed);
    let image = row("Googlebot-Image");
    assert!(
        !image.page.as_ref().unwrap().allowed,
        "Googlebot-Image falls back to Googlebot"
    );
    assert_eq!(image.page.as_ref().unwrap().rule.as_ref().unwrap().line, 5);
    assert!(row("Bingbot").page.as_ref().unwrap().allowed);
    assert!(row("AdsBot-Google").root.allowed);
}

#[test]
fn file_analysis_json_has_the_top_level_fields() {
    let analysis = analyze_file(ProvidedFile::whole(b"User-agent: *\nDisallow /x\n"), None);
    let json = serde_json::to_value(&analysis).unwrap();
    for field in [
        "score",
        "grade",
        "findings",
        "robots",
        "page",
        "sitemaps",
        "crawlers",
        "scoring_version",
        "analysed_at",
    ] {
        assert!(json.get(field).is_some(), "{field}");
    }
    let finding = json["findings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["id"] == "syntax.missing-colon")
        .unwrap();
    assert_eq!(finding["line"], 2);
    assert_eq!(finding["severity"], "error");
    assert_eq!(json["robots"]["requested"], false);
    assert_eq!(json["page"]["requested"], false);
}

#[test]
fn findings_per_check_are_capped_but_counted() {
    let body = format!("User-agent: *\n{}", "Foo: bar\n".repeat(50));
    let audit = audit_robots_txt(body.as_bytes(), &FileContext::default());
    let listed = audit
        .findings
        .iter()
        .filter(|f| f.id == CheckId::SyntaxUnknownField)
        .count();
    assert_eq!(listed, audit::MAX_FINDINGS_PER_CHECK);
    assert_eq!(audit.omitted[0].id, CheckId::SyntaxUnknownField);
    assert_eq!(audit.omitted[0].count, 50 - audit::MAX_FINDINGS_PER_CHECK);
}

#[test]
fn scores_are_pinned() {
    // One misspelt Disallow: -12, error cap 89 does not bite: 88, B.
    let body = format!("User-agent: *\nDissallow: /a\n{SITEMAP}");
    let score = Score::compute(&audit(&body));
    assert_eq!((score.score, score.grade), (88, Grade::B));
    // No sitemap and one repeated rule: -5 -1 = 94, A.
    let score = Score::compute(&audit("User-agent: *\nDisallow: /a\nDisallow: /a\n"));
    assert_eq!((score.score, score.grade), (94, Grade::A));
    // robots.txt as HTML: error 12 + no sitemap 5 = 83, B.
    let score = Score::compute(&audit("<html><body>x</body></html>"));
    assert_eq!(score.score, 100 - 12);
    // Sorting: worst first.
    let findings = audit("User-agent: *\nDisallow /x\nFoo: bar\n");
    assert!(findings.windows(2).all(|w| w[0].severity <= w[1].severity));
}
