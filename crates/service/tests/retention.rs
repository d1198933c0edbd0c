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
        let view: Vec<(String, u64, u64, u8, f64, u8)> = summaries
            .iter()
            .map(|s| {
                (
                    s.month.to_string(),
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
                ("2026-02".to_owned(), 1, 1, 70, 70.0, 70),
                ("2026-01".to_owned(), 2, 2, 90, 65.0, 40)
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
        // The three domains are one batch (far under FOLD_BATCH_REPORTS): it rolled back
        // whole, summaries and URL hashes included. Every report is there, no summary.
        for domain in ["a.test", "boom.test", "c.test"] {
            assert!(store.summaries(domain).await.unwrap().is_empty(), "{domain}");
            assert_eq!(store.domain_reports(domain, 10).await.unwrap().1, 3, "{domain}");
        }
        // Once the cause is gone, the next pass folds everything exactly once (no URL hash
        // left behind by the failed pass inflates the distinct-URL count).
        let drop_boom = "DROP TRIGGER boom";
        let drop_boom = match store.db() {
            db::Db::Sqlite(_) => drop_boom.to_owned(),
            db::Db::Postgres(_) => format!("{drop_boom} ON service_monthly"),
        };
        db::with_pool!(store.db(), pool => db::sqlx::raw_sql(&drop_boom).execute(pool).await.map(drop))
            .unwrap();
        assert_eq!(store.retention(day(320), false).await.unwrap().folded, 6);
        for domain in ["a.test", "boom.test", "c.test"] {
            let months = store.summaries(domain).await.unwrap();
            assert_eq!(months.len(), 1, "{domain}");
            assert_eq!((months[0].reports, months[0].urls), (2, 1), "{domain}");
            assert_eq!((months[0].best, months[0].lowest), (60, 50), "{domain}");
            assert_eq!(store.domain_reports(domain, 10).await.unwrap().1, 1, "{domain}");
        }
    })
    .await;
}

/// More domains than one transaction folds: every batch is written, the counts add up.
#[tokio::test(flavor = "multi_thread")]
async fn many_domains_fold_across_batches() {
    on_both_backends(|target| async move {
        let store = Store::open(&target).await.unwrap();
        // Two old reports per URL and one new: each domain folds 2 reports (of 2 URLs, in one
        // month); batches close every FOLD_BATCH_REPORTS reports.
        let domains = service::limits::FOLD_BATCH_REPORTS / 2 + 3;
        let mut rows = Vec::new();
        for n in 0..domains {
            for path in ["/", "/b"] {
                let url = format!("https://d{n}.test{path}");
                rows.push((format!("d{n}.test"), url.clone(), day(1), 40));
                rows.push((format!("d{n}.test"), url, day(300), 80));
            }
        }
        insert_done(&store, &rows).await;
        let out = store.retention(day(320), false).await.unwrap();
        assert_eq!(out.folded as usize, domains * 2);
        assert_eq!(out.domains as usize, domains);
        for n in [0, domains / 2, domains - 1] {
            let months = store.summaries(&format!("d{n}.test")).await.unwrap();
            assert_eq!(months.len(), 1);
            assert_eq!((months[0].reports, months[0].urls), (2, 2));
        }
    })
    .await;
}

/// Done reports written straight into the table (domain, URL, time, score), 400 per statement:
/// thousands of rows in a moment.
async fn insert_done(store: &Store, rows: &[(String, String, jiff::Timestamp, i64)]) {
    for chunk in rows.chunks(400) {
        let values: Vec<String> = (0..chunk.len())
            .map(|r| {
                let p = |k: usize| format!("${}", r * 5 + k);
                format!(
                    "({}, {}, {}, FALSE, 'done', {}, {}, TRUE)",
                    p(1),
                    p(2),
                    p(3),
                    p(4),
                    p(5)
                )
            })
            .collect();
        let sql = format!(
            "INSERT INTO service_reports (id, domain, url, is_paste, state, created_at, score, \
             indexable) VALUES {}",
            values.join(", ")
        );
        db::with_pool!(store.db(), pool => {
            let mut query = db::sqlx::query(&sql);
            for (domain, url, at, score) in chunk {
                let id = service::ReportId::random().unwrap();
                query = query.bind(id.to_string()).bind(domain.clone()).bind(url.clone())
                    .bind(at.as_millisecond()).bind(*score);
            }
            query.execute(pool).await.map(drop)
        })
        .unwrap();
    }
}
