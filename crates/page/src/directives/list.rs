//! The one reading of a directive list, shared by [`super::PageDirectives`] and
//! [`super::ForBot`]: comma-separated directives, trimmed, empty ones skipped; in a header
//! value, `name:` before a directive addresses the crawler `name` (`googlebot: noindex`) from
//! there on, unless `name` is itself a directive (`max-snippet: 20`); an
//! `unavailable_after` date keeps its commas (`unavailable_after: Friday, 25-Jun-10 15:00:00
//! PST`): the pieces after it that are no known directive are its date.

use super::{FLAGS, PARAMETERISED};

/// The longest `unavailable_after` directive put together from its pieces, in bytes: a
/// date is short, and a hostile list of commas must not grow the text without end.
pub(super) const MAX_DATED_BYTES: usize = 4096;

/// Calls `each(scope, text)` for every directive of an `X-Robots-Tag` value, `scope` being
/// the lowercase crawler token it addresses (`None`: every crawler).
pub(super) fn header_items(value: &str, mut each: impl FnMut(Option<&str>, &str)) {
    let mut scope: Option<String> = None;
    let mut dated = Dated::default();
    for part in value.split(',') {
        let part = part.trim();
        if part.is_empty() {
            continue;
        }
        let mut text = part;
        if let Some((head, rest)) = part.split_once(':') {
            let head = head.trim().to_ascii_lowercase();
            if !is_directive_name(&head) && is_token(&head) {
                dated.flush(|text| each(scope.as_deref(), text));
                scope = Some(head);
                text = rest.trim();
                if text.is_empty() {
                    continue;
                }
            }
        }
        if let Some(text) = dated.take(text) {
            dated.flush(|text| each(scope.as_deref(), text));
            if !dated.start(text) {
                each(scope.as_deref(), text);
            }
        }
    }
    dated.flush(|text| each(scope.as_deref(), text));
}

/// Calls `each(text)` for every directive of a meta tag's `content`.
pub(super) fn meta_items(content: &str, mut each: impl FnMut(&str)) {
    let mut dated = Dated::default();
    for part in content.split(',') {
        let part = part.trim();
        if part.is_empty() {
            continue;
        }
        if let Some(text) = dated.take(part) {
            dated.flush(&mut each);
            if !dated.start(text) {
                each(text);
            }
        }
    }
    dated.flush(each);
}

/// An `unavailable_after` directive being put together from its comma-separated pieces.
#[derive(Default)]
struct Dated(Option<String>);

impl Dated {
    /// Takes `piece` into the date if one is open and `piece` is no known directive;
    /// otherwise gives it back.
    fn take<'p>(&mut self, piece: &'p str) -> Option<&'p str> {
        match &mut self.0 {
            Some(text) if !is_known(piece) => {
                if text.len() < MAX_DATED_BYTES {
                    text.push_str(", ");
                    text.push_str(piece);
                }
                None
            }
            _ => Some(piece),
        }
    }

    /// Opens a date if `text` is an `unavailable_after` directive (answers whether it did).
    fn start(&mut self, text: &str) -> bool {
        let opens = text
            .get(.."unavailable_after".len())
            .is_some_and(|head| head.eq_ignore_ascii_case("unavailable_after"));
        if opens {
            self.0 = Some(text.to_owned());
        }
        opens
    }

    /// Hands the directive put together, if any, to `each`.
    fn flush(&mut self, mut each: impl FnMut(&str)) {
        if let Some(text) = self.0.take() {
            each(&text);
        }
    }
}

fn is_directive_name(name: &str) -> bool {
    PARAMETERISED.contains(&name) || FLAGS.contains(&name)
}

/// Whether `text` starts with a known directive's name (`noindex`, `max-snippet: 20`).
fn is_known(text: &str) -> bool {
    let name = text
        .split(':')
        .next()
        .unwrap_or_default()
        .trim()
        .to_ascii_lowercase();
    is_directive_name(&name)
}

fn is_token(text: &str) -> bool {
    !text.is_empty()
        && text
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.'))
}
