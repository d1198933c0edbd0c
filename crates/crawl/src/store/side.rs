//! What surrounds the frontier: robots.txt cache entries, sitemaps, media, sites' sitemap
//! state, and the status report.

use std::collections::BTreeMap;

use db::{millis, with_pool, DbError, Holder};
use jiff::Timestamp;

use super::{HostId, OriginId, SiteId, Store, UrlId, UrlState};

/// A sitemap known for a site.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SitemapRow {
    /// Its row.
    pub id: i64,
    /// Its URL.
    pub url: String,
    /// Its site's row.
    pub site_id: SiteId,
    /// 0 for one declared in robots.txt (or `/sitemap.xml`), +1 per index level.
    pub depth: u32,
    /// When it was last read.
    pub fetched_at: Option<Timestamp>,
    /// Validators for a conditional re-read.
    pub etag: Option<String>,
    /// `Last-Modified` for a conditional re-read.
    pub last_modified: Option<String>,
    /// The index that lists it (its row); `None` for one robots.txt declares, and for one
    /// stored before sitemaps recorded their index.
    pub parent: Option<i64>,
    /// How many entries it had when last read.
    pub entries: u64,
}

/// A stored media file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MediaRow {
    /// The content hash.
    pub content_hash: String,
    /// The URL first stored under it.
    pub url_id: UrlId,
}

/// Origins by state, URLs by state, totals: what `crawl-status` prints.
#[derive(Clone, Debug, Default, PartialEq, Eq, serde::Serialize)]
pub struct StatusReport {
    /// URL counts (pages and media) by state name (every state present, zeros included).
    pub urls: BTreeMap<String, u64>,
    /// Each origin with its hosts and pacing.
    pub origins: Vec<OriginStatus>,
    /// Requests made in all.
    pub requests: u64,
    /// Bytes received in all.
    pub bytes: u64,
}

/// One origin in the status report.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct OriginStatus {
    /// Its name.
    pub name: String,
    /// `active`, `backing_off` or `paused`.
    pub state: &'static str,
    /// Its hosts.
    pub hosts: Vec<String>,
    /// The gap between request starts, ms.
    pub pace_ms: u64,
    /// Failures in a row.
    pub failures: u32,
    /// When the next request may start.
    pub next_start: Timestamp,
}

/// The whole crawl's figures for a progress display.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Progress {
    /// URLs queued.
    pub queued: u64,
    /// Origins backing off.
    pub backing_off: u64,
    /// Origins paused.
    pub paused: u64,
}

impl Store {
    /// A stored robots.txt cache entry (fetch's per-entry store), by scope.
    pub async fn robots_entry(&self, scope: &str) -> Result<Option<String>, DbError> {
        let sql = "SELECT entry FROM crawl_robots WHERE scope = $1";
        with_pool!(&self.db, pool => sqlx::query_scalar(sql).bind(scope).fetch_optional(pool).await)
            .map_err(DbError::query("read robots entry"))
    }

    /// Forget the stored robots.txt cache entry of `scope` (a probe found it reachable again:
    /// the failure recorded no longer holds its URLs back).
    pub async fn delete_robots_entry(&self, scope: &str) -> Result<(), DbError> {
        let sql = "DELETE FROM crawl_robots WHERE scope = $1";
        with_pool!(&self.db, pool => sqlx::query(sql).bind(scope).execute(pool).await.map(drop))
            .map_err(DbError::query("forget robots entry"))
    }

    /// Count one more failed robots.txt request in a row for a site (5xx, network error,
    /// 429); returns the count.
    pub async fn site_robots_failed(&self, site_id: SiteId) -> Result<u32, DbError> {
        let sql = "UPDATE crawl_sites SET robots_failures = robots_failures + 1 WHERE id = $1 \
                   RETURNING robots_failures";
        let n: Option<i32> = with_pool!(&self.db, pool => sqlx::query_scalar(sql).bind(site_id).fetch_optional(pool).await)
            .map_err(DbError::query("count a robots.txt failure"))?;
        Ok(n.and_then(|n| u32::try_from(n).ok()).unwrap_or(0))
    }

    /// URLs queued or in flight whose site's robots.txt failed on its last request (they wait
    /// for it: nothing else of such a site is requested).
    pub async fn pending_behind_robots(&self) -> Result<u64, DbError> {
        let sql = "SELECT COUNT(*) FROM crawl_urls u JOIN crawl_sites s ON s.id = u.site_id \
                   WHERE u.state IN (0, 1) AND s.robots_failures > 0";
        let n: i64 = with_pool!(&self.db, pool => sqlx::query_scalar(sql).fetch_one(pool).await)
            .map_err(DbError::query("count URLs waiting for their robots.txt"))?;
        Ok(u64::try_from(n).unwrap_or(0))
    }

    /// A site's robots.txt answered: its run of failures ends.
    pub async fn site_robots_ok(&self, site_id: SiteId) -> Result<(), DbError> {
        let sql =
            "UPDATE crawl_sites SET robots_failures = 0 WHERE id = $1 AND robots_failures <> 0";
        with_pool!(&self.db, pool => sqlx::query(sql).bind(site_id).execute(pool).await.map(drop))
            .map_err(DbError::query("reset robots.txt failures"))
    }

    /// Store a robots.txt cache entry.
    pub async fn put_robots_entry(&self, scope: &str, entry: &str) -> Result<(), DbError> {
        let sql = "INSERT INTO crawl_robots (scope, entry, updated_at) VALUES ($1, $2, $3) \
                   ON CONFLICT (scope) DO UPDATE SET entry = excluded.entry, updated_at = excluded.updated_at";
        with_pool!(&self.db, pool => sqlx::query(sql)
            .bind(scope)
            .bind(entry)
            .bind(millis(Timestamp::now()))
            .execute(pool)
            .await
            .map(drop))
        .map_err(DbError::query("store robots entry"))
    }

    /// Record a sitemap of a site (known ones keep their state); returns its row id.
    pub async fn add_sitemap(
        &self,
        url: &str,
        site_id: SiteId,
        depth: u32,
    ) -> Result<i64, DbError> {
        Ok(self.add_listed_sitemap(url, site_id, depth, None).await?.id)
    }

    /// Record a sitemap of a site, found at `depth` and listed by the index `parent` (`None`:
    /// declared by robots.txt); returns its row as stored (a known one keeps its state and
    /// validators). Of two listings, the shallower one wins, and the later of two as deep:
    /// it names the index the sitemap is read under.
    pub async fn add_listed_sitemap(
        &self,
        url: &str,
        site_id: SiteId,
        depth: u32,
        parent: Option<i64>,
    ) -> Result<SitemapRow, DbError> {
        let sql = format!(
            "INSERT INTO crawl_sitemaps (url, site_id, depth, parent_id) VALUES ($1, $2, $3, $4) \
             ON CONFLICT (url) DO UPDATE SET \
             parent_id = CASE WHEN excluded.depth <= crawl_sitemaps.depth \
                 THEN excluded.parent_id ELSE crawl_sitemaps.parent_id END, \
             depth = CASE WHEN excluded.depth < crawl_sitemaps.depth \
                 THEN excluded.depth ELSE crawl_sitemaps.depth END \
             RETURNING {SITEMAP_COLUMNS}"
        );
        let row: SitemapColumns = with_pool!(&self.db, pool => sqlx::query_as(&sql)
            .bind(url)
            .bind(site_id)
            .bind(i32::try_from(depth).unwrap_or(i32::MAX))
            .bind(parent)
            .fetch_one(pool)
            .await)
        .map_err(DbError::query("add sitemap"))?;
        Ok(sitemap_row(row))
    }

    /// The sitemaps an index listed when last read in full (its row `parent`).
    pub async fn sitemap_children(&self, parent: i64) -> Result<Vec<SitemapRow>, DbError> {
        let sql = format!("{SITEMAP_SELECT} WHERE parent_id = $1 ORDER BY id");
        let rows: Vec<SitemapColumns> =
            with_pool!(&self.db, pool => sqlx::query_as(&sql).bind(parent).fetch_all(pool).await)
                .map_err(DbError::query("read sitemap children"))?;
        Ok(rows.into_iter().map(sitemap_row).collect())
    }

    /// The sitemaps of a site.
    pub async fn sitemaps(&self, site_id: SiteId) -> Result<Vec<SitemapRow>, DbError> {
        let sql = format!("{SITEMAP_SELECT} WHERE site_id = $1 ORDER BY depth, id");
        let rows: Vec<SitemapColumns> =
            with_pool!(&self.db, pool => sqlx::query_as(&sql).bind(site_id).fetch_all(pool).await)
                .map_err(DbError::query("read sitemaps"))?;
        Ok(rows.into_iter().map(sitemap_row).collect())
    }

    /// Record a sitemap read: when, its validators, how many entries, or the error.
    pub async fn sitemap_read(
        &self,
        id: i64,
        at: Timestamp,
        etag: Option<&str>,
        last_modified: Option<&str>,
        entries: u64,
        error: Option<&str>,
    ) -> Result<(), DbError> {
        let sql =
            "UPDATE crawl_sitemaps SET state = 1, fetched_at = $1, etag = $2, last_modified = $3, \
                   entries = $4, last_error = $5 WHERE id = $6";
        with_pool!(&self.db, pool => sqlx::query(sql)
            .bind(millis(at))
            .bind(etag)
            .bind(last_modified)
            .bind(i64::try_from(entries).unwrap_or(i64::MAX))
            .bind(error)
            .bind(id)
            .execute(pool)
            .await
            .map(drop))
        .map_err(DbError::query("record sitemap read"))
    }

    /// A site's sitemap state: `None` until its sitemaps were looked for, then whether it has
    /// a usable one, and when they were read.
    pub async fn site_sitemap_state(
        &self,
        site_id: SiteId,
    ) -> Result<(Option<bool>, Option<Timestamp>), DbError> {
        let sql = "SELECT sitemap_state, sitemaps_read_at FROM crawl_sites WHERE id = $1";
        let row: Option<(i16, Option<i64>)> =
            with_pool!(&self.db, pool => sqlx::query_as(sql).bind(site_id).fetch_optional(pool).await)
                .map_err(DbError::query("read site"))?;
        Ok(match row {
            None | Some((0, _)) => (None, None),
            Some((state, at)) => (Some(state == 1), at.map(db::from_millis)),
        })
    }

    /// A site's domain, whether it is a seed site, and when its sitemaps were last read.
    pub async fn site_info(
        &self,
        site_id: SiteId,
    ) -> Result<Option<(String, bool, Option<Timestamp>)>, DbError> {
        let sql = "SELECT domain, seed, sitemaps_read_at FROM crawl_sites WHERE id = $1";
        let row: Option<(String, i16, Option<i64>)> =
            with_pool!(&self.db, pool => sqlx::query_as(sql).bind(site_id).fetch_optional(pool).await)
                .map_err(DbError::query("read site"))?;
        Ok(row.map(|(d, seed, at)| (d, seed != 0, at.map(db::from_millis))))
    }

    /// Record that a site's sitemaps were read: whether one is usable, when, and how many URLs
    /// they gave.
    pub async fn set_site_sitemaps(
        &self,
        site_id: SiteId,
        usable: bool,
        at: Timestamp,
        urls: u64,
    ) -> Result<(), DbError> {
        let sql = "UPDATE crawl_sites SET sitemap_state = $1, sitemaps_read_at = $2, sitemap_urls = $3 WHERE id = $4";
        with_pool!(&self.db, pool => sqlx::query(sql)
            .bind(if usable { 1i16 } else { 2 })
            .bind(millis(at))
            .bind(i64::try_from(urls).unwrap_or(i64::MAX))
            .bind(site_id)
            .execute(pool)
            .await
            .map(drop))
        .map_err(DbError::query("record site sitemaps"))
    }

    /// Record that a host's sitemaps (those its robots.txt declares) were read: whether they
    /// gave URLs, when, and how many. The host's site follows from its hosts: usable when any
    /// host's sitemaps are, read when the last of them was, with all their URLs (its count
    /// moved by the host's change, not summed again over the site's hosts, which cost a scan
    /// of them all for every host's read). Returns whether the site has a usable sitemap.
    pub async fn set_host_sitemaps(
        &self,
        host_id: HostId,
        site_id: SiteId,
        at: Timestamp,
        urls: u64,
    ) -> Result<bool, DbError> {
        self.record_host_sitemaps((host_id, site_id), at, urls, None)
            .await
    }

    /// [`Store::set_host_sitemaps`], and the named lease `lease` (`db::Db::try_lease`) its
    /// holder took to read them given back in the same transaction: one commit instead of
    /// two for each host's read.
    pub async fn set_host_sitemaps_releasing(
        &self,
        (host_id, site_id): (HostId, SiteId),
        at: Timestamp,
        urls: u64,
        lease: (&str, &Holder),
    ) -> Result<bool, DbError> {
        self.record_host_sitemaps((host_id, site_id), at, urls, Some(lease))
            .await
    }

    async fn record_host_sitemaps(
        &self,
        (host_id, site_id): (HostId, SiteId),
        at: Timestamp,
        urls: u64,
        lease: Option<(&str, &Holder)>,
    ) -> Result<bool, DbError> {
        // The site first, while the host's row still holds its previous count; another
        // usable host is found through the index on (site_id, sitemap_state).
        let site_sql = "UPDATE crawl_sites SET \
             sitemap_state = CASE WHEN $3 > 0 OR EXISTS (SELECT 1 FROM crawl_hosts h \
                 WHERE h.site_id = $1 AND h.sitemap_state = 1 AND h.id <> $4) THEN 1 ELSE 2 END, \
             sitemaps_read_at = $2, \
             sitemap_urls = sitemap_urls + $3 \
                 - COALESCE((SELECT h.sitemap_urls FROM crawl_hosts h WHERE h.id = $4), 0) \
             WHERE id = $1 RETURNING sitemap_state";
        let host_sql = "UPDATE crawl_hosts SET sitemap_state = $1, sitemaps_read_at = $2, \
                        sitemap_urls = $3 WHERE id = $4";
        let urls = i64::try_from(urls).unwrap_or(i64::MAX);
        let state: i16 = db::write_tx!(&self.db, tx => {
            let state = sqlx::query_scalar(site_sql)
                .bind(site_id)
                .bind(millis(at))
                .bind(urls)
                .bind(host_id)
                .fetch_one(&mut *tx)
                .await
                .map_err(DbError::query("record site sitemaps"))?;
            sqlx::query(host_sql)
                .bind(if urls > 0 { 1i16 } else { 2 })
                .bind(millis(at))
                .bind(urls)
                .bind(host_id)
                .execute(&mut *tx)
                .await
                .map_err(DbError::query("record host sitemaps"))?;
            if let Some((name, holder)) = lease {
                sqlx::query(db::RELEASE_NAMED_LEASE)
                    .bind(name)
                    .bind(holder.as_str())
                    .execute(&mut *tx)
                    .await
                    .map_err(DbError::query("release named lease"))?;
            }
            state
        });
        Ok(state == 1)
    }

    /// One seed URL key of a seed site (the first queued of its hosts), to start its
    /// sitemaps from.
    pub async fn seed_url_of(&self, domain: &str) -> Result<Option<String>, DbError> {
        let sql = "SELECT u.key FROM crawl_urls u JOIN crawl_sites s ON s.id = u.site_id \
                   WHERE s.domain = $1 AND u.kind = 0 ORDER BY u.id LIMIT 1";
        with_pool!(&self.db, pool => sqlx::query_scalar(sql).bind(domain).fetch_optional(pool).await)
            .map_err(DbError::query("read seed URL"))
    }

    /// The key of the queued URL of an origin claimed next (to probe its host: the one held
    /// back), if any.
    pub async fn a_url_of_origin(&self, origin_id: OriginId) -> Result<Option<String>, DbError> {
        let sql = "SELECT key FROM crawl_urls WHERE origin_id = $1 AND state IN (0, 1) ORDER BY priority, id LIMIT 1";
        with_pool!(&self.db, pool => sqlx::query_scalar(sql).bind(origin_id).fetch_optional(pool).await)
            .map_err(DbError::query("read a URL of an origin"))
    }

    /// A stored media file with these bytes, if any.
    pub async fn media(&self, content_hash: &str) -> Result<Option<MediaRow>, DbError> {
        let sql = "SELECT content_hash, url_id FROM crawl_media WHERE content_hash = $1";
        let row: Option<(String, UrlId)> =
            with_pool!(&self.db, pool => sqlx::query_as(sql).bind(content_hash).fetch_optional(pool).await)
                .map_err(DbError::query("read media"))?;
        Ok(row.map(|(content_hash, url_id)| MediaRow {
            content_hash,
            url_id,
        }))
    }

    /// The figures of the progress display: URLs queued, origins backing off (failures in a
    /// row and a next start after `now`) and paused.
    pub async fn progress(&self, now: Timestamp) -> Result<Progress, DbError> {
        let queued: i64 = with_pool!(&self.db, pool => sqlx::query_scalar(
            "SELECT COUNT(*) FROM crawl_urls WHERE state = 0").fetch_one(pool).await)
        .map_err(DbError::query("count queued URLs"))?;
        let (backing_off, paused): (Option<i64>, Option<i64>) = with_pool!(&self.db, pool => sqlx::query_as(
            "SELECT SUM(CASE WHEN paused = 0 AND failures > 0 AND next_start > $1 THEN 1 ELSE 0 END), \
             SUM(CASE WHEN paused <> 0 THEN 1 ELSE 0 END) FROM crawl_origins WHERE merged_into IS NULL")
            .bind(millis(now))
            .fetch_one(pool)
            .await)
        .map_err(DbError::query("count origins by state"))?;
        let n = |x: Option<i64>| u64::try_from(x.unwrap_or(0)).unwrap_or(0);
        Ok(Progress {
            queued: n(Some(queued)),
            backing_off: n(backing_off),
            paused: n(paused),
        })
    }

    /// The redirect chain (JSON) stored with a URL's last fetch, by key.
    pub async fn url_redirects(&self, key: &str) -> Result<Option<String>, DbError> {
        let sql = "SELECT redirects FROM crawl_urls WHERE key = $1";
        let row: Option<Option<String>> =
            with_pool!(&self.db, pool => sqlx::query_scalar(sql).bind(key).fetch_optional(pool).await)
                .map_err(DbError::query("read URL redirects"))?;
        Ok(row.flatten())
    }

    /// The state of a URL by key: `(state, attempts, reason)`.
    pub async fn url_state(
        &self,
        key: &str,
    ) -> Result<Option<(UrlState, u32, Option<String>)>, DbError> {
        let sql = "SELECT state, attempts, reason FROM crawl_urls WHERE key = $1";
        let row: Option<(i16, i32, Option<String>)> =
            with_pool!(&self.db, pool => sqlx::query_as(sql).bind(key).fetch_optional(pool).await)
                .map_err(DbError::query("read URL"))?;
        Ok(row.and_then(|(s, a, r)| {
            Some((UrlState::from_code(s)?, u32::try_from(a).unwrap_or(0), r))
        }))
    }

    /// URLs, origins and totals, as of `now`.
    pub async fn status(&self, now: Timestamp) -> Result<StatusReport, DbError> {
        let counts: Vec<(i16, i64)> = with_pool!(&self.db, pool => sqlx::query_as(
            "SELECT state, COUNT(*) FROM crawl_urls WHERE kind <> 2 GROUP BY state").fetch_all(pool).await)
        .map_err(DbError::query("count URLs"))?;
        let mut report = StatusReport::default();
        for s in UrlState::ALL {
            report.urls.insert(s.name().to_string(), 0);
        }
        for (code, n) in counts {
            if let Some(s) = UrlState::from_code(code) {
                report
                    .urls
                    .insert(s.name().to_string(), u64::try_from(n).unwrap_or(0));
            }
        }
        type Row = (String, i64, i64, i32, i16, i64, i64, Option<String>);
        let rows: Vec<Row> = with_pool!(&self.db, pool => sqlx::query_as(
            "SELECT o.name, o.gap_ms, o.next_start, o.failures, o.paused, o.requests, o.bytes, h.name \
             FROM crawl_origins o LEFT JOIN crawl_hosts h ON h.origin_id = o.id \
             WHERE o.merged_into IS NULL ORDER BY o.name, h.name").fetch_all(pool).await)
        .map_err(DbError::query("read origins"))?;
        let now_ms = millis(now);
        for (name, gap, next, failures, paused, requests, bytes, host) in rows {
            let same = report
                .origins
                .last()
                .is_some_and(|o: &OriginStatus| o.name == name);
            if !same {
                report.requests += u64::try_from(requests).unwrap_or(0);
                report.bytes += u64::try_from(bytes).unwrap_or(0);
                let state = if paused != 0 {
                    "paused"
                } else if failures > 0 && next > now_ms {
                    "backing_off"
                } else {
                    "active"
                };
                report.origins.push(OriginStatus {
                    name,
                    state,
                    hosts: Vec::new(),
                    pace_ms: u64::try_from(gap).unwrap_or(0),
                    failures: u32::try_from(failures).unwrap_or(0),
                    next_start: db::from_millis(next),
                });
            }
            if let (Some(h), Some(o)) = (host, report.origins.last_mut()) {
                o.hosts.push(h);
            }
        }
        Ok(report)
    }
}

/// The columns of a [`SitemapRow`], in [`SITEMAP_COLUMNS`]' order.
type SitemapColumns = (
    i64,
    String,
    SiteId,
    i32,
    Option<i64>,
    Option<String>,
    Option<String>,
    Option<i64>,
    i64,
);

/// The columns of `crawl_sitemaps` read into a [`SitemapRow`] (a macro: both constants below
/// are made of it).
macro_rules! sitemap_columns {
    () => {
        "id, url, site_id, depth, fetched_at, etag, last_modified, parent_id, entries"
    };
}

/// [`SitemapColumns`], as SQL.
const SITEMAP_COLUMNS: &str = sitemap_columns!();

/// Selects [`SitemapColumns`] from `crawl_sitemaps`.
const SITEMAP_SELECT: &str = concat!("SELECT ", sitemap_columns!(), " FROM crawl_sitemaps");

fn sitemap_row(r: SitemapColumns) -> SitemapRow {
    SitemapRow {
        id: r.0,
        url: r.1,
        site_id: r.2,
        depth: u32::try_from(r.3).unwrap_or(0),
        fetched_at: r.4.map(db::from_millis),
        etag: r.5,
        last_modified: r.6,
        parent: r.7,
        entries: u64::try_from(r.8).unwrap_or(0),
    }
}
