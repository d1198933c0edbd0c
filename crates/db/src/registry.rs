//! The holders' registry (`db_holders`): each process that can name itself records its
//! [`ProcessIdentity`] under its token, so that a process starting later on the same machine
//! can prove it dead and free its leases at once instead of waiting for them to expire.

use std::path::Path;
use std::time::Duration;

use jiff::Timestamp;
use sqlx::Row;

use crate::holder::{HostIdentity, Liveness, ProcessIdentity, PROC_ROOT};
use crate::{millis, Db, DbError, Holder, LeaseTable};

/// How long a holder's row is kept. A process that dies on a machine where no process of the
/// same PID namespace starts again (another container, a machine gone) leaves its row; rows
/// older than this are deleted when a holder registers. A process running longer than this
/// only loses the early release: if it then dies, its leases expire as every other lease.
pub const HOLDER_RETENTION: Duration = Duration::from_secs(30 * 24 * 60 * 60);

/// What [`Db::free_dead_holders`] did.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct FreedLeases {
    /// The tokens of the holders proven dead (their rows are deleted).
    pub holders: Vec<String>,
    /// Leases freed, over every table.
    pub leases: u64,
}

fn to_i64(value: u64) -> Option<i64> {
    i64::try_from(value).ok()
}

impl Db {
    /// Record `holder`'s process identity under its token (once; later calls change
    /// nothing), and delete rows older than [`HOLDER_RETENTION`]. Returns false for a holder
    /// without an identity ([`Holder::named`], or a process that cannot name itself): nothing
    /// is recorded and its leases will only ever expire.
    pub async fn register_holder(&self, holder: &Holder, now: Timestamp) -> Result<bool, DbError> {
        let Some(p) = holder.process() else {
            return Ok(false);
        };
        let (Some(ns), Some(started)) = (to_i64(p.host.pid_namespace), to_i64(p.started)) else {
            return Ok(false);
        };
        let oldest = millis(now)
            .saturating_sub(i64::try_from(HOLDER_RETENTION.as_millis()).unwrap_or(i64::MAX));
        let insert = "INSERT INTO db_holders (token, machine_id, boot_id, pid_namespace, pid, \
                      process_start, registered_at) VALUES ($1, $2, $3, $4, $5, $6, $7) \
                      ON CONFLICT (token) DO NOTHING";
        crate::with_pool!(self, pool => {
            sqlx::query("DELETE FROM db_holders WHERE registered_at < $1")
                .bind(oldest)
                .execute(pool)
                .await
                .map_err(DbError::query("forget old lease holders"))?;
            sqlx::query(insert)
                .bind(holder.as_str())
                .bind(p.host.machine_id.as_deref())
                .bind(&p.host.boot_id)
                .bind(ns)
                .bind(i64::from(p.pid))
                .bind(started)
                .bind(millis(now))
                .execute(pool)
                .await
                .map(drop)
                .map_err(DbError::query("register a lease holder"))
        })?;
        Ok(true)
    }

    /// The holders registered on `me`'s machine, boot and PID namespace that are proven dead
    /// (their process id is free or was reused), read from this process's `/proc`.
    pub async fn dead_holders(&self, me: &Holder) -> Result<Vec<String>, DbError> {
        let Some(mine) = me.process() else {
            return Ok(Vec::new());
        };
        let Some(ns) = to_i64(mine.host.pid_namespace) else {
            return Ok(Vec::new());
        };
        let sql = "SELECT token, machine_id, pid, process_start FROM db_holders \
                   WHERE boot_id = $1 AND pid_namespace = $2";
        let rows = crate::with_pool!(self, pool => sqlx::query(sql)
            .bind(&mine.host.boot_id)
            .bind(ns)
            .fetch_all(pool)
            .await
            .map(|rows| rows.iter().map(|r| {
                let token: String = r.get(0);
                let machine_id: Option<String> = r.get(1);
                let pid: i64 = r.get(2);
                let started: i64 = r.get(3);
                (token, machine_id, pid, started)
            }).collect::<Vec<_>>()))
        .map_err(DbError::query("read lease holders"))?;
        let mut dead = Vec::new();
        for (token, machine_id, pid, started) in rows {
            let (Ok(pid), Ok(started)) = (u32::try_from(pid), u64::try_from(started)) else {
                continue;
            };
            let theirs = ProcessIdentity {
                host: HostIdentity {
                    machine_id,
                    boot_id: mine.host.boot_id.clone(),
                    pid_namespace: mine.host.pid_namespace,
                },
                pid,
                started,
            };
            if token != me.as_str() && theirs.liveness(mine, Path::new(PROC_ROOT)) == Liveness::Dead
            {
                dead.push(token);
            }
        }
        Ok(dead)
    }

    /// Free every lease held by a holder proven dead ([`Db::dead_holders`]) in `tables` and in
    /// the named leases, and forget those holders. Leases of anyone else are left to expire.
    pub async fn free_dead_holders(
        &self,
        me: &Holder,
        tables: &[LeaseTable],
    ) -> Result<FreedLeases, DbError> {
        let holders = self.dead_holders(me).await?;
        self.free_holders(holders, tables).await
    }

    async fn free_holders(
        &self,
        holders: Vec<String>,
        tables: &[LeaseTable],
    ) -> Result<FreedLeases, DbError> {
        let named = LeaseTable {
            table: "db_leases",
            key: "name",
        };
        let mut leases = 0;
        for token in &holders {
            leases += crate::write_tx!(self, tx => {
                let mut freed = 0;
                for t in tables.iter().chain(std::iter::once(&named)) {
                    let sql = format!(
                        "UPDATE {} SET lease_holder = NULL, lease_until = 0 WHERE lease_holder = $1",
                        t.table
                    );
                    freed += sqlx::query(&sql)
                        .bind(token)
                        .execute(&mut *tx)
                        .await
                        .map_err(DbError::query("free a dead holder's leases"))?
                        .rows_affected();
                }
                sqlx::query("DELETE FROM db_holders WHERE token = $1")
                    .bind(token)
                    .execute(&mut *tx)
                    .await
                    .map_err(DbError::query("forget a dead lease holder"))?;
                freed
            });
        }
        Ok(FreedLeases { holders, leases })
    }
}
