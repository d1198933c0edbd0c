//! The product tokens a crawler answers to, in order of preference.

use std::fmt;
use std::hash::{Hash, Hasher};

use crate::lines::{self, Product};
use crate::useragent::{self, crawler_token};

/// At most this many product tokens make one [`ProductTokens`] list.
///
/// The one-crawler parse tracks which tokens the current group names in one 64-bit mask (one
/// bit per token, one for `*`); real crawlers need two or three.
pub const MAX_PREFERRED_TOKENS: usize = 63;

/// A crawler's product tokens in order of preference (`["JittyBot-Image", "JittyBot"]`): at
/// most [`MAX_PREFERRED_TOKENS`].
///
/// The first token some group of a file names wins; otherwise the `*` groups apply.
///
/// [`ProductTokens::new`] and [`ProductTokens::from_static`] take only RFC 9309 product tokens
/// (`[A-Za-z_-]+`, §2.2.1), at least one. [`ProductTokens::read`] takes what callers have —
/// names the RFC would not allow (`MJ12bot`), `User-Agent` strings, an empty agent — and says
/// how it read each ([`AgentNote`]); its lists may hold such names, and may be empty (a crawler
/// with no name follows the `*` groups).
///
/// ```
/// use robots::{ProductTokens, ProductTokenError};
///
/// let media = ProductTokens::new(["JittyBot-Image", "JittyBot"])?;
/// assert_eq!(media, ProductTokens::JITTYBOT_IMAGE);
/// assert!(matches!(
///     ProductTokens::new(["JittyBot/1.0"]),
///     Err(ProductTokenError::NotAToken { .. })
/// ));
/// # Ok::<(), ProductTokenError>(())
/// ```
#[derive(Clone)]
pub struct ProductTokens {
    list: List,
    /// Bit `i` is set when token `i` is a name beyond RFC 9309's product tokens (`MJ12bot`):
    /// such a token is matched against a user-agent line's leading name
    /// ([`useragent::leading_name`]), an RFC token against its product token.
    beyond_rfc: u64,
}

#[derive(Clone)]
enum List {
    Static(&'static [&'static str]),
    Owned(Box<[Box<str>]>),
}

/// Why a list of product tokens was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ProductTokenError {
    /// No token was given.
    #[error("no product token given")]
    Empty,
    /// A value is not a product token.
    #[error("{value:?} is not a product token (letters, '-' and '_' only)")]
    NotAToken {
        /// The value as given.
        value: String,
    },
    /// More than [`MAX_PREFERRED_TOKENS`] tokens.
    #[error("{count} product tokens; at most {MAX_PREFERRED_TOKENS} are allowed")]
    TooMany {
        /// How many were given.
        count: usize,
    },
}

/// Whether `value` is one product token (`[A-Za-z_-]+`); usable in constants.
const fn is_product_token(value: &str) -> bool {
    let bytes = value.as_bytes();
    if bytes.is_empty() {
        return false;
    }
    let mut i = 0;
    while i < bytes.len() {
        let b = bytes[i];
        if !(b.is_ascii_alphabetic() || b == b'_' || b == b'-') {
            return false;
        }
        i += 1;
    }
    true
}

impl ProductTokens {
    /// JittyBot crawling pages: `["JittyBot"]`.
    pub const JITTYBOT: ProductTokens = ProductTokens::from_static(&["JittyBot"]);

    /// JittyBot fetching images, floorplans and other media: `["JittyBot-Image", "JittyBot"]`
    /// (a `JittyBot-Image` group if the file has one, then `JittyBot`, then `*`).
    pub const JITTYBOT_IMAGE: ProductTokens =
        ProductTokens::from_static(&["JittyBot-Image", "JittyBot"]);

    /// A list known when the program is written, with no allocation.
    ///
    /// # Panics
    ///
    /// When the list breaks a rule of [`ProductTokens`]. Used to define a `const`, that panic
    /// is a compile error, which is what this constructor is for; use [`ProductTokens::new`]
    /// for lists that come from input.
    pub const fn from_static(tokens: &'static [&'static str]) -> ProductTokens {
        assert!(!tokens.is_empty(), "no product token given");
        assert!(
            tokens.len() <= MAX_PREFERRED_TOKENS,
            "more than MAX_PREFERRED_TOKENS product tokens"
        );
        let mut i = 0;
        while i < tokens.len() {
            assert!(is_product_token(tokens[i]), "not a product token");
            i += 1;
        }
        ProductTokens {
            list: List::Static(tokens),
            beyond_rfc: 0,
        }
    }

    /// Checks a list of tokens, in order of preference.
    pub fn new<I>(tokens: I) -> Result<ProductTokens, ProductTokenError>
    where
        I: IntoIterator,
        I::Item: AsRef<str>,
    {
        let mut list = Vec::new();
        for token in tokens {
            let token = token.as_ref();
            if !is_product_token(token) {
                return Err(ProductTokenError::NotAToken {
                    value: token.to_owned(),
                });
            }
            list.push(Box::from(token));
        }
        match list.len() {
            0 => Err(ProductTokenError::Empty),
            count if count > MAX_PREFERRED_TOKENS => Err(ProductTokenError::TooMany { count }),
            _ => Ok(ProductTokens {
                list: List::Owned(list.into_boxed_slice()),
                beyond_rfc: 0,
            }),
        }
    }

    /// Reads the agents a caller has, in order of preference, as the engine matches them; never
    /// refuses one. Each agent is read by [`crawler_token`]:
    ///
    /// - an RFC 9309 product token (`JittyBot`) is taken as it is, with no note;
    /// - a longer string (`JittyBot/1.0`, a whole `User-Agent` header) gives its product token
    ///   ([`AgentNote::TokenFromString`]);
    /// - a name with characters the RFC does not allow in a product token (`MJ12bot`,
    ///   `Mail.RU_Bot`) is kept whole ([`AgentNote::BeyondRfc`]) and names the groups whose
    ///   user-agent value starts with exactly that name (`User-agent: MJ12bot`,
    ///   `User-agent: mj12bot/1.4`), not those of its letters alone (`User-agent: MJ`);
    /// - an agent with no name in it (empty, `*`) is left out ([`AgentNote::NoToken`]): a list
    ///   with no token left follows the `*` groups only.
    ///
    /// Fails only with more than [`MAX_PREFERRED_TOKENS`] tokens.
    ///
    /// ```
    /// use robots::{AgentNote, AgentRules, ProductTokens};
    ///
    /// let (tokens, notes) = ProductTokens::read(["MJ12bot"])?;
    /// let rules = AgentRules::parse(b"User-agent: MJ12bot\nDisallow: /\n", &tokens);
    /// assert!(!rules.is_allowed("/page"));
    /// assert_eq!(notes, [AgentNote::BeyondRfc { token: "MJ12bot".into() }]);
    /// # Ok::<(), robots::ProductTokenError>(())
    /// ```
    pub fn read<I>(agents: I) -> Result<(ProductTokens, Vec<AgentNote>), ProductTokenError>
    where
        I: IntoIterator,
        I::Item: AsRef<str>,
    {
        let mut list: Vec<Box<str>> = Vec::new();
        let mut notes = Vec::new();
        let mut beyond_rfc = 0u64;
        for agent in agents {
            let agent = agent.as_ref();
            let Some(token) = crawler_token(agent) else {
                notes.push(AgentNote::NoToken {
                    agent: agent.to_owned(),
                });
                continue;
            };
            if token != agent {
                notes.push(AgentNote::TokenFromString {
                    agent: agent.to_owned(),
                    token: token.to_owned(),
                });
            }
            if !is_product_token(token) {
                notes.push(AgentNote::BeyondRfc {
                    token: token.to_owned(),
                });
                if let Some(bit) = 1u64.checked_shl(list.len() as u32) {
                    beyond_rfc |= bit;
                }
            }
            list.push(Box::from(token));
        }
        if list.len() > MAX_PREFERRED_TOKENS {
            return Err(ProductTokenError::TooMany { count: list.len() });
        }
        let tokens = ProductTokens {
            list: List::Owned(list.into_boxed_slice()),
            beyond_rfc,
        };
        Ok((tokens, notes))
    }

    /// Whether some token is a name beyond RFC 9309's product tokens (see
    /// [`ProductTokens::read`]).
    pub(crate) fn has_names_beyond_rfc(&self) -> bool {
        self.beyond_rfc != 0
    }

    /// Whether a user-agent `value` (trimmed, as the parse reads it) names token `index`.
    ///
    /// An RFC token is named by the value's product token (its leading run of `[A-Za-z_-]`); a
    /// name beyond the RFC by the value's leading name, which cannot start with `*`.
    pub(crate) fn named_by(&self, index: usize, token: &str, value: &[u8]) -> bool {
        if self.beyond_rfc & (1u64 << index) == 0 {
            return match lines::product(value) {
                Product::Token(named) => named.eq_ignore_ascii_case(token.as_bytes()),
                _ => false,
            };
        }
        useragent::leading_name(value).eq_ignore_ascii_case(token.as_bytes())
    }

    /// The tokens, most preferred first.
    pub fn iter(&self) -> impl ExactSizeIterator<Item = &str> + '_ {
        let (fixed, owned): (&[&str], &[Box<str>]) = match &self.list {
            List::Static(tokens) => (tokens, &[]),
            List::Owned(tokens) => (&[], tokens),
        };
        let owned = owned.iter().map(|token| &**token);
        // Exactly one of the two is non-empty; chaining keeps one concrete iterator type.
        TokenIter(fixed.iter().copied(), owned)
    }

    /// The most preferred token (empty for a list with none, see [`ProductTokens::read`]).
    pub fn first(&self) -> &str {
        match &self.list {
            List::Static(tokens) => tokens.first().copied().unwrap_or_default(),
            List::Owned(tokens) => tokens.first().map(|token| &**token).unwrap_or_default(),
        }
    }

    /// How many tokens the list has (at least one, unless made by [`ProductTokens::read`]).
    pub fn len(&self) -> usize {
        self.iter().len()
    }

    /// Whether the list has no token: only [`ProductTokens::read`] makes such a list, for a
    /// crawler that gave no name (it follows the `*` groups).
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// [`ProductTokens::iter`]: the static tokens, then the owned ones (one of the two is empty).
struct TokenIter<A, B>(A, B);

impl<'a, A, B> Iterator for TokenIter<A, B>
where
    A: Iterator<Item = &'a str>,
    B: Iterator<Item = &'a str>,
{
    type Item = &'a str;

    fn next(&mut self) -> Option<&'a str> {
        self.0.next().or_else(|| self.1.next())
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        let (a, b) = (self.0.size_hint().0, self.1.size_hint().0);
        (a + b, Some(a + b))
    }
}

impl<'a, A, B> ExactSizeIterator for TokenIter<A, B>
where
    A: ExactSizeIterator<Item = &'a str>,
    B: ExactSizeIterator<Item = &'a str>,
{
}

impl PartialEq for ProductTokens {
    /// Same tokens, same order, same spelling.
    fn eq(&self, other: &ProductTokens) -> bool {
        self.iter().eq(other.iter())
    }
}

impl Eq for ProductTokens {}

impl Hash for ProductTokens {
    fn hash<H: Hasher>(&self, state: &mut H) {
        for token in self.iter() {
            token.hash(state);
        }
    }
}

impl fmt::Debug for ProductTokens {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list().entries(self.iter()).finish()
    }
}

impl fmt::Display for ProductTokens {
    /// The tokens joined by `, `, most preferred first.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, token) in self.iter().enumerate() {
            if i > 0 {
                f.write_str(", ")?;
            }
            f.write_str(token)?;
        }
        Ok(())
    }
}

/// How [`ProductTokens::read`] read an agent that was not simply an RFC 9309 product token.
///
/// Each says what the engine does about it; `Display` gives one line for a warning.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum AgentNote {
    /// The agent was a longer string (`JittyBot/1.0`, a whole `User-Agent` header): its
    /// product token was read from it ([`crawler_token`]).
    TokenFromString {
        /// The agent as given.
        agent: String,
        /// The token read from it.
        token: String,
    },
    /// The token has characters RFC 9309 does not allow in a product token (digits, `.`, `!`):
    /// it names the groups whose user-agent value starts with exactly this name.
    BeyondRfc {
        /// The token.
        token: String,
    },
    /// The agent names no crawler (empty, blank, `*`, no name in it): it adds no token.
    NoToken {
        /// The agent as given.
        agent: String,
    },
}

impl fmt::Display for AgentNote {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            AgentNote::TokenFromString { agent, token } => write!(
                f,
                "{agent:?} is not a product token; matching the product token it names, {token:?}"
            ),
            AgentNote::BeyondRfc { token } => write!(
                f,
                "{token:?} is not an RFC 9309 product token (letters, '-' and '_' only); matching \
                 the user-agent lines that name exactly {token:?}"
            ),
            AgentNote::NoToken { agent } => write!(
                f,
                "{agent:?} names no crawler, so no token was read from it (a crawler with no token \
                 follows the * groups)"
            ),
        }
    }
}

/// The product token a `User-agent` value names, read as the engine reads a `User-agent` line
/// (its leading run of `[A-Za-z_-]`): `JittyBot/1.0` names `JittyBot`, `MJ12bot` names `MJ`;
/// `*`, `*libwww*`, an empty value and `1bot` name none.
pub fn product_token(value: &str) -> Option<&str> {
    match lines::product(value.as_bytes()) {
        // The token is a leading ASCII run of the value, so this slice is on a char boundary.
        Product::Token(token) => value.get(..token.len()),
        Product::Global | Product::StarredName(_) | Product::Nothing => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_checked_constructor_refuses_what_is_not_a_list_of_tokens() {
        assert_eq!(
            ProductTokens::new(Vec::<String>::new()),
            Err(ProductTokenError::Empty)
        );
        for bad in [
            "",
            "*",
            "JittyBot/1.0",
            "MJ12bot",
            "Jitty Bot",
            "jittybot\n",
        ] {
            assert_eq!(
                ProductTokens::new(["JittyBot", bad]),
                Err(ProductTokenError::NotAToken {
                    value: bad.to_owned()
                }),
                "{bad:?}"
            );
        }
        let many = vec!["a"; MAX_PREFERRED_TOKENS + 1];
        assert_eq!(
            ProductTokens::new(&many),
            Err(ProductTokenError::TooMany {
                count: MAX_PREFERRED_TOKENS + 1
            })
        );
        let most = ProductTokens::new(&many[1..]).unwrap();
        assert_eq!(most.len(), MAX_PREFERRED_TOKENS);
    }

    #[test]
    fn static_and_checked_lists_compare_by_their_tokens() {
        let media = ProductTokens::new(["JittyBot-Image", "JittyBot"]).unwrap();
        assert_eq!(media, ProductTokens::JITTYBOT_IMAGE);
        assert_ne!(media, ProductTokens::JITTYBOT);
        assert_eq!(media.first(), "JittyBot-Image");
        assert_eq!(
            ProductTokens::JITTYBOT_IMAGE.iter().collect::<Vec<_>>(),
            ["JittyBot-Image", "JittyBot"]
        );
        assert_eq!(media.to_string(), "JittyBot-Image, JittyBot");
        assert_eq!(format!("{media:?}"), r#"["JittyBot-Image", "JittyBot"]"#);
    }

    #[test]
    fn product_token_reads_a_value_like_a_user_agent_line() {
        assert_eq!(product_token("JittyBot/1.0"), Some("JittyBot"));
        assert_eq!(product_token("MJ12bot"), Some("MJ"));
        for none in ["*", "*libwww*", "", "1bot", " JittyBot"] {
            assert_eq!(product_token(none), None, "{none:?}");
        }
    }
}
