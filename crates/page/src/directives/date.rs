//! The date of `unavailable_after`, in the forms search engines document and sites write:
//! RFC 3339 / ISO 8601, RFC 822 / RFC 2822, RFC 850 and asctime dates, or a plain
//! `YYYY-MM-DD` (midnight UTC).

use jiff::Timestamp;

/// The longest date read, in bytes (the longest form, RFC 850's, is about 40).
pub(super) const MAX_DATE_BYTES: usize = 100;

/// The time `text` names, if it reads as one of the forms above. Dates hold commas, and one
/// may be followed by more comma-separated text that is no date (`2025-01-01, foo`): the
/// shortest leading run of pieces that reads is the date, among those up to
/// [`MAX_DATE_BYTES`].
pub(super) fn parse(text: &str) -> Option<Timestamp> {
    let text = text.trim();
    let mut end = 0;
    loop {
        end = match text[end..].find(',') {
            Some(comma) => end + comma,
            None => text.len(),
        };
        if end > MAX_DATE_BYTES {
            return None;
        }
        if let Some(when) = parse_one(text[..end].trim()) {
            return Some(when);
        }
        if end == text.len() {
            return None;
        }
        end += 1;
    }
}

fn parse_one(text: &str) -> Option<Timestamp> {
    if let Ok(t) = text.parse::<Timestamp>() {
        return Some(t);
    }
    if let Ok(t) = jiff::fmt::rfc2822::parse(text) {
        return Some(t.timestamp());
    }
    if let Some(t) = httpdate_like(text) {
        return Some(t);
    }
    let date: jiff::civil::Date = text.parse().ok()?;
    date.to_zoned(jiff::tz::TimeZone::UTC)
        .ok()
        .map(|z| z.timestamp())
}

/// RFC 850 (`Sunday, 06-Nov-94 08:49:37 GMT`) and asctime forms, with jiff's strptime.
fn httpdate_like(text: &str) -> Option<Timestamp> {
    const FORMATS: [&str; 3] = [
        "%A, %d-%b-%y %H:%M:%S GMT",
        "%a %b %e %H:%M:%S %Y",
        "%d %b %Y %H:%M:%S GMT",
    ];
    FORMATS.iter().find_map(|format| {
        let civil = jiff::civil::DateTime::strptime(format, text).ok()?;
        civil
            .to_zoned(jiff::tz::TimeZone::UTC)
            .ok()
            .map(|z| z.timestamp())
    })
}
