//! The ranking's 30-minute pick and its exclusions, the totals, and sitemap.xml's contents and
//! splitting.

mod common;

use std::collections::BTreeSet;

use audit::Grade;
use common::{analysis, app, get, scored, url, PUBLIC};
use jiff::{SignedDuration, Timestamp};
use site::memory::MemoryData;
use site::ranking::{rank, window_of, PER_GRADE, WINDOW_SECONDS};
use site::sitemap::{self, MAX_SITEMAP_ENTRIES};
use site::{CurrentReport, ReportId, SiteConfig};

fn current(domain: &str, score: u8) -> CurrentReport {
    CurrentReport {
        domain: domain.to_owned(),
        id: ReportId::parse(&format!("id-{}", domain.replace('.', "-"))).expect("an id"),
        url: url(&format!("https://{domain}/")),
        analysed_at: "2026-11-01T10:00:00Z".parse().expect("a time"),
        score,
        indexable: true,
        domain_off_ranking: false,
        has_icon: false,
    }
}

fn picked(ranking: &site::ranking::Ranking, grade: Grade) -> BTreeSet<String> {
    ranking
        .picks
        .iter()
        .find(|(g, _)| *g == grade)
        .map(|(_, domains)| domains.iter().map(|d| d.domain.clone()).collect())
        .unwrap_or_default()
}

fn at(text: &str) -> Timestamp {
    text.parse().expect("a time")
}

#[test]
fn six_per_grade_the_same_within_a_window_and_reshuffled_across_windows() {
    let reports: Vec<CurrentReport> = (0..40)
        .map(|n| current(&format!("a{n}.test"), 95))
        .chain((0..3).map(|n| current(&format!("c{n}.test"), 75)))
        .collect();
    let start = at("2026-12-03T08:00:00Z");
    let first = rank(&reports, start);
    assert_eq!(picked(&first, Grade::A).len(), PER_GRADE);
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
        assert_eq!(next.window, window_of(start) + window);
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
        seen.len() > 2 * PER_GRADE,
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
    removed.domain_off_ranking = true;
    reports.push(removed);
    // Two URLs of one domain: its best indexable one counts, a better noindex one does not.
    let mut second = current("good.test", 97);
    second.url = url("https://good.test/b");
    reports.push(second);
    let mut private = current("good.test", 100);
    private.url = url("https://good.test/private");
    private.indexable = false;
    reports.push(private);
    for window in 0..50 {
        let ranking = rank(
            &reports,
            at("2026-12-03T08:00:00Z") + SignedDuration::from_secs(window * WINDOW_SECONDS),
        );
        let all: Vec<_> = ranking.picks.iter().flat_map(|(_, d)| d.iter()).collect();
        assert_eq!(all.len(), 1, "window {window}: {all:?}");
        assert_eq!(all[0].domain, "good.test");
        assert_eq!(all[0].score, 97);
    }
    let totals = rank(&reports, at("2026-12-03T08:00:00Z")).totals;
    assert_eq!(
        totals.iter().find(|(g, _)| *g == Grade::A).map(|t| t.1),
        Some(3),
        "every site analysed is counted"
    );
}

#[tokio::test]
async fn the_home_page_shows_the_pick_with_icons_and_totals() {
    let data = MemoryData::new();
    for (domain, score) in [("alpha.test", 95), ("beta.test", 85), ("zulu.test", 30)] {
        let page = format!("https://{domain}/");
        data.insert(url(&page), scored(&page, score, "2026-11-01T10:00:00Z"));
    }
    data.set_icon("alpha.test", vec![1, 2, 3]);
    data.keep_off_ranking("zulu.test");
    let body = get(&app(&data), "/").await.body;
    assert!(body.contains(r#"<a href="/score/alpha.test">alpha.test</a>"#));
    assert!(body.contains(r#"src="/icon/alpha.test""#));
    assert!(body.contains(r#"<a href="/score/beta.test">beta.test</a>"#));
    assert!(!body.contains("zulu.test"), "kept off the ranking");
    assert!(body.contains("Every site analysed"));
}

#[test]
fn sitemap_entries_are_indexable_domain_and_report_pages_with_lastmod() {
    let mut hidden = current("hidden.test", 90);
    hidden.indexable = false;
    let reports = vec![current("b.test", 90), current("a.test", 50), hidden];
    let public = url("https://robotstxtparser.test/");
    let xml = sitemap::root(&sitemap::entries(&reports), &public);
    assert!(xml.starts_with("<?xml"));
    assert!(xml.contains("<urlset"));
    for loc in [
        "https://robotstxtparser.test/score/a.test</loc>",
        "https://robotstxtparser.test/score/a.test/id-a-test</loc>",
        "https://robotstxtparser.test/score/b.test</loc>",
    ] {
        assert!(xml.contains(loc), "{loc}");
    }
    assert!(!xml.contains("hidden.test"));
    assert_eq!(
        xml.matches("<lastmod>2026-11-01T10:00:00Z</lastmod>")
            .count(),
        4
    );
}

#[test]
fn more_than_fifty_thousand_entries_make_a_sitemap_index() {
    let reports: Vec<CurrentReport> = (0..MAX_SITEMAP_ENTRIES / 2 + 1)
        .map(|n| current(&format!("d{n}.test"), 90))
        .collect();
    let entries = sitemap::entries(&reports);
    assert_eq!(entries.len(), MAX_SITEMAP_ENTRIES + 2);
    let public = url("https://robotstxtparser.test/");
    let index = sitemap::root(&entries, &public);
    assert!(index.contains("<sitemapindex"));
    assert_eq!(index.matches("<sitemap>").count(), 2);
    assert!(index.contains("<loc>https://robotstxtparser.test/sitemaps/2.xml</loc>"));
    let first = sitemap::part(&entries, &public, 1).expect("file 1");
    assert_eq!(first.matches("<url>").count(), MAX_SITEMAP_ENTRIES);
    let second = sitemap::part(&entries, &public, 2).expect("file 2");
    assert_eq!(second.matches("<url>").count(), 2);
    assert!(sitemap::part(&entries, &public, 3).is_none());
    assert!(sitemap::part(&entries, &public, 0).is_none());
    // Exactly the limit stays one file.
    let exact = &entries[..MAX_SITEMAP_ENTRIES];
    assert!(sitemap::root(exact, &public).contains("<urlset"));
    assert!(sitemap::part(exact, &public, 1).is_none());
}

#[tokio::test]
async fn the_sitemap_files_are_served() {
    let data = MemoryData::new();
    let page = "https://site.test/";
    let id = data.insert(
        url(page),
        analysis(
            page,
            "User-agent: *\nAllow: /\n",
            &[],
            &[],
            "2026-11-01T10:00:00Z",
        ),
    );
    let app = app(&data);
    let answer = get(&app, "/sitemap.xml").await;
    assert!(answer
        .header("content-type")
        .unwrap_or_default()
        .starts_with("application/xml"));
    assert!(answer
        .body
        .contains(&format!("/score/site.test/{id}</loc>")));
    assert_eq!(
        get(&app, "/sitemaps/1.xml").await.status(),
        404,
        "no index below the limit"
    );
    let robots = get(&app, "/robots.txt").await.body;
    assert!(robots.contains("Sitemap: https://robotstxtparser.test/sitemap.xml"));
}

#[tokio::test]
async fn a_refreshed_list_reaches_the_home_page_through_the_background_ranking() {
    let data = MemoryData::new();
    data.insert(
        url("https://alpha.test/"),
        scored("https://alpha.test/", 95, "2026-11-01T10:00:00Z"),
    );
    let mut config = SiteConfig::new(url(PUBLIC));
    config.data_refresh = std::time::Duration::from_millis(50);
    let app = site::router(std::sync::Arc::new(data.clone()), config);
    assert!(get(&app, "/").await.body.contains("alpha.test"));
    data.insert(
        url("https://beta.test/"),
        scored("https://beta.test/", 90, "2026-11-01T10:00:00Z"),
    );
    // Within a window the request that reads the new list is answered with the ranking made
    // from the old one while a blocking task ranks the new list; a later request shows it.
    let shown = async {
        loop {
            tokio::time::sleep(std::time::Duration::from_millis(60)).await;
            if get(&app, "/").await.body.contains("beta.test") {
                break;
            }
        }
    };
    tokio::time::timeout(std::time::Duration::from_secs(10), shown)
        .await
        .expect("the new report is ranked within seconds");
}
