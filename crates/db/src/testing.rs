//! Run one test body against both backends (feature `testing`).
//!
//! SQLite: a fresh file in a temporary directory. PostgreSQL: a fresh schema (`jt_test_...`) in
//! the database at [`postgres_url`], reached through `options[search_path]` in the URL, so the
//! test's store sees only its own tables; the schema is dropped afterwards, also when the body
//! panics. PostgreSQL is expected to run (CI starts it); set `JITTYBOT_TEST_POSTGRES=skip` to
//! run only the SQLite half on a machine without it.

use std::future::Future;
use std::path::PathBuf;

use crate::{Backend, DbTarget};

/// The server used by PostgreSQL tests: `JITTYBOT_TEST_POSTGRES_URL`, else
/// `postgres://postgres@127.0.0.1:5432/test`.
pub fn postgres_url() -> String {
    std::env::var("JITTYBOT_TEST_POSTGRES_URL")
        .unwrap_or_else(|_| "postgres://postgres@127.0.0.1:5432/test".to_string())
}

/// Whether PostgreSQL tests are switched off by `JITTYBOT_TEST_POSTGRES=skip`.
pub fn postgres_skipped() -> bool {
    std::env::var("JITTYBOT_TEST_POSTGRES").is_ok_and(|v| v == "skip")
}

/// A fresh, empty store for one test. Call [`TestDb::cleanup`] when done (the
/// [`on_both_backends`] runner does).
#[derive(Debug)]
pub struct TestDb {
    /// The `--db` target of this store (give it to a child process as is).
    pub target: DbTarget,
    schema: Option<String>,
    _dir: Option<tempfile::TempDir>,
}

impl TestDb {
    /// A fresh store of the given backend.
    pub async fn new(backend: Backend) -> TestDb {
        match backend {
            Backend::Sqlite => {
                let dir = tempfile::tempdir().expect("create a temporary directory");
                let path: PathBuf = dir.path().join("test.sqlite");
                TestDb {
                    target: DbTarget::Sqlite(path),
                    schema: None,
                    _dir: Some(dir),
                }
            }
            Backend::Postgres => {
                static N: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
                let n = N.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                let schema = format!(
                    "jt_test_{}_{}_{:x}",
                    std::process::id(),
                    n,
                    jiff::Timestamp::now().as_microsecond()
                );
                admin(&format!("CREATE SCHEMA {schema}")).await;
                let base = postgres_url();
                let sep = if base.contains('?') { '&' } else { '?' };
                TestDb {
                    target: DbTarget::Postgres(format!("{base}{sep}options[search_path]={schema}")),
                    schema: Some(schema),
                    _dir: None,
                }
            }
        }
    }

    /// Remove the store (drop the PostgreSQL schema; the SQLite directory goes with `self`).
    pub async fn cleanup(self) {
        if let Some(schema) = &self.schema {
            admin(&format!("DROP SCHEMA IF EXISTS {schema} CASCADE")).await;
        }
    }
}

async fn admin(sql: &str) {
    use sqlx::Connection;
    let url = postgres_url();
    let mut conn = sqlx::PgConnection::connect(&url).await.unwrap_or_else(|e| {
        panic!(
            "PostgreSQL is not reachable at {url}: {e}. Start it (.ci/run does), point \
             JITTYBOT_TEST_POSTGRES_URL at one, or set JITTYBOT_TEST_POSTGRES=skip"
        )
    });
    sqlx::raw_sql(sql)
        .execute(&mut conn)
        .await
        .unwrap_or_else(|e| panic!("{sql}: {e}"));
    let _ = conn.close().await;
}

/// Run `body` once with a fresh SQLite store and once with a fresh PostgreSQL schema (unless
/// skipped), cleaning up after each, then re-raise any panic of the body.
pub async fn on_both_backends<F, Fut>(body: F)
where
    F: Fn(DbTarget) -> Fut,
    Fut: Future<Output = ()> + Send + 'static,
{
    for backend in [Backend::Sqlite, Backend::Postgres] {
        if backend == Backend::Postgres && postgres_skipped() {
            eprintln!("JITTYBOT_TEST_POSTGRES=skip: the PostgreSQL half of this test did not run");
            continue;
        }
        let db = TestDb::new(backend).await;
        let outcome = tokio::spawn(body(db.target.clone())).await;
        db.cleanup().await;
        if let Err(e) = outcome {
            match e.try_into_panic() {
                Ok(panic) => {
                    eprintln!("the {backend:?} half of this test failed");
                    std::panic::resume_unwind(panic)
                }
                Err(e) => panic!("the {backend:?} half of this test was cancelled: {e}"),
            }
        }
    }
}
