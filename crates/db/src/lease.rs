//! Leases: who works on which row (or named singleton) until when.
//!
//! A leasable table has a BIGINT key column and two columns `lease_holder TEXT` (NULL when
//! free) and `lease_until BIGINT NOT NULL` (milliseconds, see [`crate::millis`]). A row is free
//! when it has no holder or its lease has expired: a process that dies stops renewing, and its
//! rows are claimed by the others once `lease_until` passes.
//!
//! Who holds a lease is a [`Holder`]'s token; a process that can prove a holder dead frees its
//! leases early ([`Db::free_dead_holders`]).
//!
//! Lease times come from the caller's clock. Processes on several machines must keep their
//! clocks within a small fraction of the lease length (NTP does).

use std::time::Duration;

use jiff::Timestamp;

use crate::{millis, Db, DbError, Holder};

/// A table whose rows can be leased.
#[derive(Clone, Copy, Debug)]
pub struct LeaseTable {
    /// The table name (a constant of the calling crate, never input).
    pub table: &'static str,
    /// Its BIGINT key column.
    pub key: &'static str,
}

/// The terms of a lease being taken or renewed: by whom, as of when, for how long.
#[derive(Clone, Copy, Debug)]
pub struct Lease<'a> {
    /// Who takes it.
    pub holder: &'a Holder,
    /// The holder's current wall-clock time.
    pub now: Timestamp,
    /// How long it lasts unless renewed.
    pub ttl: Duration,
}

impl Lease<'_> {
    fn until(&self) -> i64 {
        millis(self.now).saturating_add(i64::try_from(self.ttl.as_millis()).unwrap_or(i64::MAX))
    }
}

fn key_list(keys: &[i64]) -> String {
    // Keys are integers: formatting them into the statement cannot inject anything, and it
    // keeps one statement shape for both backends whatever the number of keys.
    keys.iter()
        .map(i64::to_string)
        .collect::<Vec<_>>()
        .join(",")
}

impl Db {
    /// Claim up to `limit` free rows of `t` for which `ready` holds, in `order`, leasing them to
    /// `lease.holder` until `now + ttl`; returns their keys. `ready` and `order` are SQL fragments
    /// written by the calling crate (never input); `ready` may use `$4` for `now` (ms).
    ///
    /// PostgreSQL: `... FOR UPDATE SKIP LOCKED`, so concurrent claimers never block on or take
    /// the same rows. SQLite: one `BEGIN IMMEDIATE` transaction, which serialises claimers.
    pub async fn claim(
        &self,
        t: LeaseTable,
        ready: &str,
        order: &str,
        limit: u32,
        lease: &Lease<'_>,
    ) -> Result<Vec<i64>, DbError> {
        let (holder, now) = (lease.holder, lease.now);
        let (table, key) = (t.table, t.key);
        let lock = match self {
            Db::Postgres(_) => " FOR UPDATE SKIP LOCKED",
            Db::Sqlite(_) => "",
        };
        // Not kept as a prepared statement (`persistent(false)`): `ready` may hold a list of
        // ids that differs on every call, and each distinct text would stay cached per
        // connection.
        let sql = format!(
            "UPDATE {table} SET lease_holder = $1, lease_until = $2 WHERE {key} IN \
             (SELECT {key} FROM {table} WHERE (lease_holder IS NULL OR lease_until <= $4) \
             AND ({ready}) ORDER BY {order} LIMIT $3{lock}) RETURNING {key}"
        );
        let context = DbError::query("claim leases");
        match self {
            Db::Sqlite(pool) => {
                let mut tx = Db::sqlite_write(pool).await?;
                let keys = sqlx::query_scalar(&sql)
                    .persistent(false)
                    .bind(holder.as_str())
                    .bind(lease.until())
                    .bind(i64::from(limit))
                    .bind(millis(now))
                    .fetch_all(&mut *tx)
                    .await
                    .map_err(context)?;
                tx.commit().await.map_err(DbError::query("commit claim"))?;
                Ok(keys)
            }
            Db::Postgres(pool) => sqlx::query_scalar(&sql)
                .persistent(false)
                .bind(holder.as_str())
                .bind(lease.until())
                .bind(i64::from(limit))
                .bind(millis(now))
                .fetch_all(pool)
                .await
                .map_err(context),
        }
    }

    /// Extend `holder`'s leases on `keys` to `now + ttl`; returns the keys still held (a lease
    /// that expired and was taken by another holder is lost and not returned).
    pub async fn renew(
        &self,
        t: LeaseTable,
        keys: &[i64],
        lease: &Lease<'_>,
    ) -> Result<Vec<i64>, DbError> {
        let holder = lease.holder;
        if keys.is_empty() {
            return Ok(Vec::new());
        }
        let sql = format!(
            "UPDATE {} SET lease_until = $1 WHERE lease_holder = $2 AND {} IN ({}) RETURNING {}",
            t.table,
            t.key,
            key_list(keys),
            t.key
        );
        let (u, h) = (lease.until(), holder.as_str());
        crate::with_pool!(self, pool => sqlx::query_scalar(&sql).persistent(false).bind(u).bind(h).fetch_all(pool).await)
        .map_err(DbError::query("renew leases"))
    }

    /// Give up `holder`'s leases on `keys` at once (a clean stop), so others need not wait for
    /// them to expire.
    pub async fn release(
        &self,
        t: LeaseTable,
        keys: &[i64],
        holder: &Holder,
    ) -> Result<(), DbError> {
        if keys.is_empty() {
            return Ok(());
        }
        let sql = format!(
            "UPDATE {} SET lease_holder = NULL, lease_until = 0 WHERE lease_holder = $1 AND {} IN ({})",
            t.table,
            t.key,
            key_list(keys)
        );
        crate::with_pool!(self, pool => sqlx::query(&sql).persistent(false).bind(holder.as_str()).execute(pool).await.map(drop))
        .map_err(DbError::query("release leases"))
    }

    /// Take or renew the named singleton lease `name` (the scheduler, maintenance): true when
    /// `holder` has it until `now + ttl`, false when another holder's lease is still running.
    pub async fn try_lease(&self, name: &str, lease: &Lease<'_>) -> Result<bool, DbError> {
        let (holder, now) = (lease.holder, lease.now);
        let sql = "INSERT INTO db_leases (name, lease_holder, lease_until) VALUES ($1, $2, $3) \
                   ON CONFLICT (name) DO UPDATE SET lease_holder = excluded.lease_holder, \
                   lease_until = excluded.lease_until \
                   WHERE db_leases.lease_holder = excluded.lease_holder \
                   OR db_leases.lease_holder IS NULL OR db_leases.lease_until <= $4";
        let done = crate::with_pool!(self, pool => sqlx::query(sql)
            .bind(name)
            .bind(holder.as_str())
            .bind(lease.until())
            .bind(millis(now))
            .execute(pool)
            .await
            .map(|r| r.rows_affected()))
        .map_err(DbError::query("take named lease"))?;
        Ok(done == 1)
    }

    /// Give up the named lease if `holder` has it.
    pub async fn release_lease(&self, name: &str, holder: &Holder) -> Result<(), DbError> {
        crate::with_pool!(self, pool => sqlx::query(RELEASE_NAMED_LEASE).bind(name).bind(holder.as_str()).execute(pool).await.map(drop))
        .map_err(DbError::query("release named lease"))
    }
}

/// The statement of [`crate::Db::release_lease`]: binds the lease's name (`$1`) and its
/// holder (`$2`, [`Holder::as_str`]). Public so that a store can give a named lease back
/// inside a transaction of its own, with the write the lease guarded (one commit, not two).
pub const RELEASE_NAMED_LEASE: &str = "UPDATE db_leases SET lease_holder = NULL, lease_until = 0 \
     WHERE name = $1 AND lease_holder = $2";
