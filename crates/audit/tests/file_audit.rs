//! The offline audit: one crafted robots.txt per check, and score tests that pin the method.

use audit::{
    analyze_file, audit_robots_txt, CheckId, FileContext, Finding, Grade, ProvidedFile, Score,
    Severity,
};

fn audit(body: &str) -> Vec<Finding> {
    audit_bytes(body.as_bytes(), None)
}

fn audit_bytes(body: &[u8], page: Option<&str>) -> Vec<Finding> {
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

fn find(findings: &[Finding], id: CheckId) -> Option<&Finding> {
    findings.iter().find(|finding| finding.id == id)
}

/// Every finding renders its own title: the parameters it stores are the ones its title needs.
#[track_caller]
fn renders(findings: &[Finding]) {
    for finding in findings {
        assert!(
            finding.specific_title().is_some(),
            "{} lacks a parameter of its title: {finding:?}",
            finding.id
        );
    }
}

#[track_caller]
fn expect(body: &str, id: CheckId, line: Option<usize>) -> Finding {
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
fn absent(body: &str, id: CheckId) {
    let findings = audit(body);
    let name = id.to_string();
    assert!(
        find(&findings, id).is_none(),
        "{name} unexpectedly found: {findings:#?}"
    );
}

const SITEMAP: &str = "Sitemap: https://example.com/sitemap.xml\n";

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
fn syntax_typos_are_told_apart() {
    let f = expect(
        "User-agent: *\nDissallow: /a\n",
        CheckId::SyntaxFieldTypo,
        Some(2),
    );
    assert!(
        f.title().contains("Google reads it as Disallow"),
        "{}",
        f.title()
    );
    let f = expect(
        "User-agent: *\nDisallw: /a\n",
        CheckId::SyntaxFieldTypo,
        Some(2),
    );
    assert!(f.title().contains("misspelt Disallow"), "{}", f.title());
}

/// Syntax: lines without a colon or outside any group.
#[test]
fn syntax_misplaced_lines_are_found() {
    for (body, id, line) in [
        (
            "User-agent: *\nDisallow /a\n",
            CheckId::SyntaxMissingColon,
            2,
        ),
        (
            "Disallow: /a\nUser-agent: *\nDisallow: /b\n",
            CheckId::SyntaxRuleOutsideGroup,
            1,
        ),
        (
            "Crawl-delay: 5\nUser-agent: *\nDisallow: /b\n",
            CheckId::SyntaxCrawlDelayOutsideGroup,
            1,
        ),
    ] {
        expect(body, id, Some(line));
    }
}

/// Syntax: User-agent values that name no crawler as written.
#[test]
fn syntax_user_agent_values_are_checked() {
    for (body, id, line) in [
        (
            "User-agent:\nDisallow: /b\n",
            CheckId::SyntaxEmptyUserAgent,
            1,
        ),
        (
            "User-agent: 360Spider\nDisallow: /b\n",
            CheckId::SyntaxInvalidUserAgent,
            1,
        ),
        (
            "User-agent: Mozilla/5.0 (compatible; Googlebot/2.1)\nDisallow: /b\n",
            CheckId::SyntaxUserAgentFullString,
            1,
        ),
        (
            "User-agent: Googlebot/2.1\nDisallow: /b\n",
            CheckId::SyntaxUserAgentNotAToken,
            1,
        ),
    ] {
        expect(body, id, Some(line));
    }
}

/// Syntax: patterns that do not mean what they seem to.
#[test]
fn syntax_patterns_are_checked() {
    for (body, id, line) in [
        (
            "User-agent: *\nDisallow: admin\n",
            CheckId::SyntaxPatternNotAPath,
            2,
        ),
        (
            "User-agent: *\nDisallow: /a$b\n",
            CheckId::SyntaxDollarInPattern,
            2,
        ),
        (
            "User-agent: *\nDisallow: /.*\\.php\n",
            CheckId::SyntaxRegex,
            2,
        ),
        (
            "User-agent: *\nDisallow: /café\n",
            CheckId::SyntaxNonAscii,
            2,
        ),
    ] {
        expect(body, id, Some(line));
    }
    let f = expect(
        "User-agent: *\nDisallow: https://e.com/a\n",
        CheckId::SyntaxPatternNotAPath,
        Some(2),
    );
    assert!(f.title().contains("full URL"));
}

/// Syntax: crawl-delays, fields other crawlers read, empty rules, the BOM.
#[test]
fn syntax_fields_and_values_are_checked() {
    for (body, id, line) in [
        (
            "User-agent: *\nCrawl-delay: soon\nDisallow: /a\n",
            CheckId::SyntaxInvalidCrawlDelay,
            2,
        ),
        (
            "User-agent: *\nCrawl-delay: 1\nCrawl-delay: 2\n",
            CheckId::SyntaxDuplicateCrawlDelay,
            3,
        ),
        (
            "User-agent: *\nNoindex: /private/\n",
            CheckId::SyntaxNoindex,
            2,
        ),
        (
            "User-agent: *\nHost: example.com\n",
            CheckId::SyntaxExtensionField,
            2,
        ),
        ("User-agent: *\nFoo: bar\n", CheckId::SyntaxUnknownField, 2),
        (
            "User-agent: *\nAllow:\nDisallow: /a\n",
            CheckId::SyntaxEmptyAllow,
            2,
        ),
        (
            "User-agent: *\nDisallow:\n",
            CheckId::SyntaxEmptyDisallow,
            2,
        ),
        (
            "\u{feff}User-agent: *\nDisallow: /a\n",
            CheckId::SyntaxBom,
            1,
        ),
    ] {
        expect(body, id, Some(line));
    }
    let long = format!(
        "User-agent: *\nDisallow: /{}\n",
        "a".repeat(audit::LONG_LINE_BYTES)
    );
    expect(&long, CheckId::SyntaxLongLine, Some(2));
    let short = format!(
        "User-agent: *\nDisallow: /{}\n",
        "a".repeat(audit::LONG_LINE_BYTES - 12)
    );
    absent(&short, CheckId::SyntaxLongLine);
}

#[test]
fn invalid_utf8_and_size() {
    let findings = audit_bytes(b"User-agent: *\nDisallow: /caf\xe9\n", None);
    let finding = find(&findings, CheckId::SyntaxInvalidUtf8).expect("invalid utf-8");
    assert_eq!(finding.evidence.line, Some(2));
    let big = format!(
        "User-agent: *\n{}",
        "Disallow: /abcdefghijklmnop\n".repeat(20_000)
    );
    let findings = audit(&big);
    assert!(find(&findings, CheckId::FetchTooLarge).is_some());
    assert!(audit("").iter().any(|f| f.id == CheckId::FetchEmpty));
    assert!(audit(" \n\n").iter().any(|f| f.id == CheckId::FetchEmpty));
}

#[test]
fn html_served_as_robots_txt() {
    let findings =
        audit("<!DOCTYPE html>\n<html><head><title>Home</title></head>\n<body>hi</body></html>\n");
    assert!(find(&findings, CheckId::FetchHtml).is_some());
    assert!(find(&findings, CheckId::SyntaxMissingColon).is_none());
    let findings = audit("<html><head><title>Just a moment...</title></head></html>");
    assert!(find(&findings, CheckId::FetchChallenge).is_some());
}

/// Logic: a named group loses the `*` rules it does not repeat.
#[test]
fn a_group_of_its_own_drops_the_global_rules() {
    let f = expect(
        "User-agent: *\nDisallow: /private/\nDisallow: /tmp/\n\nUser-agent: Googlebot\nDisallow: /search\n",
        CheckId::LogicDropsGlobalRules,
        Some(5),
    );
    assert_eq!(f.evidence.related_lines, vec![2, 3]);
    // Repeating the rules, or deliberately allowing everything, is fine.
    absent(
        "User-agent: *\nDisallow: /private/\n\nUser-agent: Googlebot\nDisallow: /private/\nDisallow: /search\n",
        CheckId::LogicDropsGlobalRules,
    );
    absent(
        "User-agent: *\nDisallow: /private/\n\nUser-agent: Googlebot\nDisallow:\n",
        CheckId::LogicDropsGlobalRules,
    );
    absent(
        "User-agent: *\nDisallow: /private/\n\nUser-agent: Googlebot\nAllow: /\n",
        CheckId::LogicDropsGlobalRules,
    );
    // Crawlers that ignore * lose nothing by a group of their own.
    absent(
        "User-agent: *\nDisallow: /private/\n\nUser-agent: AdsBot-Google\nDisallow: /x\n",
        CheckId::LogicDropsGlobalRules,
    );
}

/// Logic: two groups for one crawler (they merge).
#[test]
fn groups_named_twice_are_found() {
    let f = expect(
        "User-agent: Googlebot\nDisallow: /a\n\nUser-agent: googlebot\nDisallow: /b\n",
        CheckId::LogicDuplicateGroup,
        Some(4),
    );
    assert_eq!(f.evidence.related_lines, vec![1]);
    expect(
        "User-agent: *\nDisallow: /a\n\nUser-agent: *\nDisallow: /b\n",
        CheckId::LogicDuplicateGroup,
        Some(4),
    );
}

/// Logic: rules that repeat, contradict, shadow or cover each other.
#[test]
fn rules_against_each_other_are_found() {
    expect(
        "User-agent: *\nAllow: /a\nDisallow: /a\n",
        CheckId::LogicAllowDisallowSame,
        Some(3),
    );
    expect(
        "User-agent: *\nDisallow: /a\nDisallow: /a\n",
        CheckId::LogicRuleRepeated,
        Some(3),
    );
    // Percent-encoding does not hide a repeat.
    expect(
        "User-agent: *\nDisallow: /é\nDisallow: /%C3%A9\n",
        CheckId::LogicRuleRepeated,
        Some(3),
    );
    // Allow: /a* beats Disallow: /a on every URL Disallow: /a matches.
    let f = expect(
        "User-agent: *\nDisallow: /a\nAllow: /a*\n",
        CheckId::LogicRuleShadowed,
        Some(2),
    );
    assert_eq!(f.evidence.related_lines, vec![3]);
    expect(
        "User-agent: *\nDisallow: /a\nDisallow: /a/b\n",
        CheckId::LogicRuleRedundant,
        Some(3),
    );
    // An exception in between makes the narrower rule meaningful.
    absent(
        "User-agent: *\nDisallow: /a\nAllow: /a/\nDisallow: /a/b\n",
        CheckId::LogicRuleRedundant,
    );
}

/// Logic: scripts and styles a renderer needs, disallowed.
#[test]
fn blocked_resources_are_found() {
    expect(
        "User-agent: *\nDisallow: /*.js$\n",
        CheckId::LogicResourcesBlocked,
        Some(2),
    );
    expect(
        "User-agent: *\nDisallow: /wp-includes/\n",
        CheckId::LogicResourcesBlocked,
        Some(2),
    );
    absent(
        "User-agent: *\nDisallow: /json.php\n",
        CheckId::LogicResourcesBlocked,
    );
    absent(
        "User-agent: *\nDisallow: /assets/\n\nUser-agent: Googlebot\nDisallow: /tmp/\n",
        CheckId::LogicResourcesBlocked,
    );
}

/// Logic: a search engine shut out by mistake, or by policy.
#[test]
fn blocked_search_engines_are_told_from_policy() {
    expect(
        "User-agent: Googlebot\nDisallow: /\n\nUser-agent: *\nDisallow:\n",
        CheckId::LogicSearchEngineBlocked,
        Some(2),
    );
    expect(
        "User-agent: Baiduspider\nDisallow: /\n\nUser-agent: *\nDisallow:\n",
        CheckId::PolicySearchEngineBlocked,
        Some(2),
    );
    absent(
        "User-agent: Baiduspider\nDisallow: /\n\nUser-agent: *\nDisallow:\n",
        CheckId::LogicSearchEngineBlocked,
    );
}

#[test]
fn the_analysed_page_is_checked_with_its_deciding_line() {
    let body = b"User-agent: *\nDisallow: /private/\n";
    let findings = audit_bytes(body, Some("/private/page"));
    let finding = find(&findings, CheckId::LogicPageDisallowed).expect("page disallowed");
    assert_eq!(finding.evidence.line, Some(2));
    assert_eq!(finding.evidence.url.as_deref(), Some("/private/page"));
    let findings = audit_bytes(b"User-agent: RobotsTxtParser\nDisallow: /\n", Some("/"));
    assert!(find(&findings, CheckId::PolicyBotBlocked).is_some());
    assert!(find(&findings, CheckId::LogicPageDisallowed).is_none());
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

#[test]
fn a_crawl_delay_between_user_agents_is_shown_with_both_readings() {
    // The interpretation page's media example: two groups for JittyBot, one for others.
    let body = format!(
        "User-agent: JittyBot\nCrawl-delay: 5\nUser-agent: JittyBot-Image\nCrawl-delay: 30\nDisallow: /media/staff-photos/\n{SITEMAP}"
    );
    let finding = expect(&body, CheckId::SyntaxAgentListSplit, Some(3));
    assert_eq!(finding.severity, Severity::Warning);
    assert_eq!(finding.evidence.related_lines, vec![1, 2]);
    let title = finding.title();
    assert!(
        title.contains("JittyBot reads User-agent: JittyBot-Image as a group of its own"),
        "{title}"
    );
    assert!(
        title.contains("Google add it to the group of line 1 (User-agent: JittyBot)"),
        "{title}"
    );
    assert!(title.contains("its 1 rule(s)"), "{title}");
    // Agents listed together, or separated by a rule, are read alike by everyone.
    absent(
        "User-agent: a\nUser-agent: b\nCrawl-delay: 5\nDisallow: /x\n",
        CheckId::SyntaxAgentListSplit,
    );
    absent(
        "User-agent: a\nDisallow: /y\nUser-agent: b\nDisallow: /x\n",
        CheckId::SyntaxAgentListSplit,
    );
}

#[test]
fn a_starred_user_agent_is_shown_with_both_readings() {
    let body =
        format!("User-agent: *libwww*\nDisallow: /\n\nUser-agent: *\nDisallow: /admin\n{SITEMAP}");
    let finding = expect(&body, CheckId::SyntaxStarredUserAgent, Some(1));
    assert_eq!(finding.severity, Severity::Warning);
    assert_eq!(finding.text("name"), Some("libwww"));
    let title = finding.title();
    assert!(
        title.starts_with(
            "User-agent: *libwww* names no crawler for RFC 9309 parsers, Google and JittyBot"
        ),
        "{title}"
    );
    assert!(
        title.contains("shutting every crawler out of the whole site"),
        "{title}"
    );
    // As JittyBot reads it, the site is open: no whole-site block is reported.
    absent(&body, CheckId::LogicBlocksAll);
    let narrow = expect(
        "User-agent: *OrkashBot*\nDisallow: /private\n",
        CheckId::SyntaxStarredUserAgent,
        Some(1),
    );
    assert!(
        narrow.title().ends_with("to every crawler (1 rule(s))"),
        "{}",
        narrow.title()
    );
    // `*` followed only by what cannot be a token is the global group, as meant.
    absent(
        "User-agent: *;\nDisallow: /x\n",
        CheckId::SyntaxStarredUserAgent,
    );
}

#[test]
fn empty_rules_are_told_apart_by_their_kind() {
    let allow = expect(
        "User-agent: *\n  aLLow:\n",
        CheckId::SyntaxEmptyAllow,
        Some(2),
    );
    assert_eq!(allow.severity, Severity::Notice);
    expect(
        "User-agent: *\nDisallow:\n",
        CheckId::SyntaxEmptyDisallow,
        Some(2),
    );
}
