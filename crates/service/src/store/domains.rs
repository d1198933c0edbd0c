//! Domains (icon, kept off the ranking), the list of sites checked on the schedule, and data
//! removal.

use db::sqlx;
use jiff::Timestamp;
use serde::Serialize;
use url::Url;

use super::{dur_ms, ms, ts, Store};
use crate::error::{q, ServiceError};
use crate::ids::{registrable_domain, site_of};
use crate::limits::{ICON_REFRESH, ICON_RETRY};

/// A domain's stored icon.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DomainIcon {
    /// The 64×64 PNG.
    pub png: Vec<u8>,
    /// When it was last looked for.
    pub checked_at: Timestamp,
}

/// One entry of the sites list.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct SiteEntry {
    /// The URL checked.
    pub url: String,
    /// When it was added.
    pub added_at: Timestamp,
}

/// What `remove-domain` deleted.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct Removed {
    /// Reports deleted.
    pub reports: u64,
    /// Monthly summaries deleted.
    pub summaries: u64,
    /// Whether an icon was deleted.
    pub icon: bool,
    /// URLs taken off the schedule's list.
    pub scheduled: u64,
    /// Sites whose back-off state was forgotten.
    pub backoffs: u64,
}

/// The registrable domain a person means by `name`: `example.com`, `www.example.com`,
/// `Example.COM.` and `bücher.de` (IDN, stored as `xn--bcher-kva.de`) all name their
/// registrable domain. `None` for what is not a host name.
pub fn domain_of_name(name: &str) -> Option<String> {
    let name = name.trim();
    if name.is_empty()
        || name.contains(['/', '@', '?', '#', '\\'])
        || name.chars().any(char::is_control)
    {
        return None;
    }
    let url = Url::parse(&format!("http://{name}/")).ok()?;
    if url.port().is_some() {
        return None;
    }
    registrable_domain(&url)
}

/// Whether the site `scheme://host:port` (as [`site_of`] writes it) is of `domain`.
pub(super) fn site_in_domain(site: &str, domain: &str) -> bool {
    Url::parse(site)
        .ok()
        .and_then(|url| registrable_domain(&url))
        .is_some_and(|d| d == domain)
}

/// A `LIKE` pattern that every site of `domain` matches (a superset: `_` matches any
/// character), checked exactly with [`site_in_domain`] afterwards.
pub(super) fn site_pattern(domain: &str) -> String {
    format!("%{}:%", domain.replace('%', "_"))
}

impl Store {
    /// The icon of `domain`, if it has one.
    pub async fn icon(&self, domain: &str) -> Result<Option<DomainIcon>, ServiceError> {
        let sql = "SELECT icon, icon_checked_at FROM service_domains WHERE domain = $1";
        let row: Option<(Option<Vec<u8>>, Option<i64>)> = db::with_pool!(&self.db, pool =>
            sqlx::query_as(sql).bind(domain).fetch_optional(pool).await)
        .map_err(q("load icon"))?;
        Ok(row.and_then(|(png, at)| {
            Some(DomainIcon {
                png: png?,
                checked_at: ts(at?),
            })
        }))
    }

    /// Record a look for `domain`'s icon at `now`: the PNG found, or none (a domain without
    /// one keeps the icon it had, if any, so a broken fetch never removes a good icon).
    pub async fn set_icon(
        &self,
        domain: &str,
        png: Option<&[u8]>,
        now: Timestamp,
    ) -> Result<(), ServiceError> {
        let sql = "INSERT INTO service_domains (domain, icon, icon_checked_at) VALUES ($1, $2, $3) \
                   ON CONFLICT (domain) DO UPDATE SET icon = COALESCE(excluded.icon, service_domains.icon), \
                   icon_checked_at = excluded.icon_checked_at";
        db::with_pool!(&self.db, pool => sqlx::query(sql).bind(domain).bind(png).bind(ms(now)).execute(pool).await.map(drop))
            .map_err(q("store icon"))?;
        Ok(())
    }

    /// Whether `domain`'s icon should be looked for at `now`: never looked for, an icon at
    /// least [`ICON_REFRESH`] old, or none found for [`ICON_RETRY`].
    pub async fn icon_due(&self, domain: &str, now: Timestamp) -> Result<bool, ServiceError> {
        let sql = "SELECT icon IS NOT NULL, icon_checked_at FROM service_domains WHERE domain = $1";
        let row: Option<(bool, Option<i64>)> = db::with_pool!(&self.db, pool =>
            sqlx::query_as(sql).bind(domain).fetch_optional(pool).await)
        .map_err(q("icon due"))?;
        Ok(match row {
            None | Some((_, None)) => true,
            Some((has_icon, Some(at))) => {
                let age = if has_icon { ICON_REFRESH } else { ICON_RETRY };
                at.saturating_add(dur_ms(age)) <= ms(now)
            }
        })
    }

    /// Whether `domain` is kept off the ranking.
    pub async fn off_ranking(&self, domain: &str) -> Result<bool, ServiceError> {
        let sql = "SELECT off_ranking FROM service_domains WHERE domain = $1";
        let row: Option<bool> = db::with_pool!(&self.db, pool =>
            sqlx::query_scalar(sql).bind(domain).fetch_optional(pool).await)
        .map_err(q("off ranking"))?;
        Ok(row.unwrap_or(false))
    }

    /// Delete every report, summary and icon of `domain` in one transaction, and take it off
    /// the schedule: its URLs leave the sites list and its sites' back-off state is
    /// forgotten, so nothing of it is fetched again unless someone asks for it; with
    /// `keep_off_ranking`, keep the domain off the ranking for future reports.
    pub async fn remove_domain(
        &self,
        domain: &str,
        keep_off_ranking: bool,
    ) -> Result<Removed, ServiceError> {
        let db = &self.db;
        let icon_sql =
            "SELECT COUNT(*) FROM service_domains WHERE domain = $1 AND icon IS NOT NULL";
        let reports_sql = "DELETE FROM service_reports WHERE domain = $1 AND is_paste = FALSE";
        let summaries_sql = "DELETE FROM service_monthly WHERE domain = $1";
        let urls_sql = "DELETE FROM service_monthly_urls WHERE domain = $1";
        let off_sql = "INSERT INTO service_domains (domain, off_ranking) VALUES ($1, TRUE) \
                       ON CONFLICT (domain) DO UPDATE SET icon = NULL, icon_checked_at = NULL, off_ranking = TRUE";
        let delete_sql = "DELETE FROM service_domains WHERE domain = $1";
        let sites_sql = "SELECT url, site FROM service_sites WHERE site LIKE $1";
        let site_delete_sql = "DELETE FROM service_sites WHERE url = $1";
        let backoff_sql = "SELECT site FROM service_backoff WHERE site LIKE $1";
        let backoff_delete_sql = "DELETE FROM service_backoff WHERE site = $1";
        let pattern = site_pattern(domain);
        let removed = db::write_tx!(db, tx => {
            let icons: i64 = sqlx::query_scalar(icon_sql).bind(domain).fetch_one(&mut *tx).await.map_err(q("count icon"))?;
            let reports = sqlx::query(reports_sql).bind(domain).execute(&mut *tx).await.map_err(q("delete reports"))?.rows_affected();
            let summaries = sqlx::query(summaries_sql).bind(domain).execute(&mut *tx).await.map_err(q("delete summaries"))?.rows_affected();
            sqlx::query(urls_sql).bind(domain).execute(&mut *tx).await.map_err(q("delete summary urls"))?;
            let last = if keep_off_ranking { off_sql } else { delete_sql };
            sqlx::query(last).bind(domain).execute(&mut *tx).await.map_err(q("domain row"))?;
            let listed: Vec<(String, String)> = sqlx::query_as(sites_sql).bind(&pattern).fetch_all(&mut *tx).await.map_err(q("domain sites"))?;
            let mut scheduled = 0;
            for (url, _) in listed.iter().filter(|(_, site)| site_in_domain(site, domain)) {
                scheduled += sqlx::query(site_delete_sql).bind(url).execute(&mut *tx).await.map_err(q("unlist site"))?.rows_affected();
            }
            let backing_off: Vec<String> = sqlx::query_scalar(backoff_sql).bind(&pattern).fetch_all(&mut *tx).await.map_err(q("domain back-offs"))?;
            let mut backoffs = 0;
            for site in backing_off.iter().filter(|site| site_in_domain(site, domain)) {
                backoffs += sqlx::query(backoff_delete_sql).bind(site).execute(&mut *tx).await.map_err(q("forget back-off"))?.rows_affected();
            }
            Removed { reports, summaries, icon: icons > 0, scheduled, backoffs }
        });
        Ok(removed)
    }

    /// Add URLs to the sites list (already listed ones are left as they are); returns how
    /// many were new.
    pub async fn add_sites(&self, urls: &[Url], now: Timestamp) -> Result<u64, ServiceError> {
        let sql = "INSERT INTO service_sites (url, site, added_at) VALUES ($1, $2, $3) \
                   ON CONFLICT (url) DO NOTHING";
        let db = &self.db;
        let added = db::write_tx!(db, tx => {
            let mut added = 0;
            for url in urls {
                added += sqlx::query(sql).bind(url.as_str()).bind(site_of(url)).bind(ms(now))
                    .execute(&mut *tx).await.map_err(q("add site"))?.rows_affected();
            }
            added
        });
        Ok(added)
    }

    /// Remove URLs from the sites list; returns how many were listed.
    pub async fn remove_sites(&self, urls: &[Url]) -> Result<u64, ServiceError> {
        let sql = "DELETE FROM service_sites WHERE url = $1";
        let db = &self.db;
        let removed = db::write_tx!(db, tx => {
            let mut removed = 0;
            for url in urls {
                removed += sqlx::query(sql).bind(url.as_str()).execute(&mut *tx).await
                    .map_err(q("remove site"))?.rows_affected();
            }
            removed
        });
        Ok(removed)
    }

    /// The sites list, by URL.
    pub async fn sites(&self) -> Result<Vec<SiteEntry>, ServiceError> {
        let sql = "SELECT url, added_at FROM service_sites ORDER BY url";
        let rows: Vec<(String, i64)> =
            db::with_pool!(&self.db, pool => sqlx::query_as(sql).fetch_all(pool).await)
                .map_err(q("list sites"))?;
        Ok(rows
            .into_iter()
            .map(|(url, at)| SiteEntry {
                url,
                added_at: ts(at),
            })
            .collect())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_domain_is_named_as_people_write_it() {
        for (name, domain) in [
            ("example.com", "example.com"),
            ("www.example.com", "example.com"),
            (" WWW.Example.COM. ", "example.com"),
            ("shop.example.co.uk", "example.co.uk"),
            ("bücher.de", "xn--bcher-kva.de"),
            ("www.xn--bcher-kva.de", "xn--bcher-kva.de"),
        ] {
            assert_eq!(domain_of_name(name).as_deref(), Some(domain), "{name}");
        }
        for bad in [
            "",
            "a/b",
            "example.com:8080",
            "user@example.com",
            "exa mple.com",
        ] {
            assert_eq!(domain_of_name(bad), None, "{bad}");
        }
        assert!(site_in_domain("https://www.example.com:443", "example.com"));
        assert!(!site_in_domain("https://example.org:443", "example.com"));
        assert!(!site_in_domain("https://notexample.com:443", "example.com"));
    }
}
