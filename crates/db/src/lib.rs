//! Store plumbing shared by JittyBot's crawler (`crates/crawl`) and RobotsTxtParser's service:
//! one way to open a store, run its versioned migrations and hold leases, on two backends.
//!
//! - [`DbTarget`] parses `--db`: a `postgres://` (or `postgresql://`) URL, else a SQLite file
//!   path (created on first open, WAL journal).
//! - [`Db::open`] connects and runs every [`Schema`]'s pending [`Migration`]s, recording each
//!   in the `db_migrations` table; a store written by a newer build is refused.
//! - Leases: [`Db::claim`] takes unleased (or expired) rows of a table with `FOR UPDATE SKIP
//!   LOCKED` on PostgreSQL and inside a `BEGIN IMMEDIATE` transaction on SQLite; a lease that
//!   is not renewed ([`Db::renew`]) expires, so the work of a dead process is taken over.
//!   [`Db::try_lease`] is the same for one named singleton (a scheduler, maintenance).
//! - Holders: a lease names its [`Holder`] by a token; a process registers its
//!   [`ProcessIdentity`] (machine, boot, PID namespace, process id and start time) with
//!   [`Db::register_holder`], so that a later process on the same machine can prove it dead
//!   and free its leases at once ([`Db::free_dead_holders`]); every other lease expires.
//! - With the `testing` feature, [`testing`] runs one test body against both backends, each
//!   PostgreSQL test in its own fresh schema.
//!
//! Times in stores are integer milliseconds since the Unix epoch ([`millis`]), the same on
//! both backends.

mod error;
pub mod holder;
mod lease;
mod migrate;
mod open;
mod registry;
#[cfg(feature = "testing")]
pub mod testing;

pub use error::DbError;
pub use holder::{Holder, HostIdentity, IdentityError, Liveness, ProcessIdentity};
pub use lease::{Lease, LeaseTable, RELEASE_NAMED_LEASE};
pub use migrate::{Migration, Schema, MIGRATIONS_TABLE};
pub use open::{
    Backend, Db, DbTarget, POSTGRES_POOL_SIZE, SQLITE_BUSY_TIMEOUT, SQLITE_CACHE_KIB,
    SQLITE_POOL_SIZE, SQLITE_WAL_CHECKPOINT_PAGES,
};
pub use registry::{FreedLeases, HOLDER_RETENTION};

/// Re-exported so crates on top name the same sqlx version.
pub use sqlx;

/// Run the same expression on whichever pool `db` holds: `with_pool!(db, pool => expr)`. The
/// expression is compiled once per backend, so query builders infer each backend's types; it
/// must yield the same type in both.
#[macro_export]
macro_rules! with_pool {
    ($db:expr, $pool:ident => $body:expr) => {
        match $db {
            $crate::Db::Sqlite($pool) => $body,
            $crate::Db::Postgres($pool) => $body,
        }
    };
}

/// Run a block inside one write transaction on whichever backend `db` is:
/// `write_tx!(db, tx => { sqlx::query(...).execute(&mut *tx).await...; value })`. SQLite
/// begins with `BEGIN IMMEDIATE` (the write lock at once), PostgreSQL with `BEGIN`. The block
/// is compiled once per backend; `?` inside it leaves the enclosing function and rolls back.
/// Commits after the block and yields its value.
#[macro_export]
macro_rules! write_tx {
    ($db:expr, $tx:ident => $body:block) => {
        match $db {
            $crate::Db::Sqlite(pool) => {
                #[allow(unused_mut)]
                let mut $tx = $crate::Db::sqlite_write(pool).await?;
                let value = $body;
                $tx.commit()
                    .await
                    .map_err($crate::DbError::query("commit"))?;
                value
            }
            $crate::Db::Postgres(pool) => {
                #[allow(unused_mut)]
                let mut $tx = pool
                    .begin()
                    .await
                    .map_err($crate::DbError::query("begin"))?;
                let value = $body;
                $tx.commit()
                    .await
                    .map_err($crate::DbError::query("commit"))?;
                value
            }
        }
    };
}

/// A wall-clock time as stored: milliseconds since the Unix epoch.
pub fn millis(t: jiff::Timestamp) -> i64 {
    t.as_millisecond()
}

/// The inverse of [`millis`]; out-of-range values clamp to jiff's limits.
pub fn from_millis(ms: i64) -> jiff::Timestamp {
    jiff::Timestamp::from_millisecond(ms).unwrap_or(if ms < 0 {
        jiff::Timestamp::MIN
    } else {
        jiff::Timestamp::MAX
    })
}

#[cfg(test)]
mod send_checks {
    fn is_send<T: Send>(_: T) {}

    /// `tokio::spawn` needs these futures to be `Send`; sqlx's executors make that easy to
    /// break (see the migration runner), so the compiler checks it here.
    #[allow(dead_code)]
    fn futures_are_send(db: crate::Db, t: crate::DbTarget, h: crate::Holder) {
        let lease = crate::Lease {
            holder: &h,
            now: jiff::Timestamp::now(),
            ttl: std::time::Duration::ZERO,
        };
        is_send(crate::Db::open(&t, &[]));
        is_send(db.try_lease("x", &lease));
        let table = crate::LeaseTable {
            table: "t",
            key: "k",
        };
        is_send(db.claim(table, "1=1", "k", 1, &lease));
    }
}
