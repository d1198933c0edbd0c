//! One crafted site on the test web for each finding that only a fetch can reveal, analysed
//! through the real fetcher: the finding must be reported, with the site's own evidence.

mod common;

use audit::{analyze, Analysis, CheckId};
use common::{config_for, make_fetcher, url, URLSET};
use fetch::Fetcher;
use testweb::{Reply, TestWeb};

const GOOD_ROBOTS: &str = "User-agent: *\nDisallow: /admin/\n";

/// A site: its robots.txt reply, and optionally the page's and the sitemap's.
struct Site {
    host: &'static str,
    robots: Reply,
    page: Option<Reply>,
    sitemap: Option<Reply>,
    /// Path of the analysed page.
    page_path: &'static str,
    expected: CheckId,
}

fn text(body: &str) -> Reply {
    Reply::ok().header("Content-Type", "text/plain").body(body)
}

fn html(head: &str) -> Reply {
    Reply::ok()
        .header("Content-Type", "text/html")
        .body(format!("<html><head>{head}</head><body>x</body></html>"))
}

fn with_sitemap(web: &TestWeb, host: &str, robots: &str) -> Reply {
    text(&format!(
        "{robots}\nSitemap: {}\n",
        web.http_url(host, "/sitemap.xml")
    ))
}

/// A site whose page is a plain HTML page without directives and that declares no sitemap.
fn site(host: &'static str, robots: Reply, expected: CheckId) -> Site {
    Site {
        host,
        robots,
        page: Some(html("")),
        sitemap: None,
        page_path: "/",
        expected,
    }
}

/// Every crafted site.
fn sites(web: &TestWeb) -> Vec<Site> {
    let mut sites = status_sites();
    sites.extend(file_sites());
    sites.extend(redirect_and_sitemap_list_sites(web));
    sites.extend(page_sites());
    sites.extend(sitemap_sites(web));
    sites
}

/// robots.txt answering with a status that stops or frees the bot.
fn status_sites() -> Vec<Site> {
    vec![
        site(
            "server-error.test",
            Reply::status(503),
            CheckId::FetchServerError,
        ),
        site(
            "rate-limited.test",
            Reply::status(429).header("Retry-After", "60"),
            CheckId::FetchRateLimited,
        ),
        site("reset.test", Reply::reset(), CheckId::FetchUnreachable),
        site(
            "forbidden.test",
            Reply::status(403),
            CheckId::FetchForbidden,
        ),
        site(
            "challenge.test",
            Reply::status(403)
                .header("cf-mitigated", "challenge")
                .body("<html>Just a moment...</html>"),
            CheckId::FetchChallenge,
        ),
        site("not-found.test", Reply::status(404), CheckId::FetchNotFound),
    ]
}

/// robots.txt answering 200 with something wrong with the file.
fn file_sites() -> Vec<Site> {
    vec![
        site(
            "html.test",
            Reply::ok().header("Content-Type", "text/html").body(
                "<!DOCTYPE html><html><head><title>Home</title></head><body>Welcome</body></html>",
            ),
            CheckId::FetchHtml,
        ),
        site(
            "content-type.test",
            Reply::ok()
                .header("Content-Type", "application/octet-stream")
                .body(GOOD_ROBOTS),
            CheckId::FetchContentType,
        ),
        site("empty.test", text(""), CheckId::FetchEmpty),
        site(
            "too-large.test",
            text(&format!(
                "User-agent: *\nDisallow: /a\n{}",
                "# padding line\n".repeat(40_000)
            )),
            CheckId::FetchTooLarge,
        ),
        site(
            "noindex-header.test",
            text(GOOD_ROBOTS).header("X-Robots-Tag", "noindex"),
            CheckId::FetchRobotsNoindex,
        ),
    ]
}

/// robots.txt redirected, or declaring sitemaps that cannot be reached.
fn redirect_and_sitemap_list_sites(web: &TestWeb) -> Vec<Site> {
    vec![
        site(
            "loop.test",
            Reply::redirect(301, "/robots.txt"),
            CheckId::FetchTooManyRedirects,
        ),
        site(
            "elsewhere.test",
            Reply::redirect(301, &web.http_url("other-host.test", "/robots.txt")),
            CheckId::FetchRedirectOtherHost,
        ),
        site("no-sitemap.test", text(GOOD_ROBOTS), CheckId::SitemapNone),
        site(
            "no-location.test",
            Reply::status(302),
            CheckId::FetchUnexpectedStatus,
        ),
        site(
            "status-999.test",
            Reply::status(999),
            CheckId::FetchUnexpectedStatus,
        ),
        site(
            "sitemap-hosts.test",
            text(&format!(
                "{GOOD_ROBOTS}Sitemap: {}\n",
                web.http_url("down-host.test", "/sitemap.xml")
            )),
            CheckId::SitemapHostsUnreachable,
        ),
    ]
}

/// A good robots.txt and a page saying something of its own.
fn page_sites() -> Vec<Site> {
    vec![
        Site {
            page: Some(html("<meta name=\"robots\" content=\"noindex, nofollow\">")),
            ..site("noindex-page.test", text(GOOD_ROBOTS), CheckId::PageNoindex)
        },
        Site {
            page: Some(html("<meta name=\"robots\" content=\"index, noindex\">")),
            ..site("conflict.test", text(GOOD_ROBOTS), CheckId::PageConflict)
        },
        Site {
            page: Some(html("<meta name=\"robots\" content=\"nofolow\">")),
            ..site(
                "invalid-directive.test",
                text(GOOD_ROBOTS),
                CheckId::PageInvalidDirective,
            )
        },
        Site {
            page: Some(Reply::status(500)),
            ..site(
                "page-error.test",
                text(GOOD_ROBOTS),
                CheckId::PageUnreachable,
            )
        },
        Site {
            page_path: "/admin/settings",
            ..site(
                "page-disallowed.test",
                text(GOOD_ROBOTS),
                CheckId::LogicPageDisallowed,
            )
        },
    ]
}

/// A good robots.txt declaring a sitemap that is missing, not one, or disallowed.
fn sitemap_sites(web: &TestWeb) -> Vec<Site> {
    vec![
        Site {
            sitemap: Some(Reply::status(404)),
            ..site(
                "sitemap-missing.test",
                with_sitemap(web, "sitemap-missing.test", GOOD_ROBOTS),
                CheckId::SitemapUnreachable,
            )
        },
        Site {
            sitemap: Some(html("<title>Not a sitemap</title>")),
            ..site(
                "sitemap-html.test",
                with_sitemap(web, "sitemap-html.test", GOOD_ROBOTS),
                CheckId::SitemapNotASitemap,
            )
        },
        Site {
            sitemap: Some(Reply::ok().body(URLSET)),
            ..site(
                "sitemap-blocked.test",
                with_sitemap(
                    web,
                    "sitemap-blocked.test",
                    "User-agent: *\nDisallow: /sitemap.xml\n",
                ),
                CheckId::SitemapDisallowed,
            )
        },
    ]
}

fn fetcher(web: &TestWeb, sites: &[Site]) -> Fetcher {
    let hosts = sites
        .iter()
        .map(|site| site.host)
        .chain(["other-host.test", "down-host.test"]);
    Fetcher::new(config_for(web, hosts)).expect("fetcher")
}

fn ids(analysis: &Analysis) -> Vec<CheckId> {
    analysis
        .findings
        .iter()
        .map(|finding| finding.id.clone())
        .collect()
}

#[tokio::test]
async fn each_crafted_site_shows_its_finding() {
    let web = TestWeb::start().await;
    let sites = sites(&web);
    for site in &sites {
        let host = web.site(site.host);
        host.path("/robots.txt").respond(site.robots.clone());
        if let Some(page) = &site.page {
            host.path(site.page_path).respond(page.clone());
        }
        if let Some(sitemap) = &site.sitemap {
            host.path("/sitemap.xml").respond(sitemap.clone());
        }
    }
    web.site("other-host.test")
        .path("/robots.txt")
        .respond(text(GOOD_ROBOTS));
    web.site("down-host.test")
        .path("/robots.txt")
        .respond(Reply::reset());
    let fetcher = fetcher(&web, &sites);
    let mut missing = Vec::new();
    for site in &sites {
        let url = url(&web.http_url(site.host, site.page_path));
        let analysis = analyze(&fetcher, &url).await.expect("the analysis runs");
        if !ids(&analysis).contains(&site.expected) {
            missing.push(format!(
                "{}: expected {:?}, got {:?}",
                site.host,
                site.expected,
                ids(&analysis)
            ));
        }
        // Each finding stores what its title needs.
        for finding in &analysis.findings {
            if finding.specific_title().is_none() {
                missing.push(format!(
                    "{}: {finding:?} cannot render its title",
                    site.host
                ));
            }
        }
    }
    assert!(missing.is_empty(), "{}", missing.join("\n"));
}

#[tokio::test]
async fn a_site_that_stops_the_bot_gets_no_further_requests() {
    let web = TestWeb::start().await;
    for host in ["server-error.test", "rate-limited.test"] {
        let status = if host.starts_with("server") { 503 } else { 429 };
        web.site(host)
            .path("/robots.txt")
            .respond(Reply::status(status));
        web.site(host).path("/").respond(html(""));
    }
    let fetcher = make_fetcher(&web, &["server-error.test", "rate-limited.test"]);
    for host in ["server-error.test", "rate-limited.test"] {
        analyze(&fetcher, &url(&web.http_url(host, "/")))
            .await
            .expect("the analysis runs");
        assert!(
            web.requests_to(host, "/").is_empty(),
            "{host}: page requested"
        );
        assert_eq!(web.requests_to(host, "/robots.txt").len(), 1, "{host}");
    }
}

/// robots.txt answers the bot reads as a server error (JittyBot's robots.txt rules: a redirect loop or too many
/// redirects "as 5xx"; any other answer with no file to read likewise): everything is
/// disallowed, so the score is an F, as for a 5xx.
#[tokio::test]
async fn answers_read_as_a_server_error_score_f() {
    let web = TestWeb::start().await;
    let mut hosts = vec![
        ("no-location.test", Reply::status(302)),
        ("status-999.test", Reply::status(999)),
        ("loop.test", Reply::redirect(301, "/robots.txt")),
    ];
    for (host, reply) in hosts.drain(..) {
        web.site(host).path("/robots.txt").respond(reply);
        web.site(host).path("/").respond(html(""));
    }
    for i in 0..7 {
        let from = if i == 0 {
            "/robots.txt".to_owned()
        } else {
            format!("/r{i}")
        };
        web.site("chain.test")
            .path(&from)
            .respond(Reply::redirect(301, &format!("/r{}", i + 1)));
    }
    let names = [
        "no-location.test",
        "status-999.test",
        "loop.test",
        "chain.test",
    ];
    let fetcher = make_fetcher(&web, &names);
    for host in names {
        let analysis = analyze(&fetcher, &url(&web.http_url(host, "/")))
            .await
            .expect("the analysis runs");
        let shown: Vec<String> = analysis.findings.iter().map(|f| f.to_string()).collect();
        assert_eq!(analysis.grade, audit::Grade::F, "{host}: {shown:#?}");
        assert!(analysis.score <= audit::score::CRITICAL_CAP, "{host}");
        assert!(
            web.requests_to(host, "/").is_empty(),
            "{host}: page requested"
        );
    }
}
