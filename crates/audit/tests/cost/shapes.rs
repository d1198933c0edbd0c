//! Hostile robots.txt files of up to 500 KiB, each built to make one part of the audit work
//! hard: many groups, many tokens per group, many rules, long patterns with many `*`, rules
//! that all overlap, many sitemaps, huge lines. Shared by the cost test and the
//! `worst_case` example.

use std::fmt::Write as _;

/// The size every shape fills: what the engine reads of a file.
pub const SIZE: usize = robots::MAX_ROBOTS_TXT_BYTES;

/// A named hostile file.
pub struct Shape {
    /// Its name.
    pub name: &'static str,
    /// What it aims at.
    #[allow(dead_code)] // Read by the test, not by the example.
    pub aim: &'static str,
    /// Builds it, at most `size` bytes.
    pub build: fn(usize) -> Vec<u8>,
}

/// Every shape.
pub const SHAPES: &[Shape] = &[
    Shape {
        name: "agents-then-rules",
        aim: "20,000 user-agent lines, then 1,000 Disallow lines, in one group",
        build: agents_then_rules,
    },
    Shape {
        name: "agents-fill-rules",
        aim: "one group: as many tokens as fit, then 1,000 overlapping rules",
        build: agents_fill_rules,
    },
    Shape {
        name: "distinct-group-sets",
        aim: "a group of 999 rules naming every token, each token also in a one-rule group of its own",
        build: distinct_group_sets,
    },
    Shape {
        name: "sliding-groups",
        aim: "small groups, each token named by a window of neighbouring groups",
        build: sliding_groups,
    },
    Shape {
        name: "star-rules",
        aim: "`*` with 1,000 long overlapping patterns full of `*`, and named groups sharing them",
        build: star_rules,
    },
    Shape {
        name: "global-and-named",
        aim: "1,000 `*` disallows and thousands of named groups that drop them",
        build: global_and_named,
    },
    Shape {
        name: "long-lines",
        aim: "a few lines of 100 KB, patterns of `*a` repeated",
        build: long_lines,
    },
    Shape {
        name: "sitemaps",
        aim: "every line a Sitemap",
        build: sitemaps,
    },
    Shape {
        name: "starred-agents",
        aim: "one group of `*name*` agents and many rules",
        build: starred_agents,
    },
    Shape {
        name: "empty-rules",
        aim: "one group of empty Disallow lines and agents that are not tokens",
        build: empty_rules,
    },
    Shape {
        name: "crawl-delay-splits",
        aim: "a crawl-delay between every two user-agent lines",
        build: crawl_delay_splits,
    },
    Shape {
        name: "many-global-groups",
        aim: "thousands of `*` groups, and of Googlebot groups",
        build: many_global_groups,
    },
    Shape {
        name: "repeated-rules",
        aim: "the same rule repeated, Allow and Disallow alike, under thousands of tokens",
        build: repeated_rules,
    },
    Shape {
        name: "unknown-fields",
        aim: "every line an unknown field close to a known one",
        build: unknown_fields,
    },
    Shape {
        name: "resources",
        aim: "1,000 Googlebot disallows aimed at scripts and stylesheets, long and starred",
        build: resources,
    },
    Shape {
        name: "star-probes",
        aim: "`*` disallows full of `*` that each fail late on the others' sample URLs, and named groups of them dropping them",
        build: star_probes,
    },
    Shape {
        name: "sitemap-probes",
        aim: "`*` rules full of `*`, and long sitemap URLs each checked against them",
        build: sitemap_probes,
    },
    Shape {
        name: "notable-in-one",
        aim: "every crawler of the directory named in one group of starred rules",
        build: notable_in_one,
    },
    Shape {
        name: "tiny-lines",
        aim: "every line a diagnostic: no colon, typos, rules outside a group, bad crawl-delays",
        build: tiny_lines,
    },
];

/// `i` written with the letters `b` and `c` only: tails of equal byte sets, so that no
/// byte filter tells the rules apart.
fn binary(mut i: usize) -> String {
    let mut out = String::new();
    for _ in 0..12 {
        out.push(if i.is_multiple_of(2) { 'b' } else { 'c' });
        i /= 2;
    }
    out
}

/// `i` in letters (`a`, `b`, ... `ba`...): digits are not part of a product token, so
/// `bot1` and `bot2` both name `bot`.
pub fn letters(mut i: usize) -> String {
    let mut out = Vec::new();
    loop {
        out.push(b'a' + (i % 26) as u8);
        i /= 26;
        if i == 0 {
            break;
        }
    }
    out.reverse();
    String::from_utf8(out).unwrap_or_default()
}

/// Appends `line` and a newline to `out` if it fits in `size`; says whether it did.
fn push(out: &mut String, size: usize, line: &str) -> bool {
    if out.len() + line.len() + 1 > size {
        return false;
    }
    out.push_str(line);
    out.push('\n');
    true
}

fn agents_then_rules(size: usize) -> Vec<u8> {
    let mut out = String::new();
    for i in 0..20_000 {
        push(&mut out, size, &format!("User-agent: bot{}", letters(i)));
    }
    for i in 0..1_000 {
        push(&mut out, size, &format!("Disallow: /path{i}/"));
    }
    out.into_bytes()
}

fn agents_fill_rules(size: usize) -> Vec<u8> {
    let mut rules = String::new();
    for i in 0..1_000 {
        let _ = writeln!(rules, "Disallow: /a{}", "/a".repeat(i % 40));
        let _ = writeln!(rules, "Allow: /a{}*b{i}", "/a".repeat(i % 40));
    }
    let mut out = String::new();
    let room = size.saturating_sub(rules.len());
    let mut i = 0;
    while push(&mut out, room, &format!("User-agent: t{}", letters(i))) {
        i += 1;
    }
    out.push_str(&rules);
    out.into_bytes()
}

fn distinct_group_sets(size: usize) -> Vec<u8> {
    // The big group first: every token, 999 rules. Then one small group per token.
    let tokens = 10_000;
    let mut out = String::new();
    for i in 0..tokens {
        push(&mut out, size, &format!("User-agent: t{}", letters(i)));
    }
    for i in 0..999 {
        push(&mut out, size, &format!("Disallow: /d{}/{i}", i % 10));
    }
    for i in 0..tokens {
        if !push(
            &mut out,
            size,
            &format!("User-agent: t{}\nAllow: /d{}", letters(i), i % 10),
        ) {
            break;
        }
    }
    out.into_bytes()
}

fn sliding_groups(size: usize) -> Vec<u8> {
    let window = 8;
    let mut out = String::new();
    let mut group = 0;
    loop {
        let mut text = String::new();
        for token in group..group + window {
            let _ = writeln!(text, "User-agent: w{}", letters(token));
        }
        for rule in 0..6 {
            let _ = writeln!(text, "Disallow: /g{}/r{rule}*x", group % 50);
        }
        if !push(&mut out, size, &text) {
            break;
        }
        group += 1;
    }
    out.into_bytes()
}

fn star_rules(size: usize) -> Vec<u8> {
    let mut out = String::new();
    for i in 0..100 {
        push(&mut out, size, &format!("User-agent: named{}", letters(i)));
    }
    push(&mut out, size, "User-agent: *");
    let mut i = 0;
    while i < 1_000 {
        let stars = "a*".repeat(100 + i % 50);
        let line = match i % 3 {
            0 => format!("Disallow: /{stars}z{i}"),
            1 => format!("Allow: /{}", "a".repeat(150 + i % 300)),
            _ => format!("Disallow: /{}$", "a".repeat(100 + i % 350)),
        };
        if !push(&mut out, size, &line) {
            break;
        }
        i += 1;
    }
    out.into_bytes()
}

fn global_and_named(size: usize) -> Vec<u8> {
    let mut out = String::new();
    push(&mut out, size, "User-agent: *");
    for i in 0..1_000 {
        push(
            &mut out,
            size,
            &format!("Disallow: /{}{i}", "private/".repeat(1 + i % 20)),
        );
    }
    let mut i = 0;
    while push(
        &mut out,
        size,
        &format!("\nUser-agent: n{}\nDisallow: /n{i}", letters(i)),
    ) {
        i += 1;
    }
    out.into_bytes()
}

fn long_lines(size: usize) -> Vec<u8> {
    let mut out = String::new();
    push(&mut out, size, "User-agent: *");
    push(&mut out, size, "User-agent: Googlebot");
    let line = 100_000;
    let mut i = 0;
    loop {
        let body = match i % 3 {
            0 => format!("Disallow: /{}", "*a".repeat(line / 2)),
            1 => format!("Allow: /{}", "a".repeat(line)),
            _ => format!("Disallow: /{}*.js$", "a*".repeat(line / 2 - 4)),
        };
        if !push(&mut out, size, &body) {
            break;
        }
        i += 1;
    }
    out.into_bytes()
}

fn sitemaps(size: usize) -> Vec<u8> {
    let mut out = String::new();
    push(
        &mut out,
        size,
        "User-agent: *\nDisallow: /private/\nAllow: /",
    );
    let mut i = 0;
    while push(
        &mut out,
        size,
        &format!("Sitemap: https://example.com/sitemaps/{}/s{i}.xml", i % 7),
    ) {
        i += 1;
    }
    out.into_bytes()
}

fn starred_agents(size: usize) -> Vec<u8> {
    let mut out = String::new();
    for i in 0..12_000 {
        push(&mut out, size, &format!("User-agent: *s{}*", letters(i)));
    }
    let mut i = 0;
    while push(&mut out, size, &format!("Disallow: /s{i}")) {
        i += 1;
    }
    out.into_bytes()
}

fn empty_rules(size: usize) -> Vec<u8> {
    let mut out = String::new();
    for i in 0..8_000 {
        push(&mut out, size, &format!("User-agent: 9{i} (compatible)"));
    }
    let mut i = 0;
    while push(
        &mut out,
        size,
        if i % 2 == 0 { "Disallow:" } else { "Allow:" },
    ) {
        i += 1;
    }
    out.into_bytes()
}

fn crawl_delay_splits(size: usize) -> Vec<u8> {
    let mut out = String::new();
    for i in 0..8_000 {
        push(&mut out, size, &format!("User-agent: c{}", letters(i)));
    }
    push(&mut out, size, "Disallow: /x");
    let mut i = 0;
    while push(
        &mut out,
        size,
        &format!(
            "Crawl-delay: 5\nUser-agent: d{}\nDisallow: /y{i}",
            letters(i)
        ),
    ) {
        i += 1;
    }
    out.into_bytes()
}

fn many_global_groups(size: usize) -> Vec<u8> {
    let mut out = String::new();
    let mut i = 0;
    loop {
        let agent = if i % 2 == 0 { "*" } else { "Googlebot" };
        if !push(
            &mut out,
            size,
            &format!("User-agent: {agent}\nDisallow: /g{i}/*.js\nAllow: /g{i}/a"),
        ) {
            break;
        }
        i += 1;
    }
    out.into_bytes()
}

fn repeated_rules(size: usize) -> Vec<u8> {
    let mut out = String::new();
    for i in 0..5_000 {
        push(&mut out, size, &format!("User-agent: r{}", letters(i)));
    }
    let mut i = 0;
    loop {
        let line = match i % 4 {
            0 => "Disallow: /same",
            1 => "Allow: /same",
            2 => "Disallow: /same*",
            _ => "Allow: /other",
        };
        if !push(&mut out, size, line) {
            break;
        }
        i += 1;
    }
    out.into_bytes()
}

fn unknown_fields(size: usize) -> Vec<u8> {
    let mut out = String::new();
    push(&mut out, size, "User-agent: *");
    let fields = [
        "Dissalow",
        "Disalloww",
        "Usr-agent",
        "Sitemapp",
        "Crawl-dlay",
        "Alow",
    ];
    let mut i = 0;
    while push(
        &mut out,
        size,
        &format!("{}: /u{i}", fields[i % fields.len()]),
    ) {
        i += 1;
    }
    out.into_bytes()
}

fn resources(size: usize) -> Vec<u8> {
    let mut out = String::new();
    push(&mut out, size, "User-agent: Googlebot");
    let mut i = 0;
    while i < 1_000 {
        let line = match i % 3 {
            0 => format!("Disallow: /{}{i}.js$", "*js/".repeat(80)),
            1 => format!("Disallow: /css/{}{i}", "a*".repeat(100)),
            _ => format!("Allow: /{}{i}.css", "js/".repeat(50)),
        };
        if !push(&mut out, size, &line) {
            break;
        }
        i += 1;
    }
    for i in 0..4_000 {
        push(&mut out, size, &format!("User-agent: x{}", letters(i)));
    }
    push(&mut out, size, "Disallow: /");
    out.into_bytes()
}

/// A disallow whose sample URL (its stars removed) every other such rule fails to match only
/// at its very end, after trying every piece.
fn starred_rule(i: usize, stars: usize) -> String {
    format!("Disallow: /{}z{}", "a*".repeat(stars), binary(i))
}

fn star_probes(size: usize) -> Vec<u8> {
    let mut out = String::new();
    push(&mut out, size, "User-agent: *");
    for i in 0..700 {
        push(&mut out, size, &starred_rule(i, 200));
    }
    let mut i = 0;
    while push(
        &mut out,
        size,
        &format!(
            "\nUser-agent: n{}\n{}",
            letters(i),
            starred_rule(10_000 + i, 200)
        ),
    ) {
        i += 1;
    }
    out.into_bytes()
}

fn sitemap_probes(size: usize) -> Vec<u8> {
    let mut out = String::new();
    push(&mut out, size, "User-agent: *");
    for i in 0..600 {
        push(&mut out, size, &starred_rule(i, 200));
    }
    let mut i = 0;
    while push(
        &mut out,
        size,
        &format!(
            "Sitemap: https://example.com/{}z{}.xml",
            "a".repeat(2000),
            binary(i)
        ),
    ) {
        i += 1;
    }
    out.into_bytes()
}

fn notable_in_one(size: usize) -> Vec<u8> {
    let mut out = String::new();
    for crawler in audit::crawlers::CRAWLERS {
        push(&mut out, size, &format!("User-agent: {}", crawler.token));
    }
    let mut i = 0;
    while push(&mut out, size, &starred_rule(i, 200)) {
        i += 1;
    }
    out.into_bytes()
}

fn tiny_lines(size: usize) -> Vec<u8> {
    let mut out = String::new();
    let lines = [
        "x",
        "Allow:/",
        "Crawl-delay:x",
        "Noindex:/",
        "User-agent:",
        "Disalow:/",
    ];
    let mut i = 0;
    while push(&mut out, size, lines[i % lines.len()]) {
        i += 1;
    }
    out.into_bytes()
}
