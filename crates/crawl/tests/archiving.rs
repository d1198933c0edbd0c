//! How exchanges are archived, read back with an independent WARC reader: every robots.txt
//! fetch goes through the one archiving path, so a gzip-coded robots.txt (which fetch decodes)
//! is archived with its decoded bytes as payload and `JittyBot-Payload-Decoded: gzip`, the
//! field that tells a reader the archived `Content-Encoding` no longer applies.

mod common;

use common::*;
use db::testing::TestDb;
use db::Backend;
use sha1::Digest;
use testweb::{MultiWeb, Reply};
use warc_reader::WarcHeader;

/// A response record as read back: target URI, payload digest, the decoded-payload field
/// (if any), and the payload (the block after the HTTP head).
struct Response {
    uri: String,
    digest: Option<String>,
    decoded: Option<String>,
    payload: Vec<u8>,
}

fn responses(dir: &std::path::Path) -> Vec<Response> {
    let mut out = Vec::new();
    for f in warc_files(dir) {
        for r in warc_reader::WarcReader::from_path_gzip(&f)
            .unwrap()
            .iter_records()
        {
            let r = r.unwrap();
            if r.warc_type().to_string() != "response" {
                continue;
            }
            let header = |h: WarcHeader| r.header(h).map(|v| v.trim().to_string());
            let block = r.body();
            let head_end = block
                .windows(4)
                .position(|w| w == b"\r\n\r\n")
                .map_or(block.len(), |i| i + 4);
            out.push(Response {
                uri: header(WarcHeader::TargetURI).unwrap_or_default(),
                digest: header(WarcHeader::PayloadDigest),
                // Unknown field names are read lower-cased.
                decoded: header(WarcHeader::Unknown("jittybot-payload-decoded".into())),
                payload: block[head_end..].to_vec(),
            });
        }
    }
    out
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_gzip_coded_robots_txt_is_archived_decoded_and_says_so() {
    let db = TestDb::new(Backend::Sqlite).await;
    let web = MultiWeb::start(1).await;
    let h = "zipped.test";
    let robots = "User-agent: *\nDisallow: /private\n";
    web.site(h)
        .path("/robots.txt")
        .respond(Reply::robots_txt(robots).gzip());
    web.site(h).path("/sitemap.xml").respond(Reply::status(404));
    web.site(h).path("/").respond(html("home"));
    let warc = tempfile::tempdir().unwrap();
    crawl_site(&db.target, &web, h, warc.path()).await;
    let robots_requests = web.requests_to(h, "/robots.txt");
    assert!(!robots_requests.is_empty(), "robots.txt was requested");
    let records = responses(warc.path());
    let archived: Vec<&Response> = records
        .iter()
        .filter(|r| r.uri.ends_with("/robots.txt"))
        .collect();
    assert_eq!(
        archived.len(),
        robots_requests.len(),
        "each robots.txt request archived once: {:?}",
        records.iter().map(|r| &r.uri).collect::<Vec<_>>()
    );
    let digest = format!(
        "sha1:{}",
        data_encoding::BASE32.encode(&sha1::Sha1::digest(robots.as_bytes()))
    );
    for r in archived {
        assert_eq!(r.payload, robots.as_bytes(), "{}: the decoded file", r.uri);
        assert_eq!(r.decoded.as_deref(), Some("gzip"), "{}", r.uri);
        assert_eq!(
            r.digest.as_deref(),
            Some(digest.as_str()),
            "{}: the digest is the decoded payload's",
            r.uri
        );
    }
    db.cleanup().await;
}
