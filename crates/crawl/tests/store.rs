//! The crawl store, the same tests on SQLite and PostgreSQL.

use std::time::Duration;

use crawl::normal::NormalUrl;
use crawl::origins::OriginName;
use crawl::store::{
    Batch, Due, FetchFacts, NewUrl, OriginId, OriginUpdate, Outcome, Store, UrlId, UrlKind,
    UrlState,
};
use db::testing::on_both_backends;
use db::{DbTarget, Holder};
use jiff::{SignedDuration, Timestamp};

fn t0() -> Timestamp {
    Timestamp::from_second(1_800_000_000).unwrap()
}

/// Queue `paths` on `host` (its own origin, site by PSL); returns the host's placement.
async fn queue(
    store: &Store,
    host: &str,
    paths: &[&str],
    sitemap: Option<Timestamp>,
) -> crawl::store::HostInfo {
    let site = crawl::site::Site::of_host(host);
    let site_id = store.ensure_site(site.as_str(), true).await.unwrap();
    let info = store
        .ensure_host(host, &OriginName(host.into()), site_id)
        .await
        .unwrap();
    let urls: Vec<NewUrl> = paths
        .iter()
        .map(|p| NewUrl {
            key: NormalUrl::parse(&format!("http://{host}{p}"))
                .unwrap()
                .key()
                .to_string(),
            host: info.clone(),
            kind: UrlKind::Page,
            priority: if sitemap.is_some() { 0 } else { 1 },
            in_sitemap: sitemap.is_some(),
            lastmod: sitemap,
        })
        .collect();
    store.enqueue(&urls).await.unwrap();
    info
}

fn fetched(id: UrlId, at: Timestamp, next_due: Due) -> Outcome {
    Outcome {
        state: Some(UrlState::Fetched),
        next_due,
        fetch: Some(FetchFacts {
            fetched_at: at,
            status: http::StatusCode::OK,
            etag: Some("\"e\"".into()),
            warc_record_id: Some("<urn:uuid:x>".into()),
            ..FetchFacts::default()
        }),
        ..Outcome::of(id)
    }
}

async fn open(target: &DbTarget) -> Store {
    Store::open(target).await.unwrap()
}

#[tokio::test]
async fn urls_flow_from_queue_to_fetched_once() {
    on_both_backends(|target| async move {
        let store = open(&target).await;
        let me = Holder::named("me");
        queue(&store, "www.a.test", &["/", "/x", "/x#frag", "/y"], None).await;
        // Queued twice (a link seen again): still one entry per page.
        queue(&store, "www.a.test", &["/x"], None).await;
        let origins = store.claim_origins(&me, t0(), 10).await.unwrap();
        assert_eq!(origins.len(), 1);
        let o = &origins[0];
        assert_eq!(o.name, OriginName("www.a.test".into()));
        let first = store.claim_urls(o.id, 2).await.unwrap();
        let keys: Vec<&str> = first.iter().map(|u| u.key.as_str()).collect();
        assert_eq!(keys, ["//www.a.test/", "//www.a.test/x"]);
        let rest = store.claim_urls(o.id, 10).await.unwrap();
        assert_eq!(rest.len(), 1, "in-flight URLs are not claimed twice");
        assert!(store.claim_urls(o.id, 10).await.unwrap().is_empty());
        let mut batch = Batch::default();
        for u in first.iter().chain(&rest) {
            batch.outcomes.push(fetched(u.id, t0(), Due::Never));
        }
        batch.origins.push(OriginUpdate {
            id: o.id,
            gap: Duration::from_secs(2),
            next_start: t0() + SignedDuration::from_secs(2),
            failures: 0,
            paused: false,
            pacer_state: Some("{}".into()),
            requests: 3,
            bytes: 300,
        });
        store.commit(&batch, &me).await.unwrap();
        let status = store.status(t0()).await.unwrap();
        assert_eq!(status.urls["fetched"], 3);
        assert_eq!(status.urls["queued"], 0);
        assert_eq!((status.requests, status.bytes), (3, 300));
        assert_eq!(status.origins[0].hosts, ["www.a.test"]);
        assert_eq!(status.origins[0].pace_ms, 2000);
        // Nothing is left to claim: the origin is not leased again.
        store.release_origins(&[o.id], &me).await.unwrap();
        assert!(store
            .claim_origins(&me, t0() + SignedDuration::from_secs(5), 10)
            .await
            .unwrap()
            .is_empty());
        // Stored pace holds: after a restart the origin's next start is still there.
        store.close().await;
        let store = open(&target).await;
        let row = store.origin(o.id).await.unwrap().unwrap();
        assert_eq!(row.next_start, t0() + SignedDuration::from_secs(2));
        assert_eq!(row.gap, Duration::from_secs(2));
    })
    .await;
}

#[tokio::test]
async fn a_dead_holders_origins_and_in_flight_urls_are_taken_over() {
    on_both_backends(|target| async move {
        let store = open(&target).await;
        let (dead, alive) = (Holder::named("dead"), Holder::named("alive"));
        queue(&store, "a.test", &["/1", "/2", "/3"], None).await;
        queue(&store, "b.test", &["/1"], None).await;
        let mine = store.claim_origins(&dead, t0(), 1).await.unwrap();
        assert_eq!(mine.len(), 1);
        let in_flight = store.claim_urls(mine[0].id, 10).await.unwrap();
        assert!(!in_flight.is_empty());
        // The other process gets only the other origin while the lease runs.
        let theirs = store.claim_origins(&alive, t0(), 10).await.unwrap();
        assert_eq!(theirs.len(), 1);
        assert_ne!(theirs[0].id, mine[0].id);
        // The live process renews; the dead one does not.
        let renewed = store
            .renew_origins(
                &[theirs[0].id],
                &alive,
                t0() + SignedDuration::from_secs(20),
            )
            .await
            .unwrap();
        assert_eq!(renewed, [theirs[0].id]);
        // The dead process's commit after losing its lease cannot move the pace.
        let later = t0() + SignedDuration::from_secs(31);
        // An origin a process still has in hand (results not committed) is not claimed
        // again by it: that would put its in-flight URLs back in the queue.
        let held = store
            .claim_origins_except(&dead, later, 10, &[mine[0].id])
            .await
            .unwrap();
        assert!(held.is_empty(), "{held:?}");
        let taken = store.claim_origins(&alive, later, 10).await.unwrap();
        assert_eq!(taken.iter().map(|o| o.id).collect::<Vec<_>>(), [mine[0].id]);
        let urls = store.claim_urls(mine[0].id, 10).await.unwrap();
        assert_eq!(
            urls.len(),
            in_flight.len(),
            "in-flight URLs went back to the queue"
        );
        let stale = Batch {
            origins: vec![OriginUpdate {
                id: mine[0].id,
                gap: Duration::ZERO,
                next_start: t0(),
                failures: 9,
                paused: true,
                pacer_state: None,
                requests: 1,
                bytes: 1,
            }],
            ..Batch::default()
        };
        store.commit(&stale, &dead).await.unwrap();
        let row = store.origin(mine[0].id).await.unwrap().unwrap();
        assert_eq!((row.failures, row.paused), (0, false));
        assert_eq!(
            store
                .renew_origins(&[mine[0].id], &dead, later)
                .await
                .unwrap(),
            Vec::<OriginId>::new()
        );
    })
    .await;
}

#[tokio::test]
async fn sitemap_lastmod_decides_revisits() {
    on_both_backends(|target| async move {
        let store = open(&target).await;
        let me = Holder::named("me");
        let jan = Timestamp::from_second(1_767_225_600).unwrap();
        queue(&store, "s.test", &["/link"], None).await;
        queue(&store, "s.test", &["/a", "/b"], Some(jan)).await;
        let o = store.claim_origins(&me, t0(), 1).await.unwrap().remove(0);
        let urls = store.claim_urls(o.id, 10).await.unwrap();
        // Sitemap URLs first.
        let keys: Vec<&str> = urls.iter().map(|u| u.key.as_str()).collect();
        assert_eq!(keys, ["//s.test/a", "//s.test/b", "//s.test/link"]);
        assert!(urls[0].in_sitemap && urls[0].lastmod == Some(jan));
        let batch = Batch {
            outcomes: urls
                .iter()
                .map(|u| fetched(u.id, t0(), Due::Never))
                .collect(),
            ..Batch::default()
        };
        store.commit(&batch, &me).await.unwrap();
        // Re-read: /a unchanged, /b newer than the fetch, /link now listed with an old lastmod.
        let newer = t0() + SignedDuration::from_secs(3600);
        queue(&store, "s.test", &["/a", "/link"], Some(jan)).await;
        queue(&store, "s.test", &["/b"], Some(newer)).await;
        let st = |k: &'static str| {
            let store = store.clone();
            async move { store.url_state(k).await.unwrap().unwrap().0 }
        };
        assert_eq!(st("//s.test/a").await, UrlState::Fetched);
        assert_eq!(st("//s.test/b").await, UrlState::Queued);
        assert_eq!(st("//s.test/link").await, UrlState::Fetched);
        let again = store.claim_urls(o.id, 10).await.unwrap();
        assert_eq!(again.len(), 1);
        assert_eq!(
            again[0].etag.as_deref(),
            Some("\"e\""),
            "validators for the conditional request"
        );
        assert_eq!(again[0].warc_record_id.as_deref(), Some("<urn:uuid:x>"));
        // Revisit-after for pages not in a sitemap.
        let link = store.claim_urls(o.id, 10).await.unwrap();
        assert!(link.is_empty());
        let due = t0() + SignedDuration::from_secs(7 * 86400);
        let b = Batch {
            outcomes: vec![fetched(again[0].id, t0(), Due::At(due))],
            ..Batch::default()
        };
        store.commit(&b, &me).await.unwrap();
        let week = std::time::Duration::from_secs(7 * 86400);
        assert_eq!(
            store
                .requeue_due(due - SignedDuration::from_secs(1), week)
                .await
                .unwrap(),
            0
        );
        // This run's interval decides: a shorter one makes the page due sooner. URLs that
        // are never revisited by time (sitemap lastmod, media: `Due::Never`) stay put.
        let day = std::time::Duration::from_secs(86400);
        assert_eq!(
            store
                .requeue_due(t0() + SignedDuration::from_secs(86399), day)
                .await
                .unwrap(),
            0
        );
        assert_eq!(
            store
                .requeue_due(t0() + SignedDuration::from_secs(86400), day)
                .await
                .unwrap(),
            1
        );
        assert_eq!(st("//s.test/b").await, UrlState::Queued);
        assert_eq!(st("//s.test/link").await, UrlState::Fetched, "due never");
        assert_eq!(st("//s.test/a").await, UrlState::Fetched, "due never");
    })
    .await;
}

#[tokio::test]
async fn retries_failures_and_giving_up() {
    on_both_backends(|target| async move {
        let store = open(&target).await;
        let me = Holder::named("me");
        let info = queue(&store, "f.test", &["/1", "/2"], None).await;
        let o = store.claim_origins(&me, t0(), 1).await.unwrap().remove(0);
        let urls = store.claim_urls(o.id, 10).await.unwrap();
        let batch = Batch {
            outcomes: vec![
                Outcome {
                    state: Some(UrlState::Queued),
                    attempts: 1,
                    last_error: Some("503".into()),
                    ..Outcome::of(urls[0].id)
                },
                Outcome {
                    state: Some(UrlState::Failed),
                    attempts: 5,
                    last_error: Some("reset".into()),
                    reason: Some("max attempts".into()),
                    ..Outcome::of(urls[1].id)
                },
            ],
            ..Batch::default()
        };
        store.commit(&batch, &me).await.unwrap();
        let again = store.claim_urls(o.id, 10).await.unwrap();
        assert_eq!(again.len(), 1);
        assert_eq!(again[0].attempts, 1);
        assert_eq!(
            store.url_state("//f.test/2").await.unwrap().unwrap(),
            (UrlState::Failed, 5, Some("max attempts".into()))
        );
        // A site whose robots.txt stays unreachable: its queued URLs are given up, and a
        // later run queues them again.
        assert_eq!(
            store
                .fail_site(info.site_id, "robots.txt unreachable")
                .await
                .unwrap(),
            1
        );
        assert_eq!(store.status(t0()).await.unwrap().urls["failed"], 2);
        assert_eq!(store.retry_failed().await.unwrap(), 2);
        assert_eq!(store.url_state("//f.test/2").await.unwrap().unwrap().1, 0);
        store.return_to_queue(&[]).await.unwrap();
    })
    .await;
}

#[tokio::test]
async fn merging_origins_moves_hosts_and_keeps_the_stricter_pace() {
    on_both_backends(|target| async move {
        let store = open(&target).await;
        let me = Holder::named("me");
        let a = queue(&store, "a.test", &["/1"], None).await;
        let b = queue(&store, "b.test", &["/1", "/2"], None).await;
        let origins = store.claim_origins(&me, t0(), 10).await.unwrap();
        let oa = origins
            .iter()
            .find(|o| o.id == a.origin_id)
            .unwrap()
            .clone();
        let ob = origins
            .iter()
            .find(|o| o.id == b.origin_id)
            .unwrap()
            .clone();
        let upd = |o: &crawl::store::OriginRow, gap, fails| OriginUpdate {
            id: o.id,
            gap: Duration::from_secs(gap),
            next_start: t0() + SignedDuration::from_secs(gap as i64),
            failures: fails,
            paused: false,
            pacer_state: None,
            requests: 1,
            bytes: 10,
        };
        let batch = Batch {
            origins: vec![upd(&oa, 5, 0), upd(&ob, 1, 3)],
            ..Batch::default()
        };
        store.commit(&batch, &me).await.unwrap();
        let into = store.merge_origins(&ob.name, &oa.name, &me).await.unwrap();
        assert_eq!(into, oa.id);
        let row = store.origin(oa.id).await.unwrap().unwrap();
        assert_eq!((row.gap, row.failures), (Duration::from_secs(5), 3));
        assert_eq!(
            store.host("b.test").await.unwrap().unwrap().origin_id,
            oa.id
        );
        assert_eq!(store.claim_urls(oa.id, 10).await.unwrap().len(), 3);
        let status = store.status(t0()).await.unwrap();
        assert_eq!(status.origins.len(), 1);
        assert_eq!(status.origins[0].hosts, ["a.test", "b.test"]);
        assert_eq!(status.requests, 2);
        // A host of the absorbed origin added later lands in the merged one.
        let c = store
            .ensure_host("c.b.test", &ob.name, b.site_id)
            .await
            .unwrap();
        assert_eq!(c.origin_id, oa.id);
    })
    .await;
}

#[tokio::test]
async fn merges_follow_earlier_merges_and_pass_another_process_lease_on() {
    on_both_backends(|target| async move {
        let store = open(&target).await;
        let (me, other, third) = (
            Holder::named("me"),
            Holder::named("other"),
            Holder::named("third"),
        );
        let now = Timestamp::now();
        let later = now + SignedDuration::from_secs(31);
        let a = queue(&store, "a.test", &["/1"], None).await;
        let b = queue(&store, "b.test", &["/1"], None).await;
        queue(&store, "c.test", &["/1"], None).await;
        let name = |h: &str| OriginName(h.to_string());
        // Another process works b: merged into a, its lease passes on, so a third process
        // cannot take b's URLs over (under a) while the lease runs.
        let held = store.claim_origins(&other, now, 10).await.unwrap();
        assert!(held.iter().any(|o| o.id == b.origin_id));
        store.release_origins(&[a.origin_id], &other).await.unwrap();
        store
            .merge_origins(&name("b.test"), &name("a.test"), &me)
            .await
            .unwrap();
        let claimed: Vec<OriginId> = store
            .claim_origins(&third, now, 10)
            .await
            .unwrap()
            .iter()
            .map(|o| o.id)
            .collect();
        assert!(!claimed.contains(&a.origin_id), "{claimed:?}");
        // Merging into b (merged into a) lands in a; merging a into c then into a again
        // changes nothing more: no cycle, a stays claimable.
        let into = store
            .merge_origins(&name("c.test"), &name("b.test"), &me)
            .await
            .unwrap();
        assert_eq!(into, a.origin_id);
        let into = store
            .merge_origins(&name("a.test"), &name("c.test"), &me)
            .await
            .unwrap();
        assert_eq!(into, a.origin_id);
        let status = store.status(now).await.unwrap();
        assert_eq!(status.origins.len(), 1, "{:?}", status.origins);
        assert_eq!(status.origins[0].hosts, ["a.test", "b.test", "c.test"]);
        let claimed = store.claim_origins(&third, later, 10).await.unwrap();
        assert_eq!(
            claimed.iter().map(|o| o.id).collect::<Vec<_>>(),
            [a.origin_id]
        );
        assert_eq!(store.claim_urls(a.origin_id, 10).await.unwrap().len(), 3);
        // The merging process's own lease is not passed on: what it merged is free at once.
        let d = queue(&store, "d.test", &["/1"], None).await;
        let e = queue(&store, "e.test", &["/1"], None).await;
        let mine = store.claim_origins(&me, now, 10).await.unwrap();
        assert!(mine.iter().any(|o| o.id == d.origin_id));
        store.release_origins(&[e.origin_id], &me).await.unwrap();
        store
            .merge_origins(&name("d.test"), &name("e.test"), &me)
            .await
            .unwrap();
        let claimed = store.claim_origins(&third, now, 10).await.unwrap();
        assert_eq!(
            claimed.iter().map(|o| o.id).collect::<Vec<_>>(),
            [e.origin_id]
        );
    })
    .await;
}

#[tokio::test]
async fn robots_entries_sitemaps_media_and_hosts() {
    on_both_backends(|target| async move {
        let store = open(&target).await;
        assert_eq!(store.robots_entry("https://a.test").await.unwrap(), None);
        store
            .put_robots_entry("https://a.test", "{\"v\":1}")
            .await
            .unwrap();
        store
            .put_robots_entry("https://a.test", "{\"v\":2}")
            .await
            .unwrap();
        assert_eq!(
            store
                .robots_entry("https://a.test")
                .await
                .unwrap()
                .as_deref(),
            Some("{\"v\":2}")
        );
        let info = queue(&store, "a.test", &["/"], None).await;
        assert_eq!(
            store.site_sitemap_state(info.site_id).await.unwrap(),
            (None, None)
        );
        let id = store
            .add_sitemap("https://a.test/sitemap.xml", info.site_id, 1)
            .await
            .unwrap();
        assert_eq!(
            store
                .add_sitemap("https://a.test/sitemap.xml", info.site_id, 0)
                .await
                .unwrap(),
            id
        );
        store
            .sitemap_read(id, t0(), Some("\"s\""), None, 10, None)
            .await
            .unwrap();
        let maps = store.sitemaps(info.site_id).await.unwrap();
        assert_eq!(
            (maps[0].depth, maps[0].etag.as_deref(), maps[0].fetched_at),
            (0, Some("\"s\""), Some(t0()))
        );
        store
            .set_site_sitemaps(info.site_id, true, t0(), 10)
            .await
            .unwrap();
        assert_eq!(
            store.site_sitemap_state(info.site_id).await.unwrap(),
            (Some(true), Some(t0()))
        );
        assert_eq!(store.media("h1").await.unwrap(), None);
        let x = Holder::named("x");
        let origin = store.claim_origins(&x, t0(), 10).await.unwrap()[0].id;
        let page = store.claim_urls(origin, 1).await.unwrap()[0].id;
        let batch = Batch {
            media: vec![("h1".into(), page, Some("image/png".into()), 5)],
            ..Batch::default()
        };
        store.commit(&batch, &Holder::named("x")).await.unwrap();
        store.commit(&batch, &Holder::named("x")).await.unwrap();
        assert_eq!(store.media("h1").await.unwrap().unwrap().url_id, page);
        store.set_host_https(info.host_id, true).await.unwrap();
        store
            .set_crawl_delay(info.host_id, Some(Duration::from_secs(3)))
            .await
            .unwrap();
        store
            .set_host_evidence(info.host_id, Some("127.0.0.2"), None, None)
            .await
            .unwrap();
        let h = store.host("a.test").await.unwrap().unwrap();
        assert_eq!(
            (h.https, h.crawl_delay),
            (Some(true), Some(Duration::from_secs(3)))
        );
        let ev = store.hosts_with_evidence().await.unwrap();
        assert_eq!(ev[0].2.as_deref(), Some("127.0.0.2"));
        assert_eq!(store.seed_sites().await.unwrap(), ["a.test"]);
    })
    .await;
}

/// Each host's sitemaps are recorded on their own; the site is usable when any host's are,
/// and counts all their URLs.
#[tokio::test]
async fn sitemaps_read_are_recorded_per_host_and_summed_per_site() {
    on_both_backends(|target| async move {
        let store = open(&target).await;
        let a = queue(&store, "a.shared.test", &["/"], None).await;
        let b = queue(&store, "b.shared.test", &["/"], None).await;
        assert_eq!(a.site_id, b.site_id);
        let later = t0() + SignedDuration::from_secs(5);
        assert!(store
            .set_host_sitemaps(a.host_id, a.site_id, t0(), 7)
            .await
            .unwrap());
        // Another host of the site without a sitemap leaves the site's usable.
        assert!(store
            .set_host_sitemaps(b.host_id, b.site_id, later, 0)
            .await
            .unwrap());
        assert_eq!(
            store.site_sitemap_state(a.site_id).await.unwrap(),
            (Some(true), Some(later))
        );
        // Read again without URLs on either host: the site falls back to links.
        assert!(!store
            .set_host_sitemaps(a.host_id, a.site_id, later, 0)
            .await
            .unwrap());
        assert_eq!(
            store.site_sitemap_state(a.site_id).await.unwrap(),
            (Some(false), Some(later))
        );
        assert!(store
            .set_host_sitemaps(b.host_id, b.site_id, later, 3)
            .await
            .unwrap());
        store.close().await;
    })
    .await;
}

/// The pacing of several origins in one commit is one statement: each origin gets its own
/// values, counts add up across commits, and an origin leased by another process is left
/// alone.
#[tokio::test]
async fn one_commit_writes_the_pacing_of_many_origins() {
    on_both_backends(|target| async move {
        let store = open(&target).await;
        let (me, other) = (Holder::named("me"), Holder::named("other"));
        for host in ["www.a.test", "www.b.test", "www.c.test"] {
            queue(&store, host, &["/"], None).await;
        }
        let mine = store.claim_origins(&me, t0(), 2).await.unwrap();
        let theirs = store.claim_origins(&other, t0(), 10).await.unwrap();
        assert_eq!((mine.len(), theirs.len()), (2, 1));
        let update = |id: OriginId, n: u64| OriginUpdate {
            id,
            gap: Duration::from_millis(100 * n),
            next_start: t0() + SignedDuration::from_secs(n as i64),
            failures: n as u32,
            paused: n == 2,
            pacer_state: Some(format!("{{\"n\":{n}}}")),
            requests: n,
            bytes: 10 * n,
        };
        let ids = [mine[0].id, mine[1].id, theirs[0].id];
        let batch = Batch {
            origins: vec![update(ids[2], 3), update(ids[0], 1), update(ids[1], 2)],
            ..Batch::default()
        };
        store.commit(&batch, &me).await.unwrap();
        store.commit(&batch, &me).await.unwrap();
        for (id, n) in [(ids[0], 1u64), (ids[1], 2)] {
            let row = store.origin(id).await.unwrap().unwrap();
            assert_eq!(row.gap, Duration::from_millis(100 * n));
            assert_eq!(row.next_start, t0() + SignedDuration::from_secs(n as i64));
            assert_eq!((row.failures, row.paused), (n as u32, n == 2));
            assert_eq!(
                row.pacer_state.as_deref(),
                Some(format!("{{\"n\":{n}}}").as_str())
            );
        }
        let row = store.origin(ids[2]).await.unwrap().unwrap();
        assert_eq!(
            (row.failures, row.paused, row.pacer_state),
            (0, false, None)
        );
        let status = store.status(t0()).await.unwrap();
        // Requests and bytes of both commits, of my two origins only.
        assert_eq!((status.requests, status.bytes), (6, 60));
    })
    .await;
}
