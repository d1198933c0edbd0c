use std::io::Write;

use super::*;

/// The scope of the tests' sitemaps: `example.test` and the names under it.
fn locate(loc: &str) -> Location<Url> {
    Location::url(loc, |url| {
        url.host_str()
            .is_some_and(|h| h == "example.test" || h.ends_with(".example.test"))
    })
}

async fn parse(bytes: &[u8]) -> Sitemap {
    parse_sitemap(bytes, locate).await.unwrap()
}

fn gzip(bytes: &[u8]) -> Vec<u8> {
    let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    e.write_all(bytes).unwrap();
    e.finish().unwrap()
}

fn locs(s: &Sitemap) -> Vec<&str> {
    s.entries.iter().map(|e| e.loc.as_str()).collect()
}

const URLSET: &str = r#"<?xml version="1.0" encoding="UTF-8"?>
<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">
  <url><loc> https://www.example.test/a?x=1&amp;y=2 </loc><lastmod>2024-05-01</lastmod></url>
  <url><loc><![CDATA[https://example.test/b]]></loc><lastmod>2024-05-01T10:30+02:00</lastmod><priority>0.5</priority></url>
  <url><loc>https://other.test/c</loc></url>
  <url><loc>ftp://example.test/d</loc></url>
  <url><lastmod>2024</lastmod></url>
  <url><loc>https://example.test/e&#x2F;f</loc><lastmod>yesterday</lastmod></url>
</urlset>"#;

#[tokio::test]
async fn urlset_entries_lastmod_and_scope() {
    let s = parse(URLSET.as_bytes()).await;
    assert_eq!(s.kind, SitemapKind::UrlSet);
    assert_eq!(
        locs(&s),
        [
            "https://www.example.test/a?x=1&y=2",
            "https://example.test/b",
            "https://example.test/e/f"
        ]
    );
    assert_eq!(
        s.entries[0].lastmod,
        Some("2024-05-01T00:00:00Z".parse().unwrap())
    );
    assert_eq!(
        s.entries[1].lastmod,
        Some("2024-05-01T08:30:00Z".parse().unwrap())
    );
    assert_eq!(s.entries[2].lastmod, None);
    assert_eq!((s.outside_site, s.invalid, s.cut), (1, 2, None));
}

#[tokio::test]
async fn index_gzip_and_text() {
    let index = r#"<sitemapindex xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">
        <sitemap><loc>https://example.test/s1.xml.gz</loc><lastmod>2024-01</lastmod></sitemap>
        </sitemapindex>"#;
    let s = parse(&gzip(index.as_bytes())).await;
    assert_eq!(s.kind, SitemapKind::Index);
    assert_eq!(locs(&s), ["https://example.test/s1.xml.gz"]);
    assert_eq!(
        s.entries[0].lastmod,
        Some("2024-01-01T00:00:00Z".parse().unwrap())
    );
    let text = b"\n https://example.test/1\r\nhttps://elsewhere.test/2\nnot a url\n\xff\xfe\nhttps://example.test/3";
    let s = parse(text).await;
    assert_eq!(s.kind, SitemapKind::Text);
    assert_eq!(
        locs(&s),
        ["https://example.test/1", "https://example.test/3"]
    );
    assert_eq!((s.outside_site, s.invalid), (1, 2));
    let s = parse(b"<html><body>not a sitemap</body></html>").await;
    assert_eq!(s.kind, SitemapKind::UnknownXml);
    assert!(s.entries.is_empty());
}

#[tokio::test]
async fn url_count_is_capped() {
    let mut xml = String::from("<urlset>");
    for i in 0..MAX_SITEMAP_URLS + 5 {
        xml.push_str(&format!("<url><loc>https://example.test/{i}</loc></url>"));
    }
    xml.push_str("</urlset>");
    let s = parse(xml.as_bytes()).await;
    assert_eq!(s.entries.len(), MAX_SITEMAP_URLS);
    assert_eq!(s.cut, Some(Cut::Urls));
}

#[tokio::test]
async fn a_gzip_bomb_stops_at_the_byte_cap() {
    // 60 MB of whitespace inside a urlset, after one entry: the cap is met on the decoded
    // stream while the compressed file stays small.
    let mut raw = b"<urlset><url><loc>https://example.test/x</loc></url>".to_vec();
    raw.resize(raw.len() + 60 * 1024 * 1024, b' ');
    raw.extend_from_slice(b"<url><loc>https://example.test/after</loc></url></urlset>");
    let bomb = gzip(&raw);
    assert!(bomb.len() < 1024 * 1024, "compressed {} bytes", bomb.len());
    let s = parse(&bomb).await;
    assert_eq!(locs(&s), ["https://example.test/x"]);
    assert_eq!(s.cut, Some(Cut::Bytes));
}

#[tokio::test]
async fn malformed_xml_keeps_what_came_before() {
    let s =
        parse(b"<urlset><url><loc>https://example.test/1</loc></url><url><loc>https://exa").await;
    assert_eq!(locs(&s), ["https://example.test/1"]);
    assert!(matches!(
        parse_sitemap(&b"<urlset><</"[..], locate).await,
        Err(SitemapError::Xml(_)) | Ok(_)
    ));
    assert!(parse(b"").await.entries.is_empty());
}

#[test]
fn w3c_datetimes() {
    let t = |s: &str| lastmod(s).map(|t| t.to_string());
    assert_eq!(t("1997").as_deref(), Some("1997-01-01T00:00:00Z"));
    assert_eq!(t("1997-07").as_deref(), Some("1997-07-01T00:00:00Z"));
    assert_eq!(t("1997-07-16").as_deref(), Some("1997-07-16T00:00:00Z"));
    assert_eq!(
        t("1997-07-16T19:20+01:00").as_deref(),
        Some("1997-07-16T18:20:00Z")
    );
    assert_eq!(
        t("1997-07-16T19:20:30+01:00").as_deref(),
        Some("1997-07-16T18:20:30Z")
    );
    assert_eq!(
        t("1997-07-16T19:20:30.45Z").as_deref(),
        Some("1997-07-16T19:20:30.45Z")
    );
    for bad in [
        "",
        "97",
        "1997-13-01",
        "1997-07-16T19:20",
        "July 1997",
        "1997-07-16T25:00Z",
    ] {
        assert_eq!(t(bad), None, "{bad}");
    }
}
