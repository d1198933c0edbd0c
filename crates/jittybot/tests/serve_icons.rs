//! `jittybot serve` decodes site icons in its sandboxed helper (`jittybot __decode-icon`):
//! a site whose declared icon is a memory bomb gets its `/favicon.ico` instead, and the
//! server, which would have decoded the bomb itself, never sees it.

mod common;

use std::time::Duration;

use common::serve::{http_bytes, poll, start_serve, Server};
use common::{jittybot, reach, stderr};
use image::{DynamicImage, ImageFormat, Rgba, RgbaImage};
use testweb::{Reply, TestWeb};

/// `jittybot serve` with its scheduler, on a free port.
fn start(db: &str, extra: &[String]) -> Server {
    let mut args = vec!["--db".to_owned(), db.to_owned()];
    args.extend_from_slice(extra);
    start_serve(&[], &args)
}

fn red_ico() -> Vec<u8> {
    let image = DynamicImage::ImageRgba8(RgbaImage::from_pixel(16, 16, Rgba([255, 0, 0, 255])));
    let mut bytes = Vec::new();
    image
        .write_to(&mut std::io::Cursor::new(&mut bytes), ImageFormat::Ico)
        .expect("an ICO");
    bytes
}

/// A pattern tile of 16,000² pixels: 1 GB, allocated by the renderer for five elements.
const MEMORY_BOMB: &str = r##"<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 50 50"><defs><pattern id="p" width="50" height="50" patternUnits="userSpaceOnUse" patternTransform="scale(250)"><circle cx="25" cy="25" r="20"/></pattern></defs><rect width="50" height="50" fill="url(#p)"/></svg>"##;

#[tokio::test(flavor = "multi_thread")]
async fn the_scheduled_icon_search_decodes_in_the_sandbox() {
    let web = TestWeb::start().await;
    let host = "icons.test";
    web.site(host)
        .path("/robots.txt")
        .respond(Reply::robots_txt("User-agent: *\nAllow: /\n"));
    web.site(host).path("/").respond(Reply::html(
        r#"<html><head><link rel="icon" href="/bomb.svg" sizes="any"></head></html>"#,
    ));
    web.site(host).path("/bomb.svg").respond(
        Reply::ok()
            .header("Content-Type", "image/svg+xml")
            .body(MEMORY_BOMB),
    );
    web.site(host)
        .path("/favicon.ico")
        .respond(Reply::ok().body(red_ico()));
    let dir = tempfile::tempdir().expect("a directory");
    let db = dir.path().join("store.sqlite");
    let db = db.to_str().expect("a UTF-8 path");
    let url = web.http_url(host, "/");
    let out = jittybot(&["sites", "add", &url, "--db", db], None);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let server = start(db, &reach(&web, host));
    let addr = server.addr.clone();
    let icon = tokio::task::spawn_blocking(move || {
        poll(Duration::from_secs(90), Duration::from_millis(200), || {
            let (status, body) = http_bytes(&addr, "GET", &format!("/icon/{host}"), "", "");
            (status == 200, (status, body))
        })
    })
    .await
    .expect("no panic");
    assert_eq!(icon.0, 200, "no icon stored");
    // The favicon's red, not the bomb's black circle: the bomb was stopped in the helper.
    let png = image::load_from_memory(&icon.1)
        .expect("a PNG")
        .into_rgba8();
    assert_eq!(png.get_pixel(32, 32).0, [255, 0, 0, 255]);
    assert_eq!(web.requests_to(host, "/bomb.svg").len(), 1);
    assert_eq!(web.requests_to(host, "/favicon.ico").len(), 1);
    drop(server);
}
