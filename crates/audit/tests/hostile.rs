//! Hostile answers on the test web (127.0.0.1 only), analysed through the real fetcher:
//! 101 header lines, headerless deflate, codings not asked for (robots.txt, page, sitemap),
//! credentials in the analysed URL, a head that writes a directive every two bytes.

mod common;

use std::time::Duration;

use audit::report::RobotsStatus;
use audit::{analyze, CheckId};
use common::{make_fetcher, url, URLSET};
use testweb::{Reply, TestWeb};

/// Hostile answers, through the whole analysis: a robots.txt with 101 header lines
/// (hyper's default made it "malformed", so everything was disallowed and the site scored F)
/// and one sent as headerless deflate are read as rules; one in a coding that was not asked
/// for (`zstd`) is not read as text, and the finding says why.
#[tokio::test]
async fn hostile_headers_and_codings_are_read_as_the_bot_reads_them() {
    let web = TestWeb::start().await;
    let file = "User-agent: *\nDisallow: /private/\n";
    let mut many = Reply::robots_txt(file);
    for i in 0..101 {
        many = many.header(&format!("X-Filler-{i}"), "a header like many others");
    }
    web.site("headers.test").path("/robots.txt").respond(many);
    web.site("deflate.test")
        .path("/robots.txt")
        .respond(Reply::robots_txt(file).raw_deflate());
    web.site("zstd.test")
        .path("/robots.txt")
        .respond(Reply::robots_txt(file).header("Content-Encoding", "zstd"));
    for host in ["headers.test", "deflate.test", "zstd.test"] {
        web.site(host).path("/").respond(
            Reply::ok()
                .header("Content-Type", "text/html")
                .body("<head></head>"),
        );
    }
    let fetcher = make_fetcher(&web, &["headers.test", "deflate.test", "zstd.test"]);
    for host in ["headers.test", "deflate.test"] {
        let analysis = analyze(&fetcher, &url(&web.http_url(host, "/")))
            .await
            .unwrap();
        assert_eq!(
            analysis.robots.outcome,
            RobotsStatus::Rules,
            "{host}: {:?}",
            analysis.robots.error
        );
        assert_eq!(analysis.robots.body, file, "{host}");
        assert_ne!(analysis.grade, audit::Grade::F, "{host}");
        assert_eq!(web.requests_to(host, "/").len(), 1, "{host}: page fetched");
    }
    let analysis = analyze(&fetcher, &url(&web.http_url("zstd.test", "/")))
        .await
        .unwrap();
    assert_eq!(analysis.robots.outcome, RobotsStatus::Unreachable);
    assert_eq!(
        analysis.robots.error_kind,
        Some(fetch::ErrorKind::UnsupportedEncoding)
    );
    let unreachable = analysis
        .findings
        .iter()
        .find(|finding| finding.id == CheckId::FetchUnreachable)
        .expect("robots.txt unreachable");
    assert!(
        unreachable
            .title()
            .contains("a content coding that was not asked for"),
        "{}",
        unreachable.title()
    );
    assert!(web.requests_to("zstd.test", "/").is_empty());
}

#[tokio::test]
async fn credentials_in_the_analysed_url_never_reach_the_server_nor_the_report() {
    let web = TestWeb::start().await;
    // The file's own sitemap URL carries credentials too: shown as declared (it is the
    // file's text), never sent.
    let sitemap = web
        .http_url("cred.test", "/s.xml")
        .replace("http://", "http://map:opensesame@");
    web.site("cred.test")
        .path("/robots.txt")
        .respond(Reply::robots_txt(&format!(
            "User-agent: *\nDisallow: /x\nSitemap: {sitemap}\n"
        )));
    web.site("cred.test")
        .path("/")
        .respond(Reply::redirect(302, "/home"));
    web.site("cred.test").path("/home").respond(
        Reply::ok()
            .header("Content-Type", "text/html")
            .body("<head></head>"),
    );
    web.site("cred.test")
        .path("/s.xml")
        .respond(Reply::ok().body(URLSET));
    let fetcher = make_fetcher(&web, &["cred.test"]);
    let target = web
        .http_url("cred.test", "/")
        .replace("http://", "http://user:hunter2@");
    let analysis = analyze(&fetcher, &url(&target)).await.unwrap();
    assert_eq!(analysis.page.status.map(|s| s.as_u16()), Some(200));
    assert_eq!(analysis.sitemaps[0].looks_like_sitemap, Some(true));
    let json = serde_json::to_string(&analysis).unwrap();
    assert!(!json.contains("hunter2"), "{json}");
    for finding in &analysis.findings {
        assert!(!finding.title().contains("hunter2"), "{}", finding.title());
        assert!(!finding.why().contains("hunter2"), "{}", finding.why());
    }
    let log = web.requests();
    assert_eq!(log.len(), 4, "{log:?}");
    for request in log {
        assert_eq!(request.header("authorization"), None, "{}", request.path);
    }
}

#[tokio::test]
async fn a_hostile_head_gives_a_bounded_report() {
    let web = TestWeb::start().await;
    web.site("huge.test")
        .path("/robots.txt")
        .respond(Reply::robots_txt("User-agent: *\nDisallow: /x\n"));
    // Half a megabyte of meta content and a 100 KB header: a directive every two bytes.
    let content = "a,".repeat(250_000);
    web.site("huge.test").path("/").respond(
        Reply::ok()
            .header("Content-Type", "text/html")
            .header("X-Robots-Tag", &"b,".repeat(50_000))
            .body(format!(
                "<html><head><meta name=\"robots\" content=\"noindex,{content}\"></head>"
            )),
    );
    let fetcher = make_fetcher(&web, &["huge.test"]);
    let started = std::time::Instant::now();
    let analysis = analyze(&fetcher, &url(&web.http_url("huge.test", "/")))
        .await
        .unwrap();
    assert!(started.elapsed() < Duration::from_secs(5));
    let directives = &analysis.page.directives;
    assert_eq!(directives.invalid.len(), page::directives::MAX_DIRECTIVES);
    assert!(directives.omitted > 250_000, "{}", directives.omitted);
    // The flood of invalid ones, first in the header, does not hide the meta tag's noindex.
    for id in [CheckId::PageInvalidDirective, CheckId::PageNoindex] {
        assert!(analysis.findings.iter().any(|f| f.id == id), "{id}");
    }
    let json = serde_json::to_string(&analysis).unwrap();
    assert!(json.len() < 200_000, "a report of {} bytes", json.len());
}

#[tokio::test]
async fn a_page_or_a_sitemap_in_a_coding_not_asked_for_is_not_read() {
    let web = TestWeb::start().await;
    let sitemap = web.http_url("zstd-page.test", "/sitemap.xml");
    web.site("zstd-page.test")
        .path("/robots.txt")
        .respond(Reply::robots_txt(&format!(
            "User-agent: *\nDisallow: /x\nSitemap: {sitemap}\n"
        )));
    // Bytes that would read as a noindex page and as a sitemap, if read as text.
    web.site("zstd-page.test").path("/").respond(
        Reply::ok()
            .header("Content-Type", "text/html")
            .header("Content-Encoding", "zstd")
            .body("<head><meta name=\"robots\" content=\"noindex\"></head>"),
    );
    web.site("zstd-page.test").path("/sitemap.xml").respond(
        Reply::ok()
            .header("Content-Encoding", "x-unheard-of")
            .body(URLSET),
    );
    let fetcher = make_fetcher(&web, &["zstd-page.test"]);
    let analysis = analyze(&fetcher, &url(&web.http_url("zstd-page.test", "/")))
        .await
        .unwrap();
    assert_eq!(analysis.robots.outcome, RobotsStatus::Rules);
    assert_eq!(
        analysis.page.error_kind,
        Some(fetch::ErrorKind::UnsupportedEncoding)
    );
    assert!(analysis.page.meta.is_empty());
    let titles: Vec<String> = analysis.findings.iter().map(|f| f.title()).collect();
    let has = |id: CheckId| analysis.findings.iter().any(|f| f.id == id);
    assert!(!has(CheckId::PageNoindex), "{titles:#?}");
    assert!(has(CheckId::PageUnreachable), "{titles:#?}");
    assert!(
        titles
            .iter()
            .any(|t| t.contains("a content coding that was not asked for")),
        "{titles:#?}"
    );
    let sitemap = &analysis.sitemaps[0];
    assert_eq!(sitemap.looks_like_sitemap, None);
    assert_eq!(
        sitemap.error_kind,
        Some(fetch::ErrorKind::UnsupportedEncoding)
    );
    assert!(has(CheckId::SitemapUnreachable), "{titles:#?}");
    assert!(
        titles.iter().any(|t| t.contains("x-unheard-of")),
        "{titles:#?}"
    );
}
