//! The ranking's 30-minute pick and its exclusions, and the totals, from the current reports.

use std::collections::BTreeSet;

use audit::Grade;
use jiff::{SignedDuration, Timestamp};
use service::limits::RANKING_PER_GRADE;
use service::ranking::{rank, window_of, Ranking};
use service::{CurrentReport, ReportId};
use url::Url;

const WINDOW_SECONDS: i64 = 1_800;

fn current(domain: &str, score: u8) -> CurrentReport {
    CurrentReport {
        domain: domain.to_owned(),
        id: ReportId::random().unwrap(),
        url: Url::parse(&format!("https://{domain}/")).unwrap(),
        created_at: "2026-11-01T10:00:00Z".parse().unwrap(),
        score,
        indexable: true,
        off_ranking: false,
        has_icon: false,
    }
}

fn picked(ranking: &Ranking, grade: Grade) -> BTreeSet<String> {
    ranking.picks[&grade]
        .iter()
        .map(|d| d.domain.clone())
        .collect()
}

fn at(text: &str) -> Timestamp {
    text.parse().unwrap()
}

#[test]
fn six_per_grade_the_same_within_a_window_and_reshuffled_across_windows() {
    let reports: Vec<CurrentReport> = (0..40)
        .map(|n| current(&format!("a{n}.test"), 95))
        .chain((0..3).map(|n| current(&format!("c{n}.test"), 75)))
        .collect();
    let start = at("2026-12-03T08:00:00Z");
    let first = rank(&reports, start);
    assert_eq!(picked(&first, Grade::A).len(), RANKING_PER_GRADE);
    assert_eq!(picked(&first, Grade::C).len(), 3);
    assert!(picked(&first, Grade::B).is_empty());
    let late = rank(
        &reports,
        start + SignedDuration::from_secs(WINDOW_SECONDS - 1),
    );
    assert_eq!(first, late, "one pick for the whole window");
    let mut seen = picked(&first, Grade::A);
    let mut changed = 0;
    for window in 1..10 {
        let next = rank(
            &reports,
            start + SignedDuration::from_secs(window * WINDOW_SECONDS),
        );
        assert_eq!(window_of(next.window_start), window_of(start) + window);
        if picked(&next, Grade::A) != picked(&first, Grade::A) {
            changed += 1;
        }
        seen.extend(picked(&next, Grade::A));
    }
    assert!(
        changed >= 8,
        "a new window picks again ({changed} of 9 changed)"
    );
    assert!(
        seen.len() > 2 * RANKING_PER_GRADE,
        "over windows many domains get their turn"
    );
}

#[test]
fn exclusions_never_appear_and_each_domain_shows_its_best_indexable_score() {
    let mut reports = vec![current("good.test", 85)];
    let mut hidden = current("hidden.test", 99);
    hidden.indexable = false;
    reports.push(hidden);
    let mut removed = current("removed.test", 99);
    removed.off_ranking = true;
    reports.push(removed);
    // Two URLs of one domain: its best indexable one counts, a better noindex one does not.
    let mut second = current("good.test", 97);
    second.url = Url::parse("https://good.test/b").unwrap();
    reports.push(second);
    let mut private = current("good.test", 100);
    private.url = Url::parse("https://good.test/private").unwrap();
    private.indexable = false;
    reports.push(private);
    for window in 0..50 {
        let ranking = rank(
            &reports,
            at("2026-12-03T08:00:00Z") + SignedDuration::from_secs(window * WINDOW_SECONDS),
        );
        let all: Vec<_> = ranking.picks.values().flatten().collect();
        assert_eq!(all.len(), 1, "window {window}: {all:?}");
        assert_eq!(all[0].domain, "good.test");
        assert_eq!(all[0].score, 97);
        assert_eq!(all[0].url.as_str(), "https://good.test/b");
    }
    let totals = rank(&reports, at("2026-12-03T08:00:00Z")).totals;
    assert_eq!(totals[&Grade::A], 3, "every site analysed is counted");
}
