//! The levers in the crawl's store (table `crawl_levers`, schema `crawl_levers` with its own
//! versions beside the crawl's), and the questions the running crawlers ask about them.

use std::time::Duration;

use db::{from_millis, millis, with_pool, DbError, Migration, Schema};
use jiff::Timestamp;

use super::lever::{Lever, SiteName};
use crate::store::{HostId, OriginId, Store};

/// The levers' schema, migrated whenever the crawl store is opened.
pub static LEVERS_SCHEMA: Schema = Schema {
    name: "crawl_levers",
    migrations: &[Migration {
        version: 1,
        name: "operator levers per site: pace floor, exclusion, robots.txt refresh",
        sqlite: LEVERS_V1,
        postgres: LEVERS_V1,
    }],
};

/// One row per site an operator named. `robots_refresh` counts the `refresh-robots` asked
/// (each process acts on a count it has not seen yet).
const LEVERS_V1: &str = "CREATE TABLE crawl_levers (site TEXT PRIMARY KEY, pace_ms BIGINT, \
     exclusion SMALLINT NOT NULL DEFAULT 0, robots_refresh BIGINT NOT NULL DEFAULT 0, \
     robots_refresh_at BIGINT, updated_at BIGINT NOT NULL)";

/// The levers set for one site, as stored.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct SiteLevers {
    /// The site.
    pub site: SiteName,
    /// Its least gap between requests to the origins serving it, if set.
    #[serde(with = "millis_option", rename = "pace_ms")]
    pub pace: Option<Duration>,
    /// No request to it while true.
    pub excluded: bool,
    /// How many robots.txt refreshes were asked for it.
    pub robots_refresh: i64,
    /// When the last one was asked.
    pub robots_refresh_at: Option<Timestamp>,
    /// When any of its levers last changed.
    pub updated_at: Timestamp,
}

impl SiteLevers {
    /// Whether it changes how the site is crawled now (a pace or an exclusion).
    pub fn in_force(&self) -> bool {
        self.pace.is_some() || self.excluded
    }
}

mod millis_option {
    use std::time::Duration;

    pub fn serialize<S: serde::Serializer>(d: &Option<Duration>, s: S) -> Result<S::Ok, S::Error> {
        match d {
            Some(d) => s.serialize_u128(d.as_millis()),
            None => s.serialize_none(),
        }
    }
}

type Row = (String, Option<i64>, i16, i64, Option<i64>, i64);

fn site_levers(row: Row) -> Option<SiteLevers> {
    let (site, pace_ms, excluded, robots_refresh, refresh_at, updated_at) = row;
    Some(SiteLevers {
        // A row that no longer reads as a site (written by hand) is ignored.
        site: site.parse().ok()?,
        pace: pace_ms
            .and_then(|ms| u64::try_from(ms).ok())
            .map(Duration::from_millis),
        excluded: excluded != 0,
        robots_refresh,
        robots_refresh_at: refresh_at.map(from_millis),
        updated_at: from_millis(updated_at),
    })
}

/// Every site's levers, by site name.
pub async fn levers(store: &Store) -> Result<Vec<SiteLevers>, DbError> {
    let sql = "SELECT site, pace_ms, exclusion, robots_refresh, robots_refresh_at, updated_at \
               FROM crawl_levers ORDER BY site";
    let rows: Vec<Row> = with_pool!(store.db(), pool => sqlx::query_as(sql).fetch_all(pool).await)
        .map_err(DbError::query("read the levers"))?;
    Ok(rows.into_iter().filter_map(site_levers).collect())
}

/// Pulls `lever` at `now`. `refresh-robots` also deletes the stored robots.txt of the site's
/// hosts, so that no process (running or starting) uses the old copy once it has dropped its
/// own; returns how many stored copies were deleted.
pub async fn apply(store: &Store, lever: &Lever, now: Timestamp) -> Result<u64, DbError> {
    let site = lever.site().as_str();
    let now_ms = millis(now);
    let change = match lever {
        Lever::Pace { .. } => "UPDATE crawl_levers SET pace_ms = $2 WHERE site = $1",
        Lever::Exclude(_) => "UPDATE crawl_levers SET exclusion = 1 WHERE site = $1",
        Lever::Include(_) => "UPDATE crawl_levers SET exclusion = 0 WHERE site = $1",
        Lever::RefreshRobots(_) => {
            "UPDATE crawl_levers SET robots_refresh = robots_refresh + 1, \
             robots_refresh_at = $2 WHERE site = $1"
        }
    };
    let floor = match lever {
        Lever::Pace { floor, .. } => {
            floor.map(|f| i64::try_from(f.as_millis()).unwrap_or(i64::MAX))
        }
        _ => None,
    };
    db::write_tx!(store.db(), tx => {
        sqlx::query(
            "INSERT INTO crawl_levers (site, updated_at) VALUES ($1, $2) \
             ON CONFLICT (site) DO UPDATE SET updated_at = $2",
        )
        .bind(site)
        .bind(now_ms)
        .execute(&mut *tx)
        .await
        .map_err(DbError::query("record a lever"))?;
        let query = sqlx::query(change).bind(site);
        let query = match lever {
            Lever::Pace { .. } => query.bind(floor),
            Lever::RefreshRobots(_) => query.bind(now_ms),
            _ => query,
        };
        query
            .execute(&mut *tx)
            .await
            .map_err(DbError::query("record a lever"))?;
        // A site with nothing left to say is forgotten.
        sqlx::query(
            "DELETE FROM crawl_levers WHERE site = $1 AND pace_ms IS NULL AND exclusion = 0 \
             AND robots_refresh = 0",
        )
        .bind(site)
        .execute(&mut *tx)
        .await
        .map_err(DbError::query("record a lever"))?;
    });
    match lever {
        Lever::RefreshRobots(site) => forget_stored_robots(store, site).await,
        _ => Ok(0),
    }
}

/// Deletes the stored robots.txt entries of every scope of `site`'s hosts.
async fn forget_stored_robots(store: &Store, site: &SiteName) -> Result<u64, DbError> {
    let scopes: Vec<String> =
        with_pool!(store.db(), pool => sqlx::query_scalar("SELECT scope FROM crawl_robots")
            .fetch_all(pool)
            .await)
        .map_err(DbError::query("read the stored robots.txt scopes"))?;
    let mut deleted = 0;
    for scope in scopes {
        let covered = fetch::Scope::parse(&scope).is_ok_and(|s| site.covers(s.host()));
        if covered {
            store.delete_robots_entry(&scope).await?;
            deleted += 1;
        }
    }
    Ok(deleted)
}

/// A host of the crawl and the origin serving it, as stored.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct HostOrigin {
    pub host_id: HostId,
    pub host: String,
    pub origin_id: OriginId,
    pub origin: String,
}

/// The crawl's hosts under `site`, with their origins.
pub(crate) async fn hosts_of(store: &Store, site: &SiteName) -> Result<Vec<HostOrigin>, DbError> {
    let sql = "SELECT h.id, h.name, o.id, o.name \
               FROM crawl_hosts h JOIN crawl_origins o ON o.id = h.origin_id \
               WHERE h.name = $1 OR h.name LIKE $2 ESCAPE '\\'";
    let rows: Vec<(HostId, String, OriginId, String)> =
        with_pool!(store.db(), pool => sqlx::query_as(sql)
        .bind(site.as_str())
        .bind(site.like_under())
        .fetch_all(pool)
        .await)
        .map_err(DbError::query("read a site's hosts"))?;
    // LIKE ignores case on SQLite: keep exactly the names the site covers.
    Ok(rows
        .into_iter()
        .filter(|r| site.covers(&r.1))
        .map(|(host_id, host, origin_id, origin)| HostOrigin {
            host_id,
            host,
            origin_id,
            origin,
        })
        .collect())
}

/// Of `origins`, those whose queued (or in flight) URLs all belong to `held` hosts: nothing
/// of theirs may be fetched now.
pub(crate) async fn parked_origins(
    store: &Store,
    origins: &[OriginId],
    held: &[HostId],
) -> Result<Vec<OriginId>, DbError> {
    if held.is_empty() {
        return Ok(Vec::new());
    }
    let held_list = crate::store::id_list(held);
    let mut parked = Vec::new();
    for &origin in origins {
        let sql = format!(
            "SELECT COUNT(*) FROM (SELECT 1 FROM crawl_urls WHERE origin_id = $1 \
             AND state IN (0, 1) AND host_id NOT IN ({held_list}) LIMIT 1) AS free"
        );
        let free: i64 = with_pool!(store.db(), pool => sqlx::query_scalar(&sql)
            .persistent(false)
            .bind(origin)
            .fetch_one(pool)
            .await)
        .map_err(DbError::query("look for unheld work"))?;
        if free == 0 {
            parked.push(origin);
        }
    }
    Ok(parked)
}

/// URLs queued or in flight that do not belong to `held` hosts.
pub(crate) async fn pending_outside(store: &Store, held: &[HostId]) -> Result<u64, DbError> {
    let mut sql = "SELECT COUNT(*) FROM crawl_urls WHERE state IN (0, 1)".to_string();
    if !held.is_empty() {
        sql.push_str(&format!(
            " AND host_id NOT IN ({})",
            crate::store::id_list(held)
        ));
    }
    let n: i64 = with_pool!(store.db(), pool => sqlx::query_scalar(&sql)
        .persistent(false)
        .fetch_one(pool)
        .await)
    .map_err(DbError::query("count work outside held sites"))?;
    Ok(u64::try_from(n).unwrap_or(0))
}
