//! Images built here, most of them hostile; shared by the test files, each using some.
#![allow(dead_code)]

use std::io::Cursor;

use image::{DynamicImage, ImageFormat, Rgba, RgbaImage};

const SVG_NS: &str =
    r#"xmlns="http://www.w3.org/2000/svg" xmlns:xlink="http://www.w3.org/1999/xlink""#;

/// A `width`×`height` image of one colour.
pub fn solid(width: u32, height: u32, colour: Rgba<u8>) -> DynamicImage {
    DynamicImage::ImageRgba8(RgbaImage::from_pixel(width, height, colour))
}

/// `image` as a file of `format`.
pub fn encode(image: &DynamicImage, format: ImageFormat) -> Vec<u8> {
    let mut bytes = Vec::new();
    image
        .write_to(&mut Cursor::new(&mut bytes), format)
        .expect("encoding a test image");
    bytes
}

/// The CRC-32 of a PNG chunk (its type and data).
pub fn crc32<'a>(bytes: impl IntoIterator<Item = &'a u8>) -> u32 {
    let mut crc = 0xffff_ffffu32;
    for byte in bytes {
        crc ^= u32::from(*byte);
        for _ in 0..8 {
            crc = if crc & 1 == 1 {
                (crc >> 1) ^ 0xedb8_8320
            } else {
                crc >> 1
            };
        }
    }
    !crc
}

/// A PNG's chunk with its CRC.
pub fn chunk(kind: &[u8; 4], data: &[u8]) -> Vec<u8> {
    let mut out = u32::try_from(data.len())
        .expect("a small chunk")
        .to_be_bytes()
        .to_vec();
    out.extend_from_slice(kind);
    out.extend_from_slice(data);
    out.extend_from_slice(&crc32(kind.iter().chain(data)).to_be_bytes());
    out
}

/// A PNG that declares `width`×`height` pixels of `bit_depth`-bit RGBA but holds one small
/// compressed block: a decompression bomb if its header were believed.
pub fn png_declaring(width: u32, height: u32, bit_depth: u8) -> Vec<u8> {
    let mut ihdr = width.to_be_bytes().to_vec();
    ihdr.extend_from_slice(&height.to_be_bytes());
    ihdr.extend_from_slice(&[bit_depth, 6, 0, 0, 0]);
    let mut png = b"\x89PNG\r\n\x1a\n".to_vec();
    png.extend(chunk(b"IHDR", &ihdr));
    // A zlib stream of zeros (stored deflate, 1 KiB).
    let mut idat = vec![0x78, 0x01, 0x01, 0x00, 0x04, 0xff, 0xfb];
    idat.extend(std::iter::repeat_n(0u8, 1024));
    png.extend(chunk(b"IDAT", &idat));
    png.extend(chunk(b"IEND", &[]));
    png
}

/// Ten levels of ten `<use>` each: 10^10 elements once expanded.
pub fn use_bomb() -> Vec<u8> {
    let mut defs = String::from(r#"<rect id="l0" width="1" height="1"/>"#);
    for level in 1..=10 {
        let uses = format!("<use href=\"#l{}\"/>", level - 1).repeat(10);
        defs.push_str(&format!("<g id=\"l{level}\">{uses}</g>"));
    }
    format!(r##"<svg {SVG_NS} width="64" height="64"><defs>{defs}</defs><use href="#l10"/></svg>"##)
        .into_bytes()
}

/// 100,000 nested groups.
pub fn deep_nesting() -> Vec<u8> {
    let depth = 100_000;
    format!(
        "<svg {SVG_NS} width=\"64\" height=\"64\">{}{}</svg>",
        "<g>".repeat(depth),
        "</g>".repeat(depth)
    )
    .into_bytes()
}

/// A pattern whose transform makes its tile 16,000 pixels square on the 64-pixel canvas:
/// the renderer allocates 1 GB for it. Five elements; nothing the checks count is large.
pub fn scaled_pattern() -> Vec<u8> {
    format!(
        r##"<svg {SVG_NS} viewBox="0 0 50 50"><defs><pattern id="p" width="50" height="50" patternUnits="userSpaceOnUse" patternTransform="scale(250)"><circle cx="25" cy="25" r="20"/></pattern></defs><rect width="50" height="50" fill="url(#p)"/></svg>"##
    )
    .into_bytes()
}

/// A zig-zag path of `vertices` points.
fn zigzag(vertices: usize) -> String {
    (0..vertices)
        .map(|i| format!("L{} {}", i % 50, (i * 7) % 50))
        .collect::<Vec<_>>()
        .join(" ")
}

/// `marker-mid` set on a `<g>`: its path inherits it, so the 2,000-element marker is drawn
/// at each of 20,000 vertices (the checks once counted the group's one: minutes of CPU).
pub fn inherited_marker() -> Vec<u8> {
    let rects: String = (0..2000)
        .map(|i| {
            format!(
                r#"<rect x="{}" y="{}" width="1" height="1"/>"#,
                i % 10,
                i / 10 % 10
            )
        })
        .collect();
    format!(
        r##"<svg {SVG_NS} viewBox="0 0 50 50"><defs><marker id="m" markerWidth="10" markerHeight="10">{rects}</marker></defs><g marker-mid="url(#m)"><path d="M0 0 {}" stroke="black"/></g></svg>"##,
        zigzag(20_000)
    )
    .into_bytes()
}

/// `fill` set on a `<g>` to a pattern of 50 blurred circles: each of the 6,000 rectangles
/// inherits it and draws the pattern again, where the checks count the group's one use
/// (2,000 rectangles took 2.3 s of CPU in a release build; this, three times as many).
pub fn inherited_pattern() -> Vec<u8> {
    let circles: String = (0..50)
        .map(|i| {
            format!(
                r#"<circle cx="{}" cy="{}" r="4" filter="url(#f)"/>"#,
                i % 10 * 5,
                i / 10 * 5
            )
        })
        .collect();
    let rects: String = (0..6000)
        .map(|i| {
            format!(
                r#"<rect x="{}" y="{}" width="40" height="40"/>"#,
                i % 50,
                i / 50 % 50
            )
        })
        .collect();
    format!(
        r##"<svg {SVG_NS} viewBox="0 0 50 50"><defs><filter id="f"><feGaussianBlur stdDeviation="3"/></filter><pattern id="p" width="50" height="50" patternUnits="userSpaceOnUse">{circles}</pattern></defs><g fill="url(#p)">{rects}</g></svg>"##
    )
    .into_bytes()
}

/// A path written as compact numbers (`M0.1.1.1...`: each `.1` a number of its own), 100,000
/// vertices (once read as one by a count of digit runs), with a marker at each vertex.
pub fn compact_numbers() -> Vec<u8> {
    format!(
        r##"<svg {SVG_NS} viewBox="0 0 1 1"><defs><marker id="m" markerWidth="10" markerHeight="10"><circle cx="5" cy="5" r="3"/></marker></defs><path marker-mid="url(#m)" d="M0.1{}" stroke="black"/></svg>"##,
        ".1".repeat(200_000)
    )
    .into_bytes()
}
