//! The file audit's logic checks: what the rules mean together, and the analysed page.

use audit::{CheckId, MAX_RULES_COMPARED};

use crate::{absent, audit_bytes, expect, find};

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

/// Logic: a group over `MAX_RULES_COMPARED` rules is not compared (the comparison is
/// quadratic); the audit says so instead of taking its time.
#[test]
fn groups_over_the_comparison_limit_are_said_not_compared() {
    // A shadowed rule, then distinct rules up to `count` in all.
    let group = |count: usize| {
        let mut body = String::from("User-agent: *\nDisallow: /a\nAllow: /a*\n");
        for i in 0..count - 2 {
            body.push_str(&format!("Disallow: /p{i}/\n"));
        }
        body
    };
    let at_limit = audit_bytes(group(MAX_RULES_COMPARED).as_bytes(), None);
    assert!(find(&at_limit, CheckId::LogicRuleShadowed).is_some());
    assert!(find(&at_limit, CheckId::AuditLimited).is_none());
    let over = audit_bytes(group(MAX_RULES_COMPARED + 1).as_bytes(), None);
    assert!(find(&over, CheckId::LogicRuleShadowed).is_none());
    let limited = find(&over, CheckId::AuditLimited).expect("said not compared");
    assert_eq!(limited.number("rules"), Some(MAX_RULES_COMPARED as u64 + 1));
}
