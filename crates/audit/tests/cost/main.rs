//! What an audit may cost: hostile files of 500 KiB (`shapes.rs`, shared with the
//! `worst_case` example) are audited within the CPU budget, every limit reached is said in
//! the report, and the comparison budget alone bounds the work (release build:
//! `cargo test --release -p audit --test cost -- --ignored`).

mod shapes;

use std::time::Duration;

use audit::cost::thread_cpu_time;
use audit::{
    analyze_file, analyze_file_with, Analysis, AuditLimits, AuditStage, CheckId, ProvidedFile,
    AUDIT_CPU_BUDGET,
};

/// A long page URL: every crawler's rules are checked against it.
fn page() -> String {
    format!("https://example.com/{}z.html", "a".repeat(2000))
}

/// The report says every limit it reached, by a finding and in `limits_reached`, and the
/// findings render.
fn says_what_it_left_out(name: &str, analysis: &Analysis) {
    let has = |id: CheckId| analysis.findings.iter().any(|finding| finding.id == id);
    let reached = analysis.limits_reached.clone().unwrap_or_default();
    assert_eq!(
        has(CheckId::AuditComparisonsCapped),
        reached.rule_sets_not_compared > 0 || !reached.cut_short.is_empty(),
        "{name}: {reached:?}"
    );
    assert_eq!(
        has(CheckId::AuditIncomplete),
        reached.cpu_budget_ms.is_some(),
        "{name}: {reached:?}"
    );
    assert_eq!(
        has(CheckId::AuditLimited),
        reached.rule_sets_too_large > 0,
        "{name}: {reached:?}"
    );
    for finding in &analysis.findings {
        assert!(finding.specific_title().is_some(), "{name}: {finding:?}");
    }
    let json = serde_json::to_string(analysis).expect("serialises");
    let back: Analysis = serde_json::from_str(&json).expect("loads");
    assert_eq!(&back, analysis, "{name}");
}

/// Each hostile file is audited within the CPU budget, give or take the granularity of its
/// checks (a debug build reaches the budget on some; a release build on none, see
/// `the_comparison_budget_alone_bounds_the_work`).
fn audited_within_budget(name: &str) {
    let shape = shapes::SHAPES
        .iter()
        .find(|shape| shape.name == name)
        .expect("a shape");
    let body = (shape.build)(shapes::SIZE);
    assert!(
        body.len() <= shapes::SIZE && body.len() > shapes::SIZE / 2,
        "{name}: {} bytes",
        body.len()
    );
    let started = thread_cpu_time();
    let analysis = analyze_file(ProvidedFile::whole(&body), Some(&page()));
    let used = thread_cpu_time() - started;
    assert!(
        used < AUDIT_CPU_BUDGET + Duration::from_secs(1),
        "{name} ({}): {used:?} of CPU",
        shape.aim
    );
    says_what_it_left_out(name, &analysis);
}

macro_rules! hostile {
    ($($test:ident: $name:literal,)*) => {
        $(
            #[test]
            fn $test() {
                audited_within_budget($name);
            }
        )*

        /// Every shape has its test above.
        #[test]
        fn every_shape_is_tested() {
            let tested = [$($name),*];
            for shape in shapes::SHAPES {
                assert!(tested.contains(&shape.name), "{} has no test", shape.name);
            }
        }
    };
}

hostile! {
    agents_then_rules: "agents-then-rules",
    agents_fill_rules: "agents-fill-rules",
    distinct_group_sets: "distinct-group-sets",
    sliding_groups: "sliding-groups",
    star_rules: "star-rules",
    global_and_named: "global-and-named",
    long_lines: "long-lines",
    sitemaps: "sitemaps",
    starred_agents: "starred-agents",
    empty_rules: "empty-rules",
    crawl_delay_splits: "crawl-delay-splits",
    many_global_groups: "many-global-groups",
    repeated_rules: "repeated-rules",
    unknown_fields: "unknown-fields",
    resources: "resources",
    star_probes: "star-probes",
    sitemap_probes: "sitemap-probes",
    notable_in_one: "notable-in-one",
    tiny_lines: "tiny-lines",
}

/// With no CPU budget to speak of, the comparison budget alone bounds the work, and the
/// report is the same every time; in a release build every hostile file is audited in well
/// under the CPU budget (the crate README has the figures).
#[test]
#[ignore = "minutes in a debug build: cargo test --release -p audit --test cost -- --ignored"]
fn the_comparison_budget_alone_bounds_the_work() {
    let limits = AuditLimits {
        cpu_budget: Duration::from_secs(3600),
        ..AuditLimits::default()
    };
    for shape in shapes::SHAPES {
        let body = (shape.build)(shapes::SIZE);
        let started = thread_cpu_time();
        let first = analyze_file_with(ProvidedFile::whole(&body), Some(&page()), &limits);
        let used = thread_cpu_time() - started;
        let second = analyze_file_with(ProvidedFile::whole(&body), Some(&page()), &limits);
        assert_eq!(first.findings, second.findings, "{}", shape.name);
        assert_eq!(
            first.limits_reached, second.limits_reached,
            "{}",
            shape.name
        );
        assert!(
            first
                .limits_reached
                .as_ref()
                .is_none_or(|reached| reached.cpu_budget_ms.is_none()),
            "{}",
            shape.name
        );
        says_what_it_left_out(shape.name, &first);
        if !cfg!(debug_assertions) {
            assert!(used < AUDIT_CPU_BUDGET / 2, "{}: {used:?}", shape.name);
        }
    }
}

/// A spent CPU budget stops the audit and the report lists what was not run; the findings
/// made before stay.
#[test]
fn a_spent_cpu_budget_is_reported() {
    let limits = AuditLimits {
        cpu_budget: Duration::ZERO,
        ..AuditLimits::default()
    };
    let analysis = analyze_file_with(
        ProvidedFile::whole(b"User-agent: *\nDisalow: /x\n"),
        None,
        &limits,
    );
    let reached = analysis.limits_reached.clone().expect("limits reached");
    assert_eq!(reached.cpu_budget_ms, Some(0));
    assert_eq!(
        reached.skipped,
        [
            AuditStage::Syntax,
            AuditStage::LongLines,
            AuditStage::Sitemaps,
            AuditStage::Policy,
            AuditStage::DuplicateGroups,
            AuditStage::WholeSite,
            AuditStage::Resources,
            AuditStage::RuleComparisons,
        ]
    );
    let incomplete = analysis
        .findings
        .iter()
        .find(|finding| finding.id == CheckId::AuditIncomplete)
        .expect("an audit.incomplete finding");
    assert_eq!(
        incomplete.title(),
        "the audit used its 0 ms of CPU time; not run or cut short: syntax, long_lines, \
         sitemaps, policy, duplicate_groups, whole_site, resources, rule_comparisons"
    );
    says_what_it_left_out("zero budget", &analysis);
    // Nothing was left out of an ordinary file under the published limits.
    let analysis = analyze_file(
        ProvidedFile::whole(b"User-agent: *\nDisalow: /x\n"),
        Some("/x"),
    );
    assert_eq!(analysis.limits_reached, None);
    assert!(analysis
        .findings
        .iter()
        .any(|finding| finding.id == CheckId::SyntaxFieldTypo));
}

/// A spent comparison budget leaves the least notable crawlers uncompared, and says how many.
#[test]
fn a_spent_comparison_budget_leaves_the_least_notable_crawlers_out() {
    let mut file = String::from("User-agent: *\nDisallow: /private/\nDisallow: /private/a\n");
    for name in ["alpha", "beta", "gamma", "Googlebot"] {
        file.push_str(&format!(
            "\nUser-agent: {name}\nDisallow: /{name}/\nDisallow: /{name}/x\n"
        ));
    }
    // Each group's second rule is redundant: the first covers it.
    let redundant_rules = |analysis: &Analysis| -> Vec<String> {
        let mut rules: Vec<String> = (analysis.findings.iter())
            .filter(|finding| finding.id == CheckId::LogicRuleRedundant)
            .filter_map(|finding| finding.text("pattern").map(str::to_owned))
            .collect();
        rules.sort();
        rules
    };
    let full = analyze_file(ProvidedFile::whole(file.as_bytes()), None);
    assert_eq!(full.limits_reached, None);
    assert_eq!(
        redundant_rules(&full),
        [
            "/Googlebot/x",
            "/alpha/x",
            "/beta/x",
            "/gamma/x",
            "/private/a"
        ]
    );
    // Enough for `*` and Googlebot (the directory's crawler comes before the others), not
    // for the rest.
    let limits = AuditLimits {
        comparison_budget: 700,
        ..AuditLimits::default()
    };
    let capped = analyze_file_with(ProvidedFile::whole(file.as_bytes()), None, &limits);
    assert_eq!(redundant_rules(&capped), ["/Googlebot/x", "/private/a"]);
    let reached = capped.limits_reached.clone().expect("limits reached");
    assert_eq!(reached.rule_sets_not_compared, 3);
    let capped_finding = capped
        .findings
        .iter()
        .find(|finding| finding.id == CheckId::AuditComparisonsCapped)
        .expect("an audit.comparisons-capped finding");
    assert_eq!(
        capped_finding.title(),
        "the audit's comparison budget (700 units) ran out; the rules of 3 of 5 crawler \
         groupings were not compared"
    );
    says_what_it_left_out("capped", &capped);
}
