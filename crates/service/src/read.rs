//! What the API and the pages read: a report and its page, a paste, a domain, the list of
//! current reports, the ranking, the statistics, an icon. Every decision (which reports may be
//! indexed, what is folded, the ranking's pick) is made here, once.

use std::sync::Arc;

use crate::error::ServiceError;
use crate::ids::{normalize_domain, ReportId};
use crate::indexing::{Indexing, NoindexReason};
use crate::limits::{DOMAIN_PAGE_REPORTS, MAX_DOMAIN_REPORTS};
use crate::model::{CurrentReport, DomainView, ReportLookup, ReportPage, StoredReport};
use crate::published::{self, Published};
use crate::ranking::Ranking;
use crate::service::Service;
use crate::stats::{self, Stats};

impl Service {
    /// One report (any state, pastes too), with its document when done. A document that does
    /// not decode is an error ([`ServiceError::is_bad_row`]).
    pub async fn report(&self, id: &ReportId) -> Result<Option<StoredReport>, ServiceError> {
        self.inner.store.report(id).await
    }

    /// The report `id` of `domain`, as its page shows it: with the previous report of its URL
    /// and what search engines are told. A report no longer stored, of a domain with monthly
    /// summaries, was folded into them (the two cannot be told apart otherwise). A paste is
    /// never found here.
    pub async fn report_page(
        &self,
        domain: &str,
        id: &ReportId,
    ) -> Result<ReportLookup, ServiceError> {
        let domain = normalize_domain(domain);
        let store = &self.inner.store;
        let report = match store.report(id).await? {
            Some(report)
                if !report.row.is_paste && report.row.domain.as_deref() == Some(&domain) =>
            {
                report
            }
            Some(_) => return Ok(ReportLookup::Missing),
            None if store.has_summaries(&domain).await? => return Ok(ReportLookup::Folded),
            None => return Ok(ReportLookup::Missing),
        };
        let (Some(analysis), Some(url)) = (&report.report, &report.row.url) else {
            let indexing = Indexing::forbidden(NoindexReason::NotPublished);
            return Ok(found(report, None, indexing));
        };
        // Both at once: on a store over the network each is a round trip.
        let (previous, newest_indexable) = tokio::join!(
            store.previous_report(url, report.row.created_at),
            store.url_indexable(url)
        );
        let previous = match previous {
            Ok(previous) => previous.and_then(|stored| stored.report),
            // The comparison is left out rather than the report.
            Err(error) if error.is_bad_row() => {
                tracing::warn!(%id, error = %error, "the previous report is skipped");
                None
            }
            Err(error) => return Err(error),
        };
        let indexing = Indexing::of_report(analysis, newest_indexable?);
        Ok(found(report, previous, indexing))
    }

    /// The paste `id` (only a paste).
    pub async fn paste(&self, id: &ReportId) -> Result<Option<StoredReport>, ServiceError> {
        Ok(self
            .inner
            .store
            .report(id)
            .await?
            .filter(|report| report.row.is_paste))
    }

    /// A domain's reports and summaries; `None` when it has neither.
    pub async fn domain(&self, domain: &str) -> Result<Option<DomainView>, ServiceError> {
        self.domain_reports_page(domain, MAX_DOMAIN_REPORTS, 0)
            .await
    }

    /// Page `page` (from 1, the newest) of a domain's reports, [`DOMAIN_PAGE_REPORTS`] to a
    /// page, with its summaries and the count of every report; `None` when it has neither,
    /// and for a page past the last.
    pub async fn domain_page(
        &self,
        domain: &str,
        page: u64,
    ) -> Result<Option<DomainView>, ServiceError> {
        let per_page = DOMAIN_PAGE_REPORTS as u64;
        let offset = page.saturating_sub(1).saturating_mul(per_page);
        let view = self
            .domain_reports_page(domain, DOMAIN_PAGE_REPORTS, offset)
            .await?;
        Ok(view.filter(|view| page <= 1 || !view.reports.is_empty()))
    }

    async fn domain_reports_page(
        &self,
        domain: &str,
        limit: usize,
        offset: u64,
    ) -> Result<Option<DomainView>, ServiceError> {
        let domain = normalize_domain(domain);
        let store = &self.inner.store;
        // Three queries at once on three connections: one round trip's wait, not five.
        let ((reports, total_reports), (summaries, off_ranking, has_icon), indexable) = tokio::try_join!(
            store.domain_reports_from(&domain, limit, offset),
            store.summaries_and_flags(&domain),
            store.domain_indexable(&domain)
        )?;
        if reports.is_empty() && summaries.is_empty() {
            return Ok(None);
        }
        Ok(Some(DomainView {
            domain,
            reports,
            total_reports,
            summaries,
            off_ranking,
            indexable,
            has_icon,
        }))
    }

    /// Every URL's current report, read from the store at most once per
    /// [`crate::service::ServiceConfig::data_refresh`].
    pub async fn current(&self) -> Result<Arc<Vec<CurrentReport>>, ServiceError> {
        let inner = &self.inner;
        inner
            .views
            .current
            .get(
                inner.clock.as_ref(),
                inner.config.data_refresh,
                inner.store.current_reports(),
            )
            .await
    }

    /// The ranking of the current 30-minute window (the home page and `/api/ranking`).
    pub async fn ranking(&self) -> Result<Arc<Ranking>, ServiceError> {
        let current = self.current().await?;
        let inner = &self.inner;
        let background = !inner.config.data_refresh.is_zero();
        Ok(inner
            .views
            .ranking
            .get(current, inner.clock.now(), background)
            .await)
    }

    /// The pages offered to search engines (`/sitemap.xml`).
    pub async fn published(&self) -> Result<Vec<Published>, ServiceError> {
        Ok(published::pages(&self.current().await?))
    }

    /// The statistics of `/stats`, worked out at most once per
    /// [`crate::service::ServiceConfig::stats_refresh`].
    pub async fn stats(&self) -> Result<Arc<Stats>, ServiceError> {
        let current = self.current().await?;
        let inner = &self.inner;
        inner
            .views
            .stats
            .get(
                inner.clock.as_ref(),
                inner.config.stats_refresh,
                stats::build(&inner.store, &current),
            )
            .await
    }

    /// The domain's icon, a PNG of at most 64×64.
    pub async fn icon(&self, domain: &str) -> Result<Option<Vec<u8>>, ServiceError> {
        let icon = self.inner.store.icon(&normalize_domain(domain)).await?;
        Ok(icon.map(|icon| icon.png))
    }
}

fn found(
    report: StoredReport,
    previous: Option<audit::Analysis>,
    indexing: Indexing,
) -> ReportLookup {
    ReportLookup::Found(Box::new(ReportPage {
        report,
        previous,
        indexing,
    }))
}
