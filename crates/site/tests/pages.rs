//! The pages through the router: redirects, escaping, security headers, pastes, progress,
//! failures, "what changed", the scoring page, caching headers, forms.

mod common;

use axum::body::Body;
use common::{analysis, app, at, get, scored, send, store, url};
use http::Request;

#[tokio::test]
async fn a_folded_report_redirects_to_its_domain_page() {
    let data = store().await;
    let page = "https://site.test/";
    let id = data.insert(&scored(page, 91, "2026-01-10T10:00:00Z")).await;
    data.insert(&scored(page, 92, "2026-11-10T10:00:00Z")).await;
    // Six months after the newer report: the January one is folded into its month.
    data.store()
        .retention(at("2027-05-11T00:00:00Z"), false)
        .await
        .expect("a retention pass");
    let app = app(&data);
    let answer = get(&app, &format!("/score/site.test/{id}")).await;
    assert_eq!(answer.status(), 308);
    assert_eq!(answer.header("location"), Some("/score/site.test"));
    let domain = get(&app, "/score/site.test").await;
    assert!(domain.body.contains("Monthly summaries"));
    assert!(domain.body.contains("2026-01"));
    assert!(domain.body.contains("<svg"), "the score chart");
}

#[tokio::test]
async fn unknown_reports_and_hostile_ids_get_the_404_page() {
    let data = store().await;
    let app = app(&data);
    for path in [
        "/score/site.test/nope",
        "/score/site.test/%3Cscript%3E",
        "/paste/nope",
        "/no/such/page",
        "/score/site.test",
    ] {
        let answer = get(&app, path).await;
        assert_eq!(answer.status(), 404, "{path}");
        assert!(answer.body.contains("Page not found"), "{path}");
        assert!(!answer.body.contains("<script>"), "{path}");
    }
}

#[tokio::test]
async fn everything_from_the_analysed_site_is_escaped() {
    let data = store().await;
    let page = "https://site.test/?q=%22%3E%3Cscript%3Ealert(1)%3C/script%3E";
    let robots = "User-agent: *\n<script>alert(1)</script>\nDisallow: /a\u{1b}[2J\u{202e}gpj.exe\nSitemap: javascript:alert(1)\"><img src=x onerror=alert(1)>\n";
    let id = data
        .insert(&analysis(
            page,
            robots,
            &["<b>noarchive</b>"],
            &[("robots", "\"><script>alert(2)</script>")],
            "2026-11-01T10:00:00Z",
        ))
        .await;
    let app = app(&data);
    let body = get(&app, &format!("/score/site.test/{id}")).await.body;
    assert!(!body.contains("<script>"), "{body}");
    assert!(!body.contains("<img src=x"), "{body}");
    assert!(!body.contains("<b>"), "{body}");
    assert!(body.contains("&lt;script&gt;alert(1)&lt;/script&gt;"));
    assert!(
        body.contains("\\x1b[2J\\u{202e}gpj.exe"),
        "control and bidi characters shown as escapes"
    );
    assert!(!body.contains('\u{1b}') && !body.contains('\u{202e}'));
}

#[tokio::test]
async fn every_answer_carries_the_security_headers() {
    let data = store().await;
    let app = app(&data);
    for path in [
        "/",
        "/scoring",
        "/bot",
        "/stats",
        "/nothing",
        "/robots.txt",
        "/sitemap.xml",
    ] {
        let answer = get(&app, path).await;
        let csp = answer.header("content-security-policy").unwrap_or_default();
        assert!(csp.contains("default-src 'none'"), "{path}: {csp}");
        assert!(!csp.contains("unsafe-inline"), "{path}");
        assert!(!csp.contains("script-src"), "{path}: no script at all");
        assert_eq!(
            answer.header("x-content-type-options"),
            Some("nosniff"),
            "{path}"
        );
        assert_eq!(
            answer.header("referrer-policy"),
            Some("no-referrer"),
            "{path}"
        );
        assert_eq!(answer.header("x-frame-options"), Some("DENY"), "{path}");
    }
}

#[tokio::test]
async fn the_pages_use_no_script_and_no_inline_style() {
    let data = store().await;
    let page = "https://site.test/";
    let id = data.insert(&scored(page, 95, "2026-11-01T10:00:00Z")).await;
    let app = app(&data);
    for path in [
        "/".to_owned(),
        "/scoring".into(),
        "/bot".into(),
        "/stats".into(),
        "/score/site.test".into(),
        format!("/score/site.test/{id}"),
    ] {
        let body = get(&app, &path).await.body;
        assert!(!body.contains("<script"), "{path}");
        assert!(!body.contains("style="), "{path}");
        assert!(body.contains("<main id=\"main\">"), "{path}");
        assert!(body.contains("name=\"viewport\""), "{path}");
    }
}

#[tokio::test]
async fn the_stylesheet_and_icons_are_cached_long() {
    let data = store().await;
    data.store()
        .set_icon(
            "site.test",
            Some(&[0x89, b'P', b'N', b'G']),
            at("2026-11-01T10:00:00Z"),
        )
        .await
        .expect("an icon");
    let app = app(&data);
    let home = get(&app, "/").await.body;
    let start = home.find("/static/site.").expect("the stylesheet link");
    let end = start + home[start..].find('"').expect("end of href");
    let css = get(&app, &home[start..end]).await;
    assert_eq!(css.status(), 200);
    assert!(css
        .header("cache-control")
        .unwrap_or_default()
        .contains("max-age=31536000"));
    assert!(css
        .header("content-type")
        .unwrap_or_default()
        .starts_with("text/css"));
    let icon = get(&app, "/icon/site.test").await;
    assert_eq!(icon.header("content-type"), Some("image/png"));
    assert!(icon
        .header("cache-control")
        .unwrap_or_default()
        .contains("max-age="));
    assert_eq!(get(&app, "/icon/other.test").await.status(), 404);
}

fn multipart(fields: &[(&str, &str)]) -> Request<Body> {
    let boundary = "XyZboundary";
    let mut body = String::new();
    for (name, value) in fields {
        body.push_str(&format!(
            "--{boundary}\r\nContent-Disposition: form-data; name=\"{name}\"\r\n\r\n{value}\r\n"
        ));
    }
    body.push_str(&format!("--{boundary}--\r\n"));
    Request::post("/paste")
        .header(
            "content-type",
            format!("multipart/form-data; boundary={boundary}"),
        )
        .body(Body::from(body))
        .expect("request")
}

#[tokio::test]
async fn a_paste_is_shown_only_at_its_address_and_never_indexed() {
    let data = store().await;
    let app = app(&data);
    let answer = send(
        &app,
        multipart(&[("robots", "User-agent: *\nDissallow: /x\n")]),
    )
    .await;
    assert_eq!(answer.status(), 303);
    let location = answer.header("location").expect("a location").to_owned();
    assert!(location.starts_with("/paste/"));
    let report = get(&app, &location).await;
    assert_eq!(report.status(), 200);
    assert_eq!(report.headers("x-robots-tag"), vec!["noindex"]);
    assert_eq!(report.header("cache-control"), Some("private, no-store"));
    assert!(report.body.contains("Dissallow"));
    assert!(report.body.contains("private"));
    let id = location.trim_start_matches("/paste/");
    for path in ["/", "/sitemap.xml", "/stats"] {
        assert!(
            !get(&app, path).await.body.contains(id),
            "{path} lists the paste"
        );
    }
    assert!(get(&app, "/robots.txt")
        .await
        .body
        .contains("Disallow: /paste"));
}

#[tokio::test]
async fn an_empty_or_oversized_paste_is_refused_in_plain_words() {
    let data = store().await;
    let app = app(&data);
    let empty = send(&app, multipart(&[("robots", "  \n")])).await;
    assert_eq!(empty.status(), 400);
    assert!(empty.body.contains("Paste a robots.txt"));
    let big = "a".repeat(service::limits::MAX_PASTE_BYTES + 1);
    let over = send(&app, multipart(&[("file", &big)])).await;
    assert_eq!(over.status(), 400);
    assert!(
        over.body.contains("larger than 500 KB"),
        "{}",
        over.status()
    );
}

#[tokio::test]
async fn a_bad_address_is_refused_on_the_home_page() {
    let data = store().await;
    let app = app(&data);
    let request = Request::post("/analyze")
        .header("content-type", "application/x-www-form-urlencoded")
        .body(Body::from(
            "url=ftp%3A%2F%2Fexample.com%2F%22%3E%3Cscript%3E",
        ))
        .expect("request");
    let answer = send(&app, request).await;
    assert_eq!(answer.status(), 400);
    assert!(
        answer.body.contains("cannot be analysed"),
        "{}",
        answer.body
    );
    assert!(!answer.body.contains("<script>"));
    assert!(answer
        .body
        .contains("value=\"ftp://example.com/&quot;&gt;&lt;script&gt;\""));
}

#[tokio::test]
async fn an_analysis_in_progress_reloads_itself_and_a_failure_is_explained() {
    let data = store().await;
    let now = at("2026-11-01T10:00:00Z");
    let queued = data.insert_queued(&url("https://site.test/"), now).await;
    let failed = data
        .insert_failed(
            &url("https://site.test/x"),
            now,
            "The address 10.0.0.1 is private: the bot only visits public sites.",
        )
        .await;
    let app = app(&data);
    let progress = get(&app, &format!("/score/site.test/{queued}")).await;
    assert!(progress
        .body
        .contains(r#"<meta http-equiv="refresh" content="2">"#));
    assert!(progress.body.contains("waiting for its turn"));
    assert_eq!(progress.header("cache-control"), Some("no-store"));
    let failure = get(&app, &format!("/score/site.test/{failed}")).await;
    assert!(failure.body.contains("could not run"));
    assert!(failure
        .body
        .contains("is private: the bot only visits public sites"));
    assert!(!failure.body.contains("http-equiv=\"refresh\""));
}

#[tokio::test]
async fn a_report_shows_what_changed_since_the_previous_one() {
    let data = store().await;
    let page = "https://site.test/";
    let before = "User-agent: *\nDissallow: /old\nDisallow: /keep\n";
    let after = "User-agent: *\nDisallow: /keep\nDisallow: /new\nCrawl-delay: abc\n";
    let first = analysis(page, before, &[], &[], "2026-10-01T10:00:00Z");
    let second = analysis(page, after, &[], &[], "2026-11-01T10:00:00Z");
    let (old_score, new_score) = (first.score, second.score);
    let first_id = data.insert(&first).await;
    let id = data.insert(&second).await;
    let app = app(&data);
    let body = get(&app, &format!("/score/site.test/{id}")).await.body;
    assert!(body.contains("What changed"));
    assert!(body.contains("Lines added (2)"), "{body}");
    assert!(body.contains("Disallow: /new"));
    assert!(body.contains("Lines removed (1)"));
    assert!(body.contains("Dissallow: /old"));
    assert!(body.contains("Findings fixed"));
    assert!(body.contains("New findings"));
    assert!(body.contains(&format!("{old_score} → {new_score}")));
    let first_body = get(&app, &format!("/score/site.test/{first_id}"))
        .await
        .body;
    assert!(first_body.contains("first report of this address"));
}

#[tokio::test]
async fn a_report_shows_lines_findings_crawlers_and_the_scoring_link() {
    let data = store().await;
    let page = "https://site.test/";
    let robots = "User-agent: GPTBot\nDisallow: /\n\nUser-agent: *\nDissallow: /x\nSitemap: https://site.test/sitemap.xml\n";
    let id = data
        .insert(&analysis(
            page,
            robots,
            &["noarchive"],
            &[],
            "2026-11-01T10:00:00Z",
        ))
        .await;
    let body = get(&app(&data), &format!("/score/site.test/{id}"))
        .await
        .body;
    assert!(
        body.contains(r#"<tr id="L5" class="has-finding">"#),
        "finding shown at line 5"
    );
    assert!(
        body.contains(r##"href="#L2""##),
        "the crawler table links the deciding line"
    );
    assert!(body.contains("GPTBot"));
    assert!(body.contains("https://site.test/sitemap.xml"));
    assert!(body.contains("noarchive"), "headers shown");
    assert!(body.contains(r#"href="/scoring""#));
    assert!(body.contains("points)"), "each finding's cost");
}

#[tokio::test]
async fn the_scoring_page_is_scoring_md() {
    let data = store().await;
    let body = get(&app(&data), "/scoring").await.body;
    assert!(body.contains("<h1>How scoring works</h1>"));
    assert!(body.contains(&format!(
        "scoring method version {}",
        audit::score::SCORING_VERSION
    )));
    for check in audit::CHECKS {
        assert!(
            body.contains(&format!("<code>{}</code>", check.id)),
            "{}",
            check.id
        );
    }
}

#[tokio::test]
async fn the_bot_page_names_its_address_and_how_to_block_it() {
    let data = store().await;
    let body = get(&app(&data), "/bot").await.body;
    assert!(body.contains("+https://robotstxtparser.test/bot"));
    assert!(body.contains("User-agent: RobotsTxtParser\nDisallow: /"));
    assert!(body.contains("robots@leopoletto.dev"));
}

#[tokio::test]
async fn the_stats_page_counts_grades_crawlers_findings_and_months() {
    let data = store().await;
    let robots = "User-agent: GPTBot\nDisallow: /\n\nUser-agent: *\nDissallow: /x\n";
    for (n, at) in ["2026-10-01T10:00:00Z", "2026-11-01T10:00:00Z"]
        .iter()
        .enumerate()
    {
        let page = format!("https://site{n}.test/");
        data.insert(&analysis(&page, robots, &[], &[], at)).await;
    }
    let body = get(&app(&data), "/stats").await.body;
    assert!(body.contains("GPTBot"));
    assert!(body.contains("2026-10") && body.contains("2026-11"));
    assert!(body.contains("syntax.field-typo"), "{body}");
    assert!(body.contains("AI crawlers most often blocked"));
    assert!(body.contains("100 %"), "both months block an AI crawler");
}

#[tokio::test]
async fn the_domain_page_lists_every_report_page_by_page_and_the_next_check() {
    let data = store().await;
    let page = "https://many.test/";
    let base = scored(page, 70, "2026-01-01T00:00:00Z");
    let mut ids = Vec::new();
    // One more than the API lists, so the oldest is only on the pages.
    for n in 0..501i64 {
        let mut report = base.clone();
        report.analysed_at = at("2026-01-01T00:00:00Z")
            .checked_add(jiff::SignedDuration::from_mins(n))
            .unwrap();
        ids.push(data.insert(&report).await);
    }
    let app = app(&data);
    let first = get(&app, "/score/many.test").await;
    assert_eq!(first.status(), 200);
    assert!(
        first.body.contains("501 reports, newest first."),
        "{}",
        first.body
    );
    assert!(first.body.contains("Page 1 of 6"));
    assert!(first.body.contains(r#"href="/score/many.test?page=2""#));
    assert!(
        first.body.contains(ids[500].as_str()),
        "the newest on page 1"
    );
    assert!(!first.body.contains(ids[0].as_str()));
    assert!(first.body.contains("Next scheduled check"));
    let last = get(&app, "/score/many.test?page=6").await;
    assert_eq!(last.status(), 200);
    assert!(
        last.body.contains(ids[0].as_str()),
        "the oldest on the last page"
    );
    assert!(last.body.contains("Page 6 of 6"));
    assert!(last.body.contains(r#"href="/score/many.test?page=5""#));
    for missing in ["?page=7", "?page=0", "?page=x", "?p=1"] {
        let answer = get(&app, &format!("/score/many.test{missing}")).await;
        assert_eq!(answer.status(), 404, "{missing}");
    }
}
