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
