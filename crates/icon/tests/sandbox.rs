//! Decoding in the sandbox's helper process (the `icon-decode` binary of this crate): good
//! icons come through unchanged, and bombs that get past the decoders' own checks end in a
//! typed error within the wall-clock budget, having cost the parent nothing.

use std::time::{Duration, Instant};

use fetch::{FetchConfig, Fetcher, ResolvePin};
use icon::{
    decode_icon, find_icon, AttemptResult, Budget, IconDecoder, IconError, IconErrorKind, Sandbox,
    SandboxError, BOT_TOKEN, ICON_SIZE, MAX_DIMENSION, SANDBOX_CPU_TIME, SANDBOX_MAX_HELPERS,
    SANDBOX_MAX_INPUT_BYTES, SANDBOX_MAX_OUTPUT_BYTES, SANDBOX_MAX_OUTPUT_PIXELS,
    SANDBOX_MAX_STDERR_BYTES, SANDBOX_MEMORY_BUDGET, SANDBOX_WALL_TIME,
};
use image::{DynamicImage, ImageFormat, Rgba, RgbaImage};
use testweb::{Reply, TestWeb};
use url::Url;

mod bombs;

use bombs::encode;

fn sandbox() -> Sandbox {
    Sandbox::new(env!("CARGO_BIN_EXE_icon-decode"), Vec::<String>::new())
}

/// A helper that is a shell script: a misbehaving helper, to test what the parent accepts.
fn script(script: &str) -> Sandbox {
    Sandbox::new("/bin/sh", ["-c", script, "helper"])
}

/// A red square.
fn solid(side: u32) -> DynamicImage {
    bombs::solid(side, side, Rgba([255, 0, 0, 255]))
}

/// The longest a decode may take: the wall-clock budget, plus starting and reaping the
/// helper on a loaded machine.
fn within_budget(started: Instant) {
    let took = started.elapsed();
    assert!(
        took < SANDBOX_WALL_TIME + Duration::from_secs(5),
        "took {took:?}"
    );
}

/// This process's peak resident memory (`VmHWM`), in bytes.
fn peak_memory() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").expect("/proc/self/status");
    let line = status
        .lines()
        .find(|line| line.starts_with("VmHWM:"))
        .expect("VmHWM");
    let kib: u64 = line
        .trim_start_matches("VmHWM:")
        .trim()
        .trim_end_matches("kB")
        .trim()
        .parse()
        .expect("a number");
    kib * 1024
}

#[tokio::test]
async fn good_icons_decode_through_the_sandbox_as_in_process() {
    let svg = br#"<svg xmlns="http://www.w3.org/2000/svg" width="32" height="16"><rect width="32" height="16" fill="red"/></svg>"#;
    let cases: Vec<(Vec<u8>, Option<&str>)> = vec![
        (encode(&solid(48), ImageFormat::Png), Some("image/png")),
        (encode(&solid(32), ImageFormat::Ico), Some("text/plain")),
        (encode(&solid(16), ImageFormat::Gif), None),
        (svg.to_vec(), Some("image/svg+xml; charset=utf-8")),
    ];
    for (bytes, content_type) in cases {
        let sandboxed = sandbox()
            .decode(&bytes, content_type)
            .await
            .expect("an icon");
        let in_process = decode_icon(&bytes, content_type).expect("an icon");
        assert_eq!(sandboxed, in_process);
        let image = image::load_from_memory(sandboxed.as_bytes()).expect("a PNG");
        assert_eq!((image.width(), image.height()), (ICON_SIZE, ICON_SIZE));
    }
    let decoder = IconDecoder::Sandboxed(sandbox());
    let png = decoder
        .decode(svg.to_vec(), None)
        .await
        .expect("an SVG sniffed without its type");
    assert_eq!(png, decode_icon(svg, None).expect("an icon"));
}

/// The largest raster the decoders accept, 4,096² (64 MiB of pixels), fits the memory budget.
/// Its CPU time is given room: an unoptimised build on a loaded machine needs more than the
/// 2 s an optimised one does well within.
#[tokio::test]
async fn the_largest_raster_fits_the_memory_budget() {
    // A red 4,096² PNG (rows after the first filtered "up", so 74 KiB): encoding one here
    // took most of this test's time in an unoptimised build.
    let bytes = include_bytes!("fixtures/red-4096.png");
    assert!(bytes.len() <= SANDBOX_MAX_INPUT_BYTES);
    let roomy = sandbox().with_budgets(
        SANDBOX_MEMORY_BUDGET,
        Duration::from_secs(60),
        Duration::from_secs(180),
    );
    let png = roomy.decode(bytes, None).await.expect("an icon");
    let image = image::load_from_memory(png.as_bytes())
        .expect("a PNG")
        .into_rgba8();
    assert_eq!(image.get_pixel(32, 32).0, [255, 0, 0, 255]);
}

#[tokio::test]
async fn the_decoders_refusals_come_back_typed() {
    let cases = [
        (
            bombs::png_declaring(100_000, 100_000, 8),
            IconErrorKind::Limits,
        ),
        // Within the dimension limit, but 128 MiB of 16-bit RGBA: over the allocation limit.
        (
            bombs::png_declaring(MAX_DIMENSION, MAX_DIMENSION, 16),
            IconErrorKind::Limits,
        ),
        (b"\x00\x00\x01\x00garbage".to_vec(), IconErrorKind::Decode),
        (b"BM garbage".to_vec(), IconErrorKind::UnsupportedFormat),
        (bombs::use_bomb(), IconErrorKind::SvgTooComplex),
        (bombs::inherited_marker(), IconErrorKind::SvgTooComplex),
        (bombs::compact_numbers(), IconErrorKind::SvgTooComplex),
    ];
    for (bytes, expected) in cases {
        let started = Instant::now();
        let error = sandbox().decode(&bytes, None).await.expect_err("a refusal");
        within_budget(started);
        assert!(
            matches!(&error, IconError::Sandboxed { kind, .. } if *kind == expected),
            "{expected:?}: {error:?}"
        );
        // The message is the decoder's own.
        let in_process = decode_icon(&bytes, None).expect_err("a refusal");
        assert_eq!(error.to_string(), in_process.to_string());
    }
}

/// 100,000 nested groups: the XML parser recurses once per level, and overflows its stack
/// long before the drawing's depth limit is checked. In this process that would abort it
/// (and every test with it); in the helper it is a typed error.
#[tokio::test]
async fn a_deeply_nested_svg_overflows_only_the_helpers_stack() {
    let started = Instant::now();
    let error = sandbox()
        .decode(&bombs::deep_nesting(), None)
        .await
        .expect_err("too deep");
    within_budget(started);
    assert!(
        matches!(error, IconError::OverBudget(Budget::Stack)),
        "{error:?}"
    );
    assert_eq!(error.to_string(), "the image exceeded its stack budget");
}

#[tokio::test]
async fn a_memory_bomb_kills_only_the_helper() {
    let bomb = bombs::scaled_pattern();
    let before = peak_memory();
    let started = Instant::now();
    let error = sandbox()
        .decode(&bomb, Some("image/svg+xml"))
        .await
        .expect_err("over budget");
    within_budget(started);
    assert!(
        matches!(error, IconError::OverBudget(Budget::Memory)),
        "{error:?}"
    );
    assert_eq!(error.to_string(), "the image exceeded its memory budget");
    // The helper asked for a 1 GB canvas; this process grew by nowhere near the budget.
    let grown = peak_memory().saturating_sub(before);
    assert!(grown < SANDBOX_MEMORY_BUDGET / 4, "grew by {grown} bytes");
}

/// An SVG the decoders' own checks let through, whose drawing costs minutes of CPU: a
/// pattern of blurred circles set on a `<g>`, drawn again for each of its 6,000 rectangles.
#[tokio::test]
async fn a_cpu_bomb_ends_at_the_cpu_budget() {
    let started = Instant::now();
    let error = sandbox()
        .decode(&bombs::inherited_pattern(), Some("image/svg+xml"))
        .await
        .expect_err("over budget");
    within_budget(started);
    // On a loaded machine the helper may not get its CPU budget within the wall-clock
    // budget: either way it was stopped.
    assert!(
        matches!(
            error,
            IconError::OverBudget(Budget::CpuTime | Budget::WallTime)
        ),
        "{error:?}"
    );
    // It ran for at least its CPU budget's worth of time before being stopped.
    assert!(started.elapsed() >= SANDBOX_CPU_TIME);
}

#[tokio::test]
async fn the_input_cap_is_checked_before_any_helper_starts() {
    let missing = Sandbox::new("/nonexistent/icon-decode", Vec::<String>::new());
    let too_large = vec![0u8; SANDBOX_MAX_INPUT_BYTES + 1];
    assert!(matches!(
        missing.decode(&too_large, None).await,
        Err(IconError::TooLarge {
            limit: SANDBOX_MAX_INPUT_BYTES
        })
    ));
    assert!(matches!(
        missing.decode(&[], None).await,
        Err(IconError::Empty)
    ));
    // At the cap, the helper is started (here: it cannot be).
    let at_cap = vec![0u8; SANDBOX_MAX_INPUT_BYTES];
    assert!(matches!(
        missing.decode(&at_cap, None).await,
        Err(IconError::Sandbox(SandboxError::Spawn { .. }))
    ));
    // The real helper reads all of it: garbage, but judged.
    let error = sandbox().decode(&at_cap, None).await.expect_err("garbage");
    assert_eq!(error.kind(), IconErrorKind::Unrecognised);
}

#[tokio::test]
async fn a_helper_that_hangs_is_killed_at_the_wall_clock_budget() {
    let started = Instant::now();
    let error = script("exec /bin/sleep 600")
        .decode(b"anything", None)
        .await
        .expect_err("killed");
    assert!(
        matches!(error, IconError::OverBudget(Budget::WallTime)),
        "{error:?}"
    );
    assert!(started.elapsed() >= SANDBOX_WALL_TIME);
    within_budget(started);
}

#[tokio::test]
async fn the_helpers_answer_is_capped_and_checked() {
    let too_long = format!(
        "/bin/cat >/dev/null; /usr/bin/head -c {} /dev/zero",
        SANDBOX_MAX_OUTPUT_BYTES + 1
    );
    let error = script(&too_long)
        .decode(b"x", None)
        .await
        .expect_err("too long");
    assert!(
        matches!(error, IconError::Sandbox(SandboxError::Output { .. })),
        "{error:?}"
    );
    // A PNG of more pixels than one icon (65×65), or of the right count but another shape,
    // is not accepted, however small the file.
    for (width, height) in [
        (ICON_SIZE + 1, ICON_SIZE + 1),
        (ICON_SIZE * 2, ICON_SIZE / 2),
    ] {
        let image = DynamicImage::ImageRgba8(RgbaImage::new(width, height));
        let png = encode(&image, ImageFormat::Png);
        assert!(png.len() < SANDBOX_MAX_OUTPUT_BYTES);
        assert!(u64::from(width * height) >= SANDBOX_MAX_OUTPUT_PIXELS);
        let dir = tempdir();
        let path = dir.join("answer.png");
        std::fs::write(&path, png).expect("writing the answer");
        let helper = script(&format!(
            "/bin/cat >/dev/null; /bin/cat '{}'",
            path.display()
        ));
        let error = helper.decode(b"x", None).await.expect_err("not 64x64");
        assert!(
            matches!(error, IconError::Sandbox(SandboxError::Output { .. })),
            "{width}x{height}: {error:?}"
        );
    }
    // A helper's long last words are read up to their cap and do not block it.
    let chatty = format!(
        "/bin/cat >/dev/null; /usr/bin/head -c {} /dev/zero >&2; exit 9",
        SANDBOX_MAX_STDERR_BYTES * 64
    );
    let started = Instant::now();
    let error = script(&chatty)
        .decode(b"x", None)
        .await
        .expect_err("crashed");
    assert!(started.elapsed() < SANDBOX_WALL_TIME);
    assert!(
        matches!(error, IconError::Sandbox(SandboxError::Crashed { .. })),
        "{error:?}"
    );
}

/// A fresh directory under the target directory (removed with it).
fn tempdir() -> std::path::PathBuf {
    let dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!(
        "sandbox-{}-{:?}",
        std::process::id(),
        std::thread::current().id()
    ));
    std::fs::create_dir_all(&dir).expect("a temporary directory");
    dir
}

fn make_fetcher(web: &TestWeb, host: &str) -> Fetcher {
    let mut config = FetchConfig::new(BOT_TOKEN, "https://robotstxtparser.example/bot");
    config.allow_private_addresses = true;
    for pin in web.pins(host) {
        config.resolve.push(pin.parse::<ResolvePin>().expect("pin"));
    }
    Fetcher::new(config).expect("fetcher")
}

/// A site whose declared icons are bombs: the search, decoding in the sandbox, skips each
/// (typed), uses `/favicon.ico`, and asks for nothing twice.
#[tokio::test]
async fn a_search_skips_bombs_decoded_in_the_sandbox() {
    let web = TestWeb::start().await;
    let host = "bombs.test";
    web.site(host)
        .path("/robots.txt")
        .respond(Reply::robots_txt("User-agent: *\nAllow: /\n"));
    web.site(host)
        .path("/")
        .respond(Reply::ok().header("Content-Type", "text/html").body(
            r#"<html><head><link rel="icon" href="/memory.svg" sizes="any">
               <link rel="icon" href="/cpu.svg" sizes="128x128"></head></html>"#,
        ));
    let svg = |bytes: Vec<u8>| {
        Reply::ok()
            .header("Content-Type", "image/svg+xml")
            .body(bytes)
    };
    web.site(host)
        .path("/memory.svg")
        .respond(svg(bombs::scaled_pattern()));
    web.site(host)
        .path("/cpu.svg")
        .respond(svg(bombs::inherited_pattern()));
    web.site(host)
        .path("/favicon.ico")
        .respond(Reply::ok().body(encode(&solid(16), ImageFormat::Ico)));
    let site = Url::parse(&web.http_url(host, "/")).expect("a site URL");
    let decoder = IconDecoder::Sandboxed(sandbox());
    let search = find_icon(&make_fetcher(&web, host), &site, None, &decoder).await;
    let results: Vec<String> = search
        .attempts
        .iter()
        .map(|attempt| format!("{} {:?}", attempt.url.path(), attempt.result))
        .collect();
    assert_eq!(search.attempts.len(), 3, "{results:?}");
    let result = |path: &str| {
        &search
            .attempts
            .iter()
            .find(|attempt| attempt.url.path() == path)
            .expect("tried")
            .result
    };
    assert!(
        matches!(
            result("/cpu.svg"),
            AttemptResult::Broken(IconError::OverBudget(Budget::CpuTime | Budget::WallTime))
        ),
        "{results:?}"
    );
    assert!(
        matches!(
            result("/memory.svg"),
            AttemptResult::Broken(IconError::OverBudget(Budget::Memory))
        ),
        "{results:?}"
    );
    let found = search.icon.expect("the favicon");
    assert_eq!(found.url.path(), "/favicon.ico");
    let mut paths: Vec<String> = web.requests().into_iter().map(|r| r.path).collect();
    paths.sort();
    assert_eq!(
        paths,
        [
            "/",
            "/cpu.svg",
            "/favicon.ico",
            "/memory.svg",
            "/robots.txt"
        ]
    );
}

/// However many decodes are asked for at once, at most [`SANDBOX_MAX_HELPERS`] helpers run:
/// each helper notes its start and end in a log, and no more than that many are ever
/// between a start and an end.
#[tokio::test]
async fn at_most_two_helpers_run_at_once() {
    let dir = tempdir();
    let log = dir.join("helpers.log");
    let _ = std::fs::remove_file(&log);
    let helper = script(&format!(
        "echo start >> '{0}'; /bin/sleep 1; /bin/cat >/dev/null; echo end >> '{0}'",
        log.display()
    ));
    let decodes: Vec<_> = (0..SANDBOX_MAX_HELPERS * 2 + 1)
        .map(|_| {
            let helper = helper.clone();
            tokio::spawn(async move { helper.decode(b"x", None).await })
        })
        .collect();
    for decode in decodes {
        let result = decode.await.expect("no panic");
        // The script answers nothing: not a PNG.
        assert!(matches!(
            result,
            Err(IconError::Sandbox(SandboxError::Output { .. }))
        ));
    }
    let lines = std::fs::read_to_string(&log).expect("the log");
    let (mut running, mut most) = (0usize, 0usize);
    for line in lines.lines() {
        running = if line == "start" {
            running + 1
        } else {
            running - 1
        };
        most = most.max(running);
    }
    assert_eq!(lines.lines().count(), (SANDBOX_MAX_HELPERS * 2 + 1) * 2);
    assert_eq!(most, SANDBOX_MAX_HELPERS, "{lines}");
}
