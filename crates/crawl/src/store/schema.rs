//! The crawl schema's migrations (SQLite and PostgreSQL).
//!
//! Times are milliseconds since the epoch (`db::millis`); booleans are small integers on both
//! backends so the same statements serve both.

use db::{Migration, Schema};

/// The `crawl` schema.
pub static CRAWL_SCHEMA: Schema = Schema {
    name: "crawl",
    migrations: &[
        Migration {
            version: 1,
            name: "frontier, origins, hosts, sites, media, sitemaps, robots cache",
            sqlite: V1_SQLITE,
            postgres: V1_POSTGRES,
        },
        Migration {
            version: 2,
            name: "sitemaps read per host",
            sqlite: V2_SQLITE,
            postgres: V2_POSTGRES,
        },
        Migration {
            version: 3,
            name: "a sitemap knows its index; sites follow their hosts' sitemaps by index",
            sqlite: V3,
            postgres: V3,
        },
    ],
};

/// A site's sitemap state follows from its hosts' (any usable one, found by the index on
/// `crawl_hosts (site_id, sitemap_state)`), its URL count moves with each host's, from their
/// sum now.
///
/// An index that answers 304 lists what it listed before: its own children, found by their
/// `parent_id` (NULL for a sitemap robots.txt declares, and for rows stored before this
/// column, whose index is unknown). The sitemaps of sites that have indexes lose their
/// validators, so their next read is in full and records every child's index: until then
/// a 304 could not tell an index's children.
const V3: &str = "ALTER TABLE crawl_sitemaps ADD COLUMN parent_id BIGINT;
CREATE INDEX crawl_sitemaps_parent ON crawl_sitemaps (parent_id);
UPDATE crawl_sitemaps SET etag = NULL, last_modified = NULL
    WHERE site_id IN (SELECT site_id FROM crawl_sitemaps WHERE depth > 0);
CREATE INDEX crawl_hosts_site_sitemaps ON crawl_hosts (site_id, sitemap_state);
UPDATE crawl_sites SET sitemap_urls = (SELECT COALESCE(SUM(h.sitemap_urls), 0)
    FROM crawl_hosts h WHERE h.site_id = crawl_sites.id);
";

/// Each host has its own robots.txt and so its own declared sitemaps: whether they were read,
/// when, and how many URLs they gave is recorded per host (a site's columns sum its hosts).
macro_rules! v2 {
    ($big:literal) => {
        concat!(
            "ALTER TABLE crawl_hosts ADD COLUMN sitemap_state SMALLINT NOT NULL DEFAULT 0;
ALTER TABLE crawl_hosts ADD COLUMN sitemaps_read_at ",
            $big,
            ";
ALTER TABLE crawl_hosts ADD COLUMN sitemap_urls ",
            $big,
            " NOT NULL DEFAULT 0;
"
        )
    };
}

const V2_SQLITE: &str = v2!("INTEGER");
const V2_POSTGRES: &str = v2!("BIGINT");

/// The tables, written once for both backends: `$id` is the key column's type, `$big` a 64-bit
/// integer.
macro_rules! v1 {
    ($id:literal, $big:literal) => {
        concat!(
            "
CREATE TABLE crawl_sites (
    id ",
            $id,
            ",
    domain TEXT NOT NULL UNIQUE,
    seed SMALLINT NOT NULL DEFAULT 0,
    sitemap_state SMALLINT NOT NULL DEFAULT 0,
    sitemaps_read_at ",
            $big,
            ",
    sitemap_urls ",
            $big,
            " NOT NULL DEFAULT 0,
    robots_failures INTEGER NOT NULL DEFAULT 0
);
CREATE TABLE crawl_origins (
    id ",
            $id,
            ",
    name TEXT NOT NULL UNIQUE,
    gap_ms ",
            $big,
            " NOT NULL DEFAULT 0,
    next_start ",
            $big,
            " NOT NULL DEFAULT 0,
    failures INTEGER NOT NULL DEFAULT 0,
    paused SMALLINT NOT NULL DEFAULT 0,
    probe_at ",
            $big,
            ",
    pacer_state TEXT,
    merged_into ",
            $big,
            ",
    requests ",
            $big,
            " NOT NULL DEFAULT 0,
    bytes ",
            $big,
            " NOT NULL DEFAULT 0,
    lease_holder TEXT,
    lease_until ",
            $big,
            " NOT NULL DEFAULT 0
);
CREATE TABLE crawl_hosts (
    id ",
            $id,
            ",
    name TEXT NOT NULL UNIQUE,
    origin_id ",
            $big,
            " NOT NULL REFERENCES crawl_origins (id),
    site_id ",
            $big,
            " NOT NULL REFERENCES crawl_sites (id),
    https SMALLINT,
    crawl_delay_ms ",
            $big,
            ",
    addresses TEXT,
    tls_sha256 TEXT,
    backends TEXT
);
CREATE INDEX crawl_hosts_origin ON crawl_hosts (origin_id);
CREATE TABLE crawl_urls (
    id ",
            $id,
            ",
    key TEXT NOT NULL UNIQUE,
    host_id ",
            $big,
            " NOT NULL REFERENCES crawl_hosts (id),
    origin_id ",
            $big,
            " NOT NULL,
    site_id ",
            $big,
            " NOT NULL,
    kind SMALLINT NOT NULL,
    state SMALLINT NOT NULL,
    reason TEXT,
    priority SMALLINT NOT NULL DEFAULT 1,
    attempts INTEGER NOT NULL DEFAULT 0,
    last_error TEXT,
    next_due ",
            $big,
            " NOT NULL DEFAULT 0,
    lastmod ",
            $big,
            ",
    in_sitemap SMALLINT NOT NULL DEFAULT 0,
    fetched_at ",
            $big,
            ",
    status INTEGER,
    etag TEXT,
    last_modified TEXT,
    content_hash TEXT,
    bytes ",
            $big,
            ",
    warc_file TEXT,
    warc_offset ",
            $big,
            ",
    warc_record_id TEXT,
    directives TEXT,
    redirects TEXT,
    discovered_at ",
            $big,
            " NOT NULL
);
CREATE INDEX crawl_urls_claim ON crawl_urls (origin_id, state, priority, id);
CREATE TABLE crawl_media (
    content_hash TEXT PRIMARY KEY,
    url_id ",
            $big,
            " NOT NULL,
    content_type TEXT,
    bytes ",
            $big,
            " NOT NULL,
    stored_at ",
            $big,
            " NOT NULL
);
CREATE TABLE crawl_sitemaps (
    id ",
            $id,
            ",
    url TEXT NOT NULL UNIQUE,
    site_id ",
            $big,
            " NOT NULL REFERENCES crawl_sites (id),
    depth INTEGER NOT NULL,
    state SMALLINT NOT NULL DEFAULT 0,
    fetched_at ",
            $big,
            ",
    etag TEXT,
    last_modified TEXT,
    entries ",
            $big,
            " NOT NULL DEFAULT 0,
    last_error TEXT
);
CREATE TABLE crawl_robots (
    scope TEXT PRIMARY KEY,
    entry TEXT NOT NULL,
    updated_at ",
            $big,
            " NOT NULL
);
"
        )
    };
}

const V1_SQLITE: &str = v1!("INTEGER PRIMARY KEY", "INTEGER");
const V1_POSTGRES: &str = v1!(
    "BIGINT GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY",
    "BIGINT"
);
