//! `X-Robots-Tag` values as search engines send them, on the crawler's path: a list that
//! starts with a parameterised directive (`max-image-preview:large, noindex`) applies to
//! everyone; a list named for JittyBot applies, one named for another bot does not. A noindex
//! page's media is not requested, so the server's log shows which applied. SQLite.

mod common;

use common::*;
use db::testing::TestDb;
use db::Backend;
use testweb::{MultiWeb, Reply};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn x_robots_tag_lists_with_parameters_and_bot_names_apply_as_written() {
    let db = TestDb::new(Backend::Sqlite).await;
    let web = MultiWeb::start(1).await;
    let h = "tags.test";
    web.site(h)
        .path("/robots.txt")
        .respond(Reply::robots_txt("User-agent: *\nAllow: /\n"));
    web.site(h).path("/sitemap.xml").respond(Reply::status(404));
    let cases = [
        ("combined", "max-image-preview:large, noindex", true),
        ("ours", "jittybot: max-image-preview:large, noindex", true),
        (
            "theirs",
            "googlebot: max-image-preview:large, noindex",
            false,
        ),
        ("snippet", "max-snippet: 20, noindex", true),
    ];
    let links: String = cases
        .iter()
        .map(|(name, _, _)| format!("<a href=/{name}>{name}</a>"))
        .collect();
    web.site(h).path("/").respond(html(&links));
    for (name, tag, _) in cases {
        web.site(h)
            .path(&format!("/{name}"))
            .respond(html(&format!("<img src=/img/{name}.png>")).header("X-Robots-Tag", tag));
        web.site(h).path(&format!("/img/{name}.png")).respond(
            Reply::ok()
                .header("Content-Type", "image/png")
                .body(format!("\u{89}PNG {name}")),
        );
    }
    let warc = tempfile::tempdir().unwrap();
    crawl(
        &db.target,
        fetcher(&web, &[(h, 0)]),
        config(warc.path()),
        &[web.http_url(h, "/")],
    )
    .await;
    for (name, tag, noindex) in cases {
        assert_eq!(web.requests_to(h, &format!("/{name}")).len(), 1, "{name}");
        let media = web.requests_to(h, &format!("/img/{name}.png")).len();
        assert_eq!(
            media,
            usize::from(!noindex),
            "X-Robots-Tag: {tag}: noindex applies: {noindex}"
        );
    }
    db.cleanup().await;
}
