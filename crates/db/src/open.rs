//! Opening a store: the `--db` value, the two backends, connection settings.

use std::path::PathBuf;
use std::str::FromStr;
use std::time::Duration;

use sqlx::postgres::{PgConnectOptions, PgPool, PgPoolOptions};
use sqlx::sqlite::{
    SqliteConnectOptions, SqliteJournalMode, SqlitePool, SqlitePoolOptions, SqliteSynchronous,
};

use crate::migrate::{self, Schema, SQLITE_BEGIN_WRITE};
use crate::DbError;

/// How long a SQLite connection waits for another writer before giving up with "busy".
pub const SQLITE_BUSY_TIMEOUT: Duration = Duration::from_secs(30);
/// Connections kept to a SQLite file. Writers are serialised by SQLite anyway (WAL allows
/// readers beside the one writer), so a few suffice.
pub const SQLITE_POOL_SIZE: u32 = 4;
/// Connections kept to a PostgreSQL server by one process.
pub const POSTGRES_POOL_SIZE: u32 = 8;
/// Pages the SQLite write-ahead log may hold before it is copied into the database file
/// (SQLite's default is 1,000, 4 MB). A crawl's group commit dirties hundreds of pages at a
/// time, so at the default every other commit paid a checkpoint that wrote the same hot pages
/// (the claim index, the table's tail) again; 32 MB makes checkpoints rare and each page is
/// copied once per checkpoint. The log is read back on open after a crash: 32 MB is quick.
pub const SQLITE_WAL_CHECKPOINT_PAGES: u32 = 8_192;
/// SQLite's page cache per connection, in KiB: SQLite's own default (2 MB), said explicitly.
/// 8 MB was tried for the crawler: it saved no CPU per page (0.55–0.59 ms either way) and
/// held ~25 MB more at peak, against the crawler's memory target. [`SQLITE_POOL_SIZE`] ×
/// this is the most the caches hold.
pub const SQLITE_CACHE_KIB: u32 = 2 * 1024;

/// Which kind of store.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Backend {
    /// An embedded SQLite file.
    Sqlite,
    /// A PostgreSQL server.
    Postgres,
}

/// Where a store is, as given by `--db`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum DbTarget {
    /// A SQLite file, created on first open.
    Sqlite(PathBuf),
    /// A PostgreSQL URL (`postgres://user@host:port/db?options[search_path]=...`).
    Postgres(String),
}

impl FromStr for DbTarget {
    type Err = DbError;

    /// `postgres://` or `postgresql://` URLs are PostgreSQL; anything else is a SQLite path
    /// (a `sqlite:` prefix is accepted and removed).
    fn from_str(value: &str) -> Result<Self, DbError> {
        let bad = |reason| DbError::BadTarget {
            value: value.to_string(),
            reason,
        };
        if value.trim().is_empty() {
            return Err(bad("empty"));
        }
        if value.chars().any(char::is_control) {
            return Err(bad("contains control characters"));
        }
        let lower = value.to_ascii_lowercase();
        if lower.starts_with("postgres://") || lower.starts_with("postgresql://") {
            PgConnectOptions::from_str(value).map_err(|_| bad("not a valid PostgreSQL URL"))?;
            return Ok(DbTarget::Postgres(value.to_string()));
        }
        if lower.contains("://") {
            return Err(bad(
                "only postgres:// URLs or SQLite file paths are supported",
            ));
        }
        let path = value.strip_prefix("sqlite:").unwrap_or(value);
        Ok(DbTarget::Sqlite(PathBuf::from(path)))
    }
}

impl std::fmt::Display for DbTarget {
    /// The target with any password removed, fit for logs and messages.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            DbTarget::Sqlite(path) => write!(f, "{}", path.display()),
            DbTarget::Postgres(url) => match url::Url::parse(url) {
                Ok(mut parsed) => {
                    if parsed.password().is_some() {
                        // Cannot fail for a URL with a host, which a password implies.
                        let _ = parsed.set_password(Some("***"));
                    }
                    write!(f, "{parsed}")
                }
                Err(_) => write!(f, "postgres://(unparsable URL)"),
            },
        }
    }
}

impl DbTarget {
    /// The backend this target names.
    pub fn backend(&self) -> Backend {
        match self {
            DbTarget::Sqlite(_) => Backend::Sqlite,
            DbTarget::Postgres(_) => Backend::Postgres,
        }
    }
}

/// An open store: a connection pool on one of the two backends.
#[derive(Clone, Debug)]
pub enum Db {
    /// SQLite.
    Sqlite(SqlitePool),
    /// PostgreSQL.
    Postgres(PgPool),
}

impl Db {
    /// Connect to `target` (creating a SQLite file on first use) and bring every schema up to
    /// date. Safe to call from several processes at once: migrations are serialised.
    pub async fn open(target: &DbTarget, schemas: &[&Schema]) -> Result<Db, DbError> {
        let connect = |source| DbError::Connect {
            target: target.to_string(),
            source,
        };
        let db = match target {
            DbTarget::Sqlite(path) => {
                let options = SqliteConnectOptions::new()
                    .filename(path)
                    .create_if_missing(true)
                    .journal_mode(SqliteJournalMode::Wal)
                    // NORMAL in WAL mode: a committed transaction survives a process crash
                    // (kill -9); only an OS crash or power loss may lose the last commits.
                    .synchronous(SqliteSynchronous::Normal)
                    .busy_timeout(SQLITE_BUSY_TIMEOUT)
                    .foreign_keys(true)
                    .pragma("cache_size", format!("-{SQLITE_CACHE_KIB}"))
                    // Statement journals and the temporary b-trees of `IN (SELECT ...)`,
                    // `ORDER BY` and multi-row `VALUES` live in memory, not in files under
                    // /var/tmp: a crawl wrote ~7 such pages per crawled page, each a
                    // `pwrite`. They are as big as one statement's work (a batch), no more.
                    .pragma("temp_store", "memory")
                    .pragma(
                        "wal_autocheckpoint",
                        SQLITE_WAL_CHECKPOINT_PAGES.to_string(),
                    );
                let pool = SqlitePoolOptions::new()
                    .max_connections(SQLITE_POOL_SIZE)
                    // An in-process SQLite connection cannot be lost the way a network one
                    // can: the ping sqlx sends before handing a connection out was a round
                    // trip to the connection's worker thread (two thread wake-ups) for
                    // every statement run on the pool.
                    .test_before_acquire(false)
                    .connect_with(options)
                    .await
                    .map_err(connect)?;
                Db::Sqlite(pool)
            }
            DbTarget::Postgres(url) => {
                let options = PgConnectOptions::from_str(url).map_err(connect)?;
                let pool = PgPoolOptions::new()
                    .max_connections(POSTGRES_POOL_SIZE)
                    .connect_with(options)
                    .await
                    .map_err(connect)?;
                Db::Postgres(pool)
            }
        };
        match &db {
            Db::Sqlite(pool) => migrate::run_sqlite(pool, schemas).await?,
            Db::Postgres(pool) => migrate::run_postgres(pool, schemas).await?,
        }
        Ok(db)
    }

    /// Which backend this is.
    pub fn backend(&self) -> Backend {
        match self {
            Db::Sqlite(_) => Backend::Sqlite,
            Db::Postgres(_) => Backend::Postgres,
        }
    }

    /// Close every connection, waiting for them to be returned.
    pub async fn close(&self) {
        match self {
            Db::Sqlite(pool) => pool.close().await,
            Db::Postgres(pool) => pool.close().await,
        }
    }
}

impl Db {
    /// Begin a write transaction on SQLite (`BEGIN IMMEDIATE`).
    pub async fn sqlite_write(
        pool: &SqlitePool,
    ) -> Result<sqlx::Transaction<'static, sqlx::Sqlite>, DbError> {
        pool.begin_with(SQLITE_BEGIN_WRITE)
            .await
            .map_err(DbError::query("begin write transaction"))
    }
}
