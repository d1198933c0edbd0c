//! WARC files written by this crate, read back by an independent parser (crates.io's `warc`), and
//! the recovery of a file torn by a crash.

use std::io::Write;
use std::path::Path;

use data_encoding::BASE32;
use jiff::Timestamp;
use sha1::{Digest, Sha1};
use warc::{
    http_request_block, http_response_head, RecordKind, WarcOptions, WarcRecord, WarcWriter,
    REVISIT_PROFILE_NOT_MODIFIED,
};
use warc_reader::{Record, RecordType, WarcHeader, WarcReader};

fn read_all(dir: &Path) -> Vec<(String, Vec<warc_reader::Record<warc_reader::BufferedBody>>)> {
    let mut files: Vec<_> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    files.sort();
    files
        .into_iter()
        .map(|p| {
            let name = p.file_name().unwrap().to_string_lossy().into_owned();
            assert!(name.ends_with(".warc.gz"), "unfinished file {name}");
            let records = WarcReader::from_path_gzip(&p)
                .unwrap()
                .iter_records()
                .map(|r| r.unwrap_or_else(|e| panic!("{name}: {e}")))
                .collect();
            (name, records)
        })
        .collect()
}

fn sha1_label(bytes: &[u8]) -> String {
    format!("sha1:{}", BASE32.encode(&Sha1::digest(bytes)))
}

fn header(r: &Record<warc_reader::BufferedBody>, h: WarcHeader) -> String {
    r.header(h).map(|v| v.into_owned()).unwrap_or_default()
}

/// Write one exchange (request, response), a revisit of it and a metadata record.
fn write_exchange(w: &mut WarcWriter, url: &str, body: &[u8]) -> (String, String) {
    let date = Timestamp::from_second(1_767_225_600).unwrap();
    let request = http_request_block(
        "GET",
        "/page",
        "HTTP/1.1",
        [
            ("Host", b"example.test".as_slice()),
            ("User-Agent", b"JittyBot/0.1".as_slice()),
        ],
    );
    let head = http_response_head(
        "HTTP/1.1",
        200,
        "OK",
        [
            ("Content-Type", b"text/html".as_slice()),
            ("ETag", b"\"v1\"".as_slice()),
        ],
    );
    let mut response = WarcRecord::new(RecordKind::Response, date);
    response.target_uri = Some(url);
    response.ip = Some("127.0.0.2".parse().unwrap());
    response.content_type = Some("application/http;msgtype=response");
    response.block = vec![&head, body];
    response.payload_parts = Some(1..2);
    let mut req = WarcRecord::new(RecordKind::Request, date);
    req.target_uri = Some(url);
    req.ip = response.ip;
    req.content_type = Some("application/http;msgtype=request");
    req.block = vec![&request];
    req.fields
        .push(("WARC-Concurrent-To", response.id.as_str().to_string()));
    let not_modified = http_response_head(
        "HTTP/1.1",
        304,
        "Not Modified",
        [("ETag", b"\"v1\"".as_slice())],
    );
    let mut revisit = WarcRecord::new(RecordKind::Revisit, date);
    revisit.target_uri = Some(url);
    revisit.content_type = Some("application/http;msgtype=response");
    revisit.block = vec![&not_modified];
    revisit
        .fields
        .push(("WARC-Profile", REVISIT_PROFILE_NOT_MODIFIED.to_string()));
    revisit
        .fields
        .push(("WARC-Refers-To", response.id.as_str().to_string()));
    revisit
        .fields
        .push(("WARC-Refers-To-Target-URI", url.to_string()));
    let meta_text = "robots: noindex\r\n";
    let mut meta = WarcRecord::new(RecordKind::Metadata, date);
    meta.target_uri = Some(url);
    meta.content_type = Some("application/warc-fields");
    meta.block = vec![meta_text.as_bytes()];
    meta.fields
        .push(("WARC-Concurrent-To", response.id.as_str().to_string()));
    let dom = b"<html><body>rendered</body></html>";
    let mut conversion = WarcRecord::new(RecordKind::Conversion, date);
    conversion.target_uri = Some(url);
    conversion.content_type = Some("text/html");
    conversion.block = vec![dom];
    conversion.payload_parts = Some(0..1);
    conversion
        .fields
        .push(("WARC-Refers-To", response.id.as_str().to_string()));
    let ids = (
        req.id.as_str().to_string(),
        response.id.as_str().to_string(),
    );
    w.write_group(&[req, response, revisit, meta, conversion])
        .unwrap();
    ids
}

#[test]
fn records_read_back_with_ids_digests_and_links() {
    let dir = tempfile::tempdir().unwrap();
    let (mut w, recovered) = WarcWriter::open(dir.path(), WarcOptions::default()).unwrap();
    assert!(recovered.is_empty());
    let body = b"<html><a href=/x>x</a></html>";
    let (req_id, resp_id) = write_exchange(&mut w, "https://example.test/page", body);
    w.close().unwrap();

    let files = read_all(dir.path());
    assert_eq!(files.len(), 1);
    let records = &files[0].1;
    let types: Vec<_> = records.iter().map(|r| r.warc_type().clone()).collect();
    assert_eq!(
        types,
        [
            RecordType::WarcInfo,
            RecordType::Request,
            RecordType::Response,
            RecordType::Revisit,
            RecordType::Metadata,
            RecordType::Conversion
        ]
    );
    assert_eq!(header(&records[0], WarcHeader::Filename), files[0].0);
    let (req, resp, revisit) = (&records[1], &records[2], &records[3]);
    assert_eq!(req.warc_id(), req_id);
    assert_eq!(resp.warc_id(), resp_id);
    assert_eq!(header(req, WarcHeader::ConcurrentTo), resp_id);
    assert_eq!(header(revisit, WarcHeader::RefersTo), resp_id);
    assert_eq!(
        header(revisit, WarcHeader::Profile),
        REVISIT_PROFILE_NOT_MODIFIED
    );
    assert_eq!(
        header(resp, WarcHeader::TargetURI),
        "https://example.test/page"
    );
    assert_eq!(header(resp, WarcHeader::IPAddress), "127.0.0.2");
    assert_eq!(resp.date().timestamp(), 1_767_225_600);
    // Digests as an independent computation sees them.
    assert_eq!(
        header(resp, WarcHeader::BlockDigest),
        sha1_label(resp.body())
    );
    assert_eq!(header(resp, WarcHeader::PayloadDigest), sha1_label(body));
    assert!(resp
        .body()
        .starts_with(b"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nETag: \"v1\"\r\n\r\n<html>"));
    assert!(req
        .body()
        .starts_with(b"GET /page HTTP/1.1\r\nHost: example.test\r\n"));
    assert_eq!(
        header(&records[5], WarcHeader::PayloadDigest),
        sha1_label(records[5].body())
    );
    for r in records {
        assert_eq!(
            header(r, WarcHeader::BlockDigest),
            sha1_label(r.body()),
            "{:?}",
            r.warc_type()
        );
    }
}

#[test]
fn members_encoded_elsewhere_are_appended_as_is() {
    let dir = tempfile::tempdir().unwrap();
    let (mut w, _) = WarcWriter::open(dir.path(), WarcOptions::default()).unwrap();
    let mut r = WarcRecord::new(RecordKind::Resource, Timestamp::now());
    r.target_uri = Some("https://example.test/r");
    r.block = vec![b"resource body"];
    let member = warc::encode_member(&r);
    let locs = w.write_encoded(&[member.clone(), member]).unwrap();
    assert_eq!(locs[1].offset, locs[0].offset + locs[0].length);
    w.close().unwrap();
    let files = read_all(dir.path());
    assert_eq!(files[0].1.len(), 3);
    assert_eq!(files[0].1[2].body(), b"resource body");
}

#[test]
fn files_rotate_at_the_size_limit() {
    let dir = tempfile::tempdir().unwrap();
    let options = WarcOptions {
        max_file_bytes: 2_000,
        ..WarcOptions::default()
    };
    let (mut w, _) = WarcWriter::open(dir.path(), options).unwrap();
    // Incompressible, so each group of records passes the limit on its own.
    let body: Vec<u8> = (0u32..3_000)
        .map(|i| (i.wrapping_mul(2_654_435_761) >> 13) as u8)
        .collect();
    for i in 0..4 {
        write_exchange(&mut w, &format!("https://example.test/{i}"), &body);
    }
    w.close().unwrap();
    let files = read_all(dir.path());
    assert_eq!(
        files.len(),
        4,
        "one exchange group per file once each passes the size"
    );
    for (name, records) in &files {
        assert_eq!(records[0].warc_type(), &RecordType::WarcInfo, "{name}");
        assert_eq!(records.len(), 6);
    }
}

/// Copy what a crashed writer left: the finished file's bytes under a `.open` name, cut
/// `cut_from_end` bytes short, plus `junk`.
fn crash_copy(dir: &Path, cut_from_end: usize, junk: &[u8]) -> (std::path::PathBuf, usize) {
    let src = std::fs::read_dir(dir)
        .unwrap()
        .next()
        .unwrap()
        .unwrap()
        .path();
    let bytes = std::fs::read(&src).unwrap();
    std::fs::remove_file(&src).unwrap();
    let open = src.with_extension("gz.open");
    let mut f = std::fs::File::create(&open).unwrap();
    f.write_all(&bytes[..bytes.len() - cut_from_end]).unwrap();
    f.write_all(junk).unwrap();
    (open, bytes.len())
}

#[test]
fn a_torn_last_record_is_cut_on_restart() {
    for (cut, junk) in [
        (10usize, &b""[..]),
        (0, &b"\x1f\x8b\x08\0garbage"[..]),
        (0, &b""[..]),
    ] {
        let dir = tempfile::tempdir().unwrap();
        let (mut w, _) = WarcWriter::open(dir.path(), WarcOptions::default()).unwrap();
        write_exchange(&mut w, "https://example.test/a", b"first");
        let mut last = WarcRecord::new(RecordKind::Resource, Timestamp::now());
        last.block = vec![&[b'z'; 5000]];
        last.target_uri = Some("https://example.test/b");
        let loc = w.write(&last).unwrap();
        w.close().unwrap();
        let (open, full_len) = crash_copy(dir.path(), cut, junk);
        assert_eq!(loc.offset + loc.length, full_len as u64);

        let (w, recovered) = WarcWriter::open(dir.path(), WarcOptions::default()).unwrap();
        drop(w);
        assert_eq!(recovered.len(), 1);
        assert!(!open.exists());
        let files = read_all(dir.path());
        let n = files[0].1.len();
        if cut > 0 {
            assert_eq!(n, 6, "the torn resource record is dropped");
            assert_eq!(recovered[0].dropped_bytes, loc.length - cut as u64);
        } else {
            assert_eq!(n, 7, "every whole record is kept");
            assert_eq!(recovered[0].dropped_bytes, junk.len() as u64);
        }
        assert_eq!(recovered[0].records, n as u64);
    }
}

#[test]
fn a_file_held_by_a_live_writer_is_left_alone() {
    let dir = tempfile::tempdir().unwrap();
    let (mut w, _) = WarcWriter::open(dir.path(), WarcOptions::default()).unwrap();
    write_exchange(&mut w, "https://example.test/a", b"x");
    w.flush().unwrap();
    let (_other, recovered) = WarcWriter::open(dir.path(), WarcOptions::default()).unwrap();
    assert!(
        recovered.is_empty(),
        "the live writer's file was touched: {recovered:?}"
    );
    w.close().unwrap();
    assert_eq!(read_all(dir.path()).len(), 1);
}
