//! Sites, hosts and origins.

use std::time::Duration;

use db::{from_millis, millis, with_pool, write_tx, DbError, Holder, Lease, LeaseTable};
use jiff::Timestamp;
use sqlx::Row;

use super::{HostId, OriginId, SiteId, Store};
use crate::origins::OriginName;

const ORIGINS: LeaseTable = LeaseTable {
    table: "crawl_origins",
    key: "id",
};

/// Where a host belongs.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HostInfo {
    /// The host's row.
    pub host_id: HostId,
    /// Its origin's row.
    pub origin_id: OriginId,
    /// Its site's row.
    pub site_id: SiteId,
    /// Whether HTTPS works on it (`None`: not tried yet).
    pub https: Option<bool>,
    /// Its `Crawl-delay` for JittyBot, when it has one.
    pub crawl_delay: Option<Duration>,
}

/// A host's origin and stored grouping evidence:
/// `(host, origin, addresses, tls_sha256, backends)`.
pub type HostEvidence = (
    String,
    String,
    Option<String>,
    Option<String>,
    Option<String>,
);

/// An origin's stored pacing state.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct OriginRow {
    /// Its row.
    pub id: OriginId,
    /// Its name.
    pub name: OriginName,
    /// The minimum gap between two request starts.
    pub gap: Duration,
    /// When its next request may start (the pace holds across restarts and processes).
    pub next_start: Timestamp,
    /// Failures in a row.
    pub failures: u32,
    /// Paused until a probe succeeds.
    pub paused: bool,
    /// The fetch pacer's exported state for this origin (JSON), when saved.
    pub pacer_state: Option<String>,
}

/// How a complete pacing state ([`fetch::OriginSnapshot::complete`]) reads in its stored
/// JSON, and how it reads once the origin is claimed again.
const COMPLETE: &str = r#""complete":true"#;
/// See [`COMPLETE`].
const INCOMPLETE: &str = r#""complete":false"#;

const ORIGIN_COLUMNS: &str = "id, name, gap_ms, next_start, failures, paused, pacer_state";

fn origin_row<R: Row>(row: &R) -> OriginRow
where
    for<'r> i64: sqlx::Decode<'r, R::Database> + sqlx::Type<R::Database>,
    for<'r> i32: sqlx::Decode<'r, R::Database> + sqlx::Type<R::Database>,
    for<'r> i16: sqlx::Decode<'r, R::Database> + sqlx::Type<R::Database>,
    for<'r> String: sqlx::Decode<'r, R::Database> + sqlx::Type<R::Database>,
    for<'r> Option<String>: sqlx::Decode<'r, R::Database> + sqlx::Type<R::Database>,
    usize: sqlx::ColumnIndex<R>,
{
    OriginRow {
        id: row.get(0),
        name: OriginName(row.get(1)),
        gap: Duration::from_millis(u64::try_from(row.get::<i64, _>(2)).unwrap_or(0)),
        next_start: from_millis(row.get(3)),
        failures: u32::try_from(row.get::<i32, _>(4)).unwrap_or(0),
        paused: row.get::<i16, _>(5) != 0,
        pacer_state: row.get(6),
    }
}

/// The most `merged_into` links followed from one origin. Merges point every origin merged
/// into another at the one it became, so chains stay one link long; the bound only stops a
/// corrupt store from looping.
pub const MAX_MERGE_CHAIN: usize = 64;

/// The origin `$id` became through merges (itself when it was never merged), read inside the
/// transaction `$tx` (a macro: the body compiles once per backend, as in `write_tx!`).
macro_rules! live_origin {
    ($tx:ident, $id:expr) => {{
        let mut id: OriginId = $id;
        for _ in 0..MAX_MERGE_CHAIN {
            let next: Option<OriginId> =
                sqlx::query_scalar("SELECT merged_into FROM crawl_origins WHERE id = $1")
                    .bind(id)
                    .fetch_one(&mut *$tx)
                    .await
                    .map_err(DbError::query("follow a merged origin"))?;
            match next {
                Some(next) if next != id => id = next,
                _ => break,
            }
        }
        id
    }};
}

impl Store {
    /// The site row of `domain`, created if new; `seed` marks it as a site the crawl covers.
    pub async fn ensure_site(&self, domain: &str, seed: bool) -> Result<SiteId, DbError> {
        let sql = "INSERT INTO crawl_sites (domain, seed) VALUES ($1, $2) ON CONFLICT (domain) \
                   DO UPDATE SET seed = CASE WHEN excluded.seed = 1 THEN 1 ELSE crawl_sites.seed END \
                   RETURNING id";
        with_pool!(&self.db, pool => sqlx::query_scalar(sql)
            .bind(domain)
            .bind(i16::from(seed))
            .fetch_one(pool)
            .await)
        .map_err(DbError::query("ensure site"))
    }

    /// The domains of the crawl's seed sites.
    pub async fn seed_sites(&self) -> Result<Vec<String>, DbError> {
        let sql = "SELECT domain FROM crawl_sites WHERE seed = 1 ORDER BY domain";
        with_pool!(&self.db, pool => sqlx::query_scalar(sql).fetch_all(pool).await)
            .map_err(DbError::query("seed sites"))
    }

    /// The host `name`, created if new in `site_id` and in the origin `origin` (created if new;
    /// an origin that was merged is followed to the one it became).
    pub async fn ensure_host(
        &self,
        name: &str,
        origin: &OriginName,
        site_id: SiteId,
    ) -> Result<HostInfo, DbError> {
        self.ensure_host_at(name, origin, site_id, None).await
    }

    /// [`Store::ensure_host`], with the host's resolved addresses (space-separated) stored in
    /// the same transaction: another process that looks for hosts at an address
    /// ([`Store::hosts_at`]) sees the host only together with its addresses, never placed
    /// but not yet locatable (it would then put a host of the same address in an origin of
    /// its own, and two processes would pace one server as two origins).
    pub async fn ensure_host_at(
        &self,
        name: &str,
        origin: &OriginName,
        site_id: SiteId,
        addresses: Option<&str>,
    ) -> Result<HostInfo, DbError> {
        if let Some(info) = self.host(name).await? {
            return Ok(info);
        }
        write_tx!(&self.db, tx => {
            sqlx::query("INSERT INTO crawl_origins (name) VALUES ($1) ON CONFLICT (name) DO NOTHING")
                .bind(&origin.0)
                .execute(&mut *tx)
                .await
                .map_err(DbError::query("insert origin"))?;
            let (id, merged): (OriginId, Option<OriginId>) =
                sqlx::query_as("SELECT id, merged_into FROM crawl_origins WHERE name = $1")
                    .bind(&origin.0)
                    .fetch_one(&mut *tx)
                    .await
                    .map_err(DbError::query("read origin"))?;
            sqlx::query(
                "INSERT INTO crawl_hosts (name, origin_id, site_id) VALUES ($1, $2, $3) \
                 ON CONFLICT (name) DO NOTHING",
            )
            .bind(name)
            .bind(merged.unwrap_or(id))
            .bind(site_id)
            .execute(&mut *tx)
            .await
            .map_err(DbError::query("insert host"))?;
            if let Some(list) = addresses {
                sqlx::query(
                    "UPDATE crawl_hosts SET addresses = $1 WHERE name = $2 AND addresses IS NULL",
                )
                .bind(list)
                .bind(name)
                .execute(&mut *tx)
                .await
                .map_err(DbError::query("set host addresses"))?;
            }
        });
        self.host(name).await?.ok_or(DbError::Query {
            context: "host vanished after insert",
            source: sqlx::Error::RowNotFound,
        })
    }

    /// A known host.
    pub async fn host(&self, name: &str) -> Result<Option<HostInfo>, DbError> {
        let sql =
            "SELECT id, origin_id, site_id, https, crawl_delay_ms FROM crawl_hosts WHERE name = $1";
        type Row = (HostId, OriginId, SiteId, Option<i16>, Option<i64>);
        let row: Option<Row> =
            with_pool!(&self.db, pool => sqlx::query_as(sql).bind(name).fetch_optional(pool).await)
                .map_err(DbError::query("read host"))?;
        Ok(
            row.map(|(host_id, origin_id, site_id, https, delay)| HostInfo {
                host_id,
                origin_id,
                site_id,
                https: https.map(|h| h != 0),
                crawl_delay: delay
                    .and_then(|d| u64::try_from(d).ok())
                    .map(Duration::from_millis),
            }),
        )
    }

    /// Remember whether HTTPS works on a host.
    pub async fn set_host_https(&self, host_id: HostId, works: bool) -> Result<(), DbError> {
        let sql = "UPDATE crawl_hosts SET https = $1 WHERE id = $2";
        with_pool!(&self.db, pool => sqlx::query(sql).bind(i16::from(works)).bind(host_id).execute(pool).await.map(drop))
            .map_err(DbError::query("set host https"))
    }

    /// Remember a host's `Crawl-delay` (or its absence).
    pub async fn set_crawl_delay(
        &self,
        host_id: HostId,
        delay: Option<Duration>,
    ) -> Result<(), DbError> {
        let ms = delay.map(|d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX));
        let sql = "UPDATE crawl_hosts SET crawl_delay_ms = $1 WHERE id = $2";
        with_pool!(&self.db, pool => sqlx::query(sql).bind(ms).bind(host_id).execute(pool).await.map(drop))
            .map_err(DbError::query("set crawl delay"))
    }

    /// Record the grouping evidence seen for a host (addresses, TLS leaf SHA-256 in hex,
    /// backend ids), so every process can rebuild the same origin model.
    pub async fn set_host_evidence(
        &self,
        host_id: HostId,
        addresses: Option<&str>,
        tls_sha256: Option<&str>,
        backends: Option<&str>,
    ) -> Result<(), DbError> {
        let sql = "UPDATE crawl_hosts SET addresses = COALESCE($1, addresses), \
                   tls_sha256 = COALESCE($2, tls_sha256), backends = COALESCE($3, backends) WHERE id = $4";
        with_pool!(&self.db, pool => sqlx::query(sql)
            .bind(addresses)
            .bind(tls_sha256)
            .bind(backends)
            .bind(host_id)
            .execute(pool)
            .await
            .map(drop))
        .map_err(DbError::query("set host evidence"))
    }

    /// Merge origin `absorbed` into `into` (both by name, `into` created if new): its hosts and
    /// URLs move, and `into` keeps the stricter pace and the longer back-off (the longer gap,
    /// the later next start, the more failures, paused if either was). `absorbed` is marked
    /// merged and its lease cleared. Returns the id of the origin both now are.
    ///
    /// Either name may have been merged already (by this process or another): both are
    /// followed to the origin they became, so merges never form a cycle and never revive a
    /// merged origin. A lease of `absorbed` held by another process (not `merging`) that
    /// still runs passes to `into` when `into` is free: that process may still be working
    /// URLs it claimed until it finds its lease gone, so no process may take them over under
    /// `into` before that lease ends. (The merging process's own leases need no such care:
    /// its pacer already paces both under the merged name.)
    pub async fn merge_origins(
        &self,
        absorbed: &OriginName,
        into: &OriginName,
        merging: &Holder,
    ) -> Result<OriginId, DbError> {
        let now = millis(Timestamp::now());
        let id = write_tx!(&self.db, tx => {
            sqlx::query("INSERT INTO crawl_origins (name) VALUES ($1) ON CONFLICT (name) DO NOTHING")
                .bind(&into.0)
                .execute(&mut *tx)
                .await
                .map_err(DbError::query("insert origin"))?;
            let into_id: OriginId = sqlx::query_scalar("SELECT id FROM crawl_origins WHERE name = $1")
                .bind(&into.0)
                .fetch_one(&mut *tx)
                .await
                .map_err(DbError::query("read origin"))?;
            let into_id = live_origin!(tx, into_id);
            let from: Option<OriginId> =
                sqlx::query_scalar("SELECT id FROM crawl_origins WHERE name = $1")
                    .bind(&absorbed.0)
                    .fetch_optional(&mut *tx)
                    .await
                    .map_err(DbError::query("read origin"))?;
            let from = match from {
                Some(f) => Some(live_origin!(tx, f)),
                None => None,
            };
            if let Some(from) = from.filter(|f| *f != into_id) {
                sqlx::query(
                    "UPDATE crawl_origins SET lease_holder = o.lease_holder, lease_until = o.lease_until \
                     FROM (SELECT lease_holder, lease_until FROM crawl_origins WHERE id = $1) AS o \
                     WHERE crawl_origins.id = $2 AND o.lease_holder IS NOT NULL AND o.lease_holder <> $4 \
                     AND o.lease_until > $3 \
                     AND (crawl_origins.lease_holder IS NULL OR crawl_origins.lease_until <= $3)",
                )
                .bind(from)
                .bind(into_id)
                .bind(now)
                .bind(merging.as_str())
                .execute(&mut *tx)
                .await
                .map_err(DbError::query("pass a lease on"))?;
                let stmts = [
                    "UPDATE crawl_origins SET \
                     gap_ms = CASE WHEN o.gap_ms > crawl_origins.gap_ms THEN o.gap_ms ELSE crawl_origins.gap_ms END, \
                     next_start = CASE WHEN o.next_start > crawl_origins.next_start THEN o.next_start ELSE crawl_origins.next_start END, \
                     failures = CASE WHEN o.failures > crawl_origins.failures THEN o.failures ELSE crawl_origins.failures END, \
                     paused = CASE WHEN o.paused > crawl_origins.paused THEN o.paused ELSE crawl_origins.paused END, \
                     requests = crawl_origins.requests + o.requests, bytes = crawl_origins.bytes + o.bytes \
                     FROM (SELECT * FROM crawl_origins WHERE id = $1) AS o WHERE crawl_origins.id = $2",
                    "UPDATE crawl_hosts SET origin_id = $2 WHERE origin_id = $1",
                    "UPDATE crawl_urls SET origin_id = $2 WHERE origin_id = $1",
                    "UPDATE crawl_origins SET merged_into = $2, lease_holder = NULL, lease_until = 0, \
                     requests = 0, bytes = 0 WHERE id = $1",
                    "UPDATE crawl_origins SET merged_into = $2 WHERE merged_into = $1",
                ];
                for sql in stmts {
                    sqlx::query(sql)
                        .bind(from)
                        .bind(into_id)
                        .execute(&mut *tx)
                        .await
                        .map_err(DbError::query("merge origins"))?;
                }
            }
            into_id
        });
        Ok(id)
    }

    /// Lease up to `limit` origins that have queued URLs and whose next request may start by
    /// `now`, earliest first, for the store's origin lease. URLs they had in flight (left by a process
    /// that died) go back to the queue first.
    pub async fn claim_origins(
        &self,
        holder: &Holder,
        now: Timestamp,
        limit: u32,
    ) -> Result<Vec<OriginRow>, DbError> {
        self.claim_origins_except(holder, now, limit, &[]).await
    }

    /// [`Store::claim_origins`], leaving out the origins `except` (those the claiming
    /// process still has work of in hand: their in-flight URLs may be fetched already, with
    /// the outcome not committed yet, and must not go back to the queue).
    pub async fn claim_origins_except(
        &self,
        holder: &Holder,
        now: Timestamp,
        limit: u32,
        except: &[OriginId],
    ) -> Result<Vec<OriginRow>, DbError> {
        let lease = Lease {
            holder,
            now,
            ttl: self.origin_lease,
        };
        let mut ready =
            "merged_into IS NULL AND next_start <= $4 AND EXISTS (SELECT 1 FROM crawl_urls u \
                     WHERE u.origin_id = crawl_origins.id AND u.state IN (0, 1))"
                .to_string();
        if !except.is_empty() {
            let list = super::id_list(except);
            ready.push_str(&format!(" AND id NOT IN ({list})"));
        }
        let ids = self
            .db
            .claim(ORIGINS, &ready, "next_start, id", limit, &lease)
            .await?;
        if ids.is_empty() {
            return Ok(Vec::new());
        }
        let list = super::id_list(&ids);
        let requeue =
            format!("UPDATE crawl_urls SET state = 0 WHERE state = 1 AND origin_id IN ({list})");
        let select = format!("SELECT {ORIGIN_COLUMNS} FROM crawl_origins WHERE id IN ({list}) ORDER BY next_start, id");
        // The stored pacing was complete when its last holder gave the origin back; from this
        // claim on it is not, until this holder gives it back in turn: a holder killed from
        // here leaves a state that a process taking over must not trust.
        let incomplete = format!(
            "UPDATE crawl_origins SET pacer_state = REPLACE(pacer_state, '{COMPLETE}', '{INCOMPLETE}') \
             WHERE id IN ({list}) AND pacer_state IS NOT NULL"
        );
        with_pool!(&self.db, pool => {
            sqlx::query(&requeue).persistent(false).execute(pool).await.map(drop).map_err(DbError::query("requeue in-flight"))?;
            let rows = sqlx::query(&select)
                .persistent(false)
                .fetch_all(pool)
                .await
                .map(|rows| rows.iter().map(origin_row).collect())
                .map_err(DbError::query("read origins"))?;
            sqlx::query(&incomplete).persistent(false).execute(pool).await.map(drop).map_err(DbError::query("mark pacing incomplete"))?;
            Ok(rows)
        })
    }

    /// Renew `holder`'s leases on origins; returns the ids still held.
    pub async fn renew_origins(
        &self,
        ids: &[OriginId],
        holder: &Holder,
        now: Timestamp,
    ) -> Result<Vec<OriginId>, DbError> {
        let lease = Lease {
            holder,
            now,
            ttl: self.origin_lease,
        };
        let rows: Vec<i64> = ids.iter().map(|id| id.row()).collect();
        let held = self.db.renew(ORIGINS, &rows, &lease).await?;
        Ok(held.into_iter().map(OriginId::of_row).collect())
    }

    /// Give back origin leases at once (their pacing state was committed before).
    pub async fn release_origins(&self, ids: &[OriginId], holder: &Holder) -> Result<(), DbError> {
        let rows: Vec<i64> = ids.iter().map(|id| id.row()).collect();
        self.db.release(ORIGINS, &rows, holder).await
    }

    /// Work left for the crawl: URLs queued or in flight, and the earliest next start of an
    /// origin that has some (`None` when nothing is left).
    pub async fn pending_work(&self) -> Result<(u64, Option<Timestamp>), DbError> {
        let n: i64 = with_pool!(&self.db, pool => sqlx::query_scalar(
            "SELECT COUNT(*) FROM crawl_urls WHERE state IN (0, 1)").fetch_one(pool).await)
        .map_err(DbError::query("count queued URLs"))?;
        let next: Option<i64> = with_pool!(&self.db, pool => sqlx::query_scalar(
            "SELECT MIN(next_start) FROM crawl_origins o WHERE merged_into IS NULL AND EXISTS \
             (SELECT 1 FROM crawl_urls u WHERE u.origin_id = o.id AND u.state IN (0, 1))").fetch_one(pool).await)
        .map_err(DbError::query("earliest next start"))?;
        Ok((u64::try_from(n).unwrap_or(0), next.map(from_millis)))
    }

    /// Register `me` as a lease holder of this store, then free the origin (and named)
    /// leases of holders proven dead: processes of this machine, boot and PID namespace that
    /// no longer run (`db::Db::free_dead_holders`). A restart so takes its own machine's dead
    /// work back at once; every other lease (another machine, container or boot, an older
    /// build's holder) expires after the origin lease. Returns the leases freed.
    pub async fn register_and_free_dead(&self, me: &Holder) -> Result<db::FreedLeases, DbError> {
        self.db.register_holder(me, Timestamp::now()).await?;
        self.db.free_dead_holders(me, &[ORIGINS]).await
    }

    /// One origin by id.
    pub async fn origin(&self, id: OriginId) -> Result<Option<OriginRow>, DbError> {
        let sql = format!("SELECT {ORIGIN_COLUMNS} FROM crawl_origins WHERE id = $1");
        with_pool!(&self.db, pool => sqlx::query(&sql)
            .bind(id)
            .fetch_optional(pool)
            .await
            .map(|r| r.as_ref().map(origin_row)))
        .map_err(DbError::query("read origin"))
    }

    /// Hosts (with origin and evidence) that resolved to `address`: another process may have
    /// added them since this one loaded the model.
    pub async fn hosts_at(&self, address: &str) -> Result<Vec<HostEvidence>, DbError> {
        let sql = "SELECT h.name, o.name, h.addresses, h.tls_sha256, h.backends FROM crawl_hosts h \
                   JOIN crawl_origins o ON o.id = h.origin_id WHERE ' ' || h.addresses || ' ' LIKE $1";
        let pattern = format!("% {address} %");
        with_pool!(&self.db, pool => sqlx::query_as(sql).bind(pattern).fetch_all(pool).await)
            .map_err(DbError::query("read hosts at an address"))
    }

    /// Every host with its origin name and stored evidence, to rebuild the origin model:
    /// `(host, origin, addresses, tls_sha256, backends)`.
    pub async fn hosts_with_evidence(
        &self,
    ) -> Result<
        Vec<(
            String,
            String,
            Option<String>,
            Option<String>,
            Option<String>,
        )>,
        DbError,
    > {
        let sql =
            "SELECT h.name, o.name, h.addresses, h.tls_sha256, h.backends FROM crawl_hosts h \
                   JOIN crawl_origins o ON o.id = h.origin_id ORDER BY h.name";
        with_pool!(&self.db, pool => sqlx::query_as(sql).fetch_all(pool).await)
            .map_err(DbError::query("read hosts"))
    }
}

/// Milliseconds of a duration, saturated.
pub(crate) fn ms(d: Duration) -> i64 {
    i64::try_from(d.as_millis()).unwrap_or(i64::MAX)
}

/// Stored milliseconds of an optional time.
pub(crate) fn opt_millis(t: Option<Timestamp>) -> Option<i64> {
    t.map(millis)
}
