//! The site's speed benchmark: 100,000 stored reports, the home, domain and report
//! pages requested at a fixed 500 requests/s each, latency percentiles and page sizes.
//!
//! ```sh
//! cargo run -p site --release --example page_load                 # 100,000 reports, 10 s per page
//! cargo run -p site --release --example page_load -- 20000 5      # reports, seconds per page
//! ```
//!
//! The store is synthetic and in memory: compact rows (id, URL, time, score) over real
//! analyses of corpus files, cloned and patched for each request as a store would decode a
//! document. So the figures are the site's own cost (routing, the ranking and its cache,
//! rendering, escaping) plus one document decode per report page, not a database's.
//!
//! Latency is measured from each request's scheduled start (no coordinated omission): a
//! request delayed by an earlier slow one counts its wait. Each page gets one request per
//! address first (warm-up, at the same rate), as in the service's benchmark.

use std::collections::HashMap;
use std::net::{IpAddr, SocketAddr};
use std::sync::Arc;
use std::time::Instant;

use audit::{Analysis, Grade};
use jiff::{SignedDuration, Timestamp};
use site::stats::{Stats, StatsBuilder};
use site::{
    CurrentReport, DataError, DomainHistory, ReportId, ReportLookup, ReportState, ReportSummary,
    SiteConfig, SiteData, StoredReport, SubmitError, Submitted,
};
use url::Url;

#[path = "../../../testdata/corpus/reader.rs"]
mod corpus;
/// The fixed-rate load generator, shared with the service's `load` example.
#[path = "../../service/examples/load/rate.rs"]
mod rate;

/// Requests per second for each page.
const RATE: u64 = 500;
/// The largest robots.txt used as a template (a typical file is a few KB; the page-size test
/// covers the large ones).
const TEMPLATE_MAX_BYTES: usize = 16 * 1024;
/// Reports per domain.
const PER_DOMAIN: usize = 5;

struct Row {
    id: ReportId,
    domain: String,
    url: Url,
    at: Timestamp,
    score: u8,
    template: usize,
}

struct Synthetic {
    rows: Vec<Row>,
    by_id: HashMap<ReportId, usize>,
    by_domain: HashMap<String, Vec<usize>>,
    templates: Vec<Analysis>,
}

impl Synthetic {
    fn new(reports: usize) -> Synthetic {
        // Typical files: the first 20 of the sample under TEMPLATE_MAX_BYTES.
        let templates: Vec<Analysis> = corpus::sample_files()
            .iter()
            .map(|path| corpus::read(path))
            .filter(|body| body.len() <= TEMPLATE_MAX_BYTES)
            .take(20)
            .map(|body| {
                audit::analyze_file(audit::ProvidedFile::whole(&body), Some("https://x.test/"))
            })
            .collect();
        let start: Timestamp = "2026-01-01T00:00:00Z".parse().expect("a time");
        let mut data = Synthetic {
            rows: Vec::with_capacity(reports),
            by_id: HashMap::new(),
            by_domain: HashMap::new(),
            templates,
        };
        for n in 0..reports {
            let domain = format!("site{}.example", n / PER_DOMAIN);
            let url = Url::parse(&format!("https://{domain}/p{}", n % 2)).expect("a URL");
            let id = ReportId::parse(&format!("r{n:08x}")).expect("an id");
            let row = Row {
                id: id.clone(),
                domain: domain.clone(),
                url,
                at: start + SignedDuration::from_secs((n as i64 % 300) * 86_400 + n as i64),
                score: (n * 37 % 101) as u8,
                template: n % data.templates.len(),
            };
            data.by_id.insert(id, n);
            data.by_domain.entry(domain).or_default().push(n);
            data.rows.push(row);
        }
        data
    }

    fn analysis(&self, row: &Row) -> Analysis {
        let mut analysis = self.templates[row.template].clone();
        analysis.url = Some(row.url.clone());
        analysis.analysed_at = row.at;
        analysis.score = row.score;
        analysis.grade = Grade::from_score(row.score);
        analysis
    }

    fn newest_of_url(&self, domain: &str, url: &Url) -> Option<&Row> {
        self.by_domain
            .get(domain)?
            .iter()
            .map(|&n| &self.rows[n])
            .filter(|row| &row.url == url)
            .max_by_key(|row| row.at)
    }
}

impl SiteData for Synthetic {
    async fn submit_url(&self, _: &str, _: IpAddr) -> Result<Submitted, SubmitError> {
        Err(SubmitError::Unavailable("read-only benchmark".into()))
    }

    async fn submit_paste(&self, _: Vec<u8>, _: IpAddr) -> Result<ReportId, SubmitError> {
        Err(SubmitError::Unavailable("read-only benchmark".into()))
    }

    async fn report(&self, domain: &str, id: &ReportId) -> Result<ReportLookup, DataError> {
        let Some(row) = self.by_id.get(id).map(|&n| &self.rows[n]) else {
            return Ok(ReportLookup::Missing);
        };
        if row.domain != domain {
            return Ok(ReportLookup::Missing);
        }
        Ok(ReportLookup::Found(StoredReport {
            id: row.id.clone(),
            domain: row.domain.clone(),
            url: row.url.clone(),
            created_at: row.at,
            state: ReportState::Done(Box::new(self.analysis(row))),
        }))
    }

    async fn paste(&self, _: &ReportId) -> Result<Option<StoredReport>, DataError> {
        Ok(None)
    }

    async fn previous_report(
        &self,
        url: &Url,
        before: Timestamp,
    ) -> Result<Option<Analysis>, DataError> {
        let Some(domain) = url.host_str() else {
            return Ok(None);
        };
        Ok(self
            .by_domain
            .get(domain)
            .into_iter()
            .flatten()
            .map(|&n| &self.rows[n])
            .filter(|row| &row.url == url && row.at < before)
            .max_by_key(|row| row.at)
            .map(|row| self.analysis(row)))
    }

    async fn url_indexable(&self, url: &Url) -> Result<Option<bool>, DataError> {
        let domain = url.host_str().unwrap_or_default();
        Ok(self.newest_of_url(domain, url).map(|_| true))
    }

    async fn domain(&self, domain: &str) -> Result<Option<DomainHistory>, DataError> {
        let Some(rows) = self.by_domain.get(domain) else {
            return Ok(None);
        };
        let mut reports: Vec<ReportSummary> = rows
            .iter()
            .map(|&n| &self.rows[n])
            .map(|row| ReportSummary {
                id: row.id.clone(),
                url: row.url.clone(),
                analysed_at: row.at,
                score: row.score,
                grade: Grade::from_score(row.score),
                indexable: true,
            })
            .collect();
        reports.sort_by_key(|report| std::cmp::Reverse(report.analysed_at));
        Ok(Some(DomainHistory {
            reports,
            months: Vec::new(),
            has_icon: false,
        }))
    }

    async fn current_reports(&self) -> Result<Vec<CurrentReport>, DataError> {
        let mut newest: HashMap<&str, &Row> = HashMap::new();
        for row in &self.rows {
            let entry = newest.entry(row.url.as_str()).or_insert(row);
            if row.at > entry.at {
                *entry = row;
            }
        }
        Ok(newest
            .into_values()
            .map(|row| CurrentReport {
                domain: row.domain.clone(),
                id: row.id.clone(),
                url: row.url.clone(),
                analysed_at: row.at,
                score: row.score,
                indexable: true,
                domain_off_ranking: false,
                has_icon: false,
            })
            .collect())
    }

    async fn stats(&self) -> Result<Stats, DataError> {
        let mut builder = StatsBuilder::new();
        for row in self.rows.iter().take(1000) {
            builder.add(&self.analysis(row), true);
        }
        Ok(builder.finish())
    }

    async fn icon(&self, _: &str) -> Result<Option<Vec<u8>>, DataError> {
        Ok(None)
    }
}

#[tokio::main]
async fn main() {
    let args: Vec<String> = std::env::args().collect();
    let reports: usize = args.get(1).and_then(|a| a.parse().ok()).unwrap_or(100_000);
    let seconds: u64 = args.get(2).and_then(|a| a.parse().ok()).unwrap_or(10);
    let built = Instant::now();
    let data = Arc::new(Synthetic::new(reports));
    eprintln!("{reports} reports built in {:?}", built.elapsed());
    let report_paths: Vec<String> = (0..1000)
        .map(|k| {
            let row = &data.rows[(k * 7919) % data.rows.len()];
            format!("/score/{}/{}", row.domain, row.id)
        })
        .collect();
    let domain_paths: Vec<String> = (0..1000)
        .map(|k| {
            format!(
                "/score/site{}.example",
                (k * 7919) % (reports / PER_DOMAIN).max(1)
            )
        })
        .collect();
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("a port");
    let addr = listener.local_addr().expect("an address");
    let config = SiteConfig::new(Url::parse(&format!("http://{addr}/")).expect("a URL"));
    let app = site::router(data, config);
    tokio::spawn(async move {
        let _ = axum::serve(
            listener,
            app.into_make_service_with_connect_info::<SocketAddr>(),
        )
        .await;
    });
    println!("| page | requests | p50 | p99 | p99.9 | max | largest page | errors | load avg |");
    println!("|---|---|---|---|---|---|---|---|---|");
    for (name, paths) in [
        ("home `/`", vec!["/".to_owned()]),
        ("domain `/score/{domain}`", domain_paths),
        ("report `/score/{domain}/{id}`", report_paths),
    ] {
        // Warm-up, as the service's benchmark does: one request per address at the same rate
        // (a running server has made its ranking and touched its pages already).
        let warm = Instant::now();
        rate::run(addr, &paths, RATE, (paths.len() as u64).div_ceil(RATE)).await;
        eprintln!("{name}: warm-up {:.1} s", warm.elapsed().as_secs_f64());
        let load = rate::load_average();
        let f = rate::run(addr, &paths, RATE, seconds).await;
        println!("{}", rate::table_row(name, &f, RATE, &load));
    }
}
