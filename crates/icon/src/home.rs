//! Reading the home page's `<head>` for its icon links as the body arrives, stopping the
//! download once the tokenizer says the head has ended.
//!
//! The body is gathered, and when a chunk brings a byte sequence that could end the head
//! (`</head` or `<body`, any case), the page so far is tokenized from the start to see
//! whether it really did (a `</head>` inside a script is text). (This dates from a tokenizer
//! that was not `Send`; `page`'s is, so a reader fed chunk by chunk could replace it.) That check runs at most
//! [`MAX_HEAD_CHECKS`] times, so a hostile page repeating `</head>` in a script costs at
//! most that many passes over [`HOME_PAGE_MAX_BYTES`](crate::HOME_PAGE_MAX_BYTES).

use crate::links::IconLinkReader;

/// The most times the page read so far is tokenized to see whether its head has ended;
/// after that it is read to its cap.
pub const MAX_HEAD_CHECKS: usize = 8;

/// The longest marker searched for, less one: how far back into what was already read the
/// search starts, so a marker split between two chunks is found.
const MARKER_OVERLAP: usize = "</head".len() - 1;

/// The home page's body, gathered chunk by chunk until its head ends.
#[derive(Debug, Default)]
pub(crate) struct HeadBuffer {
    html: Vec<u8>,
    checks: usize,
}

impl HeadBuffer {
    /// Adds a chunk; answers whether the head has ended (the rest need not be downloaded).
    pub(crate) fn feed(&mut self, chunk: &[u8]) -> bool {
        let from = self.html.len().saturating_sub(MARKER_OVERLAP);
        self.html.extend_from_slice(chunk);
        if self.checks >= MAX_HEAD_CHECKS || !may_end_head(&self.html[from..]) {
            return false;
        }
        self.checks += 1;
        let mut reader = IconLinkReader::new();
        reader.feed(&self.html)
    }

    /// How many times the page was tokenized to look for the end of its head.
    #[cfg(test)]
    fn checks(&self) -> usize {
        self.checks
    }

    /// The page as read.
    pub(crate) fn html(&self) -> &[u8] {
        &self.html
    }
}

/// Whether `bytes` hold `</head` or `<body` in any case: the only tokens that end a head.
fn may_end_head(bytes: &[u8]) -> bool {
    bytes.windows(6).any(|window| {
        window.eq_ignore_ascii_case(b"</head") || window[..5].eq_ignore_ascii_case(b"<body")
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_head_ends_at_a_real_end_tag_even_split_between_chunks() {
        let page = b"<head><script>x='</head>'</script><link rel=icon href=/a.png></HEAD><body>";
        for split in 1..page.len() {
            let mut buffer = HeadBuffer::default();
            let first = buffer.feed(&page[..split]);
            let second = buffer.feed(&page[split..]);
            assert!(first || second, "split at {split}");
        }
        let mut buffer = HeadBuffer::default();
        assert!(!buffer.feed(b"<head><script>x='</head>'"));
        assert_eq!(buffer.checks(), 1);
        assert!(!buffer.feed(b"</script><link rel=icon href=/a.png>"));
        assert_eq!(buffer.checks(), 1, "no marker, no check");
        assert!(buffer.feed(b"<BODY>"));
    }

    #[test]
    fn checks_are_capped() {
        let mut buffer = HeadBuffer::default();
        buffer.feed(b"<head><script>");
        for _ in 0..MAX_HEAD_CHECKS * 2 {
            assert!(!buffer.feed(b"'</head>';"));
        }
        assert_eq!(buffer.checks(), MAX_HEAD_CHECKS);
        assert!(
            !buffer.feed(b"</script></head>"),
            "read to the cap once checks run out"
        );
        assert!(buffer.html().ends_with(b"</head>"));
    }
}
