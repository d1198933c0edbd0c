//! An in-memory [`SiteData`] (feature `testing`): the site's tests and the browser tests run
//! against it, with real analyses on a given fetcher (the test web), until and beside the
//! service's store.

use std::collections::{BTreeMap, HashMap};
use std::net::IpAddr;
use std::sync::{Arc, Mutex, MutexGuard};

use audit::Analysis;
use fetch::Fetcher;
use jiff::Timestamp;
use url::Url;

use crate::data::{
    CurrentReport, DataError, DomainHistory, MonthlySummary, ReportId, ReportLookup, ReportState,
    ReportSummary, SiteData, StoredReport, SubmitError, Submitted,
};
use crate::indexing;
use crate::stats::{Stats, StatsBuilder};

#[derive(Clone)]
struct Record {
    report: StoredReport,
    paste: bool,
}

#[derive(Default)]
struct Inner {
    records: Vec<Record>,
    folded: Vec<(String, ReportId)>,
    months: HashMap<String, Vec<MonthlySummary>>,
    icons: HashMap<String, Vec<u8>>,
    off_ranking: Vec<String>,
    next: u64,
}

/// Reports, pastes, summaries and icons in memory.
#[derive(Clone, Default)]
pub struct MemoryData {
    inner: Arc<Mutex<Inner>>,
    fetcher: Option<Arc<Fetcher>>,
}

/// The domain of a URL (its lowercase host).
pub fn domain_of(url: &Url) -> Option<String> {
    url.host_str().map(str::to_ascii_lowercase)
}

impl MemoryData {
    /// An empty store whose submissions cannot run (no network).
    pub fn new() -> MemoryData {
        MemoryData::default()
    }

    /// An empty store that analyses submitted URLs on `fetcher`.
    pub fn with_fetcher(fetcher: Fetcher) -> MemoryData {
        MemoryData {
            inner: Arc::default(),
            fetcher: Some(Arc::new(fetcher)),
        }
    }

    fn lock(&self) -> MutexGuard<'_, Inner> {
        // A panic while holding the lock is a test failure already; go on with the data.
        self.inner
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    fn new_id(inner: &mut Inner) -> ReportId {
        inner.next += 1;
        let mixed = inner.next.wrapping_mul(0x9e37_79b9_7f4a_7c15) ^ 0x5bd1_e995;
        ReportId::parse(&format!("r{:016x}{}", mixed, inner.next))
            .unwrap_or_else(|| unreachable!("hex digits and a number make an id"))
    }

    fn push(&self, url: Url, state: ReportState, paste: bool) -> (ReportId, String) {
        let domain = if paste {
            String::new()
        } else {
            domain_of(&url).unwrap_or_default()
        };
        let mut inner = self.lock();
        let id = Self::new_id(&mut inner);
        let created_at = match &state {
            ReportState::Done(analysis) => analysis.analysed_at,
            _ => Timestamp::now(),
        };
        inner.records.push(Record {
            report: StoredReport {
                id: id.clone(),
                domain: domain.clone(),
                url,
                created_at,
                state,
            },
            paste,
        });
        (id, domain)
    }

    /// Stores a finished report of `url`.
    pub fn insert(&self, url: Url, analysis: Analysis) -> ReportId {
        self.push(url, ReportState::Done(Box::new(analysis)), false)
            .0
    }

    /// Stores a report in another state (queued, running, failed).
    pub fn insert_state(&self, url: Url, state: ReportState) -> ReportId {
        self.push(url, state, false).0
    }

    /// Folds a report into its domain's monthly summaries (it is deleted).
    pub fn fold(&self, id: &ReportId, summary: MonthlySummary) {
        let mut inner = self.lock();
        if let Some(index) = inner.records.iter().position(|r| &r.report.id == id) {
            let record = inner.records.remove(index);
            let domain = record.report.domain;
            inner.folded.push((domain.clone(), id.clone()));
            inner.months.entry(domain).or_default().push(summary);
        }
    }

    /// Stores a domain's icon.
    pub fn set_icon(&self, domain: &str, png: Vec<u8>) {
        self.lock().icons.insert(domain.to_owned(), png);
    }

    /// Keeps a domain off the ranking.
    pub fn keep_off_ranking(&self, domain: &str) {
        self.lock().off_ranking.push(domain.to_owned());
    }

    fn finished(inner: &Inner) -> impl Iterator<Item = (&StoredReport, &Analysis)> {
        inner
            .records
            .iter()
            .filter(|r| !r.paste)
            .filter_map(|r| match &r.report.state {
                ReportState::Done(analysis) => Some((&r.report, analysis.as_ref())),
                _ => None,
            })
    }

    /// The newest finished report of each URL.
    fn newest(inner: &Inner) -> BTreeMap<String, (&StoredReport, &Analysis)> {
        let mut newest: BTreeMap<String, (&StoredReport, &Analysis)> = BTreeMap::new();
        for (report, analysis) in Self::finished(inner) {
            let entry = newest
                .entry(report.url.to_string())
                .or_insert((report, analysis));
            if analysis.analysed_at > entry.1.analysed_at {
                *entry = (report, analysis);
            }
        }
        newest
    }

    fn run(&self, id: ReportId, url: Url) {
        let Some(fetcher) = self.fetcher.clone() else {
            self.set_state(&id, ReportState::Failed("no network in this store".into()));
            return;
        };
        let this = self.clone();
        // The analysis future is not `Send`: it runs on a thread of its own, on a runtime of
        // its own, as a background job would.
        std::thread::spawn(move || {
            this.set_state(&id, ReportState::Running);
            let runtime = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build();
            let state = match runtime {
                Ok(runtime) => match runtime.block_on(audit::analyze(&fetcher, &url)) {
                    Ok(analysis) => ReportState::Done(Box::new(analysis)),
                    Err(error) => {
                        ReportState::Failed(format!("The site could not be analysed: {error}."))
                    }
                },
                Err(error) => {
                    ReportState::Failed(format!("The analysis could not start: {error}."))
                }
            };
            this.set_state(&id, state);
        });
    }

    fn set_state(&self, id: &ReportId, state: ReportState) {
        let mut inner = self.lock();
        if let Some(record) = inner.records.iter_mut().find(|r| &r.report.id == id) {
            record.report.state = state;
        }
    }
}

impl SiteData for MemoryData {
    async fn submit_url(&self, url: &str, _client: IpAddr) -> Result<Submitted, SubmitError> {
        let url = fetch::parse_target(url).map_err(|error| {
            SubmitError::Invalid(format!("That address cannot be analysed: {error}."))
        })?;
        let (id, domain) = self.push(url.clone(), ReportState::Queued, false);
        self.run(id.clone(), url);
        Ok(Submitted { id, domain })
    }

    async fn submit_paste(&self, body: Vec<u8>, _client: IpAddr) -> Result<ReportId, SubmitError> {
        let analysis = audit::analyze_file(audit::ProvidedFile::whole(&body), None);
        let url = Url::parse("paste:robots.txt")
            .map_err(|error| SubmitError::Unavailable(error.to_string()))?;
        Ok(self
            .push(url, ReportState::Done(Box::new(analysis)), true)
            .0)
    }

    async fn report(&self, domain: &str, id: &ReportId) -> Result<ReportLookup, DataError> {
        let inner = self.lock();
        if inner.folded.iter().any(|(d, f)| d == domain && f == id) {
            return Ok(ReportLookup::Folded);
        }
        Ok(inner
            .records
            .iter()
            .find(|r| !r.paste && &r.report.id == id && r.report.domain == domain)
            .map_or(ReportLookup::Missing, |r| {
                ReportLookup::Found(r.report.clone())
            }))
    }

    async fn paste(&self, id: &ReportId) -> Result<Option<StoredReport>, DataError> {
        let inner = self.lock();
        Ok(inner
            .records
            .iter()
            .find(|r| r.paste && &r.report.id == id)
            .map(|r| r.report.clone()))
    }

    async fn previous_report(
        &self,
        url: &Url,
        before: Timestamp,
    ) -> Result<Option<Analysis>, DataError> {
        let inner = self.lock();
        Ok(Self::finished(&inner)
            .filter(|(report, analysis)| &report.url == url && analysis.analysed_at < before)
            .max_by_key(|(_, analysis)| analysis.analysed_at)
            .map(|(_, analysis)| analysis.clone()))
    }

    async fn url_indexable(&self, url: &Url) -> Result<Option<bool>, DataError> {
        let inner = self.lock();
        Ok(Self::newest(&inner)
            .get(url.as_str())
            .map(|(_, analysis)| indexing::indexable(analysis)))
    }

    async fn domain(&self, domain: &str) -> Result<Option<DomainHistory>, DataError> {
        let inner = self.lock();
        let newest = Self::newest(&inner);
        let mut reports: Vec<ReportSummary> = Self::finished(&inner)
            .filter(|(report, _)| report.domain == domain)
            .map(|(report, analysis)| ReportSummary {
                id: report.id.clone(),
                url: report.url.clone(),
                analysed_at: analysis.analysed_at,
                score: analysis.score,
                grade: analysis.grade,
                indexable: newest
                    .get(report.url.as_str())
                    .is_some_and(|(_, newest)| indexing::indexable(newest)),
            })
            .collect();
        reports.sort_by_key(|report| std::cmp::Reverse(report.analysed_at));
        let mut months = inner.months.get(domain).cloned().unwrap_or_default();
        months.sort_by_key(|month| std::cmp::Reverse((month.year, month.month)));
        if reports.is_empty() && months.is_empty() {
            return Ok(None);
        }
        Ok(Some(DomainHistory {
            reports,
            months,
            has_icon: inner.icons.contains_key(domain),
        }))
    }

    async fn current_reports(&self) -> Result<Vec<CurrentReport>, DataError> {
        let inner = self.lock();
        Ok(Self::newest(&inner)
            .into_values()
            .map(|(report, analysis)| CurrentReport {
                domain: report.domain.clone(),
                id: report.id.clone(),
                url: report.url.clone(),
                analysed_at: analysis.analysed_at,
                score: analysis.score,
                indexable: indexing::indexable(analysis),
                domain_off_ranking: inner.off_ranking.contains(&report.domain),
                has_icon: inner.icons.contains_key(&report.domain),
            })
            .collect())
    }

    async fn stats(&self) -> Result<Stats, DataError> {
        let inner = self.lock();
        let newest: Vec<ReportId> = Self::newest(&inner)
            .values()
            .map(|(report, _)| report.id.clone())
            .collect();
        let mut builder = StatsBuilder::new();
        for (report, analysis) in Self::finished(&inner) {
            builder.add(analysis, newest.contains(&report.id));
        }
        for summary in inner.months.values().flatten() {
            builder.add_summary(summary);
        }
        Ok(builder.finish())
    }

    async fn icon(&self, domain: &str) -> Result<Option<Vec<u8>>, DataError> {
        Ok(self.lock().icons.get(domain).cloned())
    }
}
