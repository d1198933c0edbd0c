//! The home page's ranking (the same as `/api/ranking`'s), and sitemap.xml's contents and
//! splitting. The pick itself is the service's (`crates/service/tests/ranking.rs`).

mod common;

use std::collections::BTreeMap;
use std::time::Duration;

use audit::Grade;
use common::{analysis, app, at, get, scored, store, url, PUBLIC};
use service::published;
use service::testing::{offline_fetcher, TestService};
use service::{CurrentReport, ManualClock, ReportId, ServiceConfig};
use site::sitemap::{self, MAX_SITEMAP_ENTRIES};

fn current(domain: &str, score: u8) -> CurrentReport {
    CurrentReport {
        domain: domain.to_owned(),
        id: ReportId::random().expect("an id"),
        url: url(&format!("https://{domain}/")),
        created_at: at("2026-11-01T10:00:00Z"),
        score,
        indexable: true,
        off_ranking: false,
        has_icon: false,
    }
}

#[tokio::test]
async fn the_home_page_shows_the_pick_with_icons_and_totals() {
    let data = store().await;
    // A domain removed at its owner's request and kept off the ranking, then analysed again.
    data.store()
        .remove_domain("zulu.test", true)
        .await
        .expect("kept off");
    for (domain, score) in [("alpha.test", 95), ("beta.test", 85), ("zulu.test", 30)] {
        let page = format!("https://{domain}/");
        data.insert(&scored(&page, score, "2026-11-01T10:00:00Z"))
            .await;
    }
    data.store()
        .set_icon("alpha.test", Some(&[1, 2, 3]), at("2026-11-01T10:00:00Z"))
        .await
        .expect("an icon");
    let body = get(&app(&data), "/").await.body;
    assert!(body.contains(r#"<a href="/score/alpha.test">alpha.test</a>"#));
    assert!(body.contains(r#"src="/icon/alpha.test""#));
    assert!(body.contains(r#"<a href="/score/beta.test">beta.test</a>"#));
    assert!(!body.contains("zulu.test"), "kept off the ranking");
    assert!(body.contains("Every site analysed"));
}

/// The picks and totals of the home page, read from its HTML: grade → (domains, total).
fn home_ranking(body: &str) -> BTreeMap<String, (Vec<String>, u64)> {
    let mut out = BTreeMap::new();
    for grade in ["A", "B", "C", "D", "F"] {
        let section = body
            .split(&format!("id=\"grade-{grade}\""))
            .nth(1)
            .and_then(|rest| rest.split("</section>").next())
            .unwrap_or_default();
        let domains = section
            .split("<a href=\"/score/")
            .skip(1)
            .filter_map(|rest| rest.split('"').next().map(str::to_owned))
            .collect();
        let total = body
            .split(&format!(
                "aria-label=\"grade {grade}\">{grade}</span></td><td class=\"num\">"
            ))
            .nth(1)
            .and_then(|rest| rest.split('<').next())
            .and_then(|n| n.parse().ok())
            .unwrap_or(u64::MAX);
        out.insert(grade.to_owned(), (domains, total));
    }
    out
}

/// The picks and totals of `/api/ranking`: grade → (domains, total).
fn api_ranking(json: &serde_json::Value) -> BTreeMap<String, (Vec<String>, u64)> {
    let mut out = BTreeMap::new();
    for grade in ["A", "B", "C", "D", "F"] {
        let domains = json["picks"][grade]
            .as_array()
            .expect("picks of every grade")
            .iter()
            .map(|d| d["domain"].as_str().expect("a domain").to_owned())
            .collect();
        let total = json["totals"][grade].as_u64().expect("a total");
        out.insert(grade.to_owned(), (domains, total));
    }
    out
}

#[tokio::test]
async fn the_api_and_the_home_page_show_the_same_picks_and_totals() {
    let clock = ManualClock::new(at("2026-11-02T10:05:00Z"));
    let mut config = ServiceConfig::new(url(PUBLIC));
    config.data_refresh = Duration::ZERO;
    let data = TestService::with_clock(config, offline_fetcher(), clock.clone()).await;
    // Many domains in every grade (more than six each), one noindex, one with two URLs.
    for n in 0..60u8 {
        let page = format!("https://d{n}.test/");
        let score = 100 - n;
        data.insert(&scored(&page, score, "2026-11-01T10:00:00Z"))
            .await;
    }
    let hidden = analysis(
        "https://hidden.test/",
        "User-agent: *\nAllow: /\n",
        &["noindex"],
        &[],
        "2026-11-01T10:00:00Z",
    );
    data.insert(&hidden).await;
    data.insert(&scored("https://d1.test/b", 20, "2026-11-01T10:00:00Z"))
        .await;
    let app = service::router(data.service().clone()).merge(app(&data));
    for window in 0..4 {
        clock.advance(Duration::from_secs(1_800 * window));
        let home = home_ranking(&get(&app, "/").await.body);
        let api = get(&app, "/api/ranking").await;
        assert_eq!(api.status(), 200);
        let json: serde_json::Value = serde_json::from_str(&api.body).expect("JSON");
        let api = api_ranking(&json);
        assert_eq!(home, api, "window {window}");
        assert_eq!(
            api.values().map(|(_, total)| total).sum::<u64>(),
            61,
            "every domain counted once, the noindex one too"
        );
        assert_eq!(api["A"].0.len(), 6);
    }
}

#[test]
fn sitemap_entries_are_indexable_domain_and_report_pages_with_lastmod() {
    let mut hidden = current("hidden.test", 90);
    hidden.indexable = false;
    let (b, a) = (current("b.test", 90), current("a.test", 50));
    let reports = vec![b.clone(), a.clone(), hidden];
    let public = url("https://robotstxtparser.test/");
    let xml = sitemap::root(&published::pages(&reports), &public);
    assert!(xml.starts_with("<?xml"));
    assert!(xml.contains("<urlset"));
    for loc in [
        "https://robotstxtparser.test/score/a.test</loc>".to_owned(),
        format!("https://robotstxtparser.test/score/a.test/{}</loc>", a.id),
        "https://robotstxtparser.test/score/b.test</loc>".to_owned(),
        format!("https://robotstxtparser.test/score/b.test/{}</loc>", b.id),
    ] {
        assert!(xml.contains(&loc), "{loc}");
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
    let entries = published::pages(&reports);
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
    let data = store().await;
    let page = "https://site.test/";
    let id = data
        .insert(&analysis(
            page,
            "User-agent: *\nAllow: /\n",
            &[],
            &[],
            "2026-11-01T10:00:00Z",
        ))
        .await;
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
    let mut config = ServiceConfig::new(url(PUBLIC));
    config.data_refresh = Duration::from_millis(50);
    let data = TestService::with_config(config, offline_fetcher()).await;
    data.insert(&scored("https://alpha.test/", 95, "2026-11-01T10:00:00Z"))
        .await;
    let app = site::router(data.service().clone());
    assert!(get(&app, "/").await.body.contains("alpha.test"));
    data.insert(&scored("https://beta.test/", 90, "2026-11-01T10:00:00Z"))
        .await;
    // Within a window the request that reads the new list is answered with the ranking made
    // from the old one while a blocking task ranks the new list; a later request shows it.
    let shown = async {
        loop {
            tokio::time::sleep(Duration::from_millis(60)).await;
            if get(&app, "/").await.body.contains("beta.test") {
                break;
            }
        }
    };
    tokio::time::timeout(Duration::from_secs(10), shown)
        .await
        .expect("the new report is ranked within seconds");
}

#[test]
fn grades_are_listed_best_first() {
    let ranking = service::ranking::rank(&[current("a.test", 95)], at("2026-11-01T10:00:00Z"));
    let grades: Vec<Grade> = ranking.picks.keys().copied().collect();
    assert_eq!(
        grades,
        vec![Grade::A, Grade::B, Grade::C, Grade::D, Grade::F]
    );
}
