//! The pages' data (`site::SiteData`) on the service: `jittybot serve` merges
//! `site::router(Arc::new(ServiceData::new(service)), ...)` beside the JSON API.

use std::collections::HashSet;
use std::net::IpAddr;

use audit::{Analysis, Grade};
use jiff::Timestamp;
use site::stats::{Stats, StatsBuilder};
use site::{
    CurrentReport, DataError, DomainHistory, MonthlySummary, ReportLookup, ReportSummary, SiteData,
    SubmitError, Submitted,
};
use url::Url;

use crate::ids::{normalize_domain, ReportId};
use crate::service::{Service, SubmitError as ServiceSubmitError};
use crate::store::{self, StoredReport};
use crate::ServiceError;

/// The service as the pages see it.
#[derive(Clone, Debug)]
pub struct ServiceData {
    service: Service,
}

impl ServiceData {
    /// The pages' view of `service`.
    pub fn new(service: Service) -> ServiceData {
        ServiceData { service }
    }
}

fn data_error(error: ServiceError) -> DataError {
    tracing::error!(error = %error, "store error");
    DataError("the store could not be read".into())
}

fn submit_error(error: ServiceSubmitError) -> SubmitError {
    match error {
        ServiceSubmitError::TooMany { retry_after } => SubmitError::TooMany { retry_after },
        ServiceSubmitError::Store(e) => SubmitError::Unavailable(data_error(e).0),
        other => SubmitError::Invalid(other.to_string()),
    }
}

/// The page id of a report (every service id, 26 base32 characters, is one).
fn site_id(id: &ReportId) -> Option<site::ReportId> {
    site::ReportId::parse(id.as_str())
}

fn our_id(id: &site::ReportId) -> Option<ReportId> {
    id.as_str().parse().ok()
}

/// A stored report in the pages' shape (a paste has the URL `paste:robots.txt`).
fn page_report(stored: StoredReport) -> Option<site::StoredReport> {
    let row = stored.row;
    let state = match (row.state, stored.report) {
        (store::ReportState::Queued, _) => site::ReportState::Queued,
        (store::ReportState::Running, _) => site::ReportState::Running,
        (store::ReportState::Done, Some(analysis)) => site::ReportState::Done(Box::new(analysis)),
        (_, _) => {
            site::ReportState::Failed(row.error.unwrap_or_else(|| "the analysis failed".into()))
        }
    };
    let url = match row.url {
        Some(url) => url,
        None => Url::parse("paste:robots.txt").ok()?,
    };
    Some(site::StoredReport {
        id: site_id(&row.id)?,
        domain: row.domain.unwrap_or_default(),
        url,
        created_at: row.created_at,
        state,
    })
}

fn month(summary: &store::retention::MonthlySummary) -> Option<MonthlySummary> {
    let (year, month) = summary.month.split_once('-')?;
    let clamp = |n: i64| u8::try_from(n.clamp(0, 100)).unwrap_or(0);
    Some(MonthlySummary {
        year: year.parse().ok()?,
        month: month.parse().ok()?,
        reports: u32::try_from(summary.reports).unwrap_or(u32::MAX),
        urls: u32::try_from(summary.urls).unwrap_or(u32::MAX),
        best: clamp(summary.best),
        average: summary.average,
        lowest: clamp(summary.lowest),
    })
}

impl ServiceData {
    async fn domain_history(&self, domain: &str) -> Result<Option<DomainHistory>, ServiceError> {
        let Some(view) = self.service.domain(domain).await? else {
            return Ok(None);
        };
        let reports = view
            .reports
            .iter()
            .filter_map(|row| {
                let score = row.score?;
                Some(ReportSummary {
                    id: site_id(&row.id)?,
                    url: row.url.clone()?,
                    analysed_at: row.analysed_at.unwrap_or(row.created_at),
                    score,
                    grade: Grade::from_score(score),
                    indexable: row.indexable,
                })
            })
            .collect();
        let months = view.summaries.iter().filter_map(month).collect();
        Ok(Some(DomainHistory {
            reports,
            months,
            has_icon: view.has_icon,
        }))
    }

    async fn build_stats(&self) -> Result<Stats, ServiceError> {
        let store = self.service.store();
        let current: HashSet<ReportId> = store
            .current_rows()
            .await?
            .into_iter()
            .map(|r| r.id)
            .collect();
        let mut builder = StatsBuilder::new();
        for (id, at, score) in store.done_scores().await? {
            builder.add_score(at, score);
            if current.contains(&id) {
                if let Some(analysis) = store.report(&id).await?.and_then(|r| r.report) {
                    builder.add_current_document(&analysis);
                }
            }
        }
        for domain in store.summary_domains().await? {
            for summary in store.summaries(&domain).await?.iter().filter_map(month) {
                builder.add_summary(&summary);
            }
        }
        Ok(builder.finish())
    }
}

impl SiteData for ServiceData {
    async fn submit_url(&self, url: &str, client: IpAddr) -> Result<Submitted, SubmitError> {
        let submitted = self
            .service
            .submit_analysis(url, client)
            .await
            .map_err(submit_error)?;
        let report = self
            .service
            .report(&submitted.id)
            .await
            .map_err(|e| submit_error(e.into()))?;
        let domain = report.and_then(|r| r.row.domain).unwrap_or_default();
        let id = site_id(&submitted.id).ok_or_else(|| SubmitError::Unavailable("bad id".into()))?;
        Ok(Submitted { id, domain })
    }

    async fn submit_paste(
        &self,
        body: Vec<u8>,
        client: IpAddr,
    ) -> Result<site::ReportId, SubmitError> {
        let submitted = self
            .service
            .submit_paste(&body, client)
            .await
            .map_err(submit_error)?;
        site_id(&submitted.id).ok_or_else(|| SubmitError::Unavailable("bad id".into()))
    }

    async fn report(&self, domain: &str, id: &site::ReportId) -> Result<ReportLookup, DataError> {
        let domain = normalize_domain(domain);
        let found = match our_id(id) {
            Some(id) => self.service.report(&id).await.map_err(data_error)?,
            None => None,
        };
        match found {
            Some(stored)
                if !stored.row.is_paste && stored.row.domain.as_deref() == Some(&domain) =>
            {
                Ok(page_report(stored).map_or(ReportLookup::Missing, ReportLookup::Found))
            }
            Some(_) => Ok(ReportLookup::Missing),
            // A report no longer stored, of a domain with summaries, was folded into them.
            None => {
                let folded = !self
                    .service
                    .store()
                    .summaries(&domain)
                    .await
                    .map_err(data_error)?
                    .is_empty();
                Ok(if folded {
                    ReportLookup::Folded
                } else {
                    ReportLookup::Missing
                })
            }
        }
    }

    async fn paste(&self, id: &site::ReportId) -> Result<Option<site::StoredReport>, DataError> {
        let Some(id) = our_id(id) else {
            return Ok(None);
        };
        let stored = self.service.report(&id).await.map_err(data_error)?;
        Ok(stored.filter(|s| s.row.is_paste).and_then(page_report))
    }

    async fn previous_report(
        &self,
        url: &Url,
        before: Timestamp,
    ) -> Result<Option<Analysis>, DataError> {
        Ok(self
            .service
            .store()
            .previous_report(url, before)
            .await
            .map_err(data_error)?
            .and_then(|r| r.report))
    }

    async fn url_indexable(&self, url: &Url) -> Result<Option<bool>, DataError> {
        self.service
            .store()
            .url_indexable(url)
            .await
            .map_err(data_error)
    }

    async fn domain(&self, domain: &str) -> Result<Option<DomainHistory>, DataError> {
        self.domain_history(domain).await.map_err(data_error)
    }

    async fn current_reports(&self) -> Result<Vec<CurrentReport>, DataError> {
        let rows = self
            .service
            .store()
            .current_rows()
            .await
            .map_err(data_error)?;
        Ok(rows
            .into_iter()
            .filter_map(|r| {
                Some(CurrentReport {
                    id: site_id(&r.id)?,
                    domain: r.domain,
                    url: r.url,
                    analysed_at: r.created_at,
                    score: r.score,
                    indexable: r.indexable,
                    domain_off_ranking: r.off_ranking,
                    has_icon: r.has_icon,
                })
            })
            .collect())
    }

    async fn stats(&self) -> Result<Stats, DataError> {
        self.build_stats().await.map_err(data_error)
    }

    async fn icon(&self, domain: &str) -> Result<Option<Vec<u8>>, DataError> {
        let icon = self
            .service
            .store()
            .icon(&normalize_domain(domain))
            .await
            .map_err(data_error)?;
        Ok(icon.map(|i| i.png))
    }
}
