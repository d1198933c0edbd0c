//! Every limit of the service, named. The bot page fixes the schedule and retention numbers; the
//! rest protect the sites analysed and the service itself.

use std::time::Duration;

const HOUR: Duration = Duration::from_secs(60 * 60);
const DAY: Duration = Duration::from_secs(24 * 60 * 60);

/// A URL analysed less than this long ago answers with that report instead of fetching again.
pub const REUSE_WINDOW: Duration = Duration::from_secs(10 * 60);
/// Analyses (and pastes) one client address may queue per [`CLIENT_WINDOW`].
pub const CLIENT_ANALYSES_PER_WINDOW: u32 = 10;
/// The window of [`CLIENT_ANALYSES_PER_WINDOW`].
pub const CLIENT_WINDOW: Duration = Duration::from_secs(60);
/// Analyses and pastes one client may submit per [`QUOTA_DAY`] (counted from its first);
/// one more is refused with `429` and the time left. With [`CLIENT_ANALYSES_PER_WINDOW`]
/// alone, one client could store 14,400 pastes a day.
pub const CLIENT_SUBMISSIONS_PER_DAY: u32 = 200;
/// The window of [`CLIENT_SUBMISSIONS_PER_DAY`].
pub const QUOTA_DAY: Duration = DAY;
/// Client addresses tracked at once by the per-client limit; beyond it the oldest windows
/// are forgotten first, so memory stays bounded whatever the number of clients.
pub const MAX_TRACKED_CLIENTS: usize = 100_000;
/// The largest JSON body accepted by `POST /api/analyze` (a URL of at most
/// [`fetch::MAX_TARGET_BYTES`] and some JSON around it).
pub const ANALYZE_BODY_LIMIT: usize = 8 * 1024;
/// The largest robots.txt accepted by `POST /api/paste`: what the engine reads, 500 KiB.
pub const MAX_PASTE_BYTES: usize = robots::MAX_ROBOTS_TXT_BYTES;
/// The largest request body of `POST /api/paste`: the file plus room for multipart headers.
pub const PASTE_BODY_LIMIT: usize = MAX_PASTE_BYTES + 16 * 1024;
/// The most reports `GET /api/score/{domain}` lists (newest first); the rest are counted.
pub const MAX_DOMAIN_REPORTS: usize = 500;
/// Reports per page of a domain's page (`/score/{domain}?page=N`, newest first); every
/// report is reachable, page by page.
pub const DOMAIN_PAGE_REPORTS: usize = 100;
/// Analysis workers per `serve` process (each runs one analysis at a time).
pub const WORKERS: usize = 4;
/// How much longer than its analysis's deadline (`--timeout`) a job's lease lasts: time to
/// store the report. The lease is also renewed every [`JOB_LEASE_RENEW`] while the analysis
/// runs, so a live worker never loses its job (and its site) to another.
pub const JOB_LEASE_MARGIN: Duration = Duration::from_secs(60);
/// How long a worker holds a job (and its site) without finishing it, at the default
/// analysis budget: the budget plus [`JOB_LEASE_MARGIN`]. A job left by a dead process is taken
/// again after this. (The workers use their configured budget plus the margin.)
pub const JOB_LEASE: Duration =
    Duration::from_secs(audit::limits::ANALYSIS_BUDGET.as_secs() + JOB_LEASE_MARGIN.as_secs());
/// How often a running analysis renews its job's and its site's leases.
pub const JOB_LEASE_RENEW: Duration = Duration::from_secs(20);
/// Jobs one client may have waiting or running at once (a client: see `client::ClientKey`);
/// one more is refused with `429`.
pub const MAX_QUEUED_PER_CLIENT: usize = 4;
/// Workers one client's jobs may occupy at once, across processes: the other workers stay
/// free for everyone else. Among the jobs ready to run, the client with the fewest running
/// goes first (then the oldest job).
pub const MAX_RUNNING_PER_CLIENT: usize = 2;
/// The `Retry-After` of a `429` for a client that has its share of the queue.
pub const QUEUE_SHARE_RETRY_AFTER: Duration = Duration::from_secs(60);
/// Jobs the whole queue holds; one more is refused with `503` and [`BUSY_RETRY_AFTER`].
pub const MAX_QUEUED_JOBS: usize = 1_000;
/// Times a job is started before it is marked failed (a job that kills its process each time
/// must not kill every process that takes it).
pub const MAX_JOB_ATTEMPTS: i64 = 3;
/// How often an idle worker looks for jobs queued by another process (jobs queued by this
/// process wake it at once).
pub const WORKER_POLL: Duration = Duration::from_secs(2);

/// Pastes audited at once, each on a thread of the blocking pool (never on the async
/// runtime's threads, which answer every page): an audit may use up to
/// `audit::limits::AUDIT_CPU_BUDGET` of CPU, and the pages must keep a core.
pub const PASTE_AUDITS_AT_ONCE: usize = 2;
/// Pastes waiting for an audit thread; one more is refused with `503` and
/// [`BUSY_RETRY_AFTER`] (memory: each holds its body, up to [`MAX_PASTE_BYTES`]).
pub const PASTES_WAITING: usize = 16;
/// The `Retry-After` of a `503` when the service is too busy (pastes or the queue full).
pub const BUSY_RETRY_AFTER: Duration = Duration::from_secs(30);

/// How long a client has to send a request's head (request line and headers), from the
/// moment the server starts reading it; also how long a kept-alive connection may sit idle
/// between two requests. Then the connection is closed.
pub const HEADER_READ_TIMEOUT: Duration = Duration::from_secs(10);
/// How long a client has to send a request's body, once its head is read; then the request
/// fails (`408`) and the connection is closed.
pub const REQUEST_BODY_TIMEOUT: Duration = Duration::from_secs(30);
/// The longest a connection lives, however busy: it is then asked to close after its current
/// answer, and cut [`CONNECTION_CLOSE_GRACE`] later (a client that reads its answer slowly
/// holds a connection no longer than this).
pub const CONNECTION_MAX_AGE: Duration = Duration::from_secs(120);
/// How long a connection asked to close (too old, or shutdown) may take to finish its answer.
pub const CONNECTION_CLOSE_GRACE: Duration = Duration::from_secs(10);
/// Connections open at once, at most; the server also keeps [`FD_RESERVE`] file descriptors
/// free for the store, the fetcher and the logs, whatever the process's file limit. A new
/// connection beyond either is answered `503` and closed at once.
pub const MAX_CONNECTIONS: usize = 10_000;
/// File descriptors the connections never use (see [`MAX_CONNECTIONS`]).
pub const FD_RESERVE: usize = 256;
/// Connections open at once from one client address (an IPv6 /64 counts as one address;
/// trusted proxies are not limited): a browser opens about six.
pub const MAX_CONNECTIONS_PER_CLIENT: usize = 64;
/// How long the server waits before accepting again when the process is out of file
/// descriptors (instead of spinning on the failing accept).
pub const ACCEPT_BACKOFF: Duration = Duration::from_millis(100);

/// A result expires after this long, and the site is checked again: a URL is fetched at most
/// once per this period by the schedule.
pub const RESULT_LIFETIME: Duration = Duration::from_secs(7 * 24 * 60 * 60);
/// The schedule fetches one site at a time, with this pause between two sites.
pub const BETWEEN_SITES: Duration = Duration::from_secs(15);
/// A site that could not be reached or asked for fewer requests is left alone this long
/// after the first failure ...
pub const FAILURE_BACKOFF_FIRST: Duration = HOUR;
/// ... twice as long after each further failure in a row, up to this (also the most a
/// `Retry-After` is honoured up to).
pub const FAILURE_BACKOFF_MAX: Duration = Duration::from_secs(7 * 24 * 60 * 60);
/// The longest `Retry-After` the schedule honours: the same limit as the back-off. The
/// server's value is read as sent (the fetcher's own cap of a day is the crawler's), so a
/// site asking for three days is left alone for three days.
pub const RETRY_AFTER_MAX: Duration = FAILURE_BACKOFF_MAX;
/// A site that refuses the bot or shows it a challenge is left alone this long ...
pub const REFUSAL_BACKOFF_FIRST: Duration = DAY;
/// ... doubling after each refusal in a row, up to this.
pub const REFUSAL_BACKOFF_MAX: Duration = Duration::from_secs(30 * 24 * 60 * 60);
/// The scheduler's lease: one process schedules at a time; another takes over this long
/// after it stops renewing.
pub const SCHEDULER_LEASE: Duration = Duration::from_secs(5 * 60);
/// How often an idle scheduler (nothing due, or the lease held elsewhere) looks again.
pub const SCHEDULER_IDLE_POLL: Duration = Duration::from_secs(60);

/// Reports are kept in full this many months, then folded into monthly summaries.
pub const RETENTION_MONTHS: i8 = 6;
/// How often `serve` runs the retention pass.
pub const MAINTENANCE_EVERY: Duration = HOUR;
/// The maintenance lease (one process folds at a time).
pub const MAINTENANCE_LEASE: Duration = Duration::from_secs(30 * 60);
/// SQLite page cache (KiB) of the one connection the retention pass folds with, for the pass
/// only (then put back to the default). Each batch deletes reports and documents spread over
/// the whole file (random ids), dirtying tens of thousands of pages; with the default 2 MB cache
/// SQLite spills them to the WAL mid-transaction and re-reads index pages it just evicted.
/// Measured on 1,000,000 reports it did not shorten the pass (116 s against 113–117 s) but cut
/// its system time by a third (README, "Benchmark"). The serving connections keep the default,
/// so the service's memory only grows during a pass.
pub const RETENTION_SQLITE_CACHE_KIB: i64 = 262_144;

/// Reports folded per write transaction by the retention pass (whole domains: a batch closes
/// at the first domain that reaches it). Documents are keyed by random ids, so the pages a
/// batch deletes from are scattered and shared with other batches' documents; each batch
/// rewrites its pages once, so fewer, larger batches rewrite fewer pages. On the 1,000,000-
/// report SQLite benchmark (699,530 folded) 20,000 took the pass from 70–75 s (5,000) to
/// 53–56 s. A batch then holds SQLite's write lock for about 1.6 s, far under the 30 s
/// `db::SQLITE_BUSY_TIMEOUT` other writers wait.
pub const FOLD_BATCH_REPORTS: usize = 20_000;

/// A domain's icon is looked for again when it is this old (the icon crate's policy) ...
pub const ICON_REFRESH: Duration = icon::ICON_REFRESH_AGE.unsigned_abs();
/// ... or this often while the domain has none.
pub const ICON_RETRY: Duration = icon::NO_ICON_RETRY_AGE.unsigned_abs();

/// Domains shown per grade by the ranking.
pub const RANKING_PER_GRADE: usize = 6;
/// The ranking's pick changes every this long (the same for everyone within a window).
pub const RANKING_WINDOW: Duration = Duration::from_secs(30 * 60);

/// How long the list of every URL's current report (the ranking, its totals, the sitemap) is
/// reused before it is read from the store again: the home page must not scan every report on
/// each request. The pick itself changes every [`RANKING_WINDOW`]; this only bounds how late
/// a new site shows up.
pub const DATA_REFRESH: Duration = Duration::from_secs(60);

/// How long the statistics of `/stats` are reused before they are worked out again.
pub const STATS_REFRESH: Duration = Duration::from_secs(600);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_published_schedule_numbers() {
        assert_eq!(RESULT_LIFETIME.as_secs(), 7 * 86_400);
        assert_eq!(BETWEEN_SITES.as_secs(), 15);
        assert_eq!(FAILURE_BACKOFF_FIRST.as_secs(), 3_600);
        assert_eq!(FAILURE_BACKOFF_MAX.as_secs(), 7 * 86_400);
        assert_eq!(RETRY_AFTER_MAX.as_secs(), 7 * 86_400);
        assert_eq!(REFUSAL_BACKOFF_FIRST.as_secs(), 86_400);
        assert_eq!(REFUSAL_BACKOFF_MAX.as_secs(), 30 * 86_400);
        assert_eq!(RETENTION_MONTHS, 6);
        assert_eq!(ICON_REFRESH.as_secs(), 30 * 86_400);
        assert_eq!(ICON_RETRY.as_secs(), 7 * 86_400);
        assert_eq!(REUSE_WINDOW.as_secs(), 600);
        assert_eq!(MAX_PASTE_BYTES, 512_000);
        assert_eq!(RANKING_PER_GRADE, 6);
        assert_eq!(DOMAIN_PAGE_REPORTS, 100);
        assert_eq!(RANKING_WINDOW.as_secs(), 1_800);
        assert!(JOB_LEASE > audit::limits::ANALYSIS_BUDGET);
    }
}
