//! Synthetic reports for the benchmark, written straight into the service's tables with
//! multi-row inserts in large transactions.
//!
//! Each report is a real audit of a small robots.txt of the repository's corpus sample
//! (`testdata/corpus`), stored exactly as `Store::finish_report` stores it (the document
//! without robots.txt's text, deflated by `service::codec`, in `service_documents` beside
//! robots.txt's bytes, deflated too), with its domain, page URL and time written into the
//! document before it is compressed. Reports are spread over `domains` domains of
//! `URLS_PER_DOMAIN` URLs each and over `months` months before `as_of`, so a retention pass
//! has months to fold and URLs whose newest report is old.

use std::time::Instant;

use audit::report::RobotsStatus;
use audit::{Analysis, ProvidedFile};
use db::sqlx;
use jiff::{SignedDuration, Timestamp};
use service::codec;
use service::{ReportId, Store};

#[path = "../../../../testdata/corpus/reader.rs"]
mod corpus;

/// URLs of each domain (its home page and one other page).
pub const URLS_PER_DOMAIN: usize = 2;
/// The largest corpus file used as a template: small files, as most sites serve.
const TEMPLATE_MAX_BYTES: usize = 4 * 1024;
/// How many distinct analyses the reports are copies of.
const TEMPLATES: usize = 8;
/// Rows per `INSERT` statement (at most 12 parameters each: under both backends' limits).
const ROWS_PER_INSERT: usize = 100;
/// Rows per transaction.
const ROWS_PER_TRANSACTION: usize = 20_000;
/// Average days in a month, for spreading times.
const DAYS_PER_MONTH: i64 = 30;
/// Stand-ins written into the template documents, replaced per report.
const HOST: &str = "placeholder.invalid";
const PATH: &str = "/PAGEPATH";
const TIME: &str = "2000-01-01T00:00:00Z";

/// What to generate.
#[derive(Clone, Debug)]
pub struct Plan {
    /// Reports in all.
    pub reports: usize,
    /// Domains they are spread over.
    pub domains: usize,
    /// Months before `as_of` they are spread over.
    pub months: i64,
    /// The newest possible report time.
    pub as_of: Timestamp,
}

/// One template: a real analysis as stored, with stand-ins for host, path and time.
struct Template {
    json: String,
    /// robots.txt's bytes as stored (`codec::encode_body`), with their `body_encoding`.
    body: Vec<u8>,
    body_encoding: i64,
    score: i64,
    grade: String,
    indexable: bool,
    report_version: i64,
    scoring_version: String,
}

fn templates() -> Result<Vec<Template>, String> {
    let page = format!("https://{HOST}{PATH}");
    let time: Timestamp = TIME.parse().map_err(|e| format!("{e}"))?;
    let mut out = Vec::new();
    for path in corpus::sample_files() {
        let body = corpus::read(&path);
        if body.len() > TEMPLATE_MAX_BYTES || std::str::from_utf8(&body).is_err() {
            continue;
        }
        let mut analysis: Analysis =
            audit::analyze_file(ProvidedFile::whole(&body), Some(page.as_str()));
        // As if fetched: a robots.txt with rules, requested from the site.
        analysis.robots.outcome = RobotsStatus::Rules;
        analysis.robots.requested = true;
        analysis.analysed_at = time;
        let indexable = service::indexing::indexable(&analysis);
        let text = std::mem::take(&mut analysis.robots.body).into_bytes();
        let (body_encoding, stored_body) = codec::encode_body(&text).map_err(|e| e.to_string())?;
        out.push(Template {
            json: serde_json::to_string(&analysis).map_err(|e| e.to_string())?,
            body: stored_body,
            body_encoding: body_encoding.code(),
            score: i64::from(analysis.score),
            grade: analysis.grade.to_string(),
            indexable,
            report_version: i64::from(analysis.report_version),
            scoring_version: analysis.scoring_version.clone(),
        });
        if out.len() == TEMPLATES {
            break;
        }
    }
    if out.is_empty() {
        return Err("no corpus file to use as a template (testdata/corpus/robots)".into());
    }
    Ok(out)
}

/// SplitMix64: a fixed, well-spread pseudo-random sequence (the same store every run).
fn mix(n: u64) -> u64 {
    let mut z = n.wrapping_add(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// One row to insert.
struct Row<'a> {
    id: ReportId,
    domain: String,
    url: String,
    site: String,
    scheduled: bool,
    at: i64,
    encoding: i64,
    document: Vec<u8>,
    template: &'a Template,
}

fn row<'a>(n: usize, plan: &Plan, templates: &'a [Template]) -> Result<Row<'a>, String> {
    let domain = format!("site{}.example", n % plan.domains);
    let page = (n / plan.domains) % URLS_PER_DOMAIN;
    let path = if page == 0 {
        "/".to_owned()
    } else {
        format!("/page{page}")
    };
    let r = mix(n as u64);
    let span_ms = plan.months * DAYS_PER_MONTH * 86_400_000;
    let back = i64::try_from(r % span_ms.max(1) as u64).unwrap_or(0);
    let at = plan.as_of - SignedDuration::from_millis(back);
    let template = &templates[(r >> 40) as usize % templates.len()];
    let json = template
        .json
        .replace(PATH, &path)
        .replace(HOST, &domain)
        .replace(TIME, &at.to_string());
    let (encoding, document) = codec::encode(&json).map_err(|e| e.to_string())?;
    Ok(Row {
        id: ReportId::random().map_err(|e| e.to_string())?,
        encoding: encoding.code(),
        url: format!("https://{domain}{path}"),
        site: format!("https://{domain}:443"),
        domain,
        // Most reports after a site's first come from the schedule.
        scheduled: n >= plan.domains,
        at: at.as_millisecond(),
        document,
        template,
    })
}

const INSERT: &str = "INSERT INTO service_reports (id, domain, url, site, is_paste, scheduled, \
     state, created_at, analysed_at, score, grade, indexable, report_version, scoring_version) \
     VALUES ";
const PARAMS_PER_ROW: usize = 12;
const INSERT_DOCUMENTS: &str =
    "INSERT INTO service_documents (id, encoding, robots_body, document, body_encoding) VALUES ";
const PARAMS_PER_DOCUMENT: usize = 5;

/// `($1, $2, FALSE, ...), (...)` for `rows` rows.
fn values(rows: usize) -> String {
    let mut sql = String::from(INSERT);
    for r in 0..rows {
        let p = |k: usize| format!("${}", r * PARAMS_PER_ROW + k);
        let sep = if r == 0 { "" } else { "," };
        sql.push_str(&format!(
            "{sep}({}, {}, {}, {}, FALSE, {}, 'done', {}, {}, {}, {}, {}, {}, {})",
            p(1),
            p(2),
            p(3),
            p(4),
            p(5),
            p(6),
            p(7),
            p(8),
            p(9),
            p(10),
            p(11),
            p(12)
        ));
    }
    sql
}

/// `($1, $2, $3, $4, $5), (...)` for `rows` documents.
fn document_values(rows: usize) -> String {
    let mut sql = String::from(INSERT_DOCUMENTS);
    for r in 0..rows {
        let p = |k: usize| format!("${}", r * PARAMS_PER_DOCUMENT + k);
        let sep = if r == 0 { "" } else { "," };
        sql.push_str(&format!(
            "{sep}({}, {}, {}, {}, {})",
            p(1),
            p(2),
            p(3),
            p(4),
            p(5)
        ));
    }
    sql
}

/// Write `rows` in one transaction, `ROWS_PER_INSERT` per statement.
async fn write(store: &Store, rows: &[Row<'_>]) -> Result<(), String> {
    let db = store.db();
    let run = async {
        db::write_tx!(db, tx => {
            for chunk in rows.chunks(ROWS_PER_INSERT) {
                let sql = values(chunk.len());
                let mut query = sqlx::query(&sql);
                for row in chunk {
                    let t = row.template;
                    query = query.bind(row.id.as_str()).bind(&row.domain).bind(&row.url)
                        .bind(&row.site).bind(row.scheduled).bind(row.at).bind(row.at + 2_000)
                        .bind(t.score).bind(&t.grade).bind(t.indexable).bind(t.report_version)
                        .bind(&t.scoring_version);
                }
                query.execute(&mut *tx).await.map_err(db::DbError::query("bulk insert"))?;
                let sql = document_values(chunk.len());
                let mut query = sqlx::query(&sql);
                for row in chunk {
                    query = query.bind(row.id.as_str()).bind(row.encoding)
                        .bind(&row.template.body).bind(&row.document)
                        .bind(row.template.body_encoding);
                }
                query.execute(&mut *tx).await.map_err(db::DbError::query("bulk insert documents"))?;
            }
        });
        Ok::<(), db::DbError>(())
    };
    run.await.map_err(|e| e.to_string())
}

/// Generate and store `plan.reports` reports; prints progress on stderr.
pub async fn generate(store: &Store, plan: &Plan) -> Result<(), String> {
    let templates = templates()?;
    let sizes = templates
        .iter()
        .map(|t| {
            let (_, packed) = codec::encode(&t.json).map_err(|e| e.to_string())?;
            Ok((t.json.len(), packed.len() + t.body.len()))
        })
        .collect::<Result<Vec<_>, String>>()?;
    eprintln!(
        "{} templates, (JSON, stored document + robots.txt) sizes {sizes:?} bytes; scores {:?}",
        templates.len(),
        templates.iter().map(|t| t.score).collect::<Vec<_>>()
    );
    let started = Instant::now();
    let mut n = 0;
    while n < plan.reports {
        let end = (n + ROWS_PER_TRANSACTION).min(plan.reports);
        let rows = (n..end)
            .map(|k| row(k, plan, &templates))
            .collect::<Result<Vec<_>, _>>()?;
        write(store, &rows).await?;
        n = end;
        if n % 100_000 == 0 || n == plan.reports {
            eprintln!(
                "{n} reports written in {:.1} s",
                started.elapsed().as_secs_f64()
            );
        }
    }
    analyze_tables(store).await
}

/// Refresh the planner's statistics, as a long-running store would have them.
async fn analyze_tables(store: &Store) -> Result<(), String> {
    db::with_pool!(store.db(), pool => sqlx::query("ANALYZE").execute(pool).await.map(drop))
        .map_err(|e| e.to_string())
}
