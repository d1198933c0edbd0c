//! Page-level robots directives: `X-Robots-Tag` headers and robots meta tags.
//!
//! Both carry comma-separated directives (`noindex, nofollow`); a header value may address
//! one crawler (`X-Robots-Tag: googlebot: noindex`), and a meta tag addresses every crawler
//! (`name="robots"`) or one (`name="googlebot"`). Values such as `max-snippet:20` and
//! `unavailable_after: 2025-06-25` carry a parameter.
//!
//! One parser ([`list`]: the comma lists, the bot names of header values, the commas of an
//! `unavailable_after` date) serves two readings:
//! - [`PageDirectives`]: every directive of a page as written, with invalid ones and
//!   conflicts, for a report (RobotsTxtParser's analysis);
//! - [`ForBot`]: what applies to one bot (`noindex`, `nofollow`, `none`, a past
//!   `unavailable_after`), for a bot that obeys them (JittyBot the crawler, on every page it
//!   fetches and every page it renders).

use std::collections::BTreeMap;
use std::fmt;

use serde::{Deserialize, Serialize};

mod bot;
mod date;
mod list;

pub use self::bot::ForBot;

/// Directives with a parameter (`name:value`).
const PARAMETERISED: &[&str] = &[
    "max-snippet",
    "max-image-preview",
    "max-video-preview",
    "unavailable_after",
];

/// Directives without a parameter, as search engines document them (Google's, Bing's,
/// Yandex's, and the `noai` pair some sites write).
const FLAGS: &[&str] = &[
    "all",
    "index",
    "noindex",
    "follow",
    "nofollow",
    "none",
    "noarchive",
    "nocache",
    "nosnippet",
    "noimageindex",
    "notranslate",
    "nositelinkssearchbox",
    "indexifembedded",
    "noodp",
    "noydir",
    "noyaca",
    "noai",
    "noimageai",
];

/// Meta names that address one crawler whatever directory of crawlers the caller knows:
/// search engines' documented and historical names. Lowercase.
pub const KNOWN_CRAWLER_META_NAMES: &[&str] = &[
    "googlebot",
    "googlebot-news",
    "bingbot",
    "msnbot",
    "slurp",
    "yandex",
    "baiduspider",
    "teoma",
    "otherbot",
];

/// Whether the meta name `name` (lowercase) addresses one crawler: a known name, or one the
/// caller's directory of crawlers names.
fn is_crawler_meta_name(name: &str, is_crawler: &impl Fn(&str) -> bool) -> bool {
    KNOWN_CRAWLER_META_NAMES.contains(&name) || is_crawler(name)
}

/// Where a directive was found.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Source {
    /// An `X-Robots-Tag` response header.
    Header {
        /// The header's value as sent.
        value: String,
    },
    /// A `<meta name=... content=...>` tag.
    Meta {
        /// The meta name (lowercase): `robots` or a crawler's token.
        name: String,
        /// The content attribute as written.
        content: String,
    },
}

impl fmt::Display for Source {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Source::Header { value } => write!(f, "X-Robots-Tag: {value}"),
            Source::Meta { name, content } => {
                write!(f, "<meta name=\"{name}\" content=\"{content}\">")
            }
        }
    }
}

/// One directive, as read.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Directive {
    /// The crawler it addresses (lowercase token), or `None` for every crawler.
    pub scope: Option<String>,
    /// The directive name, lowercase (`noindex`, `max-snippet`...).
    pub name: String,
    /// Its parameter, if it has one.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub value: Option<String>,
    /// Where it was found.
    pub source: Source,
}

/// A directive that search engines would ignore.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct InvalidDirective {
    /// The crawler addressed, if any.
    pub scope: Option<String>,
    /// The text as written.
    pub text: String,
    /// Why it is invalid.
    pub reason: String,
    /// Where it was found.
    pub source: Source,
}

/// Two directives that contradict each other for the same crawlers.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Conflict {
    /// The crawler addressed (`None`: every crawler).
    pub scope: Option<String>,
    /// The permissive directive (e.g. `index`).
    pub permissive: String,
    /// The restrictive directive (e.g. `noindex`), which search engines apply.
    pub restrictive: String,
}

/// The most directives kept per page, valid ones and invalid ones each. A hostile page can
/// write a directive for every two bytes of its head (`a,a,a,...`), and each kept one carries
/// its source: past this many, further ones are only counted ([`PageDirectives::omitted`]).
/// Kept apart, so invalid ones cannot crowd out a real `noindex`.
pub const MAX_DIRECTIVES: usize = 100;

/// Every directive of a page, with what they add up to.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct PageDirectives {
    /// Every valid directive, in the order read (headers first).
    pub directives: Vec<Directive>,
    /// Directives search engines ignore.
    pub invalid: Vec<InvalidDirective>,
    /// Directives past [`MAX_DIRECTIVES`], not kept (absent from reports that had none).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub omitted: usize,
}

fn is_zero(count: &usize) -> bool {
    *count == 0
}

impl PageDirectives {
    /// Reads the values of every `X-Robots-Tag` header, then every robots meta tag
    /// (`(name, content)` pairs). A meta tag counts when its name is `robots` or names a
    /// crawler: one of [`KNOWN_CRAWLER_META_NAMES`] or a name `is_crawler` accepts (it is given
    /// the name in lowercase); other names (`description`, `viewport`...) are skipped.
    pub fn read<'a>(
        headers: impl IntoIterator<Item = &'a str>,
        metas: impl IntoIterator<Item = (&'a str, &'a str)>,
        is_crawler: impl Fn(&str) -> bool,
    ) -> PageDirectives {
        let mut page = PageDirectives::default();
        for value in headers {
            page.add_header(value);
        }
        for (name, content) in metas {
            page.add_meta(name, content, &is_crawler);
        }
        page
    }

    /// Whether a meta tag carries robots directives (valid or not): its name is `robots` or
    /// names a crawler (see [`PageDirectives::read`]).
    pub fn is_robots_meta(name: &str, is_crawler: impl Fn(&str) -> bool) -> bool {
        let name = name.trim().to_ascii_lowercase();
        name == "robots" || is_crawler_meta_name(&name, &is_crawler)
    }

    /// Adds one `X-Robots-Tag` header value.
    pub fn add_header(&mut self, value: &str) {
        let source = Source::Header {
            value: crate::excerpt(value),
        };
        list::header_items(value, |scope, text| {
            self.add(scope.map(str::to_owned), text, &source);
        });
    }

    /// Adds one meta tag; ignored unless `name` is `robots` or names a crawler (see
    /// [`PageDirectives::read`]).
    pub fn add_meta(&mut self, name: &str, content: &str, is_crawler: &impl Fn(&str) -> bool) {
        let name = name.trim().to_ascii_lowercase();
        let scope = match name.as_str() {
            "robots" => None,
            other if is_crawler_meta_name(other, is_crawler) => Some(other.to_owned()),
            _ => return,
        };
        let source = Source::Meta {
            name,
            content: crate::excerpt(content),
        };
        if content.trim().is_empty() {
            self.push_invalid(InvalidDirective {
                scope,
                text: String::new(),
                reason: "empty content".to_owned(),
                source,
            });
            return;
        }
        list::meta_items(content, |text| self.add(scope.clone(), text, &source));
    }

    /// Keeps `invalid` if the list has room; counts it as omitted when it has not.
    fn push_invalid(&mut self, invalid: InvalidDirective) {
        if self.invalid.len() < MAX_DIRECTIVES {
            self.invalid.push(invalid);
        } else {
            self.omitted = self.omitted.saturating_add(1);
        }
    }

    fn add(&mut self, scope: Option<String>, text: &str, source: &Source) {
        let scope = scope.map(|scope| crate::excerpt(&scope));
        let (name, value) = match text.split_once(':') {
            Some((name, value)) => (
                name.trim().to_ascii_lowercase(),
                Some(crate::excerpt(value.trim())),
            ),
            None => (crate::excerpt(&text.trim().to_ascii_lowercase()), None),
        };
        let invalid = |reason: String| InvalidDirective {
            scope: scope.clone(),
            text: crate::excerpt(text),
            reason: crate::excerpt(&reason),
            source: source.clone(),
        };
        let problem = match (name.as_str(), value.as_deref()) {
            (flag, None) if FLAGS.contains(&flag) => None,
            (flag, Some(_)) if FLAGS.contains(&flag) => Some(format!("{flag} takes no value")),
            ("max-snippet" | "max-video-preview", Some(value)) => match value.parse::<i64>() {
                Ok(number) if number >= -1 => None,
                _ => Some(format!(
                    "{name} needs a number of -1 or more, not {value:?}"
                )),
            },
            ("max-image-preview", Some(value)) => {
                let value = value.to_ascii_lowercase();
                (!matches!(value.as_str(), "none" | "standard" | "large")).then(|| {
                    format!("max-image-preview needs none, standard or large, not {value:?}")
                })
            }
            ("unavailable_after", Some(value)) if !value.is_empty() => None,
            (parameterised, _) if PARAMETERISED.contains(&parameterised) => {
                Some(format!("{parameterised} needs a value"))
            }
            _ => Some("unknown directive".to_owned()),
        };
        // A full list only counts: nothing is built (or cloned) for it.
        let full = match problem {
            Some(_) => self.invalid.len() >= MAX_DIRECTIVES,
            None => self.directives.len() >= MAX_DIRECTIVES,
        };
        match problem {
            _ if full => self.omitted = self.omitted.saturating_add(1),
            Some(reason) => self.invalid.push(invalid(reason)),
            None => self.directives.push(Directive {
                scope,
                name,
                value,
                source: source.clone(),
            }),
        }
    }

    /// Whether a directive named `name` (or `none`, for `noindex`/`nofollow`) addresses every
    /// crawler.
    pub fn for_all(&self, name: &str) -> bool {
        self.directives
            .iter()
            .any(|directive| directive.scope.is_none() && implies(&directive.name, name))
    }

    /// The crawlers (lowercase tokens) a named-only directive addresses.
    pub fn scoped(&self, name: &str) -> Vec<String> {
        let mut scopes: Vec<String> = self
            .directives
            .iter()
            .filter(|directive| implies(&directive.name, name))
            .filter_map(|directive| directive.scope.clone())
            .collect();
        scopes.sort();
        scopes.dedup();
        scopes
    }

    /// Whether every crawler is asked not to index the page (`noindex` or `none`).
    pub fn noindex_for_all(&self) -> bool {
        self.for_all("noindex")
    }

    /// Whether the crawler `token` is asked not to index the page (by `robots` or by name).
    pub fn noindex_for(&self, token: &str) -> bool {
        let token = token.to_ascii_lowercase();
        self.directives.iter().any(|directive| {
            directive
                .scope
                .as_deref()
                .is_none_or(|scope| scope == token)
                && implies(&directive.name, "noindex")
        })
    }

    /// Contradictions within one scope: index with noindex, follow with nofollow, all with
    /// none.
    pub fn conflicts(&self) -> Vec<Conflict> {
        let mut by_scope: BTreeMap<Option<String>, Vec<&str>> = BTreeMap::new();
        for directive in &self.directives {
            by_scope
                .entry(directive.scope.clone())
                .or_default()
                .push(directive.name.as_str());
        }
        let mut conflicts = Vec::new();
        for (scope, names) in by_scope {
            let has = |name: &str| names.contains(&name);
            let pairs = [
                ("index", "noindex"),
                ("follow", "nofollow"),
                ("all", "none"),
                ("all", "noindex"),
                ("all", "nofollow"),
                ("index", "none"),
                ("follow", "none"),
            ];
            for (permissive, restrictive) in pairs {
                if has(permissive) && has(restrictive) {
                    conflicts.push(Conflict {
                        scope: scope.clone(),
                        permissive: permissive.to_owned(),
                        restrictive: restrictive.to_owned(),
                    });
                }
            }
        }
        conflicts
    }
}

/// Whether directive `given` means `wanted` (`none` means noindex and nofollow).
fn implies(given: &str, wanted: &str) -> bool {
    given == wanted || (given == "none" && matches!(wanted, "noindex" | "nofollow"))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A caller with no directory of crawlers: only the known meta names count.
    fn no_directory(_: &str) -> bool {
        false
    }

    #[test]
    fn comma_lists_and_scopes_in_headers() {
        let page = PageDirectives::read(
            [
                "noindex, nofollow",
                "googlebot: noarchive, nosnippet",
                "otherbot: noindex",
            ],
            [],
            no_directory,
        );
        assert!(page.noindex_for_all());
        assert_eq!(page.directives.len(), 5);
        assert_eq!(page.directives[2].scope.as_deref(), Some("googlebot"));
        assert_eq!(page.directives[3].scope.as_deref(), Some("googlebot"));
        assert_eq!(page.scoped("noindex"), vec!["otherbot".to_owned()]);
        assert!(page.invalid.is_empty());
    }

    #[test]
    fn parameters_are_not_scopes() {
        let page = PageDirectives::read(
            [
                "max-snippet: 20, max-image-preview:large",
                "unavailable_after: Friday, 25-Jun-10 15:00:00 PST",
            ],
            [],
            no_directory,
        );
        assert!(page.invalid.is_empty(), "{:?}", page.invalid);
        assert_eq!(page.directives[0].name, "max-snippet");
        assert_eq!(page.directives[0].value.as_deref(), Some("20"));
        assert_eq!(page.directives[2].name, "unavailable_after");
        assert_eq!(
            page.directives[2].value.as_deref(),
            Some("Friday, 25-Jun-10 15:00:00 PST")
        );
        assert!(page.directives.iter().all(|d| d.scope.is_none()));
    }

    #[test]
    fn none_means_noindex_and_nofollow() {
        let page = PageDirectives::read([], [("ROBOTS", "NONE")], no_directory);
        assert!(page.noindex_for_all());
        assert!(page.for_all("nofollow"));
        assert!(page.noindex_for("Googlebot"));
    }

    #[test]
    fn bot_meta_names_are_scoped_and_other_names_skipped() {
        let page = PageDirectives::read(
            [],
            [
                ("googlebot", "noindex"),
                ("description", "noindex"),
                ("viewport", "width=1"),
                ("examplebot", "noindex"),
            ],
            no_directory,
        );
        assert!(!page.noindex_for_all());
        assert!(page.noindex_for("googlebot"));
        assert!(!page.noindex_for("bingbot"));
        assert_eq!(page.directives.len(), 1);
        // The caller's directory of crawlers adds its names.
        let page =
            PageDirectives::read([], [("ExampleBot", "noindex")], |name| name == "examplebot");
        assert!(page.noindex_for("ExampleBot"));
        assert!(!page.noindex_for_all());
        assert!(PageDirectives::is_robots_meta("ROBOTS", no_directory));
        assert!(PageDirectives::is_robots_meta("msnbot", no_directory));
        assert!(!PageDirectives::is_robots_meta("description", no_directory));
    }

    #[test]
    fn invalid_values_are_reported() {
        let page = PageDirectives::read(
            ["max-snippet: lots, noidex"],
            [
                ("robots", "max-image-preview:huge, index:yes"),
                ("robots", ""),
            ],
            no_directory,
        );
        let reasons: Vec<&str> = page.invalid.iter().map(|i| i.reason.as_str()).collect();
        assert_eq!(page.invalid.len(), 5, "{reasons:?}");
        assert!(reasons[1].contains("unknown"));
    }

    #[test]
    fn directives_past_the_limit_are_counted_and_texts_are_cut() {
        let long = "x".repeat(5_000);
        let scoped = format!("bot{long}: noindex");
        let dated = format!("unavailable_after: {long}, {long}");
        // 100 KB of meta content: fifty thousand (invalid) directives.
        let endless = "a,".repeat(50_000);
        let page = PageDirectives::read(
            [scoped.as_str(), dated.as_str()],
            [("robots", endless.as_str())],
            no_directory,
        );
        assert_eq!(page.directives.len(), 2);
        assert_eq!(page.invalid.len(), MAX_DIRECTIVES);
        assert_eq!(page.omitted, 50_000 - MAX_DIRECTIVES);
        let short = |text: &str| text.chars().count() <= crate::MAX_SOURCE_CHARS;
        for directive in &page.directives {
            assert!(directive.scope.as_deref().is_none_or(short));
            assert!(directive.value.as_deref().is_none_or(short));
        }
        assert!(
            page.directives[0].scope.is_some(),
            "the long token still scopes"
        );
        for invalid in &page.invalid {
            assert!(short(&invalid.text) && short(&invalid.reason));
        }
        // Invalid ones do not crowd out a valid one after them; valid ones have their own cap.
        let flood = format!("{endless}noindex");
        let page = PageDirectives::read([], [("robots", flood.as_str())], no_directory);
        assert!(page.noindex_for_all());
        let valid = "noindex,".repeat(1_000);
        let page = PageDirectives::read([], [("robots", valid.as_str())], no_directory);
        assert_eq!((page.directives.len(), page.omitted), (MAX_DIRECTIVES, 900));
        // Under the limit, nothing is omitted.
        let page = PageDirectives::read(["noindex, nofollow"], [], no_directory);
        assert_eq!((page.directives.len(), page.omitted), (2, 0));
    }

    #[test]
    fn conflicts_are_found_per_scope() {
        let page = PageDirectives::read(
            ["index"],
            [("robots", "noindex, follow"), ("googlebot", "nofollow")],
            no_directory,
        );
        let conflicts = page.conflicts();
        assert_eq!(conflicts.len(), 1);
        assert_eq!(conflicts[0].permissive, "index");
        assert_eq!(conflicts[0].restrictive, "noindex");
        assert_eq!(conflicts[0].scope, None);
    }
}
