//! Property tests: line endings, comments and unknown lines, and a reference matcher.

use proptest::prelude::*;
use robots::{AgentRules, ProductTokens, RobotsTxt, RuleKind};

fn tokens(list: &[&str]) -> ProductTokens {
    ProductTokens::new(list).expect("test tokens are product tokens")
}

// ---- A straightforward reference matcher, written independently of the engine --------------

/// One character of a canonical URL: a raw byte, or a byte that stays percent-encoded.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Unit {
    Raw(u8),
    Escaped(u8),
}

impl Unit {
    fn width(self) -> usize {
        match self {
            Unit::Raw(_) => 1,
            Unit::Escaped(_) => 3,
        }
    }
}

fn unreserved(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b"-._~".contains(&b)
}

fn raw_allowed(b: u8) -> bool {
    (0x21..0x7F).contains(&b) && !b"\"<>\\^`{|}".contains(&b)
}

/// How `*` and `$` are read: in a URL both are literal characters; in a pattern a raw `*` is
/// the wildcard and a final raw `$` the anchor (RFC 9309 §2.2.3), any other `$` literal.
#[derive(Clone, Copy, PartialEq)]
enum Side {
    Url,
    Pattern,
}

/// The characters of `text`. In a pattern, `Raw(b'*')` is the wildcard and a final `Raw(b'$')`
/// the anchor; every literal `*` or `$` (on either side) is `Escaped`.
fn units(text: &[u8], side: Side) -> Vec<Unit> {
    let mut out = Vec::new();
    let mut i = 0;
    while i < text.len() {
        let b = text[i];
        let special = match b {
            b'*' => side == Side::Pattern,
            b'$' => side == Side::Pattern && i + 1 == text.len(),
            _ => false,
        };
        if special {
            out.push(Unit::Raw(b));
            i += 1;
            continue;
        }
        if b == b'*' || b == b'$' {
            out.push(Unit::Escaped(b));
            i += 1;
            continue;
        }
        let hex = |c: u8| (c as char).to_digit(16).map(|d| d as u8);
        if b == b'%' {
            if let (Some(h), Some(l)) = (
                text.get(i + 1).and_then(|&c| hex(c)),
                text.get(i + 2).and_then(|&c| hex(c)),
            ) {
                let decoded = h * 16 + l;
                out.push(if unreserved(decoded) {
                    Unit::Raw(decoded)
                } else {
                    Unit::Escaped(decoded)
                });
                i += 3;
                continue;
            }
            out.push(Unit::Escaped(b'%'));
        } else if raw_allowed(b) {
            out.push(Unit::Raw(b));
        } else {
            out.push(Unit::Escaped(b));
        }
        i += 1;
    }
    out
}

/// Classic dynamic-programming glob match: `*` any run, final `$` anchors.
fn reference_match(pattern: &[Unit], path: &[Unit]) -> bool {
    let (pattern, anchored) = match pattern.split_last() {
        Some((Unit::Raw(b'$'), rest)) => (rest, true),
        _ => (pattern, false),
    };
    // reachable[j]: pattern prefix processed so far can end at path position j.
    let mut reachable = vec![false; path.len() + 1];
    reachable[0] = true;
    for unit in pattern {
        let mut next = vec![false; path.len() + 1];
        if *unit == Unit::Raw(b'*') {
            let mut seen = false;
            for j in 0..=path.len() {
                seen |= reachable[j];
                next[j] = seen;
            }
        } else {
            for j in 0..path.len() {
                next[j + 1] = reachable[j] && path[j] == *unit;
            }
        }
        reachable = next;
    }
    if anchored {
        reachable[path.len()]
    } else {
        reachable.iter().any(|&r| r)
    }
}

/// The reference decision: allowed?, and the deciding rule's index.
fn reference_decision(rules: &[(RuleKind, String)], url: &str) -> (bool, Option<usize>) {
    let path = units(url.as_bytes(), Side::Url);
    let mut best: Option<(usize, bool, usize)> = None; // (length, is_allow, index)
    for (index, (kind, pattern)) in rules.iter().enumerate() {
        let pattern_units = units(pattern.as_bytes(), Side::Pattern);
        if !reference_match(&pattern_units, &path) {
            continue;
        }
        let length: usize = pattern_units.iter().map(|u| u.width()).sum();
        let is_allow = *kind == RuleKind::Allow;
        let better = match best {
            None => true,
            Some((best_length, best_allow, _)) => {
                length > best_length || (length == best_length && is_allow && !best_allow)
            }
        };
        if better {
            best = Some((length, is_allow, index));
        }
    }
    match best {
        None => (true, None),
        Some((_, allow, index)) => (allow, Some(index)),
    }
}

// ---- Generators --------------------------------------------------------------------------------

const PIECES: &[&str] = &[
    "a", "b", "ab", "/", "/a", ".", "-", "~", "*", "$", "?", "=", "&", "%2F", "%2f", "%41", "%7e",
    "%C3%A5", "%c3%a5", "å", "é", "%", "%zz", "%4", ";", "+", "(", "|", "%2A", "%2a", "%24",
];

fn fragment() -> impl Strategy<Value = String> {
    prop::collection::vec(prop::sample::select(PIECES), 0..8).prop_map(|parts| parts.concat())
}

fn pattern() -> impl Strategy<Value = String> {
    (prop::bool::ANY, fragment()).prop_map(|(star, rest)| {
        let head = if star { "*" } else { "/" };
        format!("{head}{rest}")
    })
}

fn url() -> impl Strategy<Value = String> {
    fragment().prop_map(|rest| format!("/{rest}"))
}

fn rule_list() -> impl Strategy<Value = Vec<(RuleKind, String)>> {
    prop::collection::vec(
        (
            prop::sample::select(vec![RuleKind::Allow, RuleKind::Disallow]),
            pattern(),
        ),
        0..24, // more than 8 rules also exercises the bucketed index
    )
}

fn file_of(rules: &[(RuleKind, String)]) -> String {
    let mut file = String::from("User-agent: JittyBot\n");
    for (kind, pattern) in rules {
        file.push_str(&format!("{kind}: {pattern}\n"));
    }
    file
}

const LINES: &[&str] = &[
    "User-agent: JittyBot",
    "User-agent: *",
    "User-agent: Other",
    "user-agent: jittybot/1.0",
    "User-agent: MJ12bot",
    "User-agent: mj12bot/1.4",
    "User-agent: MJ",
    "Disallow: /a",
    "Disallow: /",
    "Allow: /a/b",
    "Disallow: /*.pdf$",
    "Allow: /$",
    "Disallow:",
    "Crawl-delay: 3",
    "Sitemap: https://e.com/s.xml",
    "Disallow: /%c3%a5",
    "Allow: /å",
    "",
];

fn robots_lines() -> impl Strategy<Value = Vec<&'static str>> {
    prop::collection::vec(prop::sample::select(LINES), 0..16)
}

const PROBES: &[&str] = &[
    "/",
    "/a",
    "/a/b",
    "/x.pdf",
    "/x.pdf?v=1",
    "/å",
    "/%C3%A5",
    "/b",
];

proptest! {
    // PROPTEST_CASES raises the count for a longer run; CI uses the default.
    #![proptest_config(ProptestConfig::with_cases(
        std::env::var("PROPTEST_CASES").ok().and_then(|cases| cases.parse().ok()).unwrap_or(512)
    ))]

    #[test]
    fn the_fast_matcher_agrees_with_the_reference(rules in rule_list(), url in url()) {
        let agent = AgentRules::parse(file_of(&rules).as_bytes(), &ProductTokens::JITTYBOT);
        let decision = agent.check(&url);
        let (allowed, index) = reference_decision(&rules, &url);
        prop_assert_eq!(decision.allowed, allowed, "url {:?} rules {:?}", url, rules);
        // Several rules may tie; the reported rule must be an equally good one.
        let reported = decision.rule.map(|rule| rule.line - 2);
        match (reported, index) {
            (None, None) => {}
            (Some(got), Some(want)) => {
                let length = |i: usize| units(rules[i].1.as_bytes(), Side::Pattern).iter().map(|u| u.width()).sum::<usize>();
                prop_assert_eq!(length(got), length(want));
                prop_assert_eq!(rules[got].0, rules[want].0);
            }
            (got, want) => prop_assert!(false, "rule {:?} vs reference {:?}", got, want),
        }
    }

    #[test]
    fn cr_lf_and_crlf_files_read_the_same(lines in robots_lines()) {
        let lf = lines.join("\n");
        let crlf = lines.join("\r\n");
        let cr = lines.join("\r");
        for list in [&["JittyBot"][..], &["JittyBot-Image", "JittyBot"], &["Other"]] {
            let tokens = &tokens(list);
            let expected = AgentRules::parse(lf.as_bytes(), tokens);
            prop_assert_eq!(&AgentRules::parse(crlf.as_bytes(), tokens), &expected);
            prop_assert_eq!(&AgentRules::parse(cr.as_bytes(), tokens), &expected);
        }
        let (a, b) = (RobotsTxt::parse(lf.as_bytes()), RobotsTxt::parse(crlf.as_bytes()));
        prop_assert_eq!(a.groups(), b.groups());
        prop_assert_eq!(a.sitemaps(), b.sitemaps());
        prop_assert_eq!(a.diagnostics(), b.diagnostics());
    }

    #[test]
    fn comments_and_unknown_lines_never_change_an_answer(
        lines in robots_lines(),
        noise in prop::collection::vec((0usize..20, prop::sample::select(vec![
            "# a comment", "Foo: bar", "Noindex: /a", "Dissallow: /", "no colon here", "   ",
            "Host: example.com", "Clean-param: x",
        ])), 0..6),
        trailing_comments in prop::bool::ANY,
    ) {
        let plain = lines.join("\n");
        let mut noisy: Vec<String> = lines
            .iter()
            .map(|line| if trailing_comments { format!("{line} # note: Disallow: /") } else { (*line).to_owned() })
            .collect();
        for (position, extra) in noise {
            let at = position.min(noisy.len());
            noisy.insert(at, extra.to_owned());
        }
        let noisy = noisy.join("\n");
        for list in [&["JittyBot"][..], &["Other"]] {
            let tokens = &tokens(list);
            let a = AgentRules::parse(plain.as_bytes(), tokens);
            let b = AgentRules::parse(noisy.as_bytes(), tokens);
            prop_assert_eq!(a.group(), b.group());
            for probe in PROBES {
                let (x, y) = (a.check(probe), b.check(probe));
                prop_assert_eq!(x.allowed, y.allowed, "{}", probe);
                prop_assert_eq!(x.rule.map(|r| r.pattern), y.rule.map(|r| r.pattern));
            }
        }
    }

    #[test]
    fn one_crawler_parse_equals_full_parse(lines in robots_lines()) {
        let file = lines.join("\n");
        let full = RobotsTxt::parse(file.as_bytes());
        for list in [&["JittyBot"][..], &["JittyBot-Image", "JittyBot"], &["Other"]] {
            let tokens = &tokens(list);
            prop_assert_eq!(AgentRules::parse(file.as_bytes(), tokens), full.rules_for(tokens));
        }
        // Names beyond RFC 9309's tokens, alone, first or after an RFC token naming the same
        // lines, and an agent with no name.
        for agents in [&["MJ12bot"][..], &["MJ12bot", "MJ"], &["MJ", "MJ12bot"], &[""]] {
            let (tokens, _) = ProductTokens::read(agents).expect("few agents");
            prop_assert_eq!(AgentRules::parse(file.as_bytes(), &tokens), full.rules_for(&tokens));
        }
        // No line of LINES names "Nobody": it gets what the `*` groups say.
        prop_assert_eq!(AgentRules::parse(file.as_bytes(), &tokens(&["Nobody"])), full.global_rules());
    }

    /// Bounded-time fuzzing that runs with every `cargo test`: arbitrary bytes never panic.
    #[test]
    fn arbitrary_bytes_and_urls_never_panic(
        body in prop::collection::vec(any::<u8>(), 0..2048),
        url in prop::collection::vec(any::<u8>(), 0..256),
    ) {
        let full = RobotsTxt::parse(&body);
        let agent = AgentRules::parse(&body, &ProductTokens::JITTYBOT);
        prop_assert_eq!(&full.rules_for(&ProductTokens::JITTYBOT), &agent);
        let _ = agent.check_bytes(&url).explain().to_string();
        for diagnostic in full.diagnostics() {
            let _ = diagnostic.to_string();
        }
    }
}
