//! The engine's rules, one test (or more) per rule of the interpretation page.

use robots::{
    AgentNote, AgentRules, DiagnosticKind, EmptyRule, GroupSelection, ProductTokenError,
    ProductTokens, RobotsTxt, RuleKind, TargetError, UserAgentProduct, MAX_PREFERRED_TOKENS,
    MAX_ROBOTS_TXT_BYTES,
};

const JITTYBOT: ProductTokens = ProductTokens::JITTYBOT;

fn rules(file: &str, tokens: &[&str]) -> AgentRules {
    let tokens = ProductTokens::new(tokens).expect("test tokens are product tokens");
    let fast = AgentRules::parse(file.as_bytes(), &tokens);
    let full = RobotsTxt::parse(file.as_bytes()).rules_for(&tokens);
    assert_eq!(fast, full, "one-crawler parse and full parse disagree");
    fast
}

fn allowed(file: &str, url: &str) -> bool {
    rules(file, &["JittyBot"]).is_allowed(url)
}

fn kinds(file: &[u8]) -> Vec<(usize, DiagnosticKind)> {
    RobotsTxt::parse(file)
        .diagnostics()
        .iter()
        .map(|d| (d.line, d.kind.clone()))
        .collect()
}

// ---- Parsing ----------------------------------------------------------------------------------

#[test]
fn leading_bom_is_skipped_and_reported() {
    let file = b"\xEF\xBB\xBFUser-agent: JittyBot\nDisallow: /a\n";
    assert!(!AgentRules::parse(file, &JITTYBOT).is_allowed("/a"));
    assert_eq!(kinds(file), vec![(1, DiagnosticKind::ByteOrderMark)]);
}

#[test]
fn cr_lf_crlf_and_mixed_endings_all_split_lines() {
    for file in [
        "User-agent: JittyBot\nDisallow: /a\nDisallow: /b",
        "User-agent: JittyBot\rDisallow: /a\rDisallow: /b",
        "User-agent: JittyBot\r\nDisallow: /a\r\nDisallow: /b",
        "User-agent: JittyBot\rDisallow: /a\r\nDisallow: /b\n",
    ] {
        let rules = rules(file, &["JittyBot"]);
        assert!(
            !rules.is_allowed("/a") && !rules.is_allowed("/b"),
            "{file:?}"
        );
        assert_eq!(rules.check("/b").rule.map(|r| r.line), Some(3));
    }
}

#[test]
fn only_the_first_512000_bytes_are_read() {
    let mut file = b"User-agent: *\nDisallow: /early\n".to_vec();
    file.resize(MAX_ROBOTS_TXT_BYTES - 10, b'#');
    file.extend_from_slice(b"\nDisallow: /cut-by-the-limit\nDisallow: /beyond\n");
    let robots = RobotsTxt::parse(&file);
    let agent = robots.rules_for(&JITTYBOT);
    assert!(!agent.is_allowed("/early"));
    // The rule the limit cuts in half would otherwise read as "Disallow: /c".
    assert!(agent.is_allowed("/c"));
    assert!(agent.is_allowed("/beyond"));
    assert_eq!(robots.bytes_read(), MAX_ROBOTS_TXT_BYTES);
    let kinds: Vec<_> = robots
        .diagnostics()
        .iter()
        .map(|d| d.kind.clone())
        .collect();
    assert!(kinds.contains(&DiagnosticKind::LineCutByLimit));
    assert!(kinds.contains(&DiagnosticKind::TruncatedAtLimit {
        ignored_bytes: file.len() - MAX_ROBOTS_TXT_BYTES
    }));
    assert_eq!(AgentRules::parse(&file, &JITTYBOT), agent);
}

#[test]
fn a_line_ending_exactly_at_the_limit_is_kept() {
    let mut file = b"User-agent: *\n".to_vec();
    let rule = b"Disallow: /kept";
    file.resize(MAX_ROBOTS_TXT_BYTES - rule.len(), b'\n');
    file.extend_from_slice(rule);
    file.extend_from_slice(b"\nDisallow: /beyond\n");
    let agent = AgentRules::parse(&file, &JITTYBOT);
    assert!(!agent.is_allowed("/kept"));
    assert!(agent.is_allowed("/beyond"));
}

#[test]
fn invalid_utf8_lines_are_still_read_and_reported() {
    let file = b"User-agent: JittyBot\nDisallow: /caf\xE9\nDisallow: /ok\n";
    let agent = AgentRules::parse(file, &JITTYBOT);
    assert!(!agent.is_allowed("/caf%E9"));
    assert!(!agent.is_allowed("/ok"));
    assert!(kinds(file).contains(&(2, DiagnosticKind::InvalidUtf8)));
    // The full parse keeps the pattern as text (lossily) and matches its bytes as written.
    let full = RobotsTxt::parse(file);
    let rule = &full.groups()[0].rules[0];
    assert_eq!(rule.pattern, "/caf\u{FFFD}");
    assert_eq!(rule.canonical_pattern(), "/caf%E9");
    assert_eq!(full.groups()[0].user_agents[0].value, "JittyBot");
    assert_eq!(full.line(2), Some(&b"Disallow: /caf\xE9"[..]));
}

#[test]
fn the_full_parse_keeps_values_as_written() {
    let file = "User-agent: JittyBot/2.1 (+https://e.com)  # c\nDisallow:  /søk*?q=$ # c\n";
    let full = RobotsTxt::parse(file.as_bytes());
    let group = &full.groups()[0];
    assert_eq!(group.user_agents[0].value, "JittyBot/2.1 (+https://e.com)");
    assert_eq!(
        group.user_agents[0].product,
        UserAgentProduct::Token("JittyBot".into())
    );
    assert_eq!(group.rules[0].pattern, "/søk*?q=$");
    assert_eq!(group.rules[0].pattern.to_string(), "/søk*?q=$");
    assert_eq!(group.rules[0].canonical_pattern(), "/s%C3%B8k*?q=$");
    // A clone of the parse reads the same.
    assert_eq!(full.clone(), full);
}

#[test]
fn whitespace_around_field_and_value_and_case_insensitive_fields() {
    let file = "  uSeR-aGeNt  :  JittyBot  \n\tDISALLOW\t:\t/a\t\n";
    assert!(!allowed(file, "/a"));
}

#[test]
fn path_values_are_case_sensitive() {
    let file = "User-agent: JittyBot\nDisallow: /property\n";
    assert!(!allowed(file, "/property/12"));
    assert!(allowed(file, "/Property"));
}

#[test]
fn hash_starts_a_comment_anywhere() {
    let file = "User-agent: JittyBot # the crawler\nDisallow: /a#b\n# Disallow: /c\n";
    assert!(!allowed(file, "/a"));
    assert!(!allowed(file, "/aX"));
    assert!(allowed(file, "/c"));
}

#[test]
fn lines_without_a_colon_and_unknown_fields_are_ignored_and_reported() {
    let file = b"User-agent: JittyBot\nDisallow /a\nDissallow: /b\nDisalow: /c\nuseragent: x\nNoindex: /d\nDisallow: /e\n";
    let agent = AgentRules::parse(file, &JITTYBOT);
    for url in ["/a", "/b", "/c", "/d"] {
        assert!(agent.is_allowed(url), "{url}");
    }
    assert!(!agent.is_allowed("/e"));
    let unknown = |line: usize, field: &str| {
        (
            line,
            DiagnosticKind::UnknownField {
                field: field.into(),
            },
        )
    };
    assert_eq!(
        kinds(file),
        vec![
            (2, DiagnosticKind::MissingColon),
            unknown(3, "Dissallow"),
            unknown(4, "Disalow"),
            unknown(5, "useragent"),
            unknown(6, "Noindex"),
        ]
    );
}

#[test]
fn a_user_agent_after_a_rule_starts_a_new_group() {
    let file = "User-agent: JittyBot\nDisallow: /a\nUser-agent: Other\nDisallow: /b\n";
    assert!(!allowed(file, "/a"));
    assert!(allowed(file, "/b"));
}

#[test]
fn consecutive_user_agents_share_a_group() {
    let file = "User-agent: Other\nUser-agent: JittyBot\nDisallow: /a\n";
    assert!(!allowed(file, "/a"));
}

#[test]
fn sitemap_unknown_and_invalid_lines_neither_start_nor_end_a_group() {
    let file = "User-agent: Other\nSitemap: https://e.com/s.xml\nFoo: bar\nno colon\nUser-agent: JittyBot\nDisallow: /a\nSitemap: https://e.com/t.xml\nFoo: bar\nCrawl-delay: 3\nDisallow: /b\n";
    let agent = rules(file, &["JittyBot"]);
    assert!(!agent.is_allowed("/a"));
    assert!(!agent.is_allowed("/b"));
    assert_eq!(agent.crawl_delay().map(|d| d.seconds), Some(3.0));
    assert!(!rules(file, &["Other"]).is_allowed("/b"));
}

#[test]
fn crawl_delay_neither_starts_a_group_nor_ends_one_but_closes_its_agent_list() {
    // The interpretation page's "Treat media differently to pages" example, without blank lines.
    let file = "User-agent: JittyBot\nCrawl-delay: 5\nUser-agent: JittyBot-Image\nCrawl-delay: 30\nDisallow: /media/staff-photos/\n";
    let pages = rules(file, &["JittyBot"]);
    assert_eq!(pages.crawl_delay().map(|d| d.seconds), Some(5.0));
    assert!(pages.is_allowed("/media/staff-photos/a.jpg"));
    let media = rules(file, &["JittyBot-Image", "JittyBot"]);
    assert_eq!(media.crawl_delay().map(|d| d.seconds), Some(30.0));
    assert!(!media.is_allowed("/media/staff-photos/a.jpg"));
    // Rules after a crawl-delay still belong to its group.
    let after = "User-agent: JittyBot\nCrawl-delay: 5\nDisallow: /a\n";
    assert!(!allowed(after, "/a"));
}

#[test]
fn rules_before_the_first_user_agent_are_ignored_and_reported() {
    let file = b"Disallow: /a\nCrawl-delay: 5\nUser-agent: JittyBot\nDisallow: /b\n";
    let agent = AgentRules::parse(file, &JITTYBOT);
    assert!(agent.is_allowed("/a"));
    assert!(!agent.is_allowed("/b"));
    assert_eq!(agent.crawl_delay(), None);
    assert_eq!(
        kinds(file),
        vec![
            (1, DiagnosticKind::RuleOutsideGroup),
            (2, DiagnosticKind::CrawlDelayOutsideGroup)
        ]
    );
}

#[test]
fn user_agent_values_are_reduced_to_their_product_token() {
    for value in [
        "JittyBot/1.0",
        "jittybot",
        "JITTYBOT (compatible)",
        "JittyBot 2",
    ] {
        let file = format!("User-agent: {value}\nDisallow: /a\n");
        assert!(!allowed(&file, "/a"), "{value}");
    }
    let file = b"User-agent: Mozilla/5.0 (compatible; JittyBot/1.0)\nDisallow: /a\n";
    assert!(AgentRules::parse(file, &JITTYBOT).is_allowed("/a"));
    assert_eq!(
        kinds(file),
        vec![(
            1,
            DiagnosticKind::UserAgentNotAToken {
                token: "Mozilla".into()
            }
        )]
    );
}

#[test]
fn empty_and_tokenless_user_agents_name_nobody_and_are_reported() {
    let file = b"User-agent:\nUser-agent: 123\nDisallow: /a\n";
    assert_eq!(
        kinds(file),
        vec![
            (1, DiagnosticKind::EmptyUserAgent),
            (2, DiagnosticKind::InvalidUserAgent)
        ]
    );
    assert!(AgentRules::parse(file, &JITTYBOT).is_allowed("/a"));
}

#[test]
fn empty_allow_and_disallow_add_no_rule_but_end_the_agent_list() {
    let file = "User-agent: JittyBot\nDisallow:\nUser-agent: Other\nDisallow: /\n";
    let agent = rules(file, &["JittyBot"]);
    assert!(agent.is_allowed("/anything"));
    assert_eq!(agent.rule_count(), 0);
    assert_eq!(agent.group(), &GroupSelection::Named("JittyBot".into()));
    assert!(kinds(file.as_bytes()).contains(&(2, DiagnosticKind::EmptyRule)));
}

#[test]
fn a_pattern_starting_with_neither_slash_nor_star_never_matches() {
    let file = b"User-agent: JittyBot\nDisallow: private\nDisallow: *.gif\n";
    let agent = AgentRules::parse(file, &JITTYBOT);
    assert!(agent.is_allowed("/private"));
    assert!(agent.is_allowed("private"));
    assert!(!agent.is_allowed("/x.gif"));
    assert_eq!(kinds(file), vec![(2, DiagnosticKind::PatternNotAPath)]);
}

#[test]
fn crawl_delay_is_decimal_seconds_of_its_group() {
    let file = "User-agent: JittyBot\nCrawl-delay: 2.5\nUser-agent: *\nCrawl-delay: 10\n";
    assert_eq!(
        rules(file, &["JittyBot"]).crawl_delay().map(|d| d.seconds),
        Some(2.5)
    );
    assert_eq!(
        rules(file, &["Other"]).crawl_delay().map(|d| d.seconds),
        Some(10.0)
    );
    for value in ["-1", "1e3", "ten", "1.2.3", "5s", "", ".", "NaN", "inf"] {
        let file = format!("User-agent: JittyBot\nCrawl-delay: {value}\n");
        assert_eq!(rules(&file, &["JittyBot"]).crawl_delay(), None, "{value}");
        assert!(
            kinds(file.as_bytes()).contains(&(2, DiagnosticKind::InvalidCrawlDelay)),
            "{value}"
        );
    }
    for (value, seconds) in [("10", 10.0), (".5", 0.5), ("3.", 3.0), ("007", 7.0)] {
        let file = format!("User-agent: JittyBot\nCrawl-delay: {value}\n");
        let delay = rules(&file, &["JittyBot"]).crawl_delay();
        assert_eq!(delay.map(|d| d.seconds), Some(seconds), "{value}");
    }
}

#[test]
fn several_crawl_delays_take_the_largest_and_are_reported() {
    let file = "User-agent: JittyBot\nCrawl-delay: 5\nCrawl-delay: 2\nUser-agent: JittyBot\nCrawl-delay: 3\n";
    let delay = rules(file, &["JittyBot"])
        .crawl_delay()
        .map(|d| (d.line, d.seconds));
    assert_eq!(delay, Some((2, 5.0)));
    assert!(kinds(file.as_bytes()).contains(&(3, DiagnosticKind::DuplicateCrawlDelay)));
}

#[test]
fn sitemaps_are_global_in_file_order_and_must_be_absolute() {
    let file = b"Sitemap: https://e.com/a.xml\nUser-agent: JittyBot\nSitemap: /relative.xml\nDisallow: /x\nSITEMAP: http://e.com/b.xml.gz\nSitemap: ftp://e.com/c.xml\n";
    let robots = RobotsTxt::parse(file);
    let urls: Vec<_> = robots
        .sitemaps()
        .iter()
        .map(|s| (s.line, s.url.as_str()))
        .collect();
    assert_eq!(
        urls,
        vec![(1, "https://e.com/a.xml"), (5, "http://e.com/b.xml.gz")]
    );
    assert_eq!(
        kinds(file),
        vec![
            (3, DiagnosticKind::SitemapNotAbsolute),
            (6, DiagnosticKind::SitemapNotAbsolute)
        ]
    );
    assert!(!robots.rules_for(&JITTYBOT).is_allowed("/x"));
}

#[test]
fn mid_pattern_dollar_and_non_ascii_patterns_are_reported() {
    let file = "User-agent: *\nDisallow: /a$b\nDisallow: /hus/å\nDisallow: /end$\n";
    assert_eq!(
        kinds(file.as_bytes()),
        vec![
            (2, DiagnosticKind::DollarInPattern),
            (3, DiagnosticKind::NonAsciiPattern)
        ]
    );
}

#[test]
fn diagnostics_carry_the_line_text() {
    let robots = RobotsTxt::parse(b"User-agent: *\nDisalow: /x # typo\n");
    let diagnostic = &robots.diagnostics()[0];
    assert_eq!(diagnostic.text, "Disalow: /x # typo");
    assert_eq!(
        diagnostic.to_string(),
        "line 2: unknown field \"Disalow\"; line ignored: Disalow: /x # typo"
    );
}

// ---- Choosing the group ------------------------------------------------------------------------

const MEDIA: &str = "User-agent: JittyBot\nCrawl-delay: 5\n\nUser-agent: JittyBot-Image\nCrawl-delay: 30\nDisallow: /media/staff-photos/\n\nUser-agent: *\nDisallow: /\n";

#[test]
fn the_first_preferred_token_some_group_names_wins() {
    let image = rules(MEDIA, &["JittyBot-Image", "JittyBot"]);
    assert_eq!(
        image.group(),
        &GroupSelection::Named("JittyBot-Image".into())
    );
    assert_eq!(image.crawl_delay().map(|d| d.seconds), Some(30.0));
    assert!(!image.is_allowed("/media/staff-photos/a.jpg"));

    let pages = rules(MEDIA, &["JittyBot"]);
    assert_eq!(pages.crawl_delay().map(|d| d.seconds), Some(5.0));
    assert!(pages.is_allowed("/media/staff-photos/a.jpg"));
}

#[test]
fn media_falls_back_to_jittybot_then_star() {
    let file = "User-agent: JittyBot\nDisallow: /a\nUser-agent: *\nDisallow: /\n";
    let image = rules(file, &["JittyBot-Image", "JittyBot"]);
    assert_eq!(image.group(), &GroupSelection::Named("JittyBot".into()));
    assert!(!image.is_allowed("/a") && image.is_allowed("/b"));

    let file = "User-agent: *\nDisallow: /\n";
    let image = rules(file, &["JittyBot-Image", "JittyBot"]);
    assert_eq!(image.group(), &GroupSelection::Global);
    assert!(!image.is_allowed("/b"));
}

#[test]
fn no_group_means_everything_allowed() {
    let agent = rules("User-agent: Other\nDisallow: /\n", &["JittyBot"]);
    assert_eq!(agent.group(), &GroupSelection::None);
    assert!(agent.is_allowed("/anything"));
    assert!(rules("", &["JittyBot"]).is_allowed("/"));
}

#[test]
fn token_matching_is_case_insensitive_and_exact() {
    for other in ["Jitty", "JittyBotX", "JittyBot-Image", "JittyBo"] {
        let file = format!("User-agent: {other}\nDisallow: /\n");
        assert!(allowed(&file, "/a"), "{other} must not match JittyBot");
    }
    assert!(!allowed("User-agent: JITTYBOT\nDisallow: /\n", "/a"));
    let agent = rules("User-agent: jittybot\nDisallow: /\n", &["JittyBot"]);
    assert_eq!(agent.group().to_string(), "JittyBot");
}

#[test]
fn all_groups_naming_the_token_are_merged_wherever_they_are() {
    let file = "User-agent: JittyBot\nDisallow: /a\nUser-agent: *\nDisallow: /star\nUser-agent: jittybot/2\nDisallow: /b\nAllow: /a/open\n";
    let agent = rules(file, &["JittyBot"]);
    assert!(!agent.is_allowed("/a") && !agent.is_allowed("/b"));
    assert!(agent.is_allowed("/a/open"));
    assert!(agent.is_allowed("/star"));
}

#[test]
fn star_groups_are_merged_too() {
    let file = "User-agent: *\nDisallow: /a\nUser-agent: Other\nDisallow: /o\nUser-agent: *\nDisallow: /b\n";
    let agent = rules(file, &["JittyBot"]);
    assert!(!agent.is_allowed("/a") && !agent.is_allowed("/b"));
    assert!(agent.is_allowed("/o"));
}

#[test]
fn a_named_group_never_inherits_star_rules() {
    let file = "User-agent: *\nDisallow: /private\nUser-agent: JittyBot\nDisallow: /search\n";
    assert!(allowed(file, "/private"));
    assert!(!allowed(file, "/search"));
}

#[test]
fn crawl_delay_comes_from_the_chosen_group_only() {
    let file = "User-agent: *\nCrawl-delay: 10\nUser-agent: JittyBot\nDisallow: /x\n";
    assert_eq!(rules(file, &["JittyBot"]).crawl_delay(), None);
}

#[test]
fn a_group_naming_both_star_and_the_token_applies_to_both() {
    let file = "User-agent: *\nUser-agent: JittyBot\nDisallow: /x\n";
    assert!(!allowed(file, "/x"));
    assert!(!rules(file, &["Other"]).is_allowed("/x"));
}

// ---- Matching a URL ----------------------------------------------------------------------------

#[test]
fn path_plus_query_is_matched_never_the_fragment() {
    let file = "User-agent: JittyBot\nDisallow: /search?q=\nDisallow: /*section\n";
    assert!(!allowed(file, "https://example.com/search?q=1"));
    assert!(allowed(file, "https://example.com/search"));
    assert!(allowed(file, "https://example.com/page#section"));
}

#[test]
fn an_empty_path_is_slash() {
    let file = "User-agent: JittyBot\nDisallow: /$\n";
    assert!(!allowed(file, "https://example.com"));
    assert!(!allowed(file, "https://example.com/"));
    assert!(allowed(file, "https://example.com/a"));
    let query = "User-agent: JittyBot\nDisallow: /?\n";
    assert!(!allowed(query, "https://example.com?x=1"));
}

#[test]
fn url_and_rules_are_compared_in_canonical_percent_encoding() {
    for rule in ["/hus/å", "/hus/%C3%A5", "/hus/%c3%a5"] {
        let file = format!("User-agent: JittyBot\nDisallow: {rule}\n");
        for url in [
            "/hus/å",
            "/hus/%C3%A5",
            "/hus/%c3%a5",
            "https://e.com/hus/%c3%a5?x",
        ] {
            assert!(!allowed(&file, url), "{rule} vs {url}");
        }
    }
    let file = "User-agent: JittyBot\nDisallow: /a%2Fb\nDisallow: /%7Euser\n";
    assert!(!allowed(file, "/a%2fb"));
    assert!(allowed(file, "/a/b"));
    assert!(!allowed(file, "/~user"));
    let file = "User-agent: JittyBot\nDisallow: /~user\n";
    assert!(!allowed(file, "/%7euser"));
}

#[test]
fn star_matches_any_sequence_including_none() {
    let file = "User-agent: JittyBot\nDisallow: /*/private\nDisallow: /x*\n";
    assert!(!allowed(file, "/a/b/private"));
    assert!(!allowed(file, "//private"));
    assert!(!allowed(file, "/x"));
    assert!(allowed(file, "/private"));
}

#[test]
fn dollar_anchors_at_the_end_of_path_and_query() {
    let file = "User-agent: JittyBot\nDisallow: /*.pdf$\n";
    assert!(!allowed(file, "/brochure.pdf"));
    assert!(allowed(file, "/brochure.pdf?v=2"));
    assert!(allowed(file, "/brochure.pdfx"));
    let literal = "User-agent: JittyBot\nDisallow: /a$b\n";
    assert!(!allowed(literal, "/a$b/c"));
    assert!(allowed(literal, "/a"));
}

#[test]
fn the_interpretation_page_examples() {
    let root = "User-agent: JittyBot\nDisallow: /\n";
    assert!(!allowed(root, "/") && !allowed(root, "/a/b"));
    let root_only = "User-agent: JittyBot\nDisallow: /$\n";
    assert!(!allowed(root_only, "/") && allowed(root_only, "/a"));
    let property = "User-agent: JittyBot\nDisallow: /property\n";
    assert!(!allowed(property, "/property") && !allowed(property, "/property/12"));
    assert!(!allowed(property, "/property.html") && allowed(property, "/Property"));
    let folder = "User-agent: JittyBot\nDisallow: /property/\n";
    assert!(!allowed(folder, "/property/12"));
    assert!(allowed(folder, "/property") && allowed(folder, "/property.html"));
    let pdf = "User-agent: JittyBot\nDisallow: /*.pdf$\n";
    assert!(!allowed(pdf, "/brochure.pdf") && allowed(pdf, "/brochure.pdf?v=2"));

    let sections = "User-agent: JittyBot\nDisallow: /search\nDisallow: /admin\n";
    assert!(!allowed(sections, "/search") && !allowed(sections, "/admin/x"));
    let carve = "User-agent: JittyBot\nDisallow: /media/\nAllow: /media/brochures/\n";
    assert!(!allowed(carve, "/media/x.jpg"));
    assert!(allowed(carve, "/media/brochures/a.pdf"));
    let slow = "User-agent: JittyBot\nCrawl-delay: 10\n";
    assert_eq!(
        rules(slow, &["JittyBot"]).crawl_delay().map(|d| d.seconds),
        Some(10.0)
    );
    let sitemap = RobotsTxt::parse(b"Sitemap: https://example.com/sitemap.xml\n");
    assert_eq!(sitemap.sitemaps()[0].url, "https://example.com/sitemap.xml");
}

#[test]
fn the_longest_canonical_pattern_wins_and_allow_wins_ties() {
    let file = "User-agent: JittyBot\nAllow: /p\nDisallow: /page\nAllow: /page/open\n";
    assert!(allowed(file, "/p"));
    assert!(!allowed(file, "/page"));
    assert!(allowed(file, "/page/open/1"));
    let tie = "User-agent: JittyBot\nDisallow: /page\nAllow: /page\n";
    let tie = rules(tie, &["JittyBot"]);
    let decision = tie.check("/page");
    assert!(decision.allowed);
    assert_eq!(
        decision.rule.map(|r| (r.line, r.kind)),
        Some((3, RuleKind::Allow))
    );
    // Specificity is measured on the canonical form: %c3%a5 and å are both 6 bytes long.
    let canon = "User-agent: JittyBot\nDisallow: /å\nAllow: /%c3%a5\n";
    assert!(allowed(canon, "/å"));
    // ... and an escaped unreserved character counts once decoded: /%61b is /ab (3 bytes).
    let decoded = "User-agent: JittyBot\nAllow: /%61b\nDisallow: /abc\n";
    assert!(!allowed(decoded, "/abc"));
}

#[test]
fn no_matching_rule_allows() {
    let decision_file = "User-agent: JittyBot\nDisallow: /a\n";
    let agent = rules(decision_file, &["JittyBot"]);
    let decision = agent.check("/b");
    assert!(decision.allowed && decision.rule.is_none());
    assert_eq!(decision.to_string(), "no matching rule, group JittyBot");
}

#[test]
fn robots_txt_itself_is_always_allowed() {
    let agent = rules("User-agent: *\nDisallow: /\n", &["JittyBot"]);
    let decision = agent.check("https://example.com/robots.txt");
    assert!(decision.allowed && decision.robots_txt_exemption);
    assert_eq!(decision.to_string(), "/robots.txt is always allowed");
    assert!(agent.is_allowed("/robots.txt?x=1"));
    assert!(!agent.is_allowed("/robots.txt.bak"));
}

#[test]
fn thousands_of_stars_against_a_long_url_answer() {
    let file = format!("User-agent: *\nDisallow: /{}z\n", "*a".repeat(5000));
    let url = format!("/{}", "a".repeat(100_000));
    assert!(rules(&file, &["JittyBot"]).is_allowed(&url));
    let anchored = format!("User-agent: *\nDisallow: /{}b$\n", "a*".repeat(5000));
    assert!(rules(&anchored, &["JittyBot"]).is_allowed(&url));
}

// ---- Explaining --------------------------------------------------------------------------------

#[test]
fn every_decision_names_its_rule_and_group() {
    let file = "User-agent: *\nDisallow: /x\n\nUser-agent: JittyBot\nAllow: /\nDisallow: /search\n";
    let agent = rules(file, &["JittyBot"]);
    let decision = agent.check("https://example.com/search?q=1");
    assert!(!decision.allowed);
    let rule = decision.rule.expect("a rule decided");
    assert_eq!(
        (rule.line, rule.kind, rule.pattern),
        (6, RuleKind::Disallow, "/search")
    );
    assert_eq!(decision.group, &GroupSelection::Named("JittyBot".into()));
    assert_eq!(
        decision.to_string(),
        "line 6: Disallow: /search, group JittyBot"
    );
    let explanation = decision.explain();
    assert_eq!(explanation.rule.map(|r| r.line), Some(6));

    let other = rules(file, &["Other"]);
    let star = other.check("/x");
    assert_eq!(star.to_string(), "line 2: Disallow: /x, group *");
    let empty = rules("", &["Other"]);
    let none = empty.check("/x");
    assert_eq!(none.to_string(), "no group applies");
}

#[test]
fn patterns_are_reported_as_written() {
    let agent = rules(
        "User-agent: *\nDisallow: /hus/å  # comment\n",
        &["JittyBot"],
    );
    let rule = agent.check("/hus/%C3%A5").rule.expect("matched");
    assert_eq!(rule.pattern, "/hus/å");
    assert_eq!(rule.canonical_pattern(), "/hus/%C3%A5");
}

// ---- RFC 9309 cases -----------------------------------------------------------------

#[test]
fn percent_encoded_star_and_dollar_in_a_rule_match_those_characters() {
    // RFC 9309 §2.2.3's own examples.
    let star = "User-agent: *\nDisallow: /path/file-with-a-%2A.html\n";
    for url in [
        "/path/file-with-a-*.html",
        "https://www.example.com/path/file-with-a-*.html",
        "/path/file-with-a-%2A.html",
        "/path/file-with-a-%2a.html",
    ] {
        assert!(!allowed(star, url), "{url}");
    }
    // A literal star, not a wildcard.
    assert!(allowed(star, "/path/file-with-a-x.html"));
    let dollar = "User-agent: *\nDisallow: /%24\n";
    assert!(!allowed(dollar, "/$100"));
    assert!(!allowed(dollar, "/%24100"));
    assert!(allowed(dollar, "/100"));
    // An encoded `$` at the end is a literal `$`, not the anchor.
    let end = "User-agent: *\nDisallow: /foo-%24\n";
    assert!(!allowed(end, "/foo-$") && !allowed(end, "/foo-$bar"));
    assert!(allowed(end, "/foo-"));
    // Raw `*` and `$` in a rule stay wildcard and anchor; in a URL they are literal.
    let wild = "User-agent: *\nDisallow: /a*b$\n";
    assert!(!allowed(wild, "/a*b") && !allowed(wild, "/axyzb"));
    assert!(allowed(wild, "/a*b*"));
}

#[test]
fn a_literal_dollar_is_matched_and_measured_in_its_canonical_form() {
    let file = "User-agent: *\nDisallow: /a$b\n";
    let agent = rules(file, &["JittyBot"]);
    let rule = agent.rules()[0];
    assert_eq!(rule.canonical_pattern(), "/a%24b");
    assert_eq!(rule.specificity(), 6);
    assert!(!agent.is_allowed("/a$b") && !agent.is_allowed("/a%24b"));
    // Same canonical pattern, same length: the allow wins the tie.
    let tie = "User-agent: *\nDisallow: /a$b\nAllow: /a%24b\n";
    assert!(allowed(tie, "/a$b"));
}

#[test]
fn a_byte_order_mark_cut_short_is_skipped_so_the_first_line_counts() {
    for start in [&b"\xEF\xBB"[..], b"\xEF"] {
        let mut file = start.to_vec();
        file.extend_from_slice(b"User-agent: JittyBot\nDisallow: /a\n");
        assert!(!AgentRules::parse(&file, &JITTYBOT).is_allowed("/a"));
        let robots = RobotsTxt::parse(&file);
        assert!(!robots.is_allowed(&JITTYBOT, "/a"));
        assert_eq!(
            kinds(&file),
            vec![(1, DiagnosticKind::PartialByteOrderMark)]
        );
        assert_eq!(robots.line(1), Some(&b"User-agent: JittyBot"[..]));
    }
    // A character whose first byte is the mark's first byte is no mark: line 1 is that text.
    let fullwidth_colon = "\u{FF1A}User-agent: JittyBot\nDisallow: /a\n";
    assert!(allowed(fullwidth_colon, "/a"));
}

#[test]
fn a_star_followed_by_a_name_is_not_the_global_group() {
    // The pattern found on large news and tourism sites.
    let file = "User-agent: *\nDisallow: /search\n\nUser-agent: *libwww*\nDisallow: /\n";
    let agent = rules(file, &["JittyBot"]);
    assert!(agent.is_allowed("/"));
    assert!(agent.is_allowed("/news/today"));
    assert!(!agent.is_allowed("/search"));
    for value in ["*OrkashBot*", "*googlebot*", "*libwww*", "* libwww"] {
        let file = format!("User-agent: {value}\nDisallow: /\n");
        let agent = rules(&file, &["JittyBot"]);
        assert!(agent.is_allowed("/"), "{value}");
        assert_eq!(agent.group(), &GroupSelection::None, "{value}");
        let robots = RobotsTxt::parse(file.as_bytes());
        let name = match &robots.diagnostics()[0].kind {
            DiagnosticKind::StarredUserAgent { name } => name.clone(),
            other => panic!("{value}: {other:?}"),
        };
        assert_eq!(name, value.trim_matches(['*', ' ']), "{value}");
        assert_eq!(
            robots.groups()[0].user_agents[0].product,
            robots::UserAgentProduct::Nothing
        );
    }
    // `*` followed only by characters that cannot name anything stays global.
    for value in ["*", "*;", "**", "* ", "*/1.0"] {
        let file = format!("User-agent: {value}\nDisallow: /\n");
        assert!(!allowed(&file, "/"), "{value:?}");
        assert_eq!(rules(&file, &["JittyBot"]).group(), &GroupSelection::Global);
    }
}

#[test]
fn urls_of_any_scheme_with_an_authority_are_matched_by_their_path() {
    // RFC 9309 §2.3: a robots.txt lives at scheme://authority/robots.txt, FTP as well as HTTP;
    // which file governs a URL is the caller's choice, the path decides.
    let file = "User-agent: *\nDisallow: /\nAllow: /foo.html\n";
    let agent = rules(file, &["JittyBot"]);
    for url in [
        "ftp://example.net/foo.html",
        "FTP://example.net:21/foo.html#top",
        "file:///foo.html",
        "s3://bucket/foo.html?v=1",
        "HTTPS://example.net/foo.html",
        "/foo.html",
    ] {
        let decision = agent.try_check(url).expect("checked");
        assert!(decision.allowed, "{url}");
        assert_eq!(decision.rule.map(|rule| rule.line), Some(3), "{url}");
        assert_eq!(decision.refused, None);
    }
    assert!(!agent.is_allowed("ftp://example.net/bar.html"));
    assert!(agent.rules()[0].matches("ftp://example.net/foo.html"));
}

#[test]
fn urls_without_an_authority_are_refused_not_matched() {
    let agent = rules(
        "User-agent: *\nDisallow: /\nAllow: /foo.html\n",
        &["JittyBot"],
    );
    for url in [
        "mailto:a@b",
        "urn:isbn:0451450523",
        // What URL parsers read as the scheme `localhost`.
        "localhost:8080/foo.html",
    ] {
        assert_eq!(
            agent.try_check(url),
            Err(TargetError::UnsupportedScheme),
            "{url}"
        );
        let decision = agent.check(url);
        assert!(!decision.allowed && decision.rule.is_none(), "{url}");
        assert_eq!(decision.refused, Some(TargetError::UnsupportedScheme));
        assert!(decision
            .to_string()
            .starts_with("not checked: not a URL with a host"));
        assert!(!agent.rules()[0].matches(url));
    }
    assert_eq!(
        agent.try_check("http:/foo.html"),
        Err(TargetError::MissingAuthority)
    );
}

// ---- The agents callers have ------------------------------------------------------------------

/// One crawler's rules for agents read as callers give them, from both parses.
fn read_rules(file: &str, agents: &[&str]) -> (AgentRules, Vec<AgentNote>) {
    let (tokens, notes) = ProductTokens::read(agents).expect("few agents");
    let fast = AgentRules::parse(file.as_bytes(), &tokens);
    let full = RobotsTxt::parse(file.as_bytes()).rules_for(&tokens);
    assert_eq!(fast, full, "one-crawler parse and full parse disagree");
    (fast, notes)
}

const NAMES: &str = "User-agent: *\nDisallow: /\n\n\
    User-agent: MJ12bot\nDisallow: /mj12/\n\n\
    User-agent: MJ\nDisallow: /mj/\n\n\
    User-agent: MJ13bot\nDisallow: /mj13/\n\n\
    User-agent: mj12bot/1.4 # the same crawler, another group\nDisallow: /also/\n";

#[test]
fn rfc_product_tokens_are_read_as_they_are() {
    let (tokens, notes) = ProductTokens::read(["JittyBot-Image", "JittyBot"]).expect("read");
    assert_eq!(tokens, ProductTokens::JITTYBOT_IMAGE);
    assert!(notes.is_empty());
    // An RFC token reads a user-agent line's letters, as before: `MJ12bot` names `MJ`.
    let (mj, _) = read_rules(NAMES, &["MJ"]);
    for path in ["/mj/", "/mj12/", "/mj13/", "/also/"] {
        assert!(!mj.is_allowed(path), "{path}");
    }
}

#[test]
fn a_name_beyond_rfc_tokens_names_exactly_the_groups_that_write_it() {
    let (agent, notes) = read_rules(NAMES, &["MJ12bot"]);
    assert_eq!(
        notes,
        [AgentNote::BeyondRfc {
            token: "MJ12bot".into()
        }]
    );
    assert_eq!(agent.group(), &GroupSelection::Named("MJ12bot".into()));
    assert!(!agent.is_allowed("/mj12/a") && !agent.is_allowed("/also/a"));
    // Not `MJ`'s group, not `MJ13bot`'s, and not `*`: it has groups of its own.
    for path in ["/mj/a", "/mj13/a", "/other"] {
        assert!(agent.is_allowed(path), "{path}");
    }
    // Case-insensitive, and the name ends where the line's name ends.
    let (lower, _) = read_rules("User-agent: mj12BOT;\nDisallow: /x\n", &["MJ12bot"]);
    assert!(!lower.is_allowed("/x"));
    let (longer, _) = read_rules("User-agent: MJ12botX\nDisallow: /x\n", &["MJ12bot"]);
    assert_eq!(longer.group(), &GroupSelection::None);
}

#[test]
fn names_with_digits_dots_and_bangs_are_matched_whole() {
    for name in ["360Spider", "Mail.RU_Bot", "Go!Zilla", "archive.org_bot"] {
        let file =
            format!("User-agent: *\nDisallow: /\n\nUser-agent: {name}/2.0\nDisallow: /private\n");
        let (agent, _) = read_rules(&file, &[name]);
        assert_eq!(agent.group(), &GroupSelection::Named(name.into()), "{name}");
        assert!(
            agent.is_allowed("/public") && !agent.is_allowed("/private"),
            "{name}"
        );
    }
    // The starred and global lines stay what they were.
    let (agent, _) = read_rules("User-agent: *360Spider*\nDisallow: /\n", &["360Spider"]);
    assert_eq!(agent.group(), &GroupSelection::None);
}

#[test]
fn a_user_agent_string_is_read_for_its_product_token() {
    let file = "User-agent: *\nDisallow: /\n\nUser-agent: Googlebot\nDisallow: /nogoogle\n\n\
                User-agent: MJ12bot\nDisallow: /nomj\n\nUser-agent: JittyBot\nDisallow: /nojitty\n";
    let googlebot = "Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)";
    let (agent, notes) = read_rules(file, &[googlebot]);
    assert_eq!(agent.group(), &GroupSelection::Named("Googlebot".into()));
    assert!(!agent.is_allowed("/nogoogle") && agent.is_allowed("/page"));
    assert_eq!(
        notes,
        [AgentNote::TokenFromString {
            agent: googlebot.into(),
            token: "Googlebot".into()
        }]
    );
    let (agent, _) = read_rules(file, &["JittyBot/1.0"]);
    assert_eq!(agent.group(), &GroupSelection::Named("JittyBot".into()));
    let majestic = "Mozilla/5.0 (compatible; MJ12bot/v1.4.8; http://mj12bot.com/)";
    let (agent, notes) = read_rules(file, &[majestic]);
    assert!(!agent.is_allowed("/nomj") && agent.is_allowed("/page"));
    assert_eq!(notes.len(), 2, "{notes:?}");
    // A browser's string names Mozilla: no group of its own here, so `*`.
    let chrome = "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120.0 Safari/537.36";
    let (agent, _) = read_rules(file, &[chrome]);
    assert_eq!(agent.group(), &GroupSelection::Global);
}

#[test]
fn an_agent_that_names_no_crawler_follows_the_star_groups() {
    let file = "User-agent: *\nDisallow: /private\n\nUser-agent: JittyBot\nDisallow: /\n";
    for nameless in ["", "   ", "*", "/1.0"] {
        let (tokens, notes) = ProductTokens::read([nameless]).expect("read");
        assert!(tokens.is_empty(), "{nameless:?}");
        assert_eq!(
            notes,
            [AgentNote::NoToken {
                agent: nameless.into()
            }]
        );
        let (agent, _) = read_rules(file, &[nameless]);
        assert_eq!(agent.group(), &GroupSelection::Global, "{nameless:?}");
        assert!(agent.is_allowed("/page") && !agent.is_allowed("/private/a"));
    }
    // As a fallback it adds nothing.
    let (agent, _) = read_rules(file, &["", "JittyBot"]);
    assert_eq!(agent.group(), &GroupSelection::Named("JittyBot".into()));
    let (none, _) = read_rules("User-agent: JittyBot\nDisallow: /\n", &[""]);
    assert_eq!(none.group(), &GroupSelection::None);
}

#[test]
fn reading_agents_fails_only_with_too_many_tokens() {
    let many = vec!["MJ12bot"; MAX_PREFERRED_TOKENS + 1];
    assert_eq!(
        ProductTokens::read(&many).map(|(tokens, _)| tokens.len()),
        Err(ProductTokenError::TooMany {
            count: MAX_PREFERRED_TOKENS + 1
        })
    );
    let (tokens, _) = ProductTokens::read(&many[1..]).expect("the most allowed");
    assert_eq!(tokens.len(), MAX_PREFERRED_TOKENS);
}

// ---- What tooling needs ------------------------------------------------------------------------

#[test]
fn raw_lines_are_numbered_as_the_engine_numbers_them() {
    let file = b"\xEF\xBB\xBFUser-agent: a\rDisalow: /x\r\n\nDisallow: /y # z\n\xFFbad";
    let robots = RobotsTxt::parse(file);
    let lines: Vec<(usize, &[u8])> = robots.lines().collect();
    assert_eq!(
        lines,
        vec![
            (1, &b"User-agent: a"[..]),
            (2, b"Disalow: /x"),
            (3, b""),
            (4, b"Disallow: /y # z"),
            (5, b"\xFFbad"),
        ]
    );
    assert_eq!(robots.line_count(), 5);
    assert_eq!((robots.line(0), robots.line(6)), (None, None));
    for diagnostic in robots.diagnostics().iter().filter(|d| !d.text.is_empty()) {
        let line = robots
            .line(diagnostic.line)
            .expect("a diagnostic's line exists");
        assert_eq!(String::from_utf8_lossy(line), diagnostic.text);
    }
    let rule = &robots.groups()[0].rules[0];
    assert_eq!(robots.line(rule.line), Some(&b"Disallow: /y # z"[..]));
    // The line cut by the size limit is no line.
    let mut big = b"User-agent: *\n".to_vec();
    big.resize(MAX_ROBOTS_TXT_BYTES + 10, b'#');
    let robots = RobotsTxt::parse(&big);
    assert_eq!(robots.lines().len(), 1);
    assert_eq!(robots.line(2), None);
}

#[test]
fn empty_rules_are_visible_with_their_lines() {
    let file = b"User-agent: a\nDisallow:\nAllow:  # nothing\nDisallow: /x\n";
    let robots = RobotsTxt::parse(file);
    let group = &robots.groups()[0];
    assert_eq!(
        group.empty_rules,
        vec![
            EmptyRule {
                line: 2,
                kind: RuleKind::Disallow
            },
            EmptyRule {
                line: 3,
                kind: RuleKind::Allow
            }
        ]
    );
    assert_eq!(group.rules.len(), 1);
}

#[test]
fn empty_agent_rules_allow_everything() {
    let empty = AgentRules::empty();
    assert_eq!(empty.group(), &GroupSelection::None);
    assert_eq!(empty.rule_count(), 0);
    assert!(empty.is_allowed("/anything"));
    assert_eq!(empty, RobotsTxt::parse(b"").rules_for(&JITTYBOT));
}

#[test]
fn a_rule_ref_leads_back_to_its_rule_and_tests_one_url() {
    let file = b"User-agent: *\nDisallow: /a\n\nUser-agent: JittyBot\nDisallow: /hus/\xC3\xA5*.jpg$\nAllow: /b\n";
    let robots = RobotsTxt::parse(file);
    let agent = robots.rules_for(&JITTYBOT);
    for rule in agent.rules() {
        let full = robots.rule_of(&rule).expect("every rule has its line");
        assert_eq!(
            (full.line, full.kind, &*full.pattern),
            (rule.line, rule.kind, rule.pattern)
        );
        assert_eq!(full.canonical_pattern(), rule.canonical_pattern());
        assert_eq!(&rule.to_rule(), full);
        assert_eq!(robots.rule_at(rule.line), Some(full));
    }
    let hus = agent.rules()[0];
    assert_eq!(hus.line, 5);
    assert!(hus.matches("/hus/%C3%A5/x.jpg"));
    assert!(!hus.matches("/hus/%C3%A5/x.jpg?y"));
    assert!(!hus.matches("/b"));
    assert_eq!(robots.rule_at(1), None);
    assert_eq!(robots.rule_at(2).map(|rule| rule.line), Some(2));
    assert_eq!(robots.rule_at(4), None);
}

#[test]
fn global_rules_are_the_star_groups() {
    let robots =
        RobotsTxt::parse(b"User-agent: JittyBot\nDisallow: /j\nUser-agent: *\nDisallow: /s\n");
    let global = robots.global_rules();
    assert_eq!(global.group(), &GroupSelection::Global);
    assert!(!global.is_allowed("/s") && global.is_allowed("/j"));
    assert_eq!(
        RobotsTxt::parse(b"User-agent: a\nDisallow: /\n").global_rules(),
        AgentRules::empty()
    );
}

#[test]
fn a_crawl_delay_between_user_agents_is_reported_with_both_lines() {
    // JittyBot reads two groups here (the media example); RFC 9309 parsers and Google, one.
    let file = b"User-agent: JittyBot\nCrawl-delay: 5\nUser-agent: JittyBot-Image\nCrawl-delay: 30\nDisallow: /media/staff-photos/\n";
    assert_eq!(
        kinds(file),
        vec![(
            3,
            DiagnosticKind::AgentListSplitByCrawlDelay {
                group_line: 1,
                crawl_delay_line: 2
            }
        )]
    );
    // No split to report once a rule closed the list, nor between agent lines.
    for quiet in [
        &b"User-agent: a\nCrawl-delay: 5\nDisallow: /x\nUser-agent: b\nDisallow: /\n"[..],
        b"User-agent: a\nDisallow:\nCrawl-delay: 5\nUser-agent: b\n",
        b"User-agent: a\nSitemap: https://e.com/s.xml\nUser-agent: b\nCrawl-delay: 1\n",
    ] {
        let splits = kinds(quiet)
            .into_iter()
            .filter(|(_, kind)| matches!(kind, DiagnosticKind::AgentListSplitByCrawlDelay { .. }));
        assert_eq!(splits.count(), 0, "{}", String::from_utf8_lossy(quiet));
    }
}

#[test]
fn product_token_lists_are_checked() {
    for bad in [&["JittyBot/1.0"][..], &["Jitty Bot"], &["*"], &[]] {
        assert!(ProductTokens::new(bad).is_err(), "{bad:?}");
    }
    let media = ProductTokens::new(["JittyBot-Image", "JittyBot"]).expect("valid");
    assert_eq!(media, ProductTokens::JITTYBOT_IMAGE);
    let file = b"User-agent: JittyBot-Image\nDisallow: /m\n";
    assert!(!AgentRules::parse(file, &media).is_allowed("/m"));
    assert!(AgentRules::parse(file, &JITTYBOT).is_allowed("/m"));
}
