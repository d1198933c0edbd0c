//! Decoding icons to 64×64 PNGs: images generated here in every format read, and hostile
//! ones (bombs, truncated files, garbage, SVGs reaching outside or expanding without end).

use icon::{
    decode_icon, IconError, ICON_SIZE, MAX_DIMENSION, MAX_ICON_BYTES, MAX_SVG_DEPTH, MAX_SVG_NODES,
    SVG_LAYER_COST,
};
use image::{DynamicImage, ImageFormat, Rgba, RgbaImage};

mod bombs;

use bombs::{encode, png_declaring, solid};

const RED: Rgba<u8> = Rgba([255, 0, 0, 255]);
const CLEAR: Rgba<u8> = Rgba([0, 0, 0, 0]);

/// The stored icon decoded again: it must be a 64×64 RGBA PNG.
fn decoded(bytes: &[u8], content_type: Option<&str>) -> RgbaImage {
    let png = decode_icon(bytes, content_type).expect("an icon");
    assert_eq!(
        image::guess_format(png.as_bytes()).expect("a format"),
        ImageFormat::Png
    );
    let image = image::load_from_memory(png.as_bytes()).expect("our own PNG");
    assert_eq!((image.width(), image.height()), (ICON_SIZE, ICON_SIZE));
    image.into_rgba8()
}

fn is_red(pixel: &Rgba<u8>) -> bool {
    pixel[0] > 200 && pixel[1] < 60 && pixel[2] < 60 && pixel[3] > 200
}

#[test]
fn every_raster_format_becomes_a_64_px_png() {
    let square = solid(32, 32, RED);
    for format in [
        ImageFormat::Png,
        ImageFormat::Ico,
        ImageFormat::Gif,
        ImageFormat::WebP,
    ] {
        let icon = decoded(&encode(&square, format), None);
        assert!(icon.pixels().all(is_red), "{format:?}");
    }
    let jpeg = encode(
        &DynamicImage::ImageRgb8(square.to_rgb8()),
        ImageFormat::Jpeg,
    );
    let icon = decoded(&jpeg, Some("image/jpeg"));
    assert!(is_red(icon.get_pixel(32, 32)));
}

#[test]
fn the_format_comes_from_the_bytes_not_the_content_type() {
    let ico = encode(&solid(16, 16, RED), ImageFormat::Ico);
    let icon = decoded(&ico, Some("text/plain"));
    assert!(icon.pixels().all(is_red));
}

#[test]
fn large_images_shrink_with_their_aspect_kept_and_centred() {
    let wide = encode(&solid(256, 128, RED), ImageFormat::Png);
    let icon = decoded(&wide, Some("image/png"));
    // 256×128 becomes 64×32, rows 16..48.
    assert_eq!(*icon.get_pixel(10, 5), CLEAR);
    assert_eq!(*icon.get_pixel(10, 60), CLEAR);
    assert!(is_red(icon.get_pixel(0, 16)));
    assert!(is_red(icon.get_pixel(63, 47)));
}

#[test]
fn extreme_aspect_ratios_keep_at_least_one_pixel() {
    let line = decoded(&encode(&solid(4000, 2, RED), ImageFormat::Png), None);
    assert!(line.pixels().any(is_red));
    assert_eq!(*line.get_pixel(0, 0), CLEAR);
    for (width, height) in [(MAX_DIMENSION, 1), (1, MAX_DIMENSION)] {
        let thin = decoded(&encode(&solid(width, height, RED), ImageFormat::Png), None);
        assert!(thin.pixels().any(is_red), "{width}x{height}");
    }
    let column = decoded(&encode(&solid(1, 64, RED), ImageFormat::Png), None);
    // Centred: (64 - 1) / 2 = column 31.
    assert!(is_red(column.get_pixel(31, 0)));
    assert_eq!(*column.get_pixel(32, 0), CLEAR);
}

#[test]
fn small_images_grow_by_whole_factors_and_stay_crisp() {
    // A 20×10 two-colour icon grows 3× to 60×30, centred at (2, 17).
    let mut image = RgbaImage::from_pixel(20, 10, RED);
    image.put_pixel(0, 0, Rgba([0, 0, 255, 255]));
    let icon = decoded(&encode(&image.into(), ImageFormat::Png), None);
    assert_eq!(*icon.get_pixel(1, 30), CLEAR);
    assert_eq!(*icon.get_pixel(2, 17), Rgba([0, 0, 255, 255]));
    assert_eq!(*icon.get_pixel(4, 19), Rgba([0, 0, 255, 255]));
    assert_eq!(*icon.get_pixel(5, 17), RED);
    assert_eq!(*icon.get_pixel(61, 46), RED);
    assert_eq!(*icon.get_pixel(62, 46), CLEAR);
}

#[test]
fn an_animated_gif_gives_its_first_frame() {
    use image::codecs::gif::GifEncoder;
    use image::Frame;
    let mut bytes = Vec::new();
    {
        let mut encoder = GifEncoder::new(&mut bytes);
        let frames = [RED, Rgba([0, 0, 255, 255])]
            .map(|colour| Frame::new(RgbaImage::from_pixel(16, 16, colour)));
        encoder.encode_frames(frames).expect("a test GIF");
    }
    let icon = decoded(&bytes, Some("image/gif"));
    assert!(icon.pixels().all(is_red));
}

#[test]
fn a_png_bomb_is_refused_from_its_header() {
    for (width, height, depth) in [
        (100_000, 100_000, 8),
        (MAX_DIMENSION + 1, 1, 8),
        (1, MAX_DIMENSION + 1, 8),
        // Within the dimension limit, but 128 MiB of 16-bit RGBA: over the allocation limit.
        (MAX_DIMENSION, MAX_DIMENSION, 16),
    ] {
        let bomb = png_declaring(width, height, depth);
        assert!(bomb.len() < 2048);
        let error = decode_icon(&bomb, Some("image/png")).expect_err("a bomb");
        assert!(
            matches!(error, IconError::Limits(_)),
            "{width}x{height}: {error:?}"
        );
    }
}

#[test]
fn a_png_bomb_inside_an_ico_is_refused() {
    let inner = png_declaring(100_000, 100_000, 8);
    // ICONDIR, one ICONDIRENTRY (0 = 256 px) pointing at the PNG.
    let mut ico = vec![0, 0, 1, 0, 1, 0];
    ico.extend_from_slice(&[0, 0, 0, 0, 1, 0, 32, 0]);
    ico.extend_from_slice(&(inner.len() as u32).to_le_bytes());
    ico.extend_from_slice(&22u32.to_le_bytes());
    ico.extend(inner);
    let error = decode_icon(&ico, None).expect_err("a bomb");
    assert!(matches!(error, IconError::Limits(_)), "{error:?}");
}

#[test]
fn truncated_garbage_and_empty_files_are_errors() {
    let png = encode(&solid(64, 64, RED), ImageFormat::Png);
    let truncated = &png[..png.len() / 2];
    assert!(matches!(
        decode_icon(truncated, Some("image/png")),
        Err(IconError::Decode(_))
    ));
    let garbage: Vec<u8> = (0..4096u32).map(|i| (i * 7919 % 251) as u8).collect();
    assert!(matches!(
        decode_icon(&garbage, Some("image/x-icon")),
        Err(IconError::Unrecognised)
    ));
    assert!(matches!(
        decode_icon(b"GIF89a\x10\x00\x10\x00garbage", None),
        Err(IconError::Decode(_))
    ));
    assert!(matches!(
        decode_icon(
            b"<!doctype html><html><body>Not found</body></html>",
            Some("text/html")
        ),
        Err(IconError::Unrecognised)
    ));
    assert!(matches!(decode_icon(b"", None), Err(IconError::Empty)));
    assert!(matches!(
        decode_icon(b"BM\x00\x00\x00\x00", None),
        Err(IconError::UnsupportedFormat { .. })
    ));
}

#[test]
fn the_byte_cap_is_exact() {
    assert_eq!(MAX_ICON_BYTES, 1024 * 1024);
    let mut big = encode(&solid(8, 8, RED), ImageFormat::Png);
    big.resize(MAX_ICON_BYTES, 0);
    // Trailing bytes after IEND are ignored by the decoder: exactly the cap is accepted.
    decoded(&big, None);
    big.push(0);
    assert!(matches!(
        decode_icon(&big, None),
        Err(IconError::TooLarge { .. })
    ));
}

const SVG_NS: &str =
    r#"xmlns="http://www.w3.org/2000/svg" xmlns:xlink="http://www.w3.org/1999/xlink""#;

#[test]
fn an_svg_is_rendered_at_64_px_with_its_aspect_kept() {
    let svg = format!(
        r#"<?xml version="1.0"?><svg {SVG_NS} viewBox="0 0 200 100"><rect width="200" height="100" fill="red"/></svg>"#
    );
    let icon = decoded(svg.as_bytes(), Some("image/svg+xml"));
    assert_eq!(*icon.get_pixel(32, 5), CLEAR);
    assert!(is_red(icon.get_pixel(32, 32)));
    assert!(is_red(icon.get_pixel(1, 17)));
    // Sniffed without a content type, and with a BOM.
    let svg = format!("\u{feff}  <svg {SVG_NS} width=\"10\" height=\"10\"><circle cx=\"5\" cy=\"5\" r=\"5\" fill=\"red\"/></svg>");
    let icon = decoded(svg.as_bytes(), None);
    assert!(is_red(icon.get_pixel(32, 32)));
    assert_eq!(*icon.get_pixel(0, 0), CLEAR);
}

#[test]
fn an_svg_loads_nothing_external() {
    let dir = std::env::temp_dir().join(format!("icon-test-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("a temp dir");
    let local = dir.join("green.png");
    std::fs::write(
        &local,
        encode(&solid(64, 64, Rgba([0, 255, 0, 255])), ImageFormat::Png),
    )
    .expect("a temp file");
    let embedded = encode(&solid(64, 64, Rgba([0, 255, 0, 255])), ImageFormat::Png);
    let data_url = format!("data:image/png;base64,{}", base64(&embedded));
    for href in [
        local.display().to_string(),
        format!("file://{}", local.display()),
        data_url,
    ] {
        let svg = format!(
            r#"<svg {SVG_NS} width="64" height="64"><image href="{href}" width="64" height="64"/><image xlink:href="{href}" width="64" height="64"/></svg>"#
        );
        let icon = decoded(svg.as_bytes(), Some("image/svg+xml"));
        assert!(icon.pixels().all(|pixel| pixel[3] == 0), "drew {href:.60}");
    }
    std::fs::remove_dir_all(&dir).ok();
}

fn base64(bytes: &[u8]) -> String {
    const ALPHABET: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::new();
    for group in bytes.chunks(3) {
        let n = group
            .iter()
            .enumerate()
            .fold(0u32, |n, (i, b)| n | u32::from(*b) << (16 - 8 * i));
        for i in 0..4 {
            if i <= group.len() {
                out.push(ALPHABET[(n >> (18 - 6 * i) & 63) as usize] as char);
            } else {
                out.push('=');
            }
        }
    }
    out
}

#[test]
fn a_billion_laughs_svg_is_refused() {
    let mut dtd = String::from("<!ENTITY lol0 \"lol\">");
    for level in 1..10 {
        let previous = format!("&lol{};", level - 1).repeat(10);
        dtd.push_str(&format!("<!ENTITY lol{level} \"{previous}\">"));
    }
    let svg = format!(
        "<?xml version=\"1.0\"?><!DOCTYPE svg [{dtd}]><svg {SVG_NS} width=\"64\" height=\"64\"><text>&lol9;</text></svg>"
    );
    let error = decode_icon(svg.as_bytes(), Some("image/svg+xml")).expect_err("refused");
    assert!(matches!(error, IconError::SvgXml(_)), "{error:?}");
    // Elements made by entities count against the node limit too.
    let svg = format!(
        "<?xml version=\"1.0\"?><!DOCTYPE svg [<!ENTITY r \"{}\"><!ENTITY s \"{}\">]><svg {SVG_NS} width=\"64\" height=\"64\">&s;</svg>",
        "<rect width='1' height='1'/>".repeat(200),
        "&r;".repeat(200)
    );
    let error = decode_icon(svg.as_bytes(), Some("image/svg+xml")).expect_err("refused");
    assert!(matches!(error, IconError::SvgXml(_)), "{error:?}");
}

#[test]
fn an_svg_entity_within_the_limits_still_renders() {
    // Illustrator-style DTDs are common in real icons.
    let svg = format!(
        "<?xml version=\"1.0\"?><!DOCTYPE svg [<!ENTITY fill \"red\">]><svg {SVG_NS} width=\"8\" height=\"8\"><rect width=\"8\" height=\"8\" fill=\"&fill;\"/></svg>"
    );
    assert!(decoded(svg.as_bytes(), None).pixels().all(is_red));
}

#[test]
fn an_svg_use_bomb_cycle_or_deep_tree_is_refused() {
    // Ten levels of ten <use> each: 10^10 elements once expanded.
    let mut defs = String::from("<rect id=\"l0\" width=\"1\" height=\"1\"/>");
    for level in 1..=10 {
        let uses = format!("<use href=\"#l{}\"/>", level - 1).repeat(10);
        defs.push_str(&format!("<g id=\"l{level}\">{uses}</g>"));
    }
    let svg = format!(
        "<svg {SVG_NS} width=\"64\" height=\"64\"><defs>{defs}</defs><use href=\"#l10\"/></svg>"
    );
    assert!(matches!(
        decode_icon(svg.as_bytes(), None),
        Err(IconError::SvgTooComplex {
            limit: MAX_SVG_NODES
        })
    ));
    let cycle = format!(
        "<svg {SVG_NS} width=\"64\" height=\"64\"><g id=\"a\"><use xlink:href=\"#b\"/></g><g id=\"b\"><rect fill=\"url(#p)\" width=\"1\" height=\"1\"/></g><pattern id=\"p\"><use href=\"#a\"/></pattern></svg>"
    );
    assert!(matches!(
        decode_icon(cycle.as_bytes(), None),
        Err(IconError::SvgTooComplex { .. })
    ));
    let deep = format!(
        "<svg {SVG_NS} width=\"64\" height=\"64\">{}{}</svg>",
        "<g>".repeat(MAX_SVG_DEPTH + 1),
        "</g>".repeat(MAX_SVG_DEPTH + 1)
    );
    assert!(matches!(
        decode_icon(deep.as_bytes(), None),
        Err(IconError::SvgTooComplex { .. })
    ));
    let shallow = format!(
        "<svg {SVG_NS} width=\"64\" height=\"64\">{}<rect width=\"64\" height=\"64\" fill=\"red\"/>{}</svg>",
        "<g>".repeat(MAX_SVG_DEPTH - 2),
        "</g>".repeat(MAX_SVG_DEPTH - 2)
    );
    assert!(decoded(shallow.as_bytes(), None).pixels().all(is_red));
}

#[test]
fn markers_count_once_per_vertex() {
    let marker = format!(
        "<marker id=\"m\" markerWidth=\"4\" markerHeight=\"4\">{}</marker>",
        "<rect width=\"1\" height=\"1\" fill=\"red\"/>".repeat(10)
    );
    let path = |vertices: usize, how: &str| {
        let points: String = (0..vertices)
            .map(|i| format!("{} {} ", i % 64, i / 64))
            .collect();
        format!(
            "<svg {SVG_NS} width=\"64\" height=\"64\"><defs>{marker}</defs><polyline points=\"{points}\" {how}/></svg>"
        )
    };
    // 5,000 vertices × 11 marker elements: 55,000 elements drawn.
    for how in ["marker-mid=\"url(#m)\"", "style=\"marker-mid: url(#m)\""] {
        assert!(
            matches!(
                decode_icon(path(5000, how).as_bytes(), None),
                Err(IconError::SvgTooComplex { .. })
            ),
            "{how}"
        );
    }
    let css = path(5000, "").replace(
        "<defs>",
        "<style>polyline { marker-mid: url(#m) }</style><defs>",
    );
    assert!(matches!(
        decode_icon(css.as_bytes(), None),
        Err(IconError::SvgTooComplex { .. })
    ));
    decoded(path(20, "marker-mid=\"url(#m)\"").as_bytes(), None);
}

/// Markers are inherited: set on a `<g>`, they are drawn at every vertex of every path in it.
/// And `0.1.1.1` is three numbers, not one: a path written that way has as many vertices.
#[test]
fn inherited_markers_and_compact_numbers_count_every_vertex() {
    for (name, bomb) in [
        ("inherited marker", bombs::inherited_marker()),
        ("compact numbers", bombs::compact_numbers()),
    ] {
        let started = std::time::Instant::now();
        let error = decode_icon(&bomb, None).expect_err("too complex");
        assert!(
            matches!(error, IconError::SvgTooComplex { .. }),
            "{name}: {error:?}"
        );
        // Refused by the count, not after drawing (which took minutes).
        assert!(started.elapsed().as_secs() < 5, "{name}");
    }
    let marker = "<marker id=\"m\" markerWidth=\"4\" markerHeight=\"4\"><rect width=\"1\" height=\"1\" fill=\"red\"/></marker>";
    // Within the limit, both still draw: 20 compact vertices under a marked group.
    let small = format!(
        "<svg {SVG_NS} width=\"64\" height=\"64\"><defs>{marker}</defs><g marker-mid=\"url(#m)\"><path d=\"M0.1{}\" stroke=\"red\"/></g></svg>",
        ".1".repeat(40)
    );
    decoded(small.as_bytes(), None);
}

#[test]
fn filters_masks_and_patterns_weigh_as_layers() {
    assert_eq!(SVG_LAYER_COST, 100);
    let uses = MAX_SVG_NODES / SVG_LAYER_COST;
    let circles = |count: usize, how: &str| {
        let shapes: String = (0..count)
            .map(|i| format!("<circle cx=\"{}\" cy=\"32\" r=\"30\" {how}/>", i % 64))
            .collect();
        format!(
            "<svg {SVG_NS} viewBox=\"0 0 64 64\"><filter id=\"b\"><feGaussianBlur stdDeviation=\"2\"/></filter>\
             <mask id=\"m\"><rect width=\"64\" height=\"64\" fill=\"white\"/></mask>\
             <pattern id=\"p\" width=\"4\" height=\"4\"><rect width=\"2\" height=\"2\" fill=\"red\"/></pattern>{shapes}</svg>"
        )
    };
    for how in ["filter=\"url(#b)\"", "mask=\"url(#m)\"", "fill=\"url(#p)\""] {
        assert!(
            matches!(
                decode_icon(circles(uses, how).as_bytes(), None),
                Err(IconError::SvgTooComplex { .. })
            ),
            "{how}"
        );
        decoded(circles(uses / 4, how).as_bytes(), None);
    }
}

#[test]
fn a_shared_gradient_is_not_a_cycle() {
    let svg = format!(
        r##"<svg {SVG_NS} width="64" height="64"><style>rect {{ fill: url(#g); }}</style>
        <defs><linearGradient id="g"><stop offset="0" stop-color="red"/><stop offset="1" stop-color="red"/></linearGradient>
        <linearGradient id="h" href="#g"/></defs>
        <rect width="64" height="64"/><circle r="1" fill="url(#h)"/></svg>"##
    );
    assert!(is_red(decoded(svg.as_bytes(), None).get_pixel(32, 32)));
}

#[test]
fn broken_svgs_are_errors() {
    assert!(matches!(
        decode_icon(b"<svg xmlns=\"http://www.w3.org/2000/svg\"><rect", None),
        Err(IconError::SvgXml(_))
    ));
    assert!(matches!(
        decode_icon(b"<svg>\xff\xfe</svg>", Some("image/svg+xml")),
        Err(IconError::SvgNotText)
    ));
    assert!(matches!(
        decode_icon(b"<html></html>", Some("image/svg+xml; charset=utf-8")),
        Err(IconError::Svg(_))
    ));
}

/// Corrupted files never panic: every byte of small valid files in each format (and of an
/// SVG) is altered in turn, and they are cut short; each result is an icon or an error.
#[test]
fn corrupted_files_give_errors_not_panics() {
    let mut files: Vec<Vec<u8>> = [
        ImageFormat::Png,
        ImageFormat::Ico,
        ImageFormat::Gif,
        ImageFormat::WebP,
    ]
    .into_iter()
    .map(|format| encode(&solid(8, 8, RED), format))
    .collect();
    files.push(encode(
        &DynamicImage::ImageRgb8(solid(8, 8, RED).to_rgb8()),
        ImageFormat::Jpeg,
    ));
    files.push(
        format!("<svg {SVG_NS} viewBox=\"0 0 8 8\"><use href=\"#r\"/><rect id=\"r\" width=\"8\" height=\"8\" fill=\"url(#g)\"/><linearGradient id=\"g\"/></svg>")
            .into_bytes(),
    );
    let mut outcomes = (0usize, 0usize);
    for file in &files {
        for position in 0..file.len() {
            let mut corrupt = file.clone();
            corrupt[position] ^= 0xa5;
            match decode_icon(&corrupt, None) {
                Ok(_) => outcomes.0 += 1,
                Err(_) => outcomes.1 += 1,
            }
            if position % 5 == 0 {
                let _ = decode_icon(&file[..position], None);
            }
        }
    }
    // Both happen: the test exercises decoders, not only the sniffing.
    assert!(outcomes.0 > 0 && outcomes.1 > 0, "{outcomes:?}");
}
