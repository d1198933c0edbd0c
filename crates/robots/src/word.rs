//! Eight bytes at a time in a `u64`: the word loads and the zero-byte test shared by the line
//! reader (`lines`), the URL's authority skip (`target`) and the index's star search and
//! fingerprints (`index`). Stable Rust without `unsafe` has no portable vector search, and the
//! texts searched (field names, values, patterns, an authority) are a few dozen bytes: a word
//! in a register beats a byte loop there, and beats setting up a `memchr` search.

/// One in the low bit of every byte.
pub(crate) const LOW_BITS: u64 = 0x0101_0101_0101_0101;
/// One in the high bit of every byte.
pub(crate) const HIGH_BITS: u64 = 0x8080_8080_8080_8080;

/// `byte` in every byte of a word, to compare eight bytes with it at once (`word ^ splat`).
#[inline(always)]
pub(crate) const fn splat(byte: u8) -> u64 {
    LOW_BITS * byte as u64
}

/// The high bit of every byte of `word` that is zero. Bits above the first zero byte may be
/// wrong; the lowest set bit is always exact, which is all the callers use.
#[inline(always)]
pub(crate) fn zero_bytes(word: u64) -> u64 {
    word.wrapping_sub(LOW_BITS) & !word & HIGH_BITS
}

/// The first eight bytes of `text` in a word, little-endian (zero-padded when shorter).
#[inline(always)]
pub(crate) fn first_eight(text: &[u8]) -> u64 {
    if let Some(bytes) = text.first_chunk::<8>() {
        return u64::from_le_bytes(*bytes);
    }
    // Shorter: byte by byte, rather than a variable-length copy (a call to memcpy).
    text.iter()
        .rev()
        .fold(0, |word, &byte| word << 8 | u64::from(byte))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_lowest_zero_byte_is_found_and_short_texts_are_padded() {
        let word = first_eight(b"ab*cdefgh");
        assert_eq!(word, u64::from_le_bytes(*b"ab*cdefg"));
        assert_eq!(zero_bytes(word ^ splat(b'*')).trailing_zeros() / 8, 2);
        assert_eq!(zero_bytes(word ^ splat(b'z')), 0);
        assert_eq!(first_eight(b"ab"), u64::from_le_bytes(*b"ab\0\0\0\0\0\0"));
        assert_eq!(first_eight(b""), 0);
    }
}
