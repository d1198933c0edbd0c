//! The schedule's state: per-site back-off and the time of the last scheduled check, stored so
//! that it survives restarts and moves with the scheduler lease between processes.

use db::sqlx;
use jiff::Timestamp;
use url::Url;

use super::{dur_ms, ms, ts, ReportState, Store};
use crate::error::{q, ServiceError};
use crate::limits::RESULT_LIFETIME;

/// What a site's last scheduled check found, as its back-off remembers it (stored as `ok`,
/// `failure`, `refusal`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum LastOutcome {
    /// The site answered: no back-off.
    Ok,
    /// Unreachable, or it asked for fewer requests.
    Failure,
    /// It refused the bot or showed it a challenge.
    Refusal,
}

impl LastOutcome {
    /// The stored name.
    pub fn as_str(self) -> &'static str {
        match self {
            LastOutcome::Ok => "ok",
            LastOutcome::Failure => "failure",
            LastOutcome::Refusal => "refusal",
        }
    }

    /// The outcome of a stored name. A name this build does not know (a newer build wrote it)
    /// reads as a failure: the site keeps the back-off the store gave it, as the due-URL query
    /// (anything but `ok` backs off) does.
    pub fn parse(text: &str) -> LastOutcome {
        match text {
            "ok" => LastOutcome::Ok,
            "refusal" => LastOutcome::Refusal,
            _ => LastOutcome::Failure,
        }
    }
}

/// One site's back-off: failures and refusals in a row, and until when it is left alone.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Backoff {
    /// Failures in a row (unreachable, 429, 5xx, network errors).
    pub failures: u32,
    /// Refusals or challenges in a row.
    pub refusals: u32,
    /// The site is not checked before this.
    pub until: Timestamp,
    /// What the last check found.
    pub last_outcome: LastOutcome,
}

/// A URL due for a scheduled check.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DueUrl {
    /// The URL.
    pub url: Url,
    /// Its site.
    pub site: String,
    /// When its newest report was asked for (none: never analysed).
    pub last: Option<Timestamp>,
}

/// The stored time of the end of the last scheduled check.
const LAST_CHECK: &str = "scheduler.last_check";

impl Store {
    /// The URL most overdue for a check at `now`: on the sites list or analysed before
    /// (pastes never), whose newest report is at least [`RESULT_LIFETIME`] old (or which has
    /// none); or, when its site failed or refused at its last scheduled check and is done
    /// backing off, the URL of that check (the site's newest scheduled report is this URL's):
    /// the other URLs of the site keep their own expiry, so a URL fetched successfully hours
    /// before the failure is not fetched again. Never on a site still backing off. Oldest
    /// first.
    pub async fn next_due(&self, now: Timestamp) -> Result<Option<DueUrl>, ServiceError> {
        let sql = "SELECT u.url, u.site, l.at FROM \
             (SELECT url, site FROM service_sites \
              UNION SELECT url, site FROM service_reports WHERE is_paste = FALSE AND url IS NOT NULL) u \
             LEFT JOIN (SELECT url, MAX(created_at) AS at FROM service_reports \
                        WHERE is_paste = FALSE AND url IS NOT NULL GROUP BY url) l ON l.url = u.url \
             LEFT JOIN (SELECT url, MAX(created_at) AS at FROM service_reports \
                        WHERE scheduled = TRUE AND url IS NOT NULL GROUP BY url) us ON us.url = u.url \
             LEFT JOIN (SELECT site, MAX(created_at) AS at FROM service_reports \
                        WHERE scheduled = TRUE AND site IS NOT NULL GROUP BY site) ss ON ss.site = u.site \
             LEFT JOIN service_backoff b ON b.site = u.site \
             WHERE (l.at IS NULL OR l.at <= $1 OR (b.last_outcome <> 'ok' AND us.at = ss.at)) \
               AND (b.until_at IS NULL OR b.until_at <= $2) \
             ORDER BY COALESCE(l.at, 0), u.url LIMIT 64";
        let expired = ms(now).saturating_sub(dur_ms(RESULT_LIFETIME));
        let rows: Vec<(String, String, Option<i64>)> = db::with_pool!(&self.db, pool =>
            sqlx::query_as(sql).bind(expired).bind(ms(now)).fetch_all(pool).await)
        .map_err(q("next due"))?;
        Ok(rows.into_iter().find_map(|(url, site, at)| {
            Some(DueUrl {
                url: Url::parse(&url).ok()?,
                site,
                last: at.map(ts),
            })
        }))
    }

    /// The back-off of `site`, if any.
    pub async fn backoff(&self, site: &str) -> Result<Option<Backoff>, ServiceError> {
        let sql = "SELECT failures, refusals, until_at, last_outcome FROM service_backoff WHERE site = $1";
        let row: Option<(i64, i64, i64, String)> = db::with_pool!(&self.db, pool =>
            sqlx::query_as(sql).bind(site).fetch_optional(pool).await)
        .map_err(q("load backoff"))?;
        Ok(row.map(|(f, r, until, last_outcome)| Backoff {
            failures: u32::try_from(f).unwrap_or(u32::MAX),
            refusals: u32::try_from(r).unwrap_or(u32::MAX),
            until: ts(until),
            last_outcome: LastOutcome::parse(&last_outcome),
        }))
    }

    /// Store `site`'s back-off.
    pub async fn set_backoff(&self, site: &str, backoff: &Backoff) -> Result<(), ServiceError> {
        let sql = "INSERT INTO service_backoff (site, failures, refusals, until_at, last_outcome) \
                   VALUES ($1, $2, $3, $4, $5) ON CONFLICT (site) DO UPDATE SET \
                   failures = excluded.failures, refusals = excluded.refusals, \
                   until_at = excluded.until_at, last_outcome = excluded.last_outcome";
        db::with_pool!(&self.db, pool => sqlx::query(sql).bind(site)
            .bind(i64::from(backoff.failures)).bind(i64::from(backoff.refusals))
            .bind(ms(backoff.until)).bind(backoff.last_outcome.as_str()).execute(pool).await.map(drop))
        .map_err(q("store backoff"))?;
        Ok(())
    }

    /// When the last scheduled check ended.
    pub async fn last_check(&self) -> Result<Option<Timestamp>, ServiceError> {
        let sql = "SELECT value FROM service_state WHERE name = $1";
        let v: Option<i64> = db::with_pool!(&self.db, pool =>
            sqlx::query_scalar(sql).bind(LAST_CHECK).fetch_optional(pool).await)
        .map_err(q("last check"))?;
        Ok(v.map(ts))
    }

    /// Record the end of a scheduled check.
    pub async fn set_last_check(&self, at: Timestamp) -> Result<(), ServiceError> {
        let sql = "INSERT INTO service_state (name, value) VALUES ($1, $2) \
                   ON CONFLICT (name) DO UPDATE SET value = excluded.value";
        db::with_pool!(&self.db, pool => sqlx::query(sql).bind(LAST_CHECK).bind(ms(at)).execute(pool).await.map(drop))
            .map_err(q("store last check"))?;
        Ok(())
    }
}

/// What the schedule knows of one URL: when it was last asked for, what came of it, and
/// its site's back-off ([`crate::schedule::UrlSchedule`] works out the next check).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ScheduleRow {
    /// The URL.
    pub url: Url,
    /// Its site.
    pub site: String,
    /// When it was put on the sites list (`None`: not listed, analysed before).
    pub added_at: Option<Timestamp>,
    /// Its newest report (none: never analysed).
    pub last: Option<LastReport>,
    /// Whether its site's newest scheduled check was of this URL.
    pub last_of_site: bool,
    /// Its site's back-off, if any.
    pub backoff: Option<Backoff>,
}

/// A URL's newest report, as the schedule sees it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LastReport {
    /// The report.
    pub id: crate::ids::ReportId,
    /// When it was asked for.
    pub at: Timestamp,
    /// Where it is.
    pub state: ReportState,
    /// Its score, when done.
    pub score: Option<u8>,
    /// Why it failed, when it did.
    pub error: Option<String>,
}

/// The columns of [`ScheduleRow`], over the URLs `{units}` selects (`url`, `site`,
/// `added_at`). `{reports}` narrows the reports each URL's and site's newest ones are looked
/// for among: empty for the whole schedule (one pass over every report), a condition on the
/// domain for one domain's URLs, whose reports all carry that domain. Without it, a domain page
/// grouped every report of the store three times (seconds per page on a store of 100,000
/// reports, the page's whole time budget under load).
macro_rules! schedule_sql {
    ($units:expr, $reports:expr) => {
        concat!(
            "SELECT u.url, u.site, u.added_at, r.id, r.created_at, r.state, r.score, r.error, \
             us.at, ss.at, b.failures, b.refusals, b.until_at, b.last_outcome FROM (",
            $units,
            ") u \
             LEFT JOIN (SELECT url, MAX(created_at) AS at FROM service_reports \
                        WHERE is_paste = FALSE AND url IS NOT NULL ",
            $reports,
            " GROUP BY url) l ON l.url = u.url \
             LEFT JOIN service_reports r ON r.url = u.url AND r.created_at = l.at AND r.is_paste = FALSE \
             LEFT JOIN (SELECT url, MAX(created_at) AS at FROM service_reports \
                        WHERE scheduled = TRUE AND url IS NOT NULL ",
            $reports,
            " GROUP BY url) us ON us.url = u.url \
             LEFT JOIN (SELECT site, MAX(created_at) AS at FROM service_reports \
                        WHERE scheduled = TRUE AND site IS NOT NULL ",
            $reports,
            " GROUP BY site) ss ON ss.site = u.site \
             LEFT JOIN service_backoff b ON b.site = u.site \
             ORDER BY u.url, u.added_at"
        )
    };
}

type RawScheduleRow = (
    String,
    String,
    Option<i64>,
    Option<String>,
    Option<i64>,
    Option<String>,
    Option<i64>,
    Option<String>,
    Option<i64>,
    Option<i64>,
    Option<i64>,
    Option<i64>,
    Option<i64>,
    Option<String>,
);

fn schedule_row(raw: RawScheduleRow) -> Option<ScheduleRow> {
    let (url, site, added, id, at, state, score, error, url_at, site_at, f, r, until, outcome) =
        raw;
    let last = match (id, at, state) {
        (Some(id), Some(at), Some(state)) => Some(LastReport {
            id: id.parse().ok()?,
            at: ts(at),
            // Unknown states (a newer build wrote them) read as failed, as report rows do.
            state: ReportState::parse(&state).unwrap_or(ReportState::Failed),
            score: score.and_then(|s| u8::try_from(s).ok()),
            error,
        }),
        _ => None,
    };
    let backoff = match (until, outcome) {
        (Some(until), Some(last_outcome)) => Some(Backoff {
            failures: u32::try_from(f.unwrap_or(0)).unwrap_or(u32::MAX),
            refusals: u32::try_from(r.unwrap_or(0)).unwrap_or(u32::MAX),
            until: ts(until),
            last_outcome: LastOutcome::parse(&last_outcome),
        }),
        _ => None,
    };
    Some(ScheduleRow {
        url: Url::parse(&url).ok()?,
        site,
        added_at: added.map(ts),
        last,
        last_of_site: url_at.is_some() && url_at == site_at,
        backoff,
    })
}

/// One row per URL (a URL both listed and analysed keeps its listing).
fn unique(rows: Vec<RawScheduleRow>) -> Vec<ScheduleRow> {
    let mut out: Vec<ScheduleRow> = Vec::with_capacity(rows.len());
    for row in rows.into_iter().filter_map(schedule_row) {
        match out.last_mut() {
            Some(previous) if previous.url == row.url => {
                if previous.added_at.is_none() {
                    previous.added_at = row.added_at;
                }
            }
            _ => out.push(row),
        }
    }
    out
}

impl Store {
    /// What the schedule knows of every URL on the sites list, by URL.
    pub async fn listed_schedule(&self) -> Result<Vec<ScheduleRow>, ServiceError> {
        let sql = schedule_sql!("SELECT url, site, added_at FROM service_sites", "");
        let rows: Vec<RawScheduleRow> =
            db::with_pool!(&self.db, pool => sqlx::query_as(sql).fetch_all(pool).await)
                .map_err(q("listed schedule"))?;
        Ok(unique(rows))
    }

    /// What the schedule knows of every URL of `domain` (analysed before, or listed), by URL.
    pub async fn domain_schedule(&self, domain: &str) -> Result<Vec<ScheduleRow>, ServiceError> {
        let sql = schedule_sql!(
            "SELECT url, site, NULL AS added_at FROM service_reports \
             WHERE domain = $1 AND is_paste = FALSE AND url IS NOT NULL \
             UNION SELECT url, site, added_at FROM service_sites WHERE site LIKE $2",
            "AND domain = $1"
        );
        let pattern = super::domains::site_pattern(domain);
        let rows: Vec<RawScheduleRow> = db::with_pool!(&self.db, pool =>
            sqlx::query_as(sql).bind(domain).bind(&pattern).fetch_all(pool).await)
        .map_err(q("domain schedule"))?;
        let rows = unique(rows);
        Ok(rows
            .into_iter()
            .filter(|row| super::domains::site_in_domain(&row.site, domain))
            .collect())
    }
}
