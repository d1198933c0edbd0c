//! The bot page's noindex rules, every row: header and meta, robots.txt keeping the bot or every
//! crawler off, named crawlers passed on, older reports following the newest, domain pages.

mod common;

use common::{analysis, app, get, store};
use service::testing::TestService;
use service::ReportId;

const PLAIN: &str = "User-agent: *\nDisallow: /private\n";

/// Stores a report of `page` fetched `at` under the [`PLAIN`] robots.txt, the page sending
/// `headers` as its `X-Robots-Tag` values.
async fn insert_plain(data: &TestService, page: &str, headers: &[&str], at: &str) -> ReportId {
    data.insert(&analysis(page, PLAIN, headers, &[], at)).await
}

/// Stores one report of `page` and answers what the site says of it: the report page, and
/// whether the home page and sitemap.xml mention it.
struct Seen {
    x_robots_tag: Vec<String>,
    body: String,
    in_ranking: bool,
    in_sitemap: bool,
    domain_robots: Vec<String>,
}

async fn seen(page: &str, robots: &str, headers: &[&str], metas: &[(&str, &str)]) -> Seen {
    let data = store().await;
    let id = data
        .insert(&analysis(
            page,
            robots,
            headers,
            metas,
            "2026-11-01T10:00:00Z",
        ))
        .await;
    let app = app(&data);
    let report = get(&app, &format!("/score/site.test/{id}")).await;
    assert_eq!(report.status(), 200, "{}", report.body);
    let home = get(&app, "/").await;
    let sitemap = get(&app, "/sitemap.xml").await;
    let domain = get(&app, "/score/site.test").await;
    Seen {
        x_robots_tag: report.headers("x-robots-tag"),
        body: report.body,
        in_ranking: home.body.contains("href=\"/score/site.test\""),
        in_sitemap: sitemap.body.contains(&id.to_string()),
        domain_robots: domain.headers("x-robots-tag"),
    }
}

fn assert_noindex(seen: &Seen, why: &str) {
    assert_eq!(seen.x_robots_tag, vec!["noindex"], "{why}: header");
    assert!(
        seen.body
            .contains(r#"<meta name="robots" content="noindex">"#),
        "{why}: meta"
    );
    assert!(!seen.in_ranking, "{why}: kept off the ranking");
    assert!(!seen.in_sitemap, "{why}: kept out of sitemap.xml");
    assert_eq!(
        seen.domain_robots,
        vec!["noindex"],
        "{why}: its only URL, so the domain page too"
    );
}

#[tokio::test]
async fn an_indexable_page_is_ranked_listed_and_sent_without_noindex() {
    let seen = seen("https://site.test/", PLAIN, &[], &[]).await;
    assert!(seen.x_robots_tag.is_empty());
    assert!(!seen.body.contains(r#"content="noindex""#));
    assert!(seen.in_ranking);
    assert!(seen.in_sitemap);
    assert!(seen.domain_robots.is_empty());
}

#[tokio::test]
async fn noindex_in_a_meta_tag() {
    let seen = seen("https://site.test/", PLAIN, &[], &[("robots", "noindex")]).await;
    assert_noindex(&seen, "meta robots noindex");
}

#[tokio::test]
async fn none_in_a_header() {
    let seen = seen("https://site.test/", PLAIN, &["none"], &[]).await;
    assert_noindex(&seen, "X-Robots-Tag: none");
}

#[tokio::test]
async fn noindex_header_mixed_with_other_directives() {
    let seen = seen("https://site.test/", PLAIN, &["nofollow, noindex"], &[]).await;
    assert_noindex(&seen, "X-Robots-Tag: nofollow, noindex");
}

#[tokio::test]
async fn robots_txt_keeps_the_bot_off_the_page() {
    let robots = "User-agent: RobotsTxtParser\nDisallow: /\n\nUser-agent: *\nAllow: /\n";
    let seen = seen("https://site.test/page", robots, &[], &[]).await;
    assert_noindex(&seen, "robots.txt blocks RobotsTxtParser");
}

#[tokio::test]
async fn robots_txt_keeps_every_crawler_off_the_page() {
    let seen = seen("https://site.test/private/x", PLAIN, &[], &[]).await;
    assert_noindex(&seen, "User-agent: * disallows the page");
}

#[tokio::test]
async fn a_page_the_star_group_allows_stays_indexable() {
    let seen = seen("https://site.test/public/x", PLAIN, &[], &[]).await;
    assert!(seen.in_sitemap && seen.in_ranking && seen.x_robots_tag.is_empty());
}

#[tokio::test]
async fn named_crawlers_get_their_noindex_passed_on() {
    let seen = seen(
        "https://site.test/",
        PLAIN,
        &["googlebot: noindex"],
        &[("bingbot", "noindex, nofollow")],
    )
    .await;
    assert_eq!(
        seen.x_robots_tag,
        vec!["bingbot: noindex", "googlebot: noindex"]
    );
    assert!(seen
        .body
        .contains(r#"<meta name="googlebot" content="noindex">"#));
    assert!(seen
        .body
        .contains(r#"<meta name="bingbot" content="noindex">"#));
    assert!(!seen
        .body
        .contains(r#"<meta name="robots" content="noindex">"#));
    assert!(
        seen.in_ranking,
        "a request to named crawlers only does not unlist it"
    );
    assert!(seen.in_sitemap);
}

#[tokio::test]
async fn hostile_crawler_names_are_not_passed_on() {
    let seen = seen(
        "https://site.test/",
        PLAIN,
        &["evil\"><script>: noindex", "googlebot: noindex"],
        &[],
    )
    .await;
    assert_eq!(seen.x_robots_tag, vec!["googlebot: noindex"]);
    assert!(!seen.body.contains("<script>"));
}

#[tokio::test]
async fn older_reports_follow_the_newest_report_of_their_url() {
    let data = store().await;
    let page = "https://site.test/";
    let old = insert_plain(&data, page, &[], "2026-10-01T10:00:00Z").await;
    let new = data
        .insert(&analysis(
            page,
            PLAIN,
            &[],
            &[("robots", "noindex")],
            "2026-11-01T10:00:00Z",
        ))
        .await;
    let other = "https://site.test/other";
    insert_plain(&data, other, &[], "2026-11-01T10:00:00Z").await;
    let app = app(&data);
    let old_page = get(&app, &format!("/score/site.test/{old}")).await;
    assert_eq!(old_page.headers("x-robots-tag"), vec!["noindex"]);
    assert!(old_page
        .body
        .contains(r#"<meta name="robots" content="noindex">"#));
    let sitemap = get(&app, "/sitemap.xml").await.body;
    assert!(!sitemap.contains(&old.to_string()) && !sitemap.contains(&new.to_string()));
    // The domain still has an indexable URL: its page may be indexed, and is listed.
    let domain = get(&app, "/score/site.test").await;
    assert!(domain.headers("x-robots-tag").is_empty());
    assert!(sitemap.contains("https://robotstxtparser.test/score/site.test</loc>"));
}

#[tokio::test]
async fn a_domain_page_is_noindex_when_none_of_its_urls_may_be_indexed() {
    let data = store().await;
    for path in ["/a", "/b"] {
        let page = format!("https://site.test{path}");
        insert_plain(&data, &page, &["noindex"], "2026-11-01T10:00:00Z").await;
    }
    let app = app(&data);
    let domain = get(&app, "/score/site.test").await;
    assert_eq!(domain.headers("x-robots-tag"), vec!["noindex"]);
    assert!(domain
        .body
        .contains(r#"<meta name="robots" content="noindex">"#));
    let sitemap = get(&app, "/sitemap.xml").await.body;
    assert!(!sitemap.contains("site.test"), "{sitemap}");
}

/// Stores one report whose robots.txt answered with `outcome`, and whether it is published.
async fn published_with(outcome: audit::report::RobotsStatus) -> Seen {
    let data = store().await;
    let page = "https://site.test/";
    let mut report = analysis(page, "", &[], &[], "2026-11-01T10:00:00Z");
    report.robots.outcome = outcome;
    let id = data.insert(&report).await;
    let app = app(&data);
    let answer = get(&app, &format!("/score/site.test/{id}")).await;
    Seen {
        x_robots_tag: answer.headers("x-robots-tag"),
        body: answer.body,
        in_ranking: get(&app, "/")
            .await
            .body
            .contains("href=\"/score/site.test\""),
        in_sitemap: get(&app, "/sitemap.xml")
            .await
            .body
            .contains(&id.to_string()),
        domain_robots: get(&app, "/score/site.test").await.headers("x-robots-tag"),
    }
}

#[tokio::test]
async fn an_unreadable_robots_txt_keeps_the_bot_off_so_nothing_is_published() {
    use audit::report::RobotsStatus;
    for outcome in [RobotsStatus::Unreachable, RobotsStatus::RateLimited] {
        let seen = published_with(outcome).await;
        assert_noindex(&seen, &format!("robots.txt {outcome:?}"));
    }
    let seen = published_with(RobotsStatus::NoFile).await;
    assert!(
        seen.in_ranking && seen.in_sitemap,
        "no robots.txt (4xx): no rules, indexable"
    );
}

/// Each URL is judged by its newest report, as the sitemap judges it: an older indexable
/// report does not keep the domain page indexable, and an older noindex one does not keep
/// it out.
#[tokio::test]
async fn a_domain_page_is_judged_by_each_urls_newest_report() {
    let data = store().await;
    let page = "https://site.test/a";
    insert_plain(&data, page, &[], "2026-10-01T10:00:00Z").await;
    insert_plain(&data, page, &["noindex"], "2026-11-01T10:00:00Z").await;
    let app = app(&data);
    let domain = get(&app, "/score/site.test").await;
    assert_eq!(
        domain.headers("x-robots-tag"),
        vec!["noindex"],
        "newest asks noindex"
    );
    insert_plain(&data, page, &[], "2026-11-02T10:00:00Z").await;
    let domain = get(&app, "/score/site.test").await;
    assert!(
        domain.headers("x-robots-tag").is_empty(),
        "newest is indexable again"
    );
    assert!(!domain.body.contains(r#"content="noindex""#));
}
