//! The sizes of an icon: what is read of one, what a raster decode may allocate, and the side
//! of what is stored. Below every other module of the crate (the sandbox's own budgets start
//! from them).

/// The side of a stored icon, in pixels.
pub const ICON_SIZE: u32 = 64;

/// The most bytes of an icon read, fetched or decoded (1 MiB): a real favicon is a few KiB,
/// a large multi-size ICO or apple-touch PNG a few hundred.
pub const MAX_ICON_BYTES: usize = 1024 * 1024;

/// The largest width or height a raster icon may declare (4,096 px, so at most 16.8 M pixels
/// before [`MAX_DECODE_ALLOC`] applies). Checked from the header, before any pixel buffer is
/// allocated: a 1 KiB PNG declaring 100,000 × 100,000 pixels is refused at once.
pub const MAX_DIMENSION: u32 = 4096;

/// The most memory the decoder may allocate for one icon (64 MiB): one 4,096 × 4,096 RGBA
/// frame, the largest [`MAX_DIMENSION`] allows.
pub const MAX_DECODE_ALLOC: u64 = 64 * 1024 * 1024;
