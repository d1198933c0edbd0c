//! Bytes to a 64×64 PNG: raster formats with the `image` crate under [`image::Limits`], SVG
//! with resvg (see [`crate::svg`]); shrunk with the aspect kept, centred on a transparent
//! canvas.

use std::io::Cursor;

use image::imageops::FilterType;
use image::{DynamicImage, ImageError, ImageFormat, ImageReader, Limits, RgbaImage};

use crate::error::IconError;
use crate::limits::{ICON_SIZE, MAX_DECODE_ALLOC, MAX_DIMENSION, MAX_ICON_BYTES};
use crate::png::Png64;
use crate::svg;

/// What the bytes are.
enum Kind {
    Raster(ImageFormat),
    Svg,
}

/// The formats read: what browsers accept as favicons, less the ones needing native codecs.
const RASTER_FORMATS: [ImageFormat; 5] = [
    ImageFormat::Ico,
    ImageFormat::Png,
    ImageFormat::Gif,
    ImageFormat::Jpeg,
    ImageFormat::WebP,
];

/// Decodes an icon (ICO, PNG, GIF, JPEG, WebP or SVG) into a [`Png64`].
///
/// The format is read from the bytes (servers often send `favicon.ico` as `text/plain`);
/// `content_type` only tells SVG apart from other text. At most [`MAX_ICON_BYTES`] are
/// accepted; raster dimensions and allocations are limited ([`MAX_DIMENSION`],
/// [`MAX_DECODE_ALLOC`]) before pixels are allocated; SVG has its own limits
/// ([`MAX_SVG_NODES`](crate::MAX_SVG_NODES)) and loads nothing external. An animated image
/// gives its first frame; an ICO its largest entry.
pub fn decode_icon(bytes: &[u8], content_type: Option<&str>) -> Result<Png64, IconError> {
    if bytes.is_empty() {
        return Err(IconError::Empty);
    }
    if bytes.len() > MAX_ICON_BYTES {
        return Err(IconError::TooLarge {
            limit: MAX_ICON_BYTES,
        });
    }
    match kind_of(bytes, content_type)? {
        Kind::Raster(format) => {
            Png64::encode(&fit(decode_raster(bytes, format)?)?).map_err(IconError::Encode)
        }
        Kind::Svg => svg::render(bytes),
    }
}

fn kind_of(bytes: &[u8], content_type: Option<&str>) -> Result<Kind, IconError> {
    if let Ok(format) = image::guess_format(bytes) {
        return if RASTER_FORMATS.contains(&format) {
            Ok(Kind::Raster(format))
        } else {
            Err(IconError::UnsupportedFormat {
                format: format!("{format:?}"),
            })
        };
    }
    if content_type.is_some_and(is_svg_type) || svg::looks_like_svg(bytes) {
        Ok(Kind::Svg)
    } else {
        Err(IconError::Unrecognised)
    }
}

/// Whether a `Content-Type` says SVG (`image/svg+xml`, parameters ignored).
pub(crate) fn is_svg_type(content_type: &str) -> bool {
    content_type
        .split(';')
        .next()
        .is_some_and(|mime| mime.trim().eq_ignore_ascii_case("image/svg+xml"))
}

/// The limits every raster decode runs under.
pub(crate) fn limits() -> Limits {
    let mut limits = Limits::default();
    limits.max_image_width = Some(MAX_DIMENSION);
    limits.max_image_height = Some(MAX_DIMENSION);
    limits.max_alloc = Some(MAX_DECODE_ALLOC);
    limits
}

fn decode_raster(bytes: &[u8], format: ImageFormat) -> Result<DynamicImage, IconError> {
    let mut reader = ImageReader::with_format(Cursor::new(bytes), format);
    reader.limits(limits());
    reader.decode().map_err(|error| match error {
        ImageError::Limits(_) => IconError::Limits(error),
        other => IconError::Decode(other),
    })
}

/// `image` shrunk (or enlarged by a whole factor, so small pixel icons stay crisp) to fit
/// [`ICON_SIZE`] with its aspect kept, centred on a transparent square.
fn fit(image: DynamicImage) -> Result<RgbaImage, IconError> {
    let (width, height) = (image.width(), image.height());
    if width == 0 || height == 0 {
        return Err(IconError::NoPixels);
    }
    let longest = width.max(height);
    let scaled = if longest > ICON_SIZE {
        // Box-filtered downscale: fast, and what a 64 px thumbnail needs.
        image.thumbnail(ICON_SIZE, ICON_SIZE).into_rgba8()
    } else {
        let factor = ICON_SIZE / longest;
        image
            .resize_exact(width * factor, height * factor, FilterType::Nearest)
            .into_rgba8()
    };
    Ok(centred(&scaled))
}

/// `image` (at most [`ICON_SIZE`] on each side) centred on a transparent square canvas.
pub(crate) fn centred(image: &RgbaImage) -> RgbaImage {
    let mut canvas = RgbaImage::new(ICON_SIZE, ICON_SIZE);
    let x = (ICON_SIZE.saturating_sub(image.width())) / 2;
    let y = (ICON_SIZE.saturating_sub(image.height())) / 2;
    image::imageops::overlay(&mut canvas, image, i64::from(x), i64::from(y));
    canvas
}
