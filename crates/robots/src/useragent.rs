//! Reading a crawler's own name as its callers give it: a product token, a name RFC 9309 would
//! not allow (`MJ12bot`), or a whole `User-Agent` header.

/// Whether `byte` may be part of a crawler's name: an HTTP token character (RFC 9110 §5.6.2:
/// letters, digits and ``! # $ % & ' + - . ^ _ ` | ~``) other than `*`, which a robots.txt
/// gives to the global group. RFC 9309's product tokens (`[A-Za-z_-]`) are the narrowest case.
pub(crate) fn is_name_byte(byte: u8) -> bool {
    byte.is_ascii_alphanumeric()
        || matches!(
            byte,
            b'!' | b'#'
                | b'$'
                | b'%'
                | b'&'
                | b'\''
                | b'+'
                | b'-'
                | b'.'
                | b'^'
                | b'_'
                | b'`'
                | b'|'
                | b'~'
        )
}

/// The leading run of name bytes of `text` (see [`is_name_byte`]).
pub(crate) fn leading_name(text: &[u8]) -> &[u8] {
    let end = text
        .iter()
        .position(|&b| !is_name_byte(b))
        .unwrap_or(text.len());
    &text[..end]
}

/// A name as a caller may give it: a leading run of name bytes that starts with a letter, a
/// digit, `-` or `_` (so `+http` in `+http://example.com/bot` is no name, and every RFC 9309
/// product token is one).
fn name_at_start(text: &str) -> Option<&str> {
    let name = leading_name(text.as_bytes());
    let first = name.first()?;
    let starts_a_name = first.is_ascii_alphanumeric() || matches!(first, b'-' | b'_');
    // The run is ASCII, so its end is a character boundary.
    starts_a_name.then(|| text.get(..name.len()))?
}

/// The product token a crawler's name or `User-Agent` string names, read as crawlers read
/// their own names.
///
/// - A name alone is itself: `JittyBot`, `MJ12bot`, `Mail.RU_Bot`, `360Spider` (letters,
///   digits and the other HTTP token characters but `*`, starting with a letter, a digit, `-`
///   or `_`).
/// - A `User-Agent` string (RFC 9110 §10.1.5: products `name/version` and comments in
///   parentheses) names its first product: `Scrapy/2.13 (+https://scrapy.org)` is `Scrapy`,
///   `JittyBot/1.0` is `JittyBot`.
/// - When that first product is `Mozilla` (browsers' compatibility prefix, which crawlers copy),
///   the crawler is the product after `compatible;` in a comment
///   (`Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)` is
///   `Googlebot`), or else the first `name/version` in a comment
///   (`... Safari/605.1.15 (Applebot/0.1; +http://www.apple.com/go/applebot)` is `Applebot`),
///   or else `Mozilla` itself (a browser's string names no crawler).
///
/// `None` when nothing in `agent` is a name: empty, blank, `*`, `/1.0`, `ツ`.
///
/// ```
/// use robots::crawler_token;
///
/// assert_eq!(crawler_token("MJ12bot"), Some("MJ12bot"));
/// assert_eq!(crawler_token("Scrapy/2.13 (+https://scrapy.org)"), Some("Scrapy"));
/// assert_eq!(
///     crawler_token("Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)"),
///     Some("Googlebot")
/// );
/// assert_eq!(crawler_token(""), None);
/// ```
pub fn crawler_token(agent: &str) -> Option<&str> {
    let agent = agent.trim_matches(|c: char| c.is_ascii_whitespace());
    let first = name_at_start(agent);
    match first {
        Some(first) if !first.eq_ignore_ascii_case("Mozilla") => Some(first),
        _ => compatible_product(agent)
            .or_else(|| versioned_product_in_comment(agent))
            .or(first),
    }
}

/// The elements of the comments of a `User-Agent` string: the `;`-separated parts of each
/// parenthesised text, trimmed. Comments are taken flat: a `(` inside one is part of its text.
fn comment_elements(agent: &str) -> impl Iterator<Item = &str> {
    agent
        .split('(')
        .skip(1)
        .map(|comment| comment.split(')').next().unwrap_or_default())
        .flat_map(|comment| comment.split(';'))
        .map(str::trim)
}

/// The name of the element after `compatible` in a comment:
/// `(compatible; Googlebot/2.1; ...)` gives `Googlebot`.
fn compatible_product(agent: &str) -> Option<&str> {
    let mut elements = comment_elements(agent);
    while let Some(element) = elements.next() {
        if element.eq_ignore_ascii_case("compatible") {
            if let Some(name) = elements.next().and_then(name_at_start) {
                return Some(name);
            }
        }
    }
    None
}

/// The first comment element written `name/version` (`Applebot/0.1`). Elements that only
/// contain a slash later on (`Nexus 5X Build/MMB29P`, `+http://...`) are not products.
fn versioned_product_in_comment(agent: &str) -> Option<&str> {
    comment_elements(agent).find_map(|element| {
        let name = name_at_start(element)?;
        element[name.len()..].starts_with('/').then_some(name)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_alone_are_themselves() {
        for name in [
            "JittyBot",
            "MJ12bot",
            "360Spider",
            "Mail.RU_Bot",
            "Go!Zilla",
            "ia_archiver",
        ] {
            assert_eq!(crawler_token(name), Some(name));
        }
        assert_eq!(crawler_token("  JittyBot \t"), Some("JittyBot"));
        assert_eq!(crawler_token("-bot"), Some("-bot"));
    }

    #[test]
    fn user_agent_strings_name_their_crawler() {
        for (agent, token) in [
            ("Scrapy/2.13 (+https://scrapy.org)", "Scrapy"),
            ("JittyBot/1.0", "JittyBot"),
            ("MJ12bot/v1.4.8", "MJ12bot"),
            ("Googlebot-Image/1.0", "Googlebot-Image"),
            (
                "Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)",
                "Googlebot",
            ),
            (
                "Mozilla/5.0 (Linux; Android 6.0.1; Nexus 5X Build/MMB29P) AppleWebKit/537.36 \
                 (KHTML, like Gecko) Chrome/120.0 Mobile Safari/537.36 (compatible; \
                 Googlebot/2.1; +http://www.google.com/bot.html)",
                "Googlebot",
            ),
            (
                "Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; bingbot/2.0; \
                 +http://www.bing.com/bingbot.htm) Chrome/116.0.1938.76 Safari/537.36",
                "bingbot",
            ),
            (
                "Mozilla/5.0 (compatible; MJ12bot/v1.4.8; http://mj12bot.com/)",
                "MJ12bot",
            ),
            (
                "Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_5) AppleWebKit/605.1.15 (KHTML, \
                 like Gecko) Version/13.1.1 Safari/605.1.15 (Applebot/0.1; \
                 +http://www.apple.com/go/applebot)",
                "Applebot",
            ),
            (
                "Mozilla/5.0 (Linux; Android 7.0;) AppleWebKit/537.36 (KHTML, like Gecko) \
                 Mobile Safari/537.36 (compatible; PetalBot;+https://webmaster.petalsearch.com/site/petalbot)",
                "PetalBot",
            ),
            (
                "facebookexternalhit/1.1 (+http://www.facebook.com/externalhit_uatext.php)",
                "facebookexternalhit",
            ),
            (
                "LinkedInBot/1.0 (compatible; Mozilla/5.0; Apache-HttpClient +http://www.linkedin.com)",
                "LinkedInBot",
            ),
            ("Slackbot-LinkExpanding 1.0 (+https://api.slack.com/robots)", "Slackbot-LinkExpanding"),
            ("(compatible; Foo/1.0)", "Foo"),
        ] {
            assert_eq!(crawler_token(agent), Some(token), "{agent}");
        }
    }

    #[test]
    fn a_browser_string_names_mozilla() {
        let chrome = "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like \
                      Gecko) Chrome/120.0.0.0 Safari/537.36";
        assert_eq!(crawler_token(chrome), Some("Mozilla"));
        let android = "Mozilla/5.0 (Linux; U; Android 4.0.3; ko-kr; LG-L160L Build/IML74K) \
                       AppleWebKit/534.30 (KHTML, like Gecko) Version/4.0 Mobile Safari/534.30";
        assert_eq!(crawler_token(android), Some("Mozilla"));
    }

    #[test]
    fn nothing_that_is_no_name() {
        for agent in [
            "",
            "   ",
            "*",
            "/1.0",
            "ツ",
            "(+http://example.com)",
            "+bot",
        ] {
            assert_eq!(crawler_token(agent), None, "{agent:?}");
        }
    }
}
