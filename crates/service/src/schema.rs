//! The service's tables, as versioned migrations (run by [`db::Db::open`]).
//!
//! Times are integer milliseconds since the epoch ([`db::millis`]); every integer column is
//! 64-bit on PostgreSQL so both backends decode it as `i64`.

use db::{Migration, Schema};

/// The service's schema: reports, jobs, domains, the sites list, schedule state, monthly
/// summaries.
pub static SCHEMA: Schema = Schema {
    name: "service",
    migrations: &[
        Migration {
            version: 1,
            name: "reports, jobs, domains, sites, schedule, summaries",
            sqlite: SQLITE_V1,
            postgres: POSTGRES_V1,
        },
        Migration {
            version: 2,
            name: "index of finished reports by URL",
            sqlite: CURRENT_INDEX_V2,
            postgres: CURRENT_INDEX_V2,
        },
        Migration {
            version: 3,
            name: "report documents in a table of their own",
            sqlite: DOCUMENTS_SQLITE_V3,
            postgres: DOCUMENTS_POSTGRES_V3,
        },
        Migration {
            version: 4,
            name: "the client of each queued job",
            sqlite: JOB_CLIENT_V4,
            postgres: JOB_CLIENT_V4,
        },
        Migration {
            version: 5,
            name: "robots.txt bodies stored compressed",
            sqlite: BODY_ENCODING_SQLITE_V5,
            postgres: BODY_ENCODING_POSTGRES_V5,
        },
    ],
};

/// robots.txt's bytes are most of a stored report (a typical 20 KB file beside a 1 KB
/// document): new bodies are stored deflated (`codec::encode_body`, `body_encoding` 1, or 0
/// when deflate does not shrink them). Bodies stored before stay as received (0: SQL cannot
/// deflate) and read back as they were.
const BODY_ENCODING_SQLITE_V5: &str = "
ALTER TABLE service_documents ADD COLUMN body_encoding INTEGER NOT NULL DEFAULT 0;
";

const BODY_ENCODING_POSTGRES_V5: &str = "
ALTER TABLE service_documents ADD COLUMN body_encoding BIGINT NOT NULL DEFAULT 0;
";

/// Each queued job names its client, so the queue serves clients in turn and caps each
/// one's share: a tag keyed by a secret of the process that queued it, never the address
/// (`submit::client_tag`), deleted with the job. Jobs of the schedule have none.
const JOB_CLIENT_V4: &str = "
ALTER TABLE service_jobs ADD COLUMN client TEXT;
CREATE INDEX service_jobs_client ON service_jobs (client);
";

/// The report document and robots.txt's bytes move to `service_documents`, keyed by report
/// id, and leave the reports table: with them inline every row was 14–28 KB, so every list,
/// count, ranking and retention scan read (and every delete freed) the documents too; a 16 GB
/// SQLite file for a million reports. New documents are stored deflated with a dictionary
/// (`codec`, `encoding` 1); the moved ones stay plain JSON (`encoding` 0: SQL cannot
/// deflate) and read back as they were. Deleting a report deletes its document (the foreign
/// key), whichever path deletes it.
const DOCUMENTS_SQLITE_V3: &str = "
CREATE TABLE service_documents (
    id TEXT PRIMARY KEY REFERENCES service_reports (id) ON DELETE CASCADE,
    encoding INTEGER NOT NULL,
    robots_body BLOB,
    document BLOB NOT NULL
);
INSERT INTO service_documents (id, encoding, robots_body, document)
    SELECT id, 0, robots_body, CAST(document AS BLOB) FROM service_reports
    WHERE document IS NOT NULL;
ALTER TABLE service_reports DROP COLUMN robots_body;
ALTER TABLE service_reports DROP COLUMN document;
";

const DOCUMENTS_POSTGRES_V3: &str = "
CREATE TABLE service_documents (
    id TEXT PRIMARY KEY REFERENCES service_reports (id) ON DELETE CASCADE,
    encoding BIGINT NOT NULL,
    robots_body BYTEA,
    document BYTEA NOT NULL
);
INSERT INTO service_documents (id, encoding, robots_body, document)
    SELECT id, 0, robots_body, convert_to(document, 'UTF8') FROM service_reports
    WHERE document IS NOT NULL;
ALTER TABLE service_reports DROP COLUMN robots_body, DROP COLUMN document;
";

/// Every URL's newest finished report (the ranking, the pages' current reports, the previous
/// report of a URL, retention's "is there a newer one") read from the index alone. Without it
/// each of those reads the table row of every report (each several KB: the document) to
/// check `is_paste` and `state`, and to take the few columns they show, which are in the
/// index too (a million reports: seconds instead of minutes on a cold SQLite file).
const CURRENT_INDEX_V2: &str = "
CREATE INDEX service_reports_done_url
    ON service_reports (url, created_at, domain, id, score, indexable)
    WHERE is_paste = FALSE AND state = 'done';
";

const SQLITE_V1: &str = "
CREATE TABLE service_reports (
    id TEXT PRIMARY KEY,
    domain TEXT,
    url TEXT,
    site TEXT,
    is_paste BOOLEAN NOT NULL,
    scheduled BOOLEAN NOT NULL DEFAULT FALSE,
    state TEXT NOT NULL,
    created_at INTEGER NOT NULL,
    analysed_at INTEGER,
    score INTEGER,
    grade TEXT,
    indexable BOOLEAN NOT NULL DEFAULT FALSE,
    report_version INTEGER,
    scoring_version TEXT,
    error TEXT,
    robots_body BLOB,
    document TEXT
);
CREATE INDEX service_reports_domain ON service_reports (domain, created_at);
CREATE INDEX service_reports_url ON service_reports (url, created_at);
CREATE INDEX service_reports_age ON service_reports (created_at);
CREATE TABLE service_jobs (
    job_id INTEGER PRIMARY KEY AUTOINCREMENT,
    report_id TEXT NOT NULL REFERENCES service_reports (id) ON DELETE CASCADE,
    url TEXT NOT NULL,
    site TEXT NOT NULL,
    queued_at INTEGER NOT NULL,
    attempts INTEGER NOT NULL DEFAULT 0,
    lease_holder TEXT,
    lease_until INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX service_jobs_queued ON service_jobs (queued_at);
CREATE TABLE service_domains (
    domain TEXT PRIMARY KEY,
    icon BLOB,
    icon_checked_at INTEGER,
    off_ranking BOOLEAN NOT NULL DEFAULT FALSE
);
CREATE TABLE service_sites (
    url TEXT PRIMARY KEY,
    site TEXT NOT NULL,
    added_at INTEGER NOT NULL
);
CREATE TABLE service_backoff (
    site TEXT PRIMARY KEY,
    failures INTEGER NOT NULL,
    refusals INTEGER NOT NULL,
    until_at INTEGER NOT NULL,
    last_outcome TEXT NOT NULL
);
CREATE TABLE service_state (
    name TEXT PRIMARY KEY,
    value INTEGER NOT NULL
);
CREATE TABLE service_monthly (
    domain TEXT NOT NULL,
    month TEXT NOT NULL,
    reports INTEGER NOT NULL,
    urls INTEGER NOT NULL,
    best INTEGER NOT NULL,
    score_sum INTEGER NOT NULL,
    lowest INTEGER NOT NULL,
    PRIMARY KEY (domain, month)
);
CREATE TABLE service_monthly_urls (
    domain TEXT NOT NULL,
    month TEXT NOT NULL,
    url_hash INTEGER NOT NULL,
    PRIMARY KEY (domain, month, url_hash)
);
";

const POSTGRES_V1: &str = "
CREATE TABLE service_reports (
    id TEXT PRIMARY KEY,
    domain TEXT,
    url TEXT,
    site TEXT,
    is_paste BOOLEAN NOT NULL,
    scheduled BOOLEAN NOT NULL DEFAULT FALSE,
    state TEXT NOT NULL,
    created_at BIGINT NOT NULL,
    analysed_at BIGINT,
    score BIGINT,
    grade TEXT,
    indexable BOOLEAN NOT NULL DEFAULT FALSE,
    report_version BIGINT,
    scoring_version TEXT,
    error TEXT,
    robots_body BYTEA,
    document TEXT
);
CREATE INDEX service_reports_domain ON service_reports (domain, created_at);
CREATE INDEX service_reports_url ON service_reports (url, created_at);
CREATE INDEX service_reports_age ON service_reports (created_at);
CREATE TABLE service_jobs (
    job_id BIGSERIAL PRIMARY KEY,
    report_id TEXT NOT NULL REFERENCES service_reports (id) ON DELETE CASCADE,
    url TEXT NOT NULL,
    site TEXT NOT NULL,
    queued_at BIGINT NOT NULL,
    attempts BIGINT NOT NULL DEFAULT 0,
    lease_holder TEXT,
    lease_until BIGINT NOT NULL DEFAULT 0
);
CREATE INDEX service_jobs_queued ON service_jobs (queued_at);
CREATE TABLE service_domains (
    domain TEXT PRIMARY KEY,
    icon BYTEA,
    icon_checked_at BIGINT,
    off_ranking BOOLEAN NOT NULL DEFAULT FALSE
);
CREATE TABLE service_sites (
    url TEXT PRIMARY KEY,
    site TEXT NOT NULL,
    added_at BIGINT NOT NULL
);
CREATE TABLE service_backoff (
    site TEXT PRIMARY KEY,
    failures BIGINT NOT NULL,
    refusals BIGINT NOT NULL,
    until_at BIGINT NOT NULL,
    last_outcome TEXT NOT NULL
);
CREATE TABLE service_state (
    name TEXT PRIMARY KEY,
    value BIGINT NOT NULL
);
CREATE TABLE service_monthly (
    domain TEXT NOT NULL,
    month TEXT NOT NULL,
    reports BIGINT NOT NULL,
    urls BIGINT NOT NULL,
    best BIGINT NOT NULL,
    score_sum BIGINT NOT NULL,
    lowest BIGINT NOT NULL,
    PRIMARY KEY (domain, month)
);
CREATE TABLE service_monthly_urls (
    domain TEXT NOT NULL,
    month TEXT NOT NULL,
    url_hash BIGINT NOT NULL,
    PRIMARY KEY (domain, month, url_hash)
);
";
