//! The store plumbing on both backends: open, migrations, leases.

use std::time::Duration;

use db::testing::on_both_backends;
use db::{with_pool, Db, DbError, DbTarget, Holder, Lease, LeaseTable, Migration, Schema};
use jiff::Timestamp;

const JOBS_V1_0: Migration = Migration {
    version: 1,
    name: "jobs",
    sqlite: "CREATE TABLE jobs (id INTEGER PRIMARY KEY, ready INTEGER NOT NULL, \
             lease_holder TEXT, lease_until INTEGER NOT NULL DEFAULT 0);",
    postgres: "CREATE TABLE jobs (id BIGINT PRIMARY KEY, ready INTEGER NOT NULL, \
               lease_holder TEXT, lease_until BIGINT NOT NULL DEFAULT 0);",
};
static JOBS_V1: &[Migration] = &[JOBS_V1_0];
static JOBS: Schema = Schema {
    name: "jobs",
    migrations: JOBS_V1,
};
static JOBS_V2: Schema = Schema {
    name: "jobs",
    migrations: &[
        Migration { ..JOBS_V1_0 },
        Migration {
            version: 2,
            name: "note column",
            sqlite: "ALTER TABLE jobs ADD COLUMN note TEXT; UPDATE jobs SET note = 'v2';",
            postgres: "ALTER TABLE jobs ADD COLUMN note TEXT; UPDATE jobs SET note = 'v2';",
        },
    ],
};
const T: LeaseTable = LeaseTable {
    table: "jobs",
    key: "id",
};
const TTL: Duration = Duration::from_secs(60);

async fn with_jobs(target: &DbTarget, n: i64) -> Db {
    let db = Db::open(target, &[&JOBS]).await.unwrap();
    for id in 1..=n {
        with_pool!(&db, pool => sqlx::query("INSERT INTO jobs (id, ready) VALUES ($1, $2)")
            .bind(id)
            .bind(i32::from(id % 2 == 1))
            .execute(pool)
            .await
            .map(drop))
        .unwrap();
    }
    db
}

/// The terms of a [`TTL`] lease taken by `holder` at `now`.
fn lease(holder: &Holder, now: Timestamp) -> Lease<'_> {
    Lease {
        holder,
        now,
        ttl: TTL,
    }
}

fn t0() -> Timestamp {
    Timestamp::from_second(1_800_000_000).unwrap()
}

#[test]
fn db_target_parses_both_forms_and_hides_passwords() {
    let pg: DbTarget = "postgres://u:secret@127.0.0.1:5432/test".parse().unwrap();
    assert_eq!(pg.backend(), db::Backend::Postgres);
    assert!(!pg.to_string().contains("secret"), "{pg}");
    let file: DbTarget = "crawl.sqlite".parse().unwrap();
    assert_eq!(file, DbTarget::Sqlite("crawl.sqlite".into()));
    assert!(matches!(
        "mysql://h/db".parse::<DbTarget>(),
        Err(DbError::BadTarget { .. })
    ));
    assert!(matches!(
        "".parse::<DbTarget>(),
        Err(DbError::BadTarget { .. })
    ));
}

#[tokio::test]
async fn sqlite_file_is_created_in_wal_mode() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("new.sqlite");
    let db = Db::open(&DbTarget::Sqlite(path.clone()), &[&JOBS])
        .await
        .unwrap();
    assert!(path.exists());
    let Db::Sqlite(pool) = &db else {
        unreachable!()
    };
    let mode: String = sqlx::query_scalar("PRAGMA journal_mode")
        .fetch_one(pool)
        .await
        .unwrap();
    assert_eq!(mode, "wal");
}

#[tokio::test]
async fn migrations_run_once_in_order_and_a_newer_store_is_refused() {
    on_both_backends(|target| async move {
        let db = with_jobs(&target, 3).await;
        db.close().await;
        // Reopening with the same schema runs nothing again; v2 runs once on the kept rows.
        let db = Db::open(&target, &[&JOBS]).await.unwrap();
        db.close().await;
        let db = Db::open(&target, &[&JOBS_V2]).await.unwrap();
        let notes: Vec<String> = with_pool!(&db, pool =>
            sqlx::query_scalar("SELECT note FROM jobs ORDER BY id").fetch_all(pool).await)
        .unwrap();
        assert_eq!(notes, ["v2", "v2", "v2"]);
        let versions: Vec<i64> = with_pool!(&db, pool => sqlx::query_scalar(
            "SELECT version FROM db_migrations WHERE schema_name = 'jobs' ORDER BY version")
            .fetch_all(pool).await)
        .unwrap();
        assert_eq!(versions, [1, 2]);
        db.close().await;
        // An older build must not write into a store it does not understand.
        let err = Db::open(&target, &[&JOBS]).await.unwrap_err();
        assert!(
            matches!(
                err,
                DbError::NewerSchema {
                    found: 2,
                    known: 1,
                    ..
                }
            ),
            "{err}"
        );
    })
    .await;
}

#[tokio::test]
async fn a_failing_migration_leaves_the_previous_version() {
    static BAD: Schema = Schema {
        name: "jobs",
        migrations: &[
            Migration { ..JOBS_V1_0 },
            Migration {
                version: 2,
                name: "broken",
                sqlite: "ALTER TABLE jobs ADD COLUMN x TEXT; SELECT * FROM no_such_table;",
                postgres: "ALTER TABLE jobs ADD COLUMN x TEXT; SELECT * FROM no_such_table;",
            },
        ],
    };
    on_both_backends(|target| async move {
        with_jobs(&target, 1).await.close().await;
        let err = Db::open(&target, &[&BAD]).await.unwrap_err();
        assert!(
            matches!(err, DbError::Migration { version: 2, .. }),
            "{err}"
        );
        // The half-applied step was rolled back: v2 can still run with a fixed migration.
        let db = Db::open(&target, &[&JOBS_V2]).await.unwrap();
        let n: i64 = with_pool!(&db, pool => sqlx::query_scalar(
            "SELECT COUNT(*) FROM jobs WHERE note = 'v2'").fetch_one(pool).await)
        .unwrap();
        assert_eq!(n, 1);
    })
    .await;
}

#[tokio::test]
async fn claims_are_exclusive_and_expire_to_other_holders() {
    on_both_backends(|target| async move {
        let db = with_jobs(&target, 10).await;
        let (a, b) = (Holder::named("a"), Holder::named("b"));
        let got_a = db
            .claim(T, "ready = 1", "id", 3, &lease(&a, t0()))
            .await
            .unwrap();
        let got_b = db
            .claim(T, "ready = 1", "id", 10, &lease(&b, t0()))
            .await
            .unwrap();
        let mut sorted_a = got_a.clone();
        sorted_a.sort();
        assert_eq!(sorted_a, [1, 3, 5]);
        let mut sorted_b = got_b.clone();
        sorted_b.sort();
        assert_eq!(sorted_b, [7, 9], "only free, ready rows");
        // a renews in time; b does not and its rows pass to a after the lease runs out.
        let later = t0() + jiff::SignedDuration::from_secs(45);
        assert_eq!(
            db.renew(T, &got_a, &lease(&a, later)).await.unwrap().len(),
            3
        );
        let expired = t0() + jiff::SignedDuration::from_secs(61);
        let mut taken = db
            .claim(T, "ready = 1", "id", 10, &lease(&a, expired))
            .await
            .unwrap();
        taken.sort();
        assert_eq!(taken, [7, 9]);
        assert!(
            db.renew(T, &got_b, &lease(&b, expired))
                .await
                .unwrap()
                .is_empty(),
            "b lost them"
        );
        // A clean release frees rows at once.
        db.release(T, &[7], &a).await.unwrap();
        assert_eq!(
            db.claim(T, "ready = 1", "id", 10, &lease(&b, expired))
                .await
                .unwrap(),
            [7]
        );
    })
    .await;
}

#[tokio::test]
async fn concurrent_claimers_never_share_a_row() {
    on_both_backends(|target| async move {
        let db = with_jobs(&target, 200).await;
        let mut tasks = Vec::new();
        for i in 0..4 {
            let db = db.clone();
            tasks.push(tokio::spawn(async move {
                let me = Holder::named(format!("w{i}"));
                let mut mine = Vec::new();
                loop {
                    let got = db
                        .claim(T, "1 = 1", "id", 7, &lease(&me, t0()))
                        .await
                        .unwrap();
                    if got.is_empty() {
                        return mine;
                    }
                    mine.extend(got);
                }
            }));
        }
        let mut all = Vec::new();
        for t in tasks {
            all.extend(t.await.unwrap());
        }
        all.sort();
        assert_eq!(all, (1..=200).collect::<Vec<i64>>());
    })
    .await;
}

#[tokio::test]
async fn named_lease_has_one_holder_until_it_expires() {
    on_both_backends(|target| async move {
        let db = Db::open(&target, &[]).await.unwrap();
        let (a, b) = (Holder::named("a"), Holder::named("b"));
        assert!(db.try_lease("scheduler", &lease(&a, t0())).await.unwrap());
        assert!(!db.try_lease("scheduler", &lease(&b, t0())).await.unwrap());
        assert!(
            db.try_lease("scheduler", &lease(&a, t0())).await.unwrap(),
            "renewal"
        );
        let expired = t0() + jiff::SignedDuration::from_secs(61);
        assert!(
            db.try_lease("scheduler", &lease(&b, expired))
                .await
                .unwrap(),
            "taken over"
        );
        db.release_lease("scheduler", &b).await.unwrap();
        assert!(db
            .try_lease("scheduler", &lease(&a, expired))
            .await
            .unwrap());
    })
    .await;
}
