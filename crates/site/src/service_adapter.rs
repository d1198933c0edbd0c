//! [`SiteData`] for the service's handle (`service::Service`): the pages of `jittybot serve`.
//!
//! Reads go through the service's public API where it has one (reports, domains, summaries,
//! icons, submissions). Two reads the pages need and the API lacks are made here with SQL over
//! the service's tables, on both backends: the newest finished report of every published URL
//! (ranking, totals, sitemap: ranked or not, indexable or not), and the score column of every
//! finished report (the month-by-month figures of `/stats`).

use std::collections::HashMap;
use std::net::IpAddr;

use audit::{Analysis, Grade};
use db::sqlx;
use jiff::Timestamp;
use url::Url;

use crate::data::{
    CurrentReport, DataError, DomainHistory, MonthlySummary, ReportId, ReportLookup, ReportState,
    ReportSummary, SiteData, StoredReport, SubmitError, Submitted,
};
use crate::stats::{Stats, StatsBuilder};

/// The most full documents `/stats` reads (the newest current reports first): the crawler
/// and finding figures are made from these; grades and month-by-month figures from every
/// report's columns.
pub const MAX_STATS_DOCUMENTS: usize = 5_000;

/// The site's data over the service.
#[derive(Clone, Debug)]
pub struct ServiceData {
    service: service::Service,
}

impl ServiceData {
    /// The pages' view of `service`.
    pub fn new(service: service::Service) -> ServiceData {
        ServiceData { service }
    }
}

fn data_error(error: impl std::fmt::Display) -> DataError {
    DataError(error.to_string())
}

fn service_id(id: &ReportId) -> Option<service::ReportId> {
    id.as_str().parse().ok()
}

fn site_id(id: &service::ReportId) -> Option<ReportId> {
    ReportId::parse(id.as_str())
}

/// `2026-01` → (2026, 1).
fn year_month(text: &str) -> Option<(i16, i8)> {
    let (year, month) = text.split_once('-')?;
    Some((year.parse().ok()?, month.parse().ok()?))
}

fn summary(month: &service::store::retention::MonthlySummary) -> Option<MonthlySummary> {
    let (year, number) = year_month(&month.month)?;
    Some(MonthlySummary {
        year,
        month: number,
        reports: u32::try_from(month.reports).ok()?,
        urls: u32::try_from(month.urls).ok()?,
        best: u8::try_from(month.best).ok()?,
        average: month.average,
        lowest: u8::try_from(month.lowest).ok()?,
    })
}

fn state_of(stored: service::store::StoredReport) -> ReportState {
    match stored.row.state {
        service::ReportState::Queued => ReportState::Queued,
        service::ReportState::Running => ReportState::Running,
        service::ReportState::Failed => ReportState::Failed(
            stored
                .row
                .error
                .unwrap_or_else(|| "The analysis could not run.".to_owned()),
        ),
        service::ReportState::Done => match stored.report {
            Some(analysis) => ReportState::Done(Box::new(analysis)),
            None => ReportState::Failed("The stored report could not be read.".to_owned()),
        },
    }
}

/// One row of the current-reports query.
type CurrentRow = (
    Option<String>,
    Option<String>,
    String,
    Option<i64>,
    Option<i64>,
    bool,
    Option<bool>,
    i64,
);

const CURRENT_SQL: &str = "SELECT r.domain, r.url, r.id, r.analysed_at, r.score, r.indexable, \
     d.off_ranking, CAST(CASE WHEN d.icon IS NULL THEN 0 ELSE 1 END AS BIGINT) \
     FROM service_reports r \
     JOIN (SELECT url, MAX(created_at) AS at FROM service_reports \
           WHERE is_paste = FALSE AND state = 'done' GROUP BY url) n \
       ON n.url = r.url AND n.at = r.created_at \
     LEFT JOIN service_domains d ON d.domain = r.domain \
     WHERE r.is_paste = FALSE AND r.state = 'done'";

const SCORES_SQL: &str = "SELECT analysed_at, score FROM service_reports \
     WHERE is_paste = FALSE AND state = 'done' AND analysed_at IS NOT NULL AND score IS NOT NULL";

const MONTHS_SQL: &str = "SELECT month, reports, score_sum FROM service_monthly";

fn current_report(row: CurrentRow) -> Option<CurrentReport> {
    let (domain, url, id, at, score, indexable, off, icon) = row;
    Some(CurrentReport {
        domain: domain?,
        id: ReportId::parse(&id)?,
        url: Url::parse(&url?).ok()?,
        analysed_at: db::from_millis(at?),
        score: u8::try_from(score?).ok()?,
        indexable,
        domain_off_ranking: off.unwrap_or(false),
        has_icon: icon != 0,
    })
}

impl ServiceData {
    fn store(&self) -> &service::Store {
        self.service.store()
    }

    /// The finished reports of `url`'s domain that are reports of `url`, newest first.
    async fn url_rows(&self, url: &Url) -> Result<Vec<service::ReportRow>, DataError> {
        let Some(domain) = service::registrable_domain(url) else {
            return Ok(Vec::new());
        };
        let domain = self.service.domain(&domain).await.map_err(data_error)?;
        Ok(domain
            .map(|view| view.reports)
            .unwrap_or_default()
            .into_iter()
            .filter(|row| row.url.as_ref() == Some(url))
            .filter(|row| row.state == service::ReportState::Done && !row.is_paste)
            .collect())
    }

    async fn month_figures(&self, builder: &mut StatsBuilder) -> Result<(), DataError> {
        let scores: Vec<(i64, i64)> = db::with_pool!(self.store().db(), pool =>
            sqlx::query_as(SCORES_SQL).fetch_all(pool).await)
        .map_err(data_error)?;
        for (at, score) in scores {
            builder.add_score(db::from_millis(at), u8::try_from(score).unwrap_or(0));
        }
        let months: Vec<(String, i64, i64)> = db::with_pool!(self.store().db(), pool =>
            sqlx::query_as(MONTHS_SQL).fetch_all(pool).await)
        .map_err(data_error)?;
        for (month, reports, score_sum) in months {
            let (Some((year, number)), Ok(count)) = (year_month(&month), u32::try_from(reports))
            else {
                continue;
            };
            builder.add_summary(&MonthlySummary {
                year,
                month: number,
                reports: count,
                urls: 0,
                best: 0,
                average: if count == 0 {
                    0.0
                } else {
                    score_sum as f64 / f64::from(count)
                },
                lowest: 0,
            });
        }
        Ok(())
    }
}

impl SiteData for ServiceData {
    async fn submit_url(&self, url: &str, client: IpAddr) -> Result<Submitted, SubmitError> {
        let submitted = self
            .service
            .submit_analysis(url, client)
            .await
            .map_err(submit_error)?;
        let id = site_id(&submitted.id)
            .ok_or_else(|| SubmitError::Unavailable("the report id is not usable".into()))?;
        let parsed = fetch::parse_target(url).map_err(|e| SubmitError::Invalid(e.to_string()))?;
        let domain = service::registrable_domain(&parsed)
            .ok_or_else(|| SubmitError::Invalid("that address has no domain".into()))?;
        Ok(Submitted { id, domain })
    }

    async fn submit_paste(&self, body: Vec<u8>, client: IpAddr) -> Result<ReportId, SubmitError> {
        let submitted = self
            .service
            .submit_paste(&body, client)
            .await
            .map_err(submit_error)?;
        site_id(&submitted.id)
            .ok_or_else(|| SubmitError::Unavailable("the report id is not usable".into()))
    }

    async fn report(&self, domain: &str, id: &ReportId) -> Result<ReportLookup, DataError> {
        let found = match service_id(id) {
            Some(sid) => self.service.report(&sid).await.map_err(data_error)?,
            None => None,
        };
        match found {
            Some(stored)
                if !stored.row.is_paste && stored.row.domain.as_deref() == Some(domain) =>
            {
                let Some(url) = stored.row.url.clone() else {
                    return Ok(ReportLookup::Missing);
                };
                let created_at = stored.row.created_at;
                Ok(ReportLookup::Found(StoredReport {
                    id: id.clone(),
                    domain: domain.to_owned(),
                    url,
                    created_at,
                    state: state_of(stored),
                }))
            }
            Some(_) => Ok(ReportLookup::Missing),
            // Folded reports are deleted: an address of a domain that has monthly summaries
            // leads to the domain page, where what is left of it is.
            None => {
                let months = self.store().summaries(domain).await.map_err(data_error)?;
                Ok(if months.is_empty() {
                    ReportLookup::Missing
                } else {
                    ReportLookup::Folded
                })
            }
        }
    }

    async fn paste(&self, id: &ReportId) -> Result<Option<StoredReport>, DataError> {
        let Some(sid) = service_id(id) else {
            return Ok(None);
        };
        let Some(stored) = self.service.report(&sid).await.map_err(data_error)? else {
            return Ok(None);
        };
        if !stored.row.is_paste {
            return Ok(None);
        }
        let url = Url::parse("paste:robots.txt").map_err(data_error)?;
        Ok(Some(StoredReport {
            id: id.clone(),
            domain: String::new(),
            url,
            created_at: stored.row.created_at,
            state: state_of(stored),
        }))
    }

    async fn previous_report(
        &self,
        url: &Url,
        before: Timestamp,
    ) -> Result<Option<Analysis>, DataError> {
        let rows = self.url_rows(url).await?;
        let Some(row) = rows
            .iter()
            // The store keeps milliseconds: compare at that precision, or a report
            // would be its own predecessor.
            .filter(|row| {
                row.analysed_at
                    .is_some_and(|at| at.as_millisecond() < before.as_millisecond())
            })
            .max_by_key(|row| row.analysed_at)
        else {
            return Ok(None);
        };
        let stored = self.service.report(&row.id).await.map_err(data_error)?;
        Ok(stored.and_then(|stored| stored.report))
    }

    async fn url_indexable(&self, url: &Url) -> Result<Option<bool>, DataError> {
        let rows = self.url_rows(url).await?;
        Ok(rows
            .iter()
            .max_by_key(|row| row.created_at)
            .map(|row| row.indexable))
    }

    async fn domain(&self, domain: &str) -> Result<Option<DomainHistory>, DataError> {
        let Some(view) = self.service.domain(domain).await.map_err(data_error)? else {
            return Ok(None);
        };
        // Whether each URL may be indexed is its newest report's say.
        let mut newest: HashMap<String, (Timestamp, bool)> = HashMap::new();
        for row in view
            .reports
            .iter()
            .filter(|row| row.state == service::ReportState::Done)
        {
            if let Some(url) = &row.url {
                let entry = newest
                    .entry(url.to_string())
                    .or_insert((row.created_at, row.indexable));
                if row.created_at > entry.0 {
                    *entry = (row.created_at, row.indexable);
                }
            }
        }
        let reports = view
            .reports
            .iter()
            .filter(|row| row.state == service::ReportState::Done && !row.is_paste)
            .filter_map(|row| {
                let url = row.url.clone()?;
                let score = row.score?;
                Some(ReportSummary {
                    id: site_id(&row.id)?,
                    indexable: newest.get(url.as_str()).is_some_and(|n| n.1),
                    url,
                    analysed_at: row.analysed_at.unwrap_or(row.created_at),
                    score,
                    grade: Grade::from_score(score),
                })
            })
            .collect();
        let has_icon = self
            .store()
            .icon(domain)
            .await
            .map_err(data_error)?
            .is_some();
        Ok(Some(DomainHistory {
            reports,
            months: view.summaries.iter().filter_map(summary).collect(),
            has_icon,
        }))
    }

    async fn current_reports(&self) -> Result<Vec<CurrentReport>, DataError> {
        let rows: Vec<CurrentRow> = db::with_pool!(self.store().db(), pool =>
            sqlx::query_as(CURRENT_SQL).fetch_all(pool).await)
        .map_err(data_error)?;
        Ok(rows.into_iter().filter_map(current_report).collect())
    }

    async fn stats(&self) -> Result<Stats, DataError> {
        let mut current = self.current_reports().await?;
        current.sort_by_key(|report| std::cmp::Reverse(report.analysed_at));
        let mut builder = StatsBuilder::new();
        self.month_figures(&mut builder).await?;
        for report in current.iter().take(MAX_STATS_DOCUMENTS) {
            let Some(sid) = service_id(&report.id) else {
                continue;
            };
            let stored = self.service.report(&sid).await.map_err(data_error)?;
            if let Some(analysis) = stored.and_then(|stored| stored.report) {
                builder.add_current_document(&analysis);
            }
        }
        Ok(builder.finish())
    }

    async fn icon(&self, domain: &str) -> Result<Option<Vec<u8>>, DataError> {
        let icon = self.store().icon(domain).await.map_err(data_error)?;
        Ok(icon.map(|icon| icon.png))
    }
}

fn submit_error(error: service::SubmitError) -> SubmitError {
    match error {
        service::SubmitError::TooMany { retry_after } => SubmitError::TooMany { retry_after },
        service::SubmitError::Store(error) => SubmitError::Unavailable(error.to_string()),
        other => SubmitError::Invalid(other.to_string()),
    }
}
