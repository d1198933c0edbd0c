//! The store on both backends: the job life cycle across a restart, one site at a time,
//! pastes never listed, documents and bytes stored whole, icons, removal, the schedule state.

mod common;

use common::{analysis, day, done_report};
use db::testing::on_both_backends;
use db::Holder;
use jiff::SignedDuration;
use service::limits::{ICON_REFRESH, ICON_RETRY, JOB_LEASE, RESULT_LIFETIME};
use service::ranking::{rank, Ranking};
use service::store::Backoff;
use service::{ReportId, ReportState, Store};
use url::Url;

fn u(s: &str) -> Url {
    Url::parse(s).unwrap()
}

fn after(t: jiff::Timestamp, d: std::time::Duration) -> jiff::Timestamp {
    t.checked_add(SignedDuration::try_from(d).unwrap()).unwrap()
}

#[tokio::test(flavor = "multi_thread")]
async fn a_queued_job_survives_a_restart_and_a_dead_worker() {
    on_both_backends(|target| async move {
        let now = day(0);
        let store = Store::open(&target).await.unwrap();
        let id = store
            .queue_analysis(&u("https://www.site.test/page"), now, false)
            .await
            .unwrap();
        let row = store.report(&id).await.unwrap().unwrap().row;
        assert_eq!(row.state, ReportState::Queued);
        assert_eq!(row.domain.as_deref(), Some("site.test"));
        store.close().await;

        // Restart: the job is still there; a worker takes it and dies.
        let store = Store::open(&target).await.unwrap();
        let dead = Holder::named("dead");
        let job = store
            .claim_job(&dead, now)
            .await
            .unwrap()
            .expect("the queued job");
        assert_eq!((job.report.clone(), job.attempts), (id.clone(), 1));
        store.set_running(&id).await.unwrap();
        store.close().await;

        let store = Store::open(&target).await.unwrap();
        let alive = Holder::named("alive");
        let soon = after(now, std::time::Duration::from_secs(1));
        assert!(
            store.claim_job(&alive, soon).await.unwrap().is_none(),
            "the lease still runs"
        );
        let later = after(now, JOB_LEASE + std::time::Duration::from_secs(1));
        let again = store
            .claim_job(&alive, later)
            .await
            .unwrap()
            .expect("taken over");
        assert_eq!((again.report.clone(), again.attempts), (id.clone(), 2));
        let body = "User-agent: *\nDisallow: /private\n";
        let a = analysis("https://www.site.test/page", body, later);
        store.finish_report(&id, &a).await.unwrap();
        store.finish_job(&again, &alive).await.unwrap();
        assert_eq!(store.job_count().await.unwrap(), 0);
        let stored = store.report(&id).await.unwrap().unwrap();
        assert_eq!(stored.row.state, ReportState::Done);
        assert_eq!(stored.robots_body.as_deref(), Some(body.as_bytes()));
        assert_eq!(
            stored.report.as_ref(),
            Some(&a),
            "the document is stored whole"
        );
        assert!(stored.row.indexable);
    })
    .await;
}

#[tokio::test(flavor = "multi_thread")]
async fn one_site_is_never_analysed_twice_at_once() {
    on_both_backends(|target| async move {
        let now = day(0);
        let store = Store::open(&target).await.unwrap();
        store
            .queue_analysis(&u("https://a.test/1"), now, false)
            .await
            .unwrap();
        store
            .queue_analysis(&u("https://a.test/2"), now, false)
            .await
            .unwrap();
        store
            .queue_analysis(&u("https://b.test/"), now, false)
            .await
            .unwrap();
        let (w1, w2, w3) = (Holder::named("1"), Holder::named("2"), Holder::named("3"));
        let first = store.claim_job(&w1, now).await.unwrap().unwrap();
        assert_eq!(first.url.as_str(), "https://a.test/1");
        let second = store.claim_job(&w2, now).await.unwrap().unwrap();
        assert_eq!(
            second.url.as_str(),
            "https://b.test/",
            "a.test is busy: skipped"
        );
        assert!(store.claim_job(&w3, now).await.unwrap().is_none());
        store.finish_job(&first, &w1).await.unwrap();
        let third = store.claim_job(&w3, now).await.unwrap().unwrap();
        assert_eq!(third.url.as_str(), "https://a.test/2");
        // Outside the queue (the schedule) the same site lease applies.
        assert!(!store.lease_site(&third.site, &w1, now).await.unwrap());
    })
    .await;
}

#[tokio::test(flavor = "multi_thread")]
async fn pastes_are_never_listed_ranked_or_scheduled() {
    on_both_backends(|target| async move {
        let now = day(0);
        let store = Store::open(&target).await.unwrap();
        let raw = b"User-agent: *\nDisallow: /\xff\n";
        let a = audit::analyze_file(audit::ProvidedFile::whole(raw), Some("https://p.test/x"));
        let id = store.insert_paste(&a, raw, now).await.unwrap();
        let stored = store.report(&id).await.unwrap().unwrap();
        assert!(stored.row.is_paste && !stored.row.indexable);
        assert_eq!(stored.row.domain, None);
        assert_eq!(
            stored.robots_body.as_deref(),
            Some(&raw[..]),
            "bytes as received"
        );
        assert_eq!(store.domain_reports("p.test", 10).await.unwrap().1, 0);
        assert!(store.current_reports().await.unwrap().is_empty());
        let later = after(now, RESULT_LIFETIME * 2);
        assert!(store.next_due(later).await.unwrap().is_none());
    })
    .await;
}

#[tokio::test(flavor = "multi_thread")]
async fn the_ranking_takes_each_urls_newest_report_and_leaves_out_noindex_and_off_ranking() {
    on_both_backends(|target| async move {
        let store = Store::open(&target).await.unwrap();
        done_report(&store, "https://a.test/", day(0), 40).await;
        let newest = done_report(&store, "https://a.test/", day(1), 90).await;
        done_report(&store, "https://b.test/", day(1), 70).await;
        // c.test's page says noindex to everyone: its newest report hides the older one.
        done_report(&store, "https://c.test/", day(0), 80).await;
        let id = store
            .queue_analysis(&u("https://c.test/"), day(2), false)
            .await
            .unwrap();
        let mut noindex = analysis("https://c.test/", "User-agent: *\nAllow: /\n", day(2));
        noindex.page.directives.add_header("noindex");
        store.finish_report(&id, &noindex).await.unwrap();
        // d.test keeps our bot off the page by robots.txt.
        let id = store
            .queue_analysis(&u("https://d.test/p"), day(2), false)
            .await
            .unwrap();
        let blocked = analysis(
            "https://d.test/p",
            "User-agent: RobotsTxtParser\nDisallow: /p\n",
            day(2),
        );
        store.finish_report(&id, &blocked).await.unwrap();
        let picked = |ranking: &Ranking| -> Vec<(String, u8, ReportId)> {
            let mut all: Vec<_> = ranking
                .picks
                .values()
                .flatten()
                .map(|d| (d.domain.clone(), d.score, d.report.clone()))
                .collect();
            all.sort();
            all
        };
        let ranking = rank(&store.current_reports().await.unwrap(), day(3));
        let seen = picked(&ranking);
        assert_eq!(
            seen.iter()
                .map(|(d, s, _)| (d.as_str(), *s))
                .collect::<Vec<_>>(),
            vec![("a.test", 90), ("b.test", 70)]
        );
        assert_eq!(seen[0].2, newest);
        assert_eq!(
            ranking.totals.values().sum::<u64>(),
            4,
            "the totals count every domain analysed, noindex ones too"
        );
        store.remove_domain("b.test", true).await.unwrap();
        done_report(&store, "https://b.test/", day(3), 75).await;
        let ranking = rank(&store.current_reports().await.unwrap(), day(3));
        assert_eq!(picked(&ranking).len(), 1, "b.test is kept off the ranking");
    })
    .await;
}

#[tokio::test(flavor = "multi_thread")]
async fn removing_a_domain_deletes_reports_summaries_and_icon() {
    on_both_backends(|target| async move {
        let store = Store::open(&target).await.unwrap();
        done_report(&store, "https://www.gone.test/a", day(0), 50).await;
        done_report(&store, "https://www.gone.test/a", day(1), 60).await;
        done_report(&store, "https://kept.test/", day(0), 60).await;
        store.retention(day(200), false).await.unwrap();
        assert_eq!(store.summaries("gone.test").await.unwrap().len(), 1);
        store
            .set_icon("gone.test", Some(b"png"), day(1))
            .await
            .unwrap();
        let removed = store.remove_domain("gone.test", false).await.unwrap();
        assert_eq!(
            (removed.reports, removed.summaries, removed.icon),
            (1, 1, true)
        );
        assert_eq!(store.domain_reports("gone.test", 10).await.unwrap().1, 0);
        assert!(store.summaries("gone.test").await.unwrap().is_empty());
        assert!(store.icon("gone.test").await.unwrap().is_none());
        assert!(!store.off_ranking("gone.test").await.unwrap());
        assert_eq!(store.domain_reports("kept.test", 10).await.unwrap().1, 1);
    })
    .await;
}

#[tokio::test(flavor = "multi_thread")]
async fn icons_are_looked_for_at_30_days_or_weekly_while_missing() {
    on_both_backends(|target| async move {
        let store = Store::open(&target).await.unwrap();
        let t = day(0);
        assert!(
            store.icon_due("i.test", t).await.unwrap(),
            "never looked for"
        );
        store.set_icon("i.test", None, t).await.unwrap();
        assert!(!store
            .icon_due(
                "i.test",
                after(t, ICON_RETRY - std::time::Duration::from_secs(1))
            )
            .await
            .unwrap());
        assert!(store
            .icon_due("i.test", after(t, ICON_RETRY))
            .await
            .unwrap());
        store.set_icon("i.test", Some(b"\x89PNG"), t).await.unwrap();
        assert!(!store
            .icon_due("i.test", after(t, ICON_RETRY))
            .await
            .unwrap());
        assert!(store
            .icon_due("i.test", after(t, ICON_REFRESH))
            .await
            .unwrap());
        // A failed look keeps the icon found before.
        store
            .set_icon("i.test", None, after(t, ICON_REFRESH))
            .await
            .unwrap();
        let icon = store.icon("i.test").await.unwrap().unwrap();
        assert_eq!(icon.png, b"\x89PNG");
        assert_eq!(icon.checked_at, after(t, ICON_REFRESH));
    })
    .await;
}

#[tokio::test(flavor = "multi_thread")]
async fn urls_fall_due_when_their_result_expires_unless_the_site_backs_off() {
    on_both_backends(|target| async move {
        let store = Store::open(&target).await.unwrap();
        let t = day(0);
        store
            .add_sites(&[u("https://listed.test/")], t)
            .await
            .unwrap();
        let due = store.next_due(t).await.unwrap().unwrap();
        assert_eq!((due.url.as_str(), due.last), ("https://listed.test/", None));
        done_report(&store, "https://listed.test/", t, 80).await;
        let just_before = after(t, RESULT_LIFETIME - std::time::Duration::from_secs(1));
        assert!(store.next_due(just_before).await.unwrap().is_none());
        let expiry = after(t, RESULT_LIFETIME);
        assert_eq!(store.next_due(expiry).await.unwrap().unwrap().last, Some(t));
        let backoff = Backoff {
            failures: 1,
            refusals: 0,
            until: after(expiry, std::time::Duration::from_secs(3600)),
            last_outcome: service::store::LastOutcome::Failure,
        };
        store.set_backoff(&due.site, &backoff).await.unwrap();
        assert!(store.next_due(expiry).await.unwrap().is_none());
        assert_eq!(
            store.backoff(&due.site).await.unwrap(),
            Some(backoff.clone())
        );
        assert!(store.next_due(backoff.until).await.unwrap().is_some());
        assert_eq!(
            store
                .remove_sites(&[u("https://listed.test/")])
                .await
                .unwrap(),
            1
        );
        assert!(store.sites().await.unwrap().is_empty());
    })
    .await;
}
