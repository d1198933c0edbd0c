//! Robots directives of a page: `<meta name="robots|jittybot" content="...">` and the
//! `X-Robots-Tag` header.
//!
//! Parsing, as documented for site owners:
//! - A value is a comma-separated list; tokens are trimmed and compared case-insensitively.
//!   Unknown tokens are ignored.
//! - `noindex` and `nofollow` mean what they say; `none` means both; `all`, `index`, `follow`
//!   change nothing (a restriction from another tag or header still stands: directives from
//!   several tags and headers add up, the most restrictive wins).
//! - `unavailable_after: DATE` (RFC 3339, RFC 2822 / RFC 850-style HTTP dates, or a plain
//!   `YYYY-MM-DD`) means `noindex` once that time has passed; an unreadable date is ignored.
//! - Meta tags apply when named `robots` (everyone) or `jittybot`; tags for other bots
//!   (`googlebot`, ...) do not apply.
//! - An `X-Robots-Tag` value may start with a bot name and a colon (`jittybot: noindex`): it
//!   then applies only when the name is `jittybot` (case-insensitive). A value starting with a
//!   directive (`unavailable_after: ...`) has no bot name. Several headers add up.

use jiff::Timestamp;

/// JittyBot's name as matched in meta names and `X-Robots-Tag` prefixes.
pub const BOT_NAME: &str = "jittybot";

/// Directive names, so `name: value` is not mistaken for a bot prefix: every directive
/// search engines document, with or without a parameter (the same names as the `page`
/// crate's parser), so `max-image-preview:large, noindex` is a list for everyone, not a list
/// for a bot named `max-image-preview`.
const KNOWN: [&str; 21] = [
    "all",
    "noindex",
    "index",
    "nofollow",
    "follow",
    "none",
    "noarchive",
    "nocache",
    "nosnippet",
    "notranslate",
    "noimageindex",
    "indexifembedded",
    "noodp",
    "noydir",
    "noyaca",
    "noai",
    "noimageai",
    "unavailable_after",
    "max-snippet",
    "max-image-preview",
    "max-video-preview",
];

/// The directives that apply to JittyBot.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Directives {
    /// The content is not kept.
    pub noindex: bool,
    /// The page's links are not followed.
    pub nofollow: bool,
}

impl Directives {
    /// Add another source's directives (the most restrictive wins).
    pub fn add(&mut self, other: Directives) {
        self.noindex |= other.noindex;
        self.nofollow |= other.nofollow;
    }

    /// `noindex,nofollow`-style text for the store (empty when nothing applies).
    pub fn label(&self) -> String {
        match (self.noindex, self.nofollow) {
            (true, true) => "noindex,nofollow".into(),
            (true, false) => "noindex".into(),
            (false, true) => "nofollow".into(),
            (false, false) => String::new(),
        }
    }
}

/// Parse a directive list (a meta `content`, or a header value after its bot name) as of `now`.
pub fn parse_list(list: &str, now: Timestamp) -> Directives {
    let mut d = Directives::default();
    let pieces: Vec<&str> = list.split(',').collect();
    let mut i = 0;
    while i < pieces.len() {
        let token = pieces[i].trim();
        i += 1;
        let lower = token.to_ascii_lowercase();
        if let Some(after) = lower.strip_prefix("unavailable_after") {
            // The date may itself hold commas (RFC 850, RFC 2822): join the following pieces
            // until the date reads, or a known directive starts.
            let mut date = token[token.len() - after.len()..]
                .trim_start()
                .trim_start_matches(':')
                .to_string();
            let mut when = parse_date(date.trim());
            while when.is_none() && i < pieces.len() && !is_directive(pieces[i]) {
                date.push(',');
                date.push_str(pieces[i]);
                i += 1;
                when = parse_date(date.trim());
            }
            if when.is_some_and(|w| w <= now) {
                d.noindex = true;
            }
            continue;
        }
        match lower.as_str() {
            "noindex" => d.noindex = true,
            "nofollow" => d.nofollow = true,
            "none" => {
                d.noindex = true;
                d.nofollow = true;
            }
            _ => {}
        }
    }
    d
}

fn is_directive(piece: &str) -> bool {
    let name = piece
        .split(':')
        .next()
        .unwrap_or_default()
        .trim()
        .to_ascii_lowercase();
    KNOWN.contains(&name.as_str())
}

fn parse_date(text: &str) -> Option<Timestamp> {
    if let Ok(t) = text.parse::<Timestamp>() {
        return Some(t);
    }
    if let Ok(t) = jiff::fmt::rfc2822::parse(text) {
        return Some(t.timestamp());
    }
    if let Ok(t) = httpdate_like(text) {
        return Some(t);
    }
    let date: jiff::civil::Date = text.parse().ok()?;
    date.to_zoned(jiff::tz::TimeZone::UTC)
        .ok()
        .map(|z| z.timestamp())
}

/// RFC 850 (`Sunday, 06-Nov-94 08:49:37 GMT`) and asctime forms via jiff's strptime.
fn httpdate_like(text: &str) -> Result<Timestamp, jiff::Error> {
    let formats = [
        "%A, %d-%b-%y %H:%M:%S GMT",
        "%a %b %e %H:%M:%S %Y",
        "%d %b %Y %H:%M:%S GMT",
    ];
    let mut last = None;
    for f in formats {
        match jiff::civil::DateTime::strptime(f, text) {
            Ok(dt) => return dt.to_zoned(jiff::tz::TimeZone::UTC).map(|z| z.timestamp()),
            Err(e) => last = Some(e),
        }
    }
    Err(last.unwrap_or_else(|| jiff::Error::from_args(format_args!("no format"))))
}

/// The directives of a `<meta name=NAME content=CONTENT>` for JittyBot (`None`: not for it).
pub fn from_meta(name: &str, content: &str, now: Timestamp) -> Option<Directives> {
    let name = name.trim();
    (name.eq_ignore_ascii_case("robots") || name.eq_ignore_ascii_case(BOT_NAME))
        .then(|| parse_list(content, now))
}

/// The directives of one `X-Robots-Tag` header value for JittyBot (`None`: for another bot).
pub fn from_header(value: &str, now: Timestamp) -> Option<Directives> {
    if let Some((prefix, rest)) = value.split_once(':') {
        let p = prefix.trim().to_ascii_lowercase();
        let is_bot_name = !p.is_empty()
            && !p.contains(',')
            && !KNOWN.contains(&p.as_str())
            && p.bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_');
        if is_bot_name {
            return (p == BOT_NAME).then(|| parse_list(rest, now));
        }
    }
    Some(parse_list(value, now))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn now() -> Timestamp {
        "2026-06-01T00:00:00Z".parse().unwrap()
    }

    fn d(noindex: bool, nofollow: bool) -> Directives {
        Directives { noindex, nofollow }
    }

    #[test]
    fn lists_case_and_none() {
        assert_eq!(parse_list(" NoIndex , follow", now()), d(true, false));
        assert_eq!(parse_list("none", now()), d(true, true));
        assert_eq!(
            parse_list("all, noarchive, max-snippet:20", now()),
            d(false, false)
        );
        assert_eq!(parse_list("nofollow,", now()), d(false, true));
    }

    #[test]
    fn unavailable_after() {
        assert_eq!(
            parse_list("unavailable_after: 2025-01-01", now()),
            d(true, false)
        );
        assert_eq!(
            parse_list("unavailable_after: 2030-01-01T00:00:00Z, nofollow", now()),
            d(false, true)
        );
        assert_eq!(
            parse_list(
                "unavailable_after: Wednesday, 01-Jan-25 00:00:00 GMT",
                now()
            ),
            d(true, false)
        );
        assert_eq!(
            parse_list("unavailable_after: Wed, 01 Jan 2031 00:00:00 +0000", now()),
            d(false, false)
        );
        assert_eq!(
            parse_list("unavailable_after: someday, noindex", now()),
            d(true, false)
        );
    }

    #[test]
    fn meta_names() {
        assert_eq!(from_meta("robots", "noindex", now()), Some(d(true, false)));
        assert_eq!(
            from_meta("JittyBot", "nofollow", now()),
            Some(d(false, true))
        );
        assert_eq!(from_meta("googlebot", "noindex", now()), None);
    }

    #[test]
    fn header_prefixes() {
        assert_eq!(from_header("noindex, nofollow", now()), Some(d(true, true)));
        assert_eq!(
            from_header("JittyBot: noindex", now()),
            Some(d(true, false))
        );
        assert_eq!(from_header("googlebot: noindex", now()), None);
        assert_eq!(from_header("otherbot: none", now()), None);
        assert_eq!(
            from_header("unavailable_after: 2025-01-01", now()),
            Some(d(true, false))
        );
        // A parameterised directive first is not a bot name.
        for value in [
            "max-image-preview:large, noindex",
            "max-snippet: 20, noindex",
            "max-video-preview:-1, noindex",
        ] {
            assert_eq!(from_header(value, now()), Some(d(true, false)), "{value}");
        }
        assert_eq!(
            from_header("jittybot: max-image-preview:large, noindex", now()),
            Some(d(true, false))
        );
        assert_eq!(
            from_header("googlebot: max-image-preview:large, noindex", now()),
            None
        );
        let mut all = Directives::default();
        all.add(d(true, false));
        all.add(d(false, true));
        assert_eq!(all.label(), "noindex,nofollow");
    }
}
