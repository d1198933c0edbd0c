//! Stored data is a contract: a store written with the documents inline (schema version 2)
//! opens with this build, its documents move to `service_documents`, and every report reads
//! back identically; new documents are stored compressed; deleting a report deletes its
//! document, on both backends.

mod common;

use common::{analysis, day, done_report};
use db::sqlx;
use db::testing::on_both_backends;
use db::{Db, Schema};
use service::{ReportId, ReportState, Store, SCHEMA};

/// The service's schema as the previous build knew it (migrations 1 and 2).
fn old_schema() -> Schema {
    Schema {
        name: "service",
        migrations: SCHEMA.migrations.split_at(2).0,
    }
}

/// A report row as version 2 stored it: the document (without robots.txt's text) and the
/// bytes in the reports table.
async fn old_insert(
    db: &Db,
    url: Option<&str>,
    state: &str,
    doc: Option<(&str, &[u8])>,
) -> ReportId {
    let id = ReportId::random().unwrap();
    let domain = url.map(|_| "old.test");
    let sql = "INSERT INTO service_reports (id, domain, url, site, is_paste, scheduled, state, \
               created_at, analysed_at, score, grade, indexable, report_version, \
               scoring_version, robots_body, document) VALUES ($1, $2, $3, $4, $5, FALSE, $6, \
               $7, $7, 50, 'C', TRUE, 1, 'v', $8, $9)";
    let (json, body) = doc.map_or((None, None), |(j, b)| (Some(j), Some(b)));
    db::with_pool!(db, pool => sqlx::query(sql).bind(id.as_str()).bind(domain).bind(url)
        .bind(url.map(|_| "https://www.old.test:443")).bind(url.is_none()).bind(state)
        .bind(day(1).as_millisecond()).bind(body).bind(json).execute(pool).await.map(drop))
    .unwrap();
    id
}

/// The document as version 2 wrote it.
fn old_document(a: &audit::Analysis) -> (String, Vec<u8>) {
    let mut copy = a.clone();
    let text = std::mem::take(&mut copy.robots.body).into_bytes();
    let body = copy.robots.raw_body.take().unwrap_or(text);
    (serde_json::to_string(&copy).unwrap(), body)
}

async fn document_rows(store: &Store) -> Vec<(String, i64, i64)> {
    let sql =
        "SELECT id, encoding, CAST(LENGTH(document) AS BIGINT) FROM service_documents ORDER BY id";
    db::with_pool!(store.db(), pool => sqlx::query_as(sql).fetch_all(pool).await).unwrap()
}

#[tokio::test(flavor = "multi_thread")]
async fn a_version_2_store_opens_and_reads_back_identically() {
    on_both_backends(|target| async move {
        let old = old_schema();
        let db = Db::open(&target, &[&old]).await.unwrap();
        let done = analysis(
            "https://www.old.test/page",
            "User-agent: *\nDisallow: /private\n",
            day(1),
        );
        let (json, body) = old_document(&done);
        let done_id = old_insert(
            &db,
            Some("https://www.old.test/page"),
            "done",
            Some((&json, &body)),
        )
        .await;
        // A Latin-1 robots.txt: the bytes, not the lossy text, are what was stored.
        let raw = b"User-agent: *\nDisallow: /caf\xe9\n";
        let latin = audit::analyze_file(audit::ProvidedFile::whole(raw), None);
        let (json, body) = old_document(&latin);
        assert_eq!(body, raw);
        let paste_id = old_insert(&db, None, "done", Some((&json, &body))).await;
        let queued_id = old_insert(&db, Some("https://www.old.test/other"), "queued", None).await;
        db.close().await;

        let store = Store::open(&target).await.unwrap();
        let read = store.report(&done_id).await.unwrap().unwrap();
        assert_eq!(
            read.report.as_ref(),
            Some(&done),
            "the moved document reads back"
        );
        assert_eq!(read.row.state, ReportState::Done);
        let read = store.report(&paste_id).await.unwrap().unwrap();
        assert_eq!(read.robots_body.as_deref(), Some(&raw[..]));
        assert_eq!(read.report.as_ref(), Some(&latin));
        let read = store.report(&queued_id).await.unwrap().unwrap();
        assert_eq!((read.row.state, read.report), (ReportState::Queued, None));

        // Moved rows stay plain JSON (encoding 0); new ones are deflated (encoding 1) and
        // smaller than their JSON.
        let new_id = done_report(&store, "https://www.new.test/", day(2), 70).await;
        let rows = document_rows(&store).await;
        assert_eq!(rows.len(), 3, "{rows:?}");
        let encoding = |id: &ReportId| rows.iter().find(|r| r.0 == id.as_str()).map(|r| (r.1, r.2));
        assert_eq!(encoding(&done_id).map(|e| e.0), Some(0));
        let (code, len) = encoding(&new_id).unwrap();
        let new = store
            .report(&new_id)
            .await
            .unwrap()
            .unwrap()
            .report
            .unwrap();
        let (json, _) = old_document(&new);
        assert_eq!(code, 1);
        assert!(
            len * 4 < json.len() as i64,
            "{len} stored bytes for {} of JSON",
            json.len()
        );

        // Removing a domain removes its documents with its reports.
        store.remove_domain("old.test", false).await.unwrap();
        let left: Vec<String> = document_rows(&store)
            .await
            .into_iter()
            .map(|r| r.0)
            .collect();
        assert_eq!(left, {
            let mut ids = vec![paste_id.as_str().to_owned(), new_id.as_str().to_owned()];
            ids.sort();
            ids
        });
    })
    .await;
}

/// The service's schema before robots.txt bodies were compressed (migrations 1 to 4).
fn version_4_schema() -> Schema {
    Schema {
        name: "service",
        migrations: SCHEMA.migrations.split_at(4).0,
    }
}

/// A typical robots.txt of about 20 KB: many sections and rules, each line different.
fn typical_robots_txt() -> String {
    let mut text = String::from("# robots.txt of a large site\nUser-agent: *\n");
    for n in 0..600 {
        text.push_str(&format!("Disallow: /section-{}/private-{n}/\n", n % 37));
    }
    text.push_str("Sitemap: https://www.large.test/sitemap.xml\n");
    text
}

/// A finished report and its document, written as version 4 wrote them: the document
/// deflated, robots.txt's bytes as received.
async fn version_4_insert(db: &Db, url: &str, a: &audit::Analysis) -> ReportId {
    let id = ReportId::random().unwrap();
    let report = "INSERT INTO service_reports (id, domain, url, site, is_paste, scheduled, \
                  state, created_at, analysed_at, score, grade, indexable, report_version, \
                  scoring_version) VALUES ($1, 'old.test', $2, 'https://www.old.test:443', \
                  FALSE, FALSE, 'done', $3, $3, 50, 'C', TRUE, 1, 'v')";
    let (json, body) = old_document(a);
    let (encoding, document) = service::codec::encode(&json).unwrap();
    let doc = "INSERT INTO service_documents (id, encoding, robots_body, document) \
               VALUES ($1, $2, $3, $4)";
    db::with_pool!(db, pool => async {
        sqlx::query(report).bind(id.as_str()).bind(url).bind(day(1).as_millisecond())
            .execute(pool).await?;
        sqlx::query(doc).bind(id.as_str()).bind(encoding.code()).bind(&body).bind(&document)
            .execute(pool).await.map(drop)
    }.await)
    .unwrap();
    id
}

/// `(body_encoding, stored body length)` of each report's document.
async fn body_rows(store: &Store, id: &ReportId) -> (i64, i64) {
    let sql = "SELECT body_encoding, CAST(LENGTH(robots_body) AS BIGINT) FROM service_documents \
               WHERE id = $1";
    db::with_pool!(store.db(), pool => sqlx::query_as(sql).bind(id.as_str())
        .fetch_one(pool).await)
    .unwrap()
}

/// Bodies stored as received by version 4 read back after migration 5; new bodies are stored
/// deflated (a fifth of a typical file or less); a body that would inflate past the fetch
/// limit, or does not inflate, makes its report damaged (not the lists), on both backends.
#[tokio::test(flavor = "multi_thread")]
async fn robots_txt_bodies_compress_and_old_ones_still_read() {
    on_both_backends(|target| async move {
        let db = Db::open(&target, &[&version_4_schema()]).await.unwrap();
        let url = "https://www.old.test/page";
        let old = analysis(url, &typical_robots_txt(), day(1));
        let old_id = version_4_insert(&db, url, &old).await;
        let raw = b"User-agent: *\nDisallow: /caf\xe9\n";
        let mut latin = audit::analyze_file(audit::ProvidedFile::whole(raw), Some(url));
        latin.analysed_at = day(1);
        let latin_id = version_4_insert(&db, url, &latin).await;
        db.close().await;

        let store = Store::open(&target).await.unwrap();
        let read = store.report(&old_id).await.unwrap().unwrap();
        assert_eq!(read.report.as_ref(), Some(&old), "an old body reads back");
        assert_eq!(body_rows(&store, &old_id).await.0, 0);
        let read = store.report(&latin_id).await.unwrap().unwrap();
        assert_eq!(read.robots_body.as_deref(), Some(&raw[..]));
        assert_eq!(read.report.as_ref(), Some(&latin));

        // The same file analysed now: stored deflated, read back byte for byte.
        let parsed = url::Url::parse("https://www.new.test/").unwrap();
        let new_id = store.queue_analysis(&parsed, day(2), false).await.unwrap();
        let new = analysis(parsed.as_str(), &typical_robots_txt(), day(2));
        store.finish_report(&new_id, &new).await.unwrap();
        let (code, len) = body_rows(&store, &new_id).await;
        let size = typical_robots_txt().len() as i64;
        assert!(size > 20_000, "{size}");
        assert_eq!(code, 1);
        assert!(
            len * 5 < size,
            "{len} stored bytes for a {size}-byte robots.txt"
        );
        let read = store.report(&new_id).await.unwrap().unwrap();
        assert_eq!(read.report.as_ref(), Some(&new));
        assert_eq!(
            read.robots_body.as_deref(),
            Some(typical_robots_txt().as_bytes())
        );

        // A bomb (a body inflating past what the fetcher would read) and a body that does not
        // inflate: each one's report is damaged; the domain still lists them.
        let (_, bomb) =
            service::codec::encode_body(&vec![b'#'; service::codec::BODY_MAX_BYTES + 1]).unwrap();
        for (id, bytes) in [(&old_id, bomb), (&new_id, vec![0x78, 0x01, 0xff, 0x00])] {
            let damage = "UPDATE service_documents SET body_encoding = 1, robots_body = $1 \
                          WHERE id = $2";
            db::with_pool!(store.db(), pool => sqlx::query(damage).bind(&bytes)
                .bind(id.as_str()).execute(pool).await.map(drop))
            .unwrap();
            let error = store.report(id).await.expect_err("a damaged report");
            assert!(error.is_bad_row(), "{error:?}");
        }
        let (rows, total) = store.domain_reports("old.test", 10).await.unwrap();
        assert_eq!((rows.len(), total), (2, 2));
        assert!(store.report(&latin_id).await.unwrap().is_some());
    })
    .await;
}
