//! Why an icon could not be used: every broken, hostile or unsupported image is one of
//! these ("no icon"), never a panic.

use crate::sandbox::budget::{Budget, SandboxError};

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
    /// The image exceeded a budget of the sandbox ([`Budget`]): the helper decoding it was
    /// stopped, and nothing else was affected.
    #[error("the image exceeded its {0} budget")]
    OverBudget(Budget),
    /// The decoder in the sandbox refused the image: one of the errors above, as the helper
    /// reported it (its kind and message).
    #[error("{message}")]
    Sandboxed {
        /// Which of the errors above.
        kind: IconErrorKind,
        /// Its message.
        message: String,
    },
    /// The sandbox itself failed (the helper could not start, or crashed): the image was not
    /// judged.
    #[error(transparent)]
    Sandbox(#[from] SandboxError),
}

impl IconError {
    /// Which error this is, without its details; for an error reported by the sandbox's
    /// helper, the helper's.
    pub fn kind(&self) -> IconErrorKind {
        match self {
            IconError::Empty => IconErrorKind::Empty,
            IconError::TooLarge { .. } => IconErrorKind::TooLarge,
            IconError::Unrecognised => IconErrorKind::Unrecognised,
            IconError::UnsupportedFormat { .. } => IconErrorKind::UnsupportedFormat,
            IconError::Limits(_) => IconErrorKind::Limits,
            IconError::Decode(_) => IconErrorKind::Decode,
            IconError::NoPixels => IconErrorKind::NoPixels,
            IconError::SvgNotText => IconErrorKind::SvgNotText,
            IconError::SvgXml(_) => IconErrorKind::SvgXml,
            IconError::SvgTooComplex { .. } => IconErrorKind::SvgTooComplex,
            IconError::Svg(_) => IconErrorKind::Svg,
            IconError::DecoderPanicked => IconErrorKind::DecoderPanicked,
            IconError::Encode(_) => IconErrorKind::Encode,
            IconError::OverBudget(_) => IconErrorKind::OverBudget,
            IconError::Sandboxed { kind, .. } => *kind,
            IconError::Sandbox(_) => IconErrorKind::Sandbox,
        }
    }
}

/// The kind of an [`IconError`], one per variant: what the sandbox's helper reports with
/// the message, so that the parent's error says which refusal it was.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum IconErrorKind {
    /// [`IconError::Empty`].
    Empty,
    /// [`IconError::TooLarge`].
    TooLarge,
    /// [`IconError::Unrecognised`].
    Unrecognised,
    /// [`IconError::UnsupportedFormat`].
    UnsupportedFormat,
    /// [`IconError::Limits`].
    Limits,
    /// [`IconError::Decode`].
    Decode,
    /// [`IconError::NoPixels`].
    NoPixels,
    /// [`IconError::SvgNotText`].
    SvgNotText,
    /// [`IconError::SvgXml`].
    SvgXml,
    /// [`IconError::SvgTooComplex`].
    SvgTooComplex,
    /// [`IconError::Svg`].
    Svg,
    /// [`IconError::DecoderPanicked`].
    DecoderPanicked,
    /// [`IconError::Encode`].
    Encode,
    /// [`IconError::OverBudget`].
    OverBudget,
    /// [`IconError::Sandbox`].
    Sandbox,
}

impl IconErrorKind {
    const ALL: [IconErrorKind; 15] = [
        IconErrorKind::Empty,
        IconErrorKind::TooLarge,
        IconErrorKind::Unrecognised,
        IconErrorKind::UnsupportedFormat,
        IconErrorKind::Limits,
        IconErrorKind::Decode,
        IconErrorKind::NoPixels,
        IconErrorKind::SvgNotText,
        IconErrorKind::SvgXml,
        IconErrorKind::SvgTooComplex,
        IconErrorKind::Svg,
        IconErrorKind::DecoderPanicked,
        IconErrorKind::Encode,
        IconErrorKind::OverBudget,
        IconErrorKind::Sandbox,
    ];

    /// Its name on the helper's wire, stable (`svg-too-complex`).
    pub fn name(self) -> &'static str {
        match self {
            IconErrorKind::Empty => "empty",
            IconErrorKind::TooLarge => "too-large",
            IconErrorKind::Unrecognised => "unrecognised",
            IconErrorKind::UnsupportedFormat => "unsupported-format",
            IconErrorKind::Limits => "limits",
            IconErrorKind::Decode => "decode",
            IconErrorKind::NoPixels => "no-pixels",
            IconErrorKind::SvgNotText => "svg-not-text",
            IconErrorKind::SvgXml => "svg-xml",
            IconErrorKind::SvgTooComplex => "svg-too-complex",
            IconErrorKind::Svg => "svg",
            IconErrorKind::DecoderPanicked => "decoder-panicked",
            IconErrorKind::Encode => "encode",
            IconErrorKind::OverBudget => "over-budget",
            IconErrorKind::Sandbox => "sandbox",
        }
    }

    /// The kind named `name` ([`IconErrorKind::name`]).
    pub fn from_name(name: &str) -> Option<IconErrorKind> {
        IconErrorKind::ALL
            .into_iter()
            .find(|kind| kind.name() == name)
    }
}
