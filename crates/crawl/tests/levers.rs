//! The operator's levers in the store, on both backends: recorded, listed, undone, and a
//! robots.txt refresh deleting exactly the stored copies of the site's hosts.

use std::time::Duration;

use crawl::control::{self, Lever, SiteName};
use crawl::store::Store;
use db::testing::on_both_backends;
use jiff::Timestamp;

fn site(name: &str) -> SiteName {
    name.parse().unwrap()
}

#[tokio::test]
async fn levers_are_recorded_listed_and_undone() {
    on_both_backends(|target| async move {
        let store = Store::open(&target).await.unwrap();
        let now = Timestamp::from_second(1_800_000_000).unwrap();
        let pull = |lever: Lever| {
            let store = store.clone();
            async move { control::apply(&store, &lever, now).await.unwrap() }
        };
        pull(Lever::Pace {
            site: site("example.com"),
            floor: Some(Duration::from_secs(10)),
        })
        .await;
        pull(Lever::Exclude(site("other.test"))).await;
        pull(Lever::Include(site("never.test"))).await;
        let levers = control::levers(&store).await.unwrap();
        let summary: Vec<(&str, Option<Duration>, bool)> = levers
            .iter()
            .map(|l| (l.site.as_str(), l.pace, l.excluded))
            .collect();
        assert_eq!(
            summary,
            vec![
                ("example.com", Some(Duration::from_secs(10)), false),
                ("other.test", None, true),
            ],
            "a site with nothing set is not kept"
        );
        assert!(levers.iter().all(|l| l.in_force() && l.updated_at == now));
        pull(Lever::Pace {
            site: site("example.com"),
            floor: None,
        })
        .await;
        pull(Lever::Include(site("other.test"))).await;
        assert!(control::levers(&store).await.unwrap().is_empty());
        store.close().await;
    })
    .await;
}

#[tokio::test]
async fn a_robots_txt_refresh_deletes_the_stored_copies_of_the_sites_hosts_only() {
    on_both_backends(|target| async move {
        let store = Store::open(&target).await.unwrap();
        for scope in [
            "https://example.com",
            "http://www.example.com:8080",
            "https://badexample.com",
            "https://other.test",
        ] {
            store.put_robots_entry(scope, "{}").await.unwrap();
        }
        let now = Timestamp::now();
        let dropped = control::apply(&store, &Lever::RefreshRobots(site("example.com")), now)
            .await
            .unwrap();
        assert_eq!(dropped, 2);
        for (scope, kept) in [
            ("https://example.com", false),
            ("http://www.example.com:8080", false),
            ("https://badexample.com", true),
            ("https://other.test", true),
        ] {
            assert_eq!(
                store.robots_entry(scope).await.unwrap().is_some(),
                kept,
                "{scope}"
            );
        }
        // Each refresh asked is counted, so every process acts on each once.
        control::apply(&store, &Lever::RefreshRobots(site("example.com")), now)
            .await
            .unwrap();
        let levers = control::levers(&store).await.unwrap();
        assert_eq!(levers.len(), 1);
        assert_eq!(levers[0].robots_refresh, 2);
        assert!(
            !levers[0].in_force(),
            "a refresh changes no pace and holds nothing"
        );
        store.close().await;
    })
    .await;
}
