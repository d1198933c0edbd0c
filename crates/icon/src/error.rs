//! Why an icon could not be used: every broken, hostile or unsupported image is one of
//! these ("no icon"), never a panic.

/// Why bytes did not make an icon.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum IconError {
    /// No bytes at all.
    #[error("the icon is empty")]
    Empty,
    /// More bytes than [`MAX_ICON_BYTES`](crate::MAX_ICON_BYTES).
    #[error("the icon is larger than {limit} bytes")]
    TooLarge {
        /// The cap.
        limit: usize,
    },
    /// Neither a raster format the service reads (ICO, PNG, GIF, JPEG, WebP) nor SVG.
    #[error("not an image format the service reads (ICO, PNG, GIF, JPEG, WebP or SVG)")]
    Unrecognised,
    /// A format the `image` crate knows but the service does not read (BMP, TIFF...).
    #[error("{format} icons are not read (ICO, PNG, GIF, JPEG, WebP or SVG only)")]
    UnsupportedFormat {
        /// The format, as the `image` crate names it.
        format: String,
    },
    /// Declared dimensions or a decoding allocation beyond the limits
    /// ([`MAX_DIMENSION`](crate::MAX_DIMENSION), [`MAX_DECODE_ALLOC`](crate::MAX_DECODE_ALLOC)):
    /// refused before the pixels were allocated.
    #[error("the image is too large to decode: {0}")]
    Limits(#[source] image::ImageError),
    /// A raster image that does not decode (truncated, corrupt).
    #[error("the image does not decode: {0}")]
    Decode(#[source] image::ImageError),
    /// An image of width or height zero.
    #[error("the image has no pixels")]
    NoPixels,
    /// An SVG that is not UTF-8 text.
    #[error("the SVG is not UTF-8 text")]
    SvgNotText,
    /// An SVG that is not well-formed XML, or has more nodes than
    /// [`MAX_SVG_NODES`](crate::MAX_SVG_NODES) once entities are expanded.
    #[error("the SVG is not readable XML: {0}")]
    SvgXml(#[source] roxmltree::Error),
    /// An SVG whose drawing, with every `<use>` expanded, has more nodes than
    /// [`MAX_SVG_NODES`](crate::MAX_SVG_NODES) (or a `<use>` cycle).
    #[error("the SVG expands to more than {limit} nodes")]
    SvgTooComplex {
        /// The limit.
        limit: usize,
    },
    /// An SVG that usvg could not read (no `<svg>` root, invalid size).
    #[error("the SVG cannot be rendered: {0}")]
    Svg(#[source] usvg::Error),
    /// A decoder panicked (a bug in it, contained to its thread by the search).
    #[error("the decoder failed on this image")]
    DecoderPanicked,
    /// The 64×64 PNG could not be made (should not happen with a valid canvas).
    #[error("the icon could not be encoded as PNG: {0}")]
    Encode(#[source] image::ImageError),
}
