//! Which icons a home page declares, and in which order they are tried.

use icon::{
    declared_icons, parse_sizes, DeclaredSize, IconLinkReader, RelKind, MAX_ATTRIBUTE_BYTES,
    MAX_DECLARED_ICONS, MAX_HREF_BYTES,
};
use url::Url;

fn page() -> Url {
    Url::parse("https://example.com/blog/post.html").expect("a test URL")
}

fn urls(html: &str) -> Vec<String> {
    declared_icons(html.as_bytes(), &page())
        .into_iter()
        .map(|link| link.url.to_string())
        .collect()
}

#[test]
fn every_icon_rel_is_read_and_others_are_not() {
    let html = r#"<html><head>
        <link rel="icon" href="/a.png">
        <LINK REL="Shortcut Icon" HREF="/b.ico">
        <link rel="apple-touch-icon" href="/c.png">
        <link rel="apple-touch-icon-precomposed" href="/d.png">
        <link rel="mask-icon" href="/mask.svg">
        <link rel="stylesheet" href="/style.css">
        <link rel="icon">
        <link rel="icon" href="">
        </head>"#;
    let icons = declared_icons(html.as_bytes(), &page());
    let found: Vec<(&str, RelKind)> = icons
        .iter()
        .map(|link| (link.url.path(), link.rel))
        .collect();
    // The two apple-touch icons (180 px by default) outrank the unsized ones.
    assert_eq!(
        found,
        vec![
            ("/c.png", RelKind::AppleTouchIcon),
            ("/d.png", RelKind::AppleTouchIcon),
            ("/a.png", RelKind::Icon),
            ("/b.ico", RelKind::Icon),
        ]
    );
}

#[test]
fn best_size_first_then_scalable_then_unknown_then_small() {
    let html = r#"<head>
        <link rel="icon" href="/16.png" sizes="16x16">
        <link rel="icon" href="/unknown.png">
        <link rel="icon" href="/32.png" sizes="32x32">
        <link rel="icon" href="/logo.svg" type="image/svg+xml">
        <link rel="icon" href="/512.png" sizes="512x512">
        <link rel="icon" href="/96.png" sizes="96X96">
        <link rel="apple-touch-icon" href="/touch.png" sizes="152x152">
        <link rel="icon" href="/multi.ico" sizes="16x16 32x32 48x48 64x64">
        <link rel="icon" href="/avif.avif" sizes="64x64" type="image/avif">
        </head>"#;
    assert_eq!(
        urls(html),
        vec![
            "https://example.com/multi.ico",
            "https://example.com/96.png",
            "https://example.com/touch.png",
            "https://example.com/512.png",
            "https://example.com/logo.svg",
            "https://example.com/unknown.png",
            "https://example.com/32.png",
            "https://example.com/16.png",
            // A type the decoder cannot read goes last, whatever its size.
            "https://example.com/avif.avif",
        ]
    );
}

#[test]
fn sizes_attribute() {
    assert_eq!(parse_sizes("any"), DeclaredSize::Scalable);
    assert_eq!(parse_sizes("16x16 ANY"), DeclaredSize::Scalable);
    assert_eq!(parse_sizes("16x16 32x32"), DeclaredSize::Pixels(32));
    assert_eq!(
        parse_sizes("256x256 16x16 128x128"),
        DeclaredSize::Pixels(128)
    );
    assert_eq!(parse_sizes("120x60"), DeclaredSize::Pixels(120));
    assert_eq!(parse_sizes("0x0 big x12 -1x5"), DeclaredSize::Unknown);
    assert_eq!(parse_sizes(""), DeclaredSize::Unknown);
    assert_eq!(parse_sizes("99999999999x1 64x64"), DeclaredSize::Pixels(64));
}

#[test]
fn base_href_and_relative_urls() {
    let html = r#"<head>
        <link rel="icon" href="icon.png" sizes="64x64">
        <base href="https://cdn.example.net/assets/">
        <base href="https://ignored.example/">
        <link rel="icon" href="//other.example/i.png" sizes="32x32">
        <link rel="icon" href="../up.png" sizes="16x16">
        </head>"#;
    // The first <base href> applies to every link, even one before it.
    assert_eq!(
        urls(html),
        vec![
            "https://cdn.example.net/assets/icon.png",
            "https://other.example/i.png",
            "https://cdn.example.net/up.png",
        ]
    );
    // Without a base, links resolve against the page's final URL.
    assert_eq!(
        urls(r#"<link rel=icon href="fav.png">"#),
        vec!["https://example.com/blog/fav.png"]
    );
    // A base that is not http(s) is ignored.
    assert_eq!(
        urls(r#"<base href="javascript:alert(1)//"><link rel=icon href="fav.png">"#),
        vec!["https://example.com/blog/fav.png"]
    );
}

#[test]
fn only_http_and_https_icons() {
    let html = r#"<head>
        <link rel="icon" href="data:image/png;base64,iVBORw0KGgo=">
        <link rel="icon" href="javascript:alert(1)">
        <link rel="icon" href="file:///etc/passwd">
        <link rel="icon" href="ftp://example.com/i.ico">
        <link rel="icon" href="http://plain.example/i.ico">
        <link rel="icon" href="http://[::1">
        </head>"#;
    assert_eq!(urls(html), vec!["http://plain.example/i.ico"]);
}

#[test]
fn the_head_ends_where_the_tokenizer_says() {
    let html = r#"<html><head>
        <script>var s = '</head><body>';</script>
        <!-- </head> <link rel="icon" href="/comment.png"> -->
        <title></head><link rel="icon" href="/title.png"></title>
        <link rel="icon" href="/real.png">
        </head><body><link rel="icon" href="/body.png"></body>"#;
    assert_eq!(urls(html), vec!["https://example.com/real.png"]);
    assert!(urls(r#"<body><link rel=icon href=/x.png>"#).is_empty());
}

#[test]
fn chunked_reading_gives_the_same_links_and_stops_at_the_end_of_head() {
    let html = "<head><link rel=\"icon\" href=\"/caf\u{e9}.png\" sizes=\"64x64\">\
                <link rel=apple-touch-icon href=/t.png></head><body>"
        .as_bytes();
    let whole = declared_icons(html, &page());
    assert_eq!(whole.len(), 2);
    let end = html.len() - "<body>".len();
    for split in 1..html.len() {
        let mut reader = IconLinkReader::new();
        let first = reader.feed(&html[..split]);
        let second = reader.feed(&html[split..]);
        assert_eq!(first, split >= end, "split at {split}");
        assert!(second, "split at {split}");
        assert_eq!(reader.finish(&page()), whole, "split at {split}");
    }
}

#[test]
fn limits_on_hostile_pages() {
    let many = r#"<link rel="icon" href="/i.png?n">"#.repeat(MAX_DECLARED_ICONS * 3);
    // Distinct URLs, so deduplication does not hide the cap.
    let many: String = many
        .split("?n")
        .enumerate()
        .map(|(i, part)| format!("{part}?{i}"))
        .collect();
    assert_eq!(urls(&many).len(), MAX_DECLARED_ICONS);
    let long = format!(
        r#"<link rel="icon" href="/{}"><link rel="icon" href="/ok.png">"#,
        "a".repeat(MAX_HREF_BYTES)
    );
    assert_eq!(urls(&long), vec!["https://example.com/ok.png"]);
    let padded = |n: usize| format!("{}64x64", " ".repeat(n - 5));
    let html = format!(
        r#"<link rel=icon href=/a.png sizes="{}"><link rel=icon href=/b.png sizes="{}">"#,
        padded(MAX_ATTRIBUTE_BYTES),
        padded(MAX_ATTRIBUTE_BYTES + 1)
    );
    let sizes: Vec<DeclaredSize> = declared_icons(html.as_bytes(), &page())
        .into_iter()
        .map(|link| link.size)
        .collect();
    assert_eq!(sizes, [DeclaredSize::Pixels(64), DeclaredSize::Unknown]);
    let duplicate = r#"<link rel=icon href=/same.png><link rel=icon href=/same.png sizes=64x64>"#;
    let icons = declared_icons(duplicate.as_bytes(), &page());
    assert_eq!(icons.len(), 1);
    assert_eq!(icons[0].size, DeclaredSize::Pixels(64));
    assert!(urls("\u{0}\u{ff}<<<>>><link rel=icon href=").is_empty());
    let mut garbage = b"\xff\xfe\x00<head>".to_vec();
    garbage.extend_from_slice(b"<link rel=icon href=/g.png>");
    assert_eq!(declared_icons(&garbage, &page()).len(), 1);
}
