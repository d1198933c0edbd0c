//! `X-Robots-Tag` values as search engines send them, on the crawler's path: a list that
//! starts with a parameterised directive (`max-image-preview:large, noindex`) applies to
//! everyone; a list named for JittyBot applies, one named for another bot does not. A noindex
//! page's media is not requested and a nofollow page's links are not, so the server's log
//! shows which applied; the store keeps what applied with each URL. SQLite.

mod common;

use common::*;
use crawl::normal::NormalUrl;
use crawl::store::Store;
use db::testing::TestDb;
use db::Backend;
use db::Db;
use testweb::MultiWeb;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn x_robots_tag_lists_with_parameters_and_bot_names_apply_as_written() {
    let db = TestDb::new(Backend::Sqlite).await;
    let web = MultiWeb::start(1).await;
    let h = "tags.test";
    open_site(&web, h);
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
        web.site(h)
            .path(&format!("/img/{name}.png"))
            .respond(png(name));
    }
    let warc = tempfile::tempdir().unwrap();
    crawl_site(&db.target, &web, h, warc.path()).await;
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

/// The directives stored with the fetch of `url`.
async fn stored_directives(store: &Store, url: &str) -> Option<String> {
    let key = NormalUrl::parse(url).unwrap();
    let Db::Sqlite(pool) = store.db() else {
        panic!("a SQLite store");
    };
    sqlx::query_scalar("SELECT directives FROM crawl_urls WHERE key = $1")
        .bind(key.key())
        .fetch_one(pool)
        .await
        .unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn combined_and_bot_named_x_robots_tag_values_decide_what_is_kept_and_followed() {
    let db = TestDb::new(Backend::Sqlite).await;
    let web = MultiWeb::start(1).await;
    let h = "named.test";
    open_site(&web, h);
    // (page, its X-Robots-Tag headers, noindex applies, nofollow applies, stored label)
    let cases: [(&str, &[&str], bool, bool, &str); 5] = [
        ("theirs", &["googlebot: noindex"], false, false, ""),
        (
            "ours",
            &["jittybot: nofollow, max-snippet:20"],
            false,
            true,
            "nofollow",
        ),
        (
            "combined",
            &["max-image-preview:large, noindex"],
            true,
            false,
            "noindex",
        ),
        (
            "two-headers",
            &["googlebot: nofollow", "JittyBot: noindex"],
            true,
            false,
            "noindex",
        ),
        (
            "two-bots",
            &["googlebot: noindex, jittybot: nofollow"],
            false,
            true,
            "nofollow",
        ),
    ];
    let links: String = cases
        .iter()
        .map(|(name, ..)| format!("<a href=/{name}>{name}</a>"))
        .collect();
    web.site(h).path("/").respond(html(&links));
    for (name, tags, ..) in cases {
        let mut page = html(&format!(
            "<a href=/{name}/next>next</a><img src=/img/{name}.png>"
        ));
        for tag in tags {
            page = page.header("X-Robots-Tag", tag);
        }
        web.site(h).path(&format!("/{name}")).respond(page);
        web.site(h)
            .path(&format!("/{name}/next"))
            .respond(html("next"));
        web.site(h)
            .path(&format!("/img/{name}.png"))
            .respond(png(name));
    }
    let warc = tempfile::tempdir().unwrap();
    crawl_site(&db.target, &web, h, warc.path()).await;
    let store = Store::open(&db.target).await.unwrap();
    for (name, tags, noindex, nofollow, label) in cases {
        assert_eq!(web.requests_to(h, &format!("/{name}")).len(), 1, "{name}");
        let media = web.requests_to(h, &format!("/img/{name}.png")).len();
        assert_eq!(media, usize::from(!noindex), "{tags:?}: noindex {noindex}");
        let next = web.requests_to(h, &format!("/{name}/next")).len();
        assert_eq!(
            next,
            usize::from(!nofollow),
            "{tags:?}: nofollow {nofollow}"
        );
        let stored = stored_directives(&store, &web.https_url(h, &format!("/{name}"))).await;
        assert_eq!(stored.as_deref().unwrap_or(""), label, "{tags:?}");
    }
    db.cleanup().await;
}
