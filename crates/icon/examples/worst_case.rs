//! How long the largest images the limits accept take to decode: the CPU one hostile icon
//! can cost. `cargo run --release -p icon --example worst_case`

use std::io::Cursor;
use std::time::{Duration, Instant};

use icon::{decode_icon, MAX_DIMENSION, MAX_ICON_BYTES, MAX_SVG_NODES, SVG_LAYER_COST};
use image::{DynamicImage, ImageFormat, Rgba, RgbaImage};

fn raster(format: ImageFormat) -> Vec<u8> {
    // A gradient, so the file is not trivially small, at the largest accepted size.
    let image = RgbaImage::from_fn(MAX_DIMENSION, MAX_DIMENSION, |x, y| {
        Rgba([(x / 16) as u8, (y / 16) as u8, 128, 255])
    });
    let image = match format {
        ImageFormat::Jpeg => DynamicImage::ImageRgb8(DynamicImage::ImageRgba8(image).to_rgb8()),
        _ => DynamicImage::ImageRgba8(image),
    };
    let mut bytes = Vec::new();
    image
        .write_to(&mut Cursor::new(&mut bytes), format)
        .expect("encoding");
    bytes
}

fn svg_many_elements() -> Vec<u8> {
    let rects: String = (0..MAX_SVG_NODES - 10)
        .map(|i| {
            format!(
                "<rect x=\"{}\" y=\"{}\" width=\"3\" height=\"3\"/>",
                i % 64,
                i / 64 % 64
            )
        })
        .collect();
    format!("<svg xmlns=\"http://www.w3.org/2000/svg\" viewBox=\"0 0 64 64\"><g fill=\"red\">{rects}</g></svg>")
        .into_bytes()
}

fn svg_filters() -> Vec<u8> {
    // As many filter uses as the layer weight lets through.
    let groups: String = (0..(MAX_SVG_NODES - 200) / (SVG_LAYER_COST + 2))
        .map(|i| {
            format!(
                "<circle cx=\"{}\" cy=\"{}\" r=\"30\" filter=\"url(#b)\"/>",
                i % 64,
                i / 64
            )
        })
        .collect();
    format!(
        "<svg xmlns=\"http://www.w3.org/2000/svg\" viewBox=\"0 0 64 64\"><filter id=\"b\"><feGaussianBlur stdDeviation=\"20\"/></filter>{groups}</svg>"
    )
    .into_bytes()
}

fn time(name: &str, bytes: &[u8]) {
    let mut runs: Vec<Duration> = (0..3)
        .map(|_| {
            let started = Instant::now();
            let result = decode_icon(bytes, None);
            let took = started.elapsed();
            if let Err(error) = result {
                println!("{name}: refused ({error})");
            }
            took
        })
        .collect();
    runs.sort();
    println!(
        "{name:<40} {:>9} bytes  median {:>7.1} ms",
        bytes.len(),
        runs[1].as_secs_f64() * 1000.0
    );
}

fn main() {
    for format in [
        ImageFormat::Png,
        ImageFormat::Jpeg,
        ImageFormat::Gif,
        ImageFormat::WebP,
    ] {
        let bytes = raster(format);
        if bytes.len() > MAX_ICON_BYTES {
            println!(
                "{format:?} {MAX_DIMENSION}²: {} bytes, over the byte cap",
                bytes.len()
            );
            continue;
        }
        time(
            &format!("{format:?} {MAX_DIMENSION}x{MAX_DIMENSION}"),
            &bytes,
        );
    }
    time("SVG, MAX_SVG_NODES rects", &svg_many_elements());
    time("SVG, 194 blurred circles (radius 20)", &svg_filters());
}
