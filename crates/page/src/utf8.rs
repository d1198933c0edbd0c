//! Bytes that arrive in chunks, as text: a character split between two chunks is kept until
//! the next one completes it, and invalid UTF-8 becomes U+FFFD, as browsers read it.

/// Turns the chunks of a body into text, one chunk at a time (used by the head readers of
/// `page` and of `icon`, which tokenize a body as it downloads).
#[derive(Debug, Default)]
pub struct ChunkDecoder {
    /// The start of a character the last chunk ended with.
    partial: Vec<u8>,
}

impl ChunkDecoder {
    /// A decoder with nothing pending.
    pub fn new() -> ChunkDecoder {
        ChunkDecoder::default()
    }

    /// `chunk` as text, after the partial character the last chunk ended with; keeps the
    /// partial character this one ends with for the next.
    pub fn decode(&mut self, chunk: &[u8]) -> String {
        let mut bytes = std::mem::take(&mut self.partial);
        bytes.extend_from_slice(chunk);
        let mut text = String::with_capacity(bytes.len());
        let mut rest = bytes.as_slice();
        loop {
            match std::str::from_utf8(rest) {
                Ok(valid) => {
                    text.push_str(valid);
                    break;
                }
                Err(error) => {
                    let (valid, after) = rest.split_at(error.valid_up_to());
                    // `valid` is valid UTF-8 by `valid_up_to`'s contract.
                    text.push_str(&String::from_utf8_lossy(valid));
                    match error.error_len() {
                        Some(bad) => {
                            text.push(char::REPLACEMENT_CHARACTER);
                            rest = &after[bad..];
                        }
                        None => {
                            // An incomplete character at the end: wait for the next chunk.
                            self.partial = after.to_vec();
                            break;
                        }
                    }
                }
            }
        }
        text
    }

    /// Whether the last chunk ended inside a character (the body, if it ends here, ends
    /// with an invalid character).
    pub fn is_pending(&self) -> bool {
        !self.partial.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::ChunkDecoder;

    #[test]
    fn a_character_split_between_chunks_is_kept_whole() {
        let mut decoder = ChunkDecoder::new();
        let bytes = "é€".as_bytes();
        assert_eq!(decoder.decode(&bytes[..1]), "");
        assert!(decoder.is_pending());
        assert_eq!(decoder.decode(&bytes[1..3]), "é");
        assert_eq!(decoder.decode(&bytes[3..]), "€");
        assert!(!decoder.is_pending());
    }

    #[test]
    fn invalid_bytes_become_replacement_characters() {
        let mut decoder = ChunkDecoder::new();
        assert_eq!(decoder.decode(b"a\xffb\xc3"), "a\u{fffd}b");
        assert!(decoder.is_pending());
        assert_eq!(decoder.decode(b"("), "\u{fffd}(");
    }
}
