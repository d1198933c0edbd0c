//! A stored icon: a 64×64 PNG, made only by the decoders or checked by the sandbox's parent.

use image::codecs::png::PngEncoder;
use image::{ExtendedColorType, ImageEncoder, ImageError, RgbaImage};

/// A stored icon: a PNG of exactly [`ICON_SIZE`](crate::ICON_SIZE) ×
/// [`ICON_SIZE`](crate::ICON_SIZE) RGBA pixels.
#[derive(Clone, PartialEq, Eq)]
pub struct Png64(Vec<u8>);

impl Png64 {
    /// The PNG file.
    pub fn as_bytes(&self) -> &[u8] {
        &self.0
    }

    /// The PNG file, owned.
    pub fn into_bytes(self) -> Vec<u8> {
        self.0
    }

    /// A PNG already checked to be [`ICON_SIZE`](crate::ICON_SIZE)-square (the sandbox's
    /// answer).
    pub(crate) fn from_checked(png: Vec<u8>) -> Png64 {
        Png64(png)
    }

    /// Encodes a [`ICON_SIZE`](crate::ICON_SIZE)-square canvas (the caller says what failed:
    /// [`IconError::Encode`](crate::IconError::Encode)).
    pub(crate) fn encode(canvas: &RgbaImage) -> Result<Png64, ImageError> {
        let mut png = Vec::new();
        PngEncoder::new(&mut png).write_image(
            canvas.as_raw(),
            canvas.width(),
            canvas.height(),
            ExtendedColorType::Rgba8,
        )?;
        Ok(Png64(png))
    }
}

impl std::fmt::Debug for Png64 {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Png64({} bytes)", self.0.len())
    }
}
