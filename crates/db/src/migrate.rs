//! Versioned migrations per schema, run on open and recorded in [`MIGRATIONS_TABLE`].

use sqlx::{Connection, PgPool, SqlitePool};

use crate::error::DbError;

/// The statement that starts a write transaction: on SQLite, `BEGIN IMMEDIATE` takes the write
/// lock at once, so a transaction that reads then writes never fails on lock upgrade.
pub(crate) const SQLITE_BEGIN_WRITE: &str = "BEGIN IMMEDIATE";

/// The table that records which migrations of which schema have run.
pub const MIGRATIONS_TABLE: &str = "db_migrations";

/// One step of a schema, with its SQL for each backend (several statements allowed).
#[derive(Debug)]
pub struct Migration {
    /// Its version: 1, 2, 3, ... in order, never reused.
    pub version: i64,
    /// A short name, recorded with it.
    pub name: &'static str,
    /// The SQL for SQLite.
    pub sqlite: &'static str,
    /// The SQL for PostgreSQL.
    pub postgres: &'static str,
}

/// The migrations of one crate's tables. Several schemas live in one store side by side.
#[derive(Debug)]
pub struct Schema {
    /// The schema's name (`crawl`, `service`, ...), unique per store.
    pub name: &'static str,
    /// Its migrations, versions strictly increasing from 1.
    pub migrations: &'static [Migration],
}

impl Schema {
    /// The newest version this build knows.
    pub fn latest(&self) -> i64 {
        self.migrations.last().map_or(0, |m| m.version)
    }
}

/// The store's own schema: the migrations table is created before anything else; this one
/// adds the named leases.
pub(crate) static DB_SCHEMA: Schema = Schema {
    name: "db",
    migrations: &[
        Migration {
            version: 1,
            name: "named leases",
            sqlite: "CREATE TABLE db_leases (name TEXT PRIMARY KEY, lease_holder TEXT, lease_until INTEGER NOT NULL DEFAULT 0)",
            postgres: "CREATE TABLE db_leases (name TEXT PRIMARY KEY, lease_holder TEXT, lease_until BIGINT NOT NULL DEFAULT 0)",
        },
        Migration {
            version: 2,
            name: "lease holders: the process behind each token",
            sqlite: HOLDERS_V2,
            postgres: HOLDERS_V2,
        },
    ],
};

/// The identity of each registered holder, in typed columns (see `crate::holder`). Lease
/// columns keep the holder's token; a token without a row here (an older build's
/// `host:pid:...` text, a named holder) is never provably dead, so its leases expire.
const HOLDERS_V2: &str = "CREATE TABLE db_holders (token TEXT PRIMARY KEY, machine_id TEXT, \
     boot_id TEXT NOT NULL, pid_namespace BIGINT NOT NULL, pid BIGINT NOT NULL, \
     process_start BIGINT NOT NULL, registered_at BIGINT NOT NULL); \
     CREATE INDEX db_holders_host ON db_holders (boot_id, pid_namespace)";

const CREATE_TABLE: &str = "CREATE TABLE IF NOT EXISTS db_migrations (schema_name TEXT NOT NULL, \
     version BIGINT NOT NULL, name TEXT NOT NULL, applied_at BIGINT NOT NULL, \
     PRIMARY KEY (schema_name, version))";

/// A fixed key for PostgreSQL's advisory lock that serialises migrations across processes.
const PG_MIGRATION_LOCK: i64 = 0x6a69_7474_7962_6f74; // "jittybot"

/// Apply `schema`'s pending migrations inside the caller's transaction (all or nothing). A
/// macro rather than a generic function: the two backends' executors share no simple bound.
macro_rules! apply {
    ($tx:expr, $schema:expr, $sql:ident) => {{
        let schema: &Schema = $schema;
        let current: Option<i64> =
            sqlx::query_scalar("SELECT MAX(version) FROM db_migrations WHERE schema_name = $1")
                .bind(schema.name)
                .fetch_one(&mut *$tx)
                .await
                .map_err(DbError::query("read migration versions"))?;
        let current = current.unwrap_or(0);
        if current > schema.latest() {
            return Err(DbError::NewerSchema {
                schema: schema.name,
                found: current,
                known: schema.latest(),
            });
        }
        for m in schema.migrations.iter().filter(|m| m.version > current) {
            let failed = |source| DbError::Migration {
                schema: schema.name,
                version: m.version,
                name: m.name,
                source,
            };
            sqlx::Executor::execute(&mut *$tx, m.$sql)
                .await
                .map_err(failed)?;
            sqlx::query(
                "INSERT INTO db_migrations (schema_name, version, name, applied_at) \
                 VALUES ($1, $2, $3, $4)",
            )
            .bind(schema.name)
            .bind(m.version)
            .bind(m.name)
            .bind(jiff::Timestamp::now().as_millisecond())
            .execute(&mut *$tx)
            .await
            .map_err(failed)?;
            tracing::info!(
                schema = schema.name,
                version = m.version,
                name = m.name,
                "migrated"
            );
        }
    }};
}

/// The store's own schema, then `schemas`, in order.
fn with_db_schema<'a>(schemas: &[&'a Schema]) -> Vec<&'a Schema> {
    std::iter::once(&DB_SCHEMA)
        .chain(schemas.iter().copied())
        .collect()
}

/// Runs the pending migrations of the store's own schema and of `schemas` on SQLite.
pub(crate) async fn run_sqlite(pool: &SqlitePool, schemas: &[&Schema]) -> Result<(), DbError> {
    let mut conn = pool.acquire().await.map_err(DbError::query("acquire"))?;
    for schema in with_db_schema(schemas) {
        // BEGIN IMMEDIATE: one process at a time reads and applies the versions.
        let mut tx = conn
            .begin_with(SQLITE_BEGIN_WRITE)
            .await
            .map_err(DbError::query("begin migrations"))?;
        sqlx::query(CREATE_TABLE)
            .execute(&mut *tx)
            .await
            .map_err(DbError::query("create migrations table"))?;
        apply!(tx, schema, sqlite);
        tx.commit()
            .await
            .map_err(DbError::query("commit migrations"))?;
    }
    Ok(())
}

/// Runs the pending migrations of the store's own schema and of `schemas` on PostgreSQL.
pub(crate) async fn run_postgres(pool: &PgPool, schemas: &[&Schema]) -> Result<(), DbError> {
    let mut conn = pool.acquire().await.map_err(DbError::query("acquire"))?;
    for schema in with_db_schema(schemas) {
        let mut tx = conn
            .begin()
            .await
            .map_err(DbError::query("begin migrations"))?;
        sqlx::query("SELECT pg_advisory_xact_lock($1)")
            .bind(PG_MIGRATION_LOCK)
            .execute(&mut *tx)
            .await
            .map_err(DbError::query("lock migrations"))?;
        sqlx::query(CREATE_TABLE)
            .execute(&mut *tx)
            .await
            .map_err(DbError::query("create migrations table"))?;
        apply!(tx, schema, postgres);
        tx.commit()
            .await
            .map_err(DbError::query("commit migrations"))?;
    }
    Ok(())
}
