//! The product tokens a crawler answers to, in order of preference.

use std::fmt;
use std::hash::{Hash, Hasher};

use crate::lines::{self, Product};

/// At most this many product tokens make one [`ProductTokens`] list.
///
/// The one-crawler parse tracks which tokens the current group names in one 64-bit mask (one
/// bit per token, one for `*`); real crawlers need two or three.
pub const MAX_PREFERRED_TOKENS: usize = 63;

/// A crawler's product tokens in order of preference (`["JittyBot-Image", "JittyBot"]`): never
/// empty, at most [`MAX_PREFERRED_TOKENS`], each a valid product token (`[A-Za-z_-]+`, RFC 9309
/// §2.2.1).
///
/// The first token some group of a file names wins; otherwise the `*` groups apply.
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
pub struct ProductTokens(List);

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
        ProductTokens(List::Static(tokens))
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
            _ => Ok(ProductTokens(List::Owned(list.into_boxed_slice()))),
        }
    }

    /// The tokens, most preferred first.
    pub fn iter(&self) -> impl ExactSizeIterator<Item = &str> + '_ {
        let (fixed, owned): (&[&str], &[Box<str>]) = match &self.0 {
            List::Static(tokens) => (tokens, &[]),
            List::Owned(tokens) => (&[], tokens),
        };
        let owned = owned.iter().map(|token| &**token);
        // Exactly one of the two is non-empty; chaining keeps one concrete iterator type.
        TokenIter(fixed.iter().copied(), owned)
    }

    /// The most preferred token.
    pub fn first(&self) -> &str {
        match &self.0 {
            List::Static(tokens) => tokens.first().copied().unwrap_or_default(),
            List::Owned(tokens) => tokens.first().map(|token| &**token).unwrap_or_default(),
        }
    }

    /// How many tokens the list has (at least one).
    pub fn len(&self) -> usize {
        self.iter().len()
    }

    /// Always false: a list has at least one token.
    pub fn is_empty(&self) -> bool {
        false
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
