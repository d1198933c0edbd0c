//! The lines of a robots.txt as the engine numbers them, for evidence.

use robots::MAX_ROBOTS_TXT_BYTES;

const UTF8_BOM: &[u8] = b"\xEF\xBB\xBF";

/// The lines of a robots.txt, numbered as the engine numbers them (BOM skipped, CR, LF and
/// CRLF end lines, nothing past [`MAX_ROBOTS_TXT_BYTES`]).
pub(crate) struct Source<'a> {
    lines: Vec<&'a [u8]>,
}

impl<'a> Source<'a> {
    pub(crate) fn new(input: &'a [u8]) -> Source<'a> {
        let mut body = &input[..input.len().min(MAX_ROBOTS_TXT_BYTES)];
        if input.len() > MAX_ROBOTS_TXT_BYTES {
            let ends_line = matches!(input.get(MAX_ROBOTS_TXT_BYTES), Some(b'\r' | b'\n'))
                || matches!(body.last(), Some(b'\r' | b'\n'));
            if !ends_line {
                let keep = body
                    .iter()
                    .rposition(|&b| b == b'\r' || b == b'\n')
                    .map_or(0, |i| i + 1);
                body = &body[..keep];
            }
        }
        if let Some(rest) = body.strip_prefix(UTF8_BOM) {
            body = rest;
        }
        let mut lines = Vec::new();
        let mut rest = body;
        while !rest.is_empty() {
            match rest.iter().position(|&b| b == b'\r' || b == b'\n') {
                Some(end) => {
                    lines.push(&rest[..end]);
                    let skip = if rest[end] == b'\r' && rest.get(end + 1) == Some(&b'\n') {
                        2
                    } else {
                        1
                    };
                    rest = &rest[end + skip..];
                }
                None => {
                    lines.push(rest);
                    rest = &[];
                }
            }
        }
        Source { lines }
    }

    /// The raw bytes of 1-based line `number`.
    pub(crate) fn raw(&self, number: usize) -> Option<&'a [u8]> {
        number
            .checked_sub(1)
            .and_then(|index| self.lines.get(index))
            .copied()
    }

    /// Line `number` as text (lossy, trimmed), or an empty string.
    pub(crate) fn text(&self, number: usize) -> String {
        self.raw(number)
            .map(|raw| String::from_utf8_lossy(raw).trim().to_owned())
            .unwrap_or_default()
    }

    /// Every line with its number.
    pub(crate) fn iter(&self) -> impl Iterator<Item = (usize, &'a [u8])> + '_ {
        self.lines
            .iter()
            .enumerate()
            .map(|(i, line)| (i + 1, *line))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_lines_like_the_engine() {
        let source = Source::new(b"\xEF\xBB\xBFa\rb\nc\r\nd");
        assert_eq!(source.text(1), "a");
        assert_eq!(source.text(4), "d");
        assert_eq!(source.raw(5), None);
        assert_eq!(source.raw(0), None);
        let robots = robots::RobotsTxt::parse(b"\n\r\nUser-agent: *\rDisallow: /x\n");
        let rule_line = robots.groups()[0].rules[0].line;
        let source = Source::new(b"\n\r\nUser-agent: *\rDisallow: /x\n");
        assert_eq!(source.text(rule_line), "Disallow: /x");
    }
}
