//! What a page's directives ask of one bot: [`ForBot`].

use jiff::Timestamp;

use super::{date, list};

/// The directives that apply to one bot, from every `X-Robots-Tag` header and robots meta
/// tag of a page: those for every crawler (`robots`, a header value without a bot name) and
/// those naming the bot (`<meta name="jittybot">`, `X-Robots-Tag: jittybot: noindex`); those
/// naming another bot do not apply. Directives add up: the most restrictive wins (`index`
/// or `all` do not undo a `noindex`).
///
/// Read from the same lists as [`super::PageDirectives`], but nothing is kept: any number of
/// directives is read in constant memory, so none can be crowded out.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ForBot {
    /// The content is not to be kept: `noindex`, `none`, or an `unavailable_after` date
    /// that has passed (a date that does not read is ignored).
    pub noindex: bool,
    /// The page's links are not to be followed: `nofollow` or `none`.
    pub nofollow: bool,
}

impl ForBot {
    /// Reads every `X-Robots-Tag` value and every meta tag (`(name, content)` pairs) for the
    /// bot named `bot` (its token, compared case-insensitively), as of `now`.
    pub fn read<'a>(
        headers: impl IntoIterator<Item = &'a str>,
        metas: impl IntoIterator<Item = (&'a str, &'a str)>,
        bot: &str,
        now: Timestamp,
    ) -> ForBot {
        let mut found = ForBot::default();
        for value in headers {
            found.add_header(value, bot, now);
        }
        for (name, content) in metas {
            found.add_meta(name, content, bot, now);
        }
        found
    }

    /// Adds one `X-Robots-Tag` value: the directives for every crawler and those for `bot`.
    pub fn add_header(&mut self, value: &str, bot: &str, now: Timestamp) {
        list::header_items(value, |scope, text| {
            if scope.is_none_or(|scope| scope.eq_ignore_ascii_case(bot)) {
                self.apply(text, now);
            }
        });
    }

    /// Adds one meta tag if it is named `robots` or `bot` (case-insensitively).
    pub fn add_meta(&mut self, name: &str, content: &str, bot: &str, now: Timestamp) {
        let name = name.trim();
        if name.eq_ignore_ascii_case("robots") || name.eq_ignore_ascii_case(bot) {
            list::meta_items(content, |text| self.apply(text, now));
        }
    }

    /// Adds another source's directives (the most restrictive wins).
    pub fn add(&mut self, other: ForBot) {
        self.noindex |= other.noindex;
        self.nofollow |= other.nofollow;
    }

    /// `noindex,nofollow`-style text (empty when nothing applies).
    pub fn label(&self) -> String {
        match (self.noindex, self.nofollow) {
            (true, true) => "noindex,nofollow".into(),
            (true, false) => "noindex".into(),
            (false, true) => "nofollow".into(),
            (false, false) => String::new(),
        }
    }

    /// One directive's text (`noindex`, `unavailable_after: 2025-01-01`); unknown ones and
    /// those that ask nothing of a bot that keeps no snippets are ignored.
    fn apply(&mut self, text: &str, now: Timestamp) {
        let (name, value) = match text.split_once(':') {
            Some((name, value)) => (name.trim(), Some(value)),
            None => (text.trim(), None),
        };
        if name.eq_ignore_ascii_case("noindex") {
            self.noindex = true;
        } else if name.eq_ignore_ascii_case("nofollow") {
            self.nofollow = true;
        } else if name.eq_ignore_ascii_case("none") {
            self.noindex = true;
            self.nofollow = true;
        } else if name.eq_ignore_ascii_case("unavailable_after") {
            let when = value.and_then(date::parse);
            if when.is_some_and(|when| when <= now) {
                self.noindex = true;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const BOT: &str = "jittybot";

    fn now() -> Timestamp {
        "2026-06-01T00:00:00Z".parse().unwrap()
    }

    fn d(noindex: bool, nofollow: bool) -> ForBot {
        ForBot { noindex, nofollow }
    }

    /// A meta content for everyone.
    fn list(content: &str) -> ForBot {
        ForBot::read([], [("robots", content)], BOT, now())
    }

    /// One header value, or `None` when nothing in it applies to JittyBot.
    fn header(value: &str) -> ForBot {
        ForBot::read([value], [], BOT, now())
    }

    #[test]
    fn lists_case_and_none() {
        assert_eq!(list(" NoIndex , follow"), d(true, false));
        assert_eq!(list("none"), d(true, true));
        assert_eq!(list("all, noarchive, max-snippet:20"), d(false, false));
        assert_eq!(list("nofollow,"), d(false, true));
        // `index` does not undo a `noindex` elsewhere.
        assert_eq!(list("noindex, index, all"), d(true, false));
    }

    #[test]
    fn unavailable_after() {
        assert_eq!(list("unavailable_after: 2025-01-01"), d(true, false));
        assert_eq!(
            list("unavailable_after: 2030-01-01T00:00:00Z, nofollow"),
            d(false, true)
        );
        assert_eq!(
            list("unavailable_after: Wednesday, 01-Jan-25 00:00:00 GMT"),
            d(true, false)
        );
        assert_eq!(
            list("unavailable_after: Wed, 01 Jan 2031 00:00:00 +0000"),
            d(false, false)
        );
        assert_eq!(list("unavailable_after: someday, noindex"), d(true, false));
        // A date followed by text that is no directive: the date still reads.
        assert_eq!(list("unavailable_after: 2025-01-01, soon"), d(true, false));
        assert_eq!(
            header("unavailable_after: Wednesday, 01-Jan-25 00:00:00 GMT"),
            d(true, false)
        );
    }

    #[test]
    fn meta_names() {
        let meta = |name: &str, content: &str| ForBot::read([], [(name, content)], BOT, now());
        assert_eq!(meta("robots", "noindex"), d(true, false));
        assert_eq!(meta("JittyBot", "nofollow"), d(false, true));
        assert_eq!(meta(" ROBOTS ", "none"), d(true, true));
        assert_eq!(meta("googlebot", "noindex"), d(false, false));
        assert_eq!(meta("description", "noindex"), d(false, false));
    }

    #[test]
    fn header_prefixes() {
        assert_eq!(header("noindex, nofollow"), d(true, true));
        assert_eq!(header("JittyBot: noindex"), d(true, false));
        assert_eq!(header("googlebot: noindex"), d(false, false));
        assert_eq!(header("otherbot: none"), d(false, false));
        assert_eq!(header("unavailable_after: 2025-01-01"), d(true, false));
        // A parameterised directive first is not a bot name.
        for value in [
            "max-image-preview:large, noindex",
            "max-snippet: 20, noindex",
            "max-video-preview:-1, noindex",
        ] {
            assert_eq!(header(value), d(true, false), "{value}");
        }
        assert_eq!(
            header("jittybot: max-image-preview:large, noindex"),
            d(true, false)
        );
        assert_eq!(
            header("googlebot: max-image-preview:large, noindex"),
            d(false, false)
        );
        // One value naming several bots: each name applies from where it stands.
        assert_eq!(
            header("googlebot: noindex, jittybot: nofollow"),
            d(false, true)
        );
        assert_eq!(
            header("jittybot: nofollow, googlebot: noindex"),
            d(false, true)
        );
        let mut all = ForBot::default();
        all.add(d(true, false));
        all.add(d(false, true));
        assert_eq!(all.label(), "noindex,nofollow");
    }

    #[test]
    fn no_directive_is_crowded_out() {
        // Past `MAX_DIRECTIVES`, a report only counts; what applies to the bot is read whole.
        let many = format!("{}noindex", "index, ".repeat(10_000));
        assert_eq!(list(&many), d(true, false));
        let dated = format!("unavailable_after: 2025-01-01{}", ", x".repeat(10_000));
        assert_eq!(list(&dated), d(true, false));
    }
}
