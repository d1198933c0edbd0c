//! Retention as of a given time on both backends: folding into monthly summaries, the newest
//! report of each URL kept, pastes and failed analyses deleted, dry runs, repeated passes.

mod common;

use common::{day, done_report};
use db::testing::on_both_backends;
use service::Store;
use url::Url;

#[tokio::test(flavor = "multi_thread")]
async fn old_reports_fold_into_monthly_summaries_and_the_newest_per_url_stays() {
    on_both_backends(|target| async move {
        let store = Store::open(&target).await.unwrap();
        // January: three reports of two URLs; February: one; then a recent one.
        let jan_a1 = done_report(&store, "https://www.f.test/a", day(2), 40).await;
        done_report(&store, "https://www.f.test/a", day(10), 60).await;
        done_report(&store, "https://www.f.test/b", day(20), 90).await;
        done_report(&store, "https://www.f.test/b", day(40), 70).await;
        let recent = done_report(&store, "https://www.f.test/b", day(300), 80).await;
        // a's newest report (day 10) is old but the newest of its URL: kept.
        let raw = b"User-agent: *\n";
        let paste = audit::analyze_file(audit::ProvidedFile::whole(raw), None);
        let old_paste = store.insert_paste(&paste, raw, day(5)).await.unwrap();
        let failed = store
            .queue_analysis(&Url::parse("https://www.f.test/c").unwrap(), day(6), false)
            .await
            .unwrap();
        store.fail_report(&failed, "refused").await.unwrap();

        let as_of = day(320); // cutoff: 6 months earlier, mid-May
        let dry = store.retention(as_of, true).await.unwrap();
        assert_eq!(
            (dry.folded, dry.domains, dry.summaries),
            (3, 1, 2),
            "{dry:?}"
        );
        assert_eq!(
            (dry.kept_newest, dry.pastes_deleted, dry.failed_deleted),
            (1, 1, 1)
        );
        assert!(
            store.report(&jan_a1).await.unwrap().is_some(),
            "a dry run changes nothing"
        );
        assert!(store.summaries("f.test").await.unwrap().is_empty());

        let done = store.retention(as_of, false).await.unwrap();
        assert_eq!(done.folded, 3);
        assert!(store.report(&jan_a1).await.unwrap().is_none());
        assert!(store.report(&old_paste).await.unwrap().is_none());
        assert!(store.report(&failed).await.unwrap().is_none());
        assert!(store.report(&recent).await.unwrap().is_some());
        let summaries = store.summaries("f.test").await.unwrap();
        let view: Vec<(&str, i64, i64, i64, f64, i64)> = summaries
            .iter()
            .map(|s| {
                (
                    s.month.as_str(),
                    s.reports,
                    s.urls,
                    s.best,
                    s.average,
                    s.lowest,
                )
            })
            .collect();
        assert_eq!(
            view,
            vec![
                ("2026-02", 1, 1, 70, 70.0, 70),
                ("2026-01", 2, 2, 90, 65.0, 40)
            ]
        );
        let (rows, total) = store.domain_reports("f.test", 10).await.unwrap();
        assert_eq!(total, 2, "a's newest and b's recent report: {rows:?}");

        // A newer report of a replaces its January one, which is folded next time: the
        // January summary grows, its URL already counted.
        done_report(&store, "https://www.f.test/a", day(310), 50).await;
        let again = store.retention(as_of, false).await.unwrap();
        assert_eq!(again.folded, 1);
        let jan = store.summaries("f.test").await.unwrap().pop().unwrap();
        assert_eq!(
            (jan.reports, jan.urls, jan.best, jan.lowest),
            (3, 2, 90, 40)
        );
        assert_eq!(
            store.retention(as_of, false).await.unwrap().folded,
            0,
            "idempotent"
        );
    })
    .await;
}

/// A trigger that makes writing one domain's summary fail, as a crash would midway.
const SQLITE_BOOM: &str = "CREATE TRIGGER boom BEFORE INSERT ON service_monthly \
     WHEN NEW.domain = 'boom.test' BEGIN SELECT RAISE(ABORT, 'boom'); END";
const POSTGRES_BOOM: &str = "CREATE FUNCTION boom() RETURNS trigger AS $$ BEGIN \
     IF NEW.domain = 'boom.test' THEN RAISE EXCEPTION 'boom'; END IF; RETURN NEW; END $$ \
     LANGUAGE plpgsql; CREATE TRIGGER boom BEFORE INSERT ON service_monthly \
     FOR EACH ROW EXECUTE FUNCTION boom()";

#[tokio::test(flavor = "multi_thread")]
async fn a_failure_midway_leaves_each_domain_either_folded_or_untouched() {
    on_both_backends(|target| async move {
        let store = Store::open(&target).await.unwrap();
        for domain in ["a.test", "boom.test", "c.test"] {
            done_report(&store, &format!("https://{domain}/"), day(1), 50).await;
            done_report(&store, &format!("https://{domain}/"), day(2), 60).await;
            done_report(&store, &format!("https://{domain}/"), day(300), 70).await;
        }
        let boom = match store.db() {
            db::Db::Sqlite(_) => SQLITE_BOOM,
            db::Db::Postgres(_) => POSTGRES_BOOM,
        };
        db::with_pool!(store.db(), pool => db::sqlx::raw_sql(boom).execute(pool).await.map(drop))
            .unwrap();
        assert!(store.retention(day(320), false).await.is_err());
        // a.test (folded before the failure): summary, no old reports.
        assert_eq!(store.summaries("a.test").await.unwrap()[0].reports, 2);
        assert_eq!(store.domain_reports("a.test", 10).await.unwrap().1, 1);
        // boom.test: its transaction rolled back: every report, no summary.
        assert!(store.summaries("boom.test").await.unwrap().is_empty());
        assert_eq!(store.domain_reports("boom.test", 10).await.unwrap().1, 3);
        assert_eq!(
            store.domain_reports("c.test", 10).await.unwrap().1,
            3,
            "not reached"
        );
    })
    .await;
}
