//! The file audit's syntax checks: one crafted robots.txt per check, and the lines crawlers
//! read in two ways.

use audit::{CheckId, Severity};

use crate::{absent, audit, audit_bytes, expect, find, SITEMAP};

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
