//! Sitemaps: `urlset`, `sitemapindex` and plain-text sitemaps, gzip or not, parsed as a
//! stream with quick-xml from any `AsyncRead` (a file, or an HTTP client's streamed body).
//! It knows nothing of crawling: the caller says what a `loc` is worth ([`Location`]): its own
//! URL type, outside the sitemap's scope, or unusable. [`Location::url`] is the plain reading
//! (an absolute `http`/`https` URL, in a scope the caller checks).
//!
//! Limits, per file, enforced on the decompressed stream (a gzip bomb stops at the cap):
//! [`MAX_SITEMAP_URLS`] entries and [`MAX_SITEMAP_BYTES`] bytes, as sitemaps.org sets them.
//! What was read before a limit is kept, and the result says which limit cut it. Per site, a
//! reader of many files should follow indexes at most [`MAX_SITEMAP_DEPTH`] levels deep and
//! read at most [`MAX_SITEMAP_FILES_PER_SITE`] files and [`MAX_SITEMAP_URLS_PER_SITE`] URLs
//! (this crate reads one file; the constants are the bounds its users share).
//!
//! Entries outside the sitemap's own site are to be ignored, as the protocol says
//! ([`Location::Outside`]); so are `loc`s that are not usable URLs ([`Location::Invalid`]).
//! `lastmod` is a W3C datetime ([`lastmod`]); an unreadable one is ignored (the entry is kept
//! without it).
//!
//! Format detection: the gzip magic bytes (`1f 8b`) mean gzip (several members allowed); after
//! decompression, a body whose first non-blank byte is `<` is XML, anything else plain text
//! (one URL per line, UTF-8; a line longer than [`MAX_LOC_BYTES`] is skipped).
//!
//! ```
//! # tokio_test_block_on(async {
//! use sitemap::{parse_sitemap, Location, SitemapKind};
//!
//! let xml = br#"<urlset><url><loc>https://example.com/a</loc></url>
//!     <url><loc>https://elsewhere.example/b</loc></url></urlset>"#;
//! let map = parse_sitemap(&xml[..], |loc| {
//!     Location::url(loc, |url| url.host_str() == Some("example.com"))
//! })
//! .await?;
//! assert_eq!(map.kind, SitemapKind::UrlSet);
//! assert_eq!(map.entries[0].loc.as_str(), "https://example.com/a");
//! assert_eq!(map.outside_site, 1);
//! # Ok::<(), sitemap::SitemapError>(())
//! # }).unwrap();
//! # fn tokio_test_block_on<F: std::future::Future>(f: F) -> F::Output {
//! #     tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(f)
//! # }
//! ```

use std::pin::Pin;

use jiff::Timestamp;
use quick_xml::events::Event;
use tokio::io::{AsyncBufRead, AsyncBufReadExt, AsyncRead, AsyncReadExt, BufReader};

use url::Url;

/// Entries read from one sitemap file at most (sitemaps.org: 50,000).
pub const MAX_SITEMAP_URLS: usize = 50_000;
/// Decompressed bytes read from one sitemap file at most (sitemaps.org: 50 MB).
pub const MAX_SITEMAP_BYTES: u64 = 50 * 1024 * 1024;
/// Levels of sitemap index followed below the first file: robots.txt → index → index →
/// urlset is depth 2. sitemaps.org forbids nested indexes; real sites nest anyway, so a little
/// is allowed.
pub const MAX_SITEMAP_DEPTH: u32 = 2;
/// Sitemap files read per site at most, over all indexes.
pub const MAX_SITEMAP_FILES_PER_SITE: usize = 1_000;
/// URLs taken from sitemaps per site at most.
pub const MAX_SITEMAP_URLS_PER_SITE: usize = 1_000_000;
/// The longest `loc` read (bytes): a longer text line is skipped, a longer XML `loc` is not
/// collected past it. Browsers and sitemaps.org stop near 2,048 characters.
pub const MAX_LOC_BYTES: usize = 2_048;

/// What a `loc` is worth to the caller of [`parse_sitemap`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Location<L> {
    /// An entry to keep, as the caller's own type (a normalised URL, say).
    Take(L),
    /// A usable URL outside the sitemap's scope (counted in [`Sitemap::outside_site`]).
    Outside,
    /// Not a usable URL (counted in [`Sitemap::invalid`]).
    Invalid,
}

impl Location<Url> {
    /// The plain reading of a `loc`: an absolute `http` or `https` URL with a host, at most
    /// [`MAX_LOC_BYTES`] long, kept when `in_scope` accepts it.
    pub fn url(text: &str, in_scope: impl FnOnce(&Url) -> bool) -> Location<Url> {
        if text.len() > MAX_LOC_BYTES {
            return Location::Invalid;
        }
        match Url::parse(text) {
            Ok(url) if matches!(url.scheme(), "http" | "https") && url.host_str().is_some() => {
                if in_scope(&url) {
                    Location::Take(url)
                } else {
                    Location::Outside
                }
            }
            _ => Location::Invalid,
        }
    }
}

/// What kind of file it was.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum SitemapKind {
    /// `<urlset>`: page URLs.
    UrlSet,
    /// `<sitemapindex>`: more sitemaps.
    Index,
    /// One URL per line.
    Text,
    /// XML whose root is neither (nothing taken from it).
    UnknownXml,
}

/// One `<url>` or `<sitemap>` (or text line).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SitemapEntry<L = Url> {
    /// The location, as the caller's [`Location::Take`] gave it.
    pub loc: L,
    /// Its `lastmod`, when given and readable.
    pub lastmod: Option<Timestamp>,
}

/// Which limit stopped the reading of a file.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Cut {
    /// [`MAX_SITEMAP_URLS`] entries were taken.
    Urls,
    /// [`MAX_SITEMAP_BYTES`] decompressed bytes were read.
    Bytes,
}

/// A parsed sitemap file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Sitemap<L = Url> {
    /// What it was.
    pub kind: SitemapKind,
    /// Its entries, in order, at most [`MAX_SITEMAP_URLS`].
    pub entries: Vec<SitemapEntry<L>>,
    /// Entries ignored because they are outside the sitemap's site.
    pub outside_site: usize,
    /// Entries ignored because their `loc` is missing or not a crawlable URL.
    pub invalid: usize,
    /// Set when a limit stopped the reading.
    pub cut: Option<Cut>,
}

/// Why a sitemap could not be read at all.
#[derive(Debug, thiserror::Error)]
pub enum SitemapError {
    /// Reading the stream failed (network, or a corrupt gzip stream).
    #[error("reading the sitemap failed")]
    Io(#[from] std::io::Error),
    /// The XML is malformed before any entry could be taken.
    #[error("malformed sitemap XML")]
    Xml(#[source] quick_xml::Error),
}

/// Parse one sitemap file from `body`, each `loc` read by `locate` (keep it as an `L`, or
/// count it as outside the scope or unusable).
pub async fn parse_sitemap<R, L, F>(body: R, locate: F) -> Result<Sitemap<L>, SitemapError>
where
    R: AsyncRead + Unpin + Send,
    F: Fn(&str) -> Location<L>,
{
    let mut raw = BufReader::new(body);
    let gzip = raw.fill_buf().await?.starts_with(&[0x1f, 0x8b]);
    let decoded: Pin<Box<dyn AsyncRead + Unpin + Send>> = if gzip {
        let mut d = async_compression::tokio::bufread::GzipDecoder::new(raw);
        d.multiple_members(true);
        Box::pin(d)
    } else {
        Box::pin(raw)
    };
    // One byte past the cap tells "exactly at the cap" from "over it".
    let mut capped = BufReader::new(decoded.take(MAX_SITEMAP_BYTES + 1));
    let first = loop {
        let buf = capped.fill_buf().await?;
        if buf.is_empty() {
            break None;
        }
        match buf.iter().position(|b| !b.is_ascii_whitespace()) {
            Some(i) => break Some(buf[i]),
            None => {
                let n = buf.len();
                capped.consume(n);
            }
        }
    };
    let mut out = Sitemap {
        kind: SitemapKind::Text,
        entries: Vec::new(),
        outside_site: 0,
        invalid: 0,
        cut: None,
    };
    match first {
        None => {}
        Some(b'<') => parse_xml(&mut capped, &locate, &mut out).await?,
        Some(_) => parse_text(&mut capped, &locate, &mut out).await?,
    }
    if out.cut.is_none() && capped.get_ref().limit() == 0 {
        out.cut = Some(Cut::Bytes);
    }
    Ok(out)
}

impl<L> Sitemap<L> {
    /// Take one `loc` (and `lastmod` text) as `locate` reads it, and count it. False once
    /// [`MAX_SITEMAP_URLS`] entries were taken (nothing more is read).
    fn take(
        &mut self,
        loc: &str,
        lastmod_text: Option<&str>,
        locate: &impl Fn(&str) -> Location<L>,
    ) -> bool {
        if self.entries.len() >= MAX_SITEMAP_URLS {
            self.cut = Some(Cut::Urls);
            return false;
        }
        match locate(loc) {
            Location::Take(loc) => self.entries.push(SitemapEntry {
                loc,
                lastmod: lastmod_text.and_then(lastmod),
            }),
            Location::Outside => self.outside_site += 1,
            Location::Invalid => self.invalid += 1,
        }
        true
    }
}

async fn parse_text<R: AsyncBufRead + Unpin, L>(
    body: &mut R,
    locate: &impl Fn(&str) -> Location<L>,
    out: &mut Sitemap<L>,
) -> Result<(), SitemapError> {
    let mut line = Vec::new();
    loop {
        line.clear();
        let limit = (MAX_LOC_BYTES + 2) as u64;
        let n = (&mut *body)
            .take(limit)
            .read_until(b'\n', &mut line)
            .await?;
        if n == 0 {
            return Ok(());
        }
        if line.last() != Some(&b'\n') && n as u64 == limit {
            // An over-long line: skip the rest of it.
            out.invalid += 1;
            let mut sink = Vec::new();
            loop {
                sink.clear();
                let m = (&mut *body)
                    .take(64 * 1024)
                    .read_until(b'\n', &mut sink)
                    .await?;
                if m == 0 || sink.last() == Some(&b'\n') {
                    break;
                }
            }
            continue;
        }
        let Ok(text) = std::str::from_utf8(&line) else {
            out.invalid += 1;
            continue;
        };
        let text = text.trim();
        if !text.is_empty() && !out.take(text, None, locate) {
            return Ok(());
        }
    }
}

/// Which element's text is being collected.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Field {
    None,
    Loc,
    Lastmod,
}

async fn parse_xml<R: AsyncBufRead + Unpin, L>(
    body: &mut R,
    locate: &impl Fn(&str) -> Location<L>,
    out: &mut Sitemap<L>,
) -> Result<(), SitemapError> {
    let mut reader = quick_xml::Reader::from_reader(body);
    reader.config_mut().trim_text(false);
    let mut buf = Vec::new();
    let mut root_seen = false;
    let mut in_entry = false;
    let mut field = Field::None;
    let (mut loc, mut lastmod) = (String::new(), String::new());
    loop {
        buf.clear();
        let event = match reader.read_event_into_async(&mut buf).await {
            Ok(e) => e,
            // Malformed after entries were taken (often a truncated file): keep them.
            Err(_) if !out.entries.is_empty() => return Ok(()),
            Err(quick_xml::Error::Io(e)) => {
                return Err(SitemapError::Io(std::io::Error::new(
                    e.kind(),
                    e.to_string(),
                )))
            }
            Err(e) => return Err(SitemapError::Xml(e)),
        };
        match event {
            Event::Start(e) => {
                let name = e.local_name();
                let name = name.as_ref();
                if !root_seen {
                    root_seen = true;
                    out.kind = match name {
                        b"urlset" => SitemapKind::UrlSet,
                        b"sitemapindex" => SitemapKind::Index,
                        _ => {
                            out.kind = SitemapKind::UnknownXml;
                            return Ok(());
                        }
                    };
                    continue;
                }
                match name {
                    b"url" | b"sitemap" => {
                        in_entry = true;
                        loc.clear();
                        lastmod.clear();
                    }
                    b"loc" if in_entry => field = Field::Loc,
                    b"lastmod" if in_entry => field = Field::Lastmod,
                    _ => field = Field::None,
                }
            }
            Event::End(e) => {
                let name = e.local_name();
                match name.as_ref() {
                    b"url" | b"sitemap" if in_entry => {
                        in_entry = false;
                        let lm = (!lastmod.trim().is_empty()).then(|| lastmod.trim());
                        if loc.trim().is_empty() {
                            out.invalid += 1;
                        } else if !out.take(loc.trim(), lm, locate) {
                            return Ok(());
                        }
                    }
                    _ => field = Field::None,
                }
            }
            Event::Text(t) => append(
                field,
                &mut loc,
                &mut lastmod,
                t.xml10_content().ok().as_deref(),
            ),
            Event::CData(t) => append(field, &mut loc, &mut lastmod, t.decode().ok().as_deref()),
            Event::GeneralRef(r) => {
                let ch = match r.resolve_char_ref() {
                    Ok(Some(c)) => Some(c.to_string()),
                    _ => r
                        .decode()
                        .ok()
                        .and_then(|n| quick_xml::escape::resolve_predefined_entity(&n))
                        .map(str::to_string),
                };
                append(field, &mut loc, &mut lastmod, ch.as_deref());
            }
            Event::Eof => return Ok(()),
            _ => {}
        }
    }
}

fn append(field: Field, loc: &mut String, lastmod: &mut String, text: Option<&str>) {
    let Some(text) = text else { return };
    // Bounded: a loc longer than a URL can be is refused anyway.
    let target = match field {
        Field::Loc => loc,
        Field::Lastmod => lastmod,
        Field::None => return,
    };
    if target.len() + text.len() <= MAX_LOC_BYTES + 64 {
        target.push_str(text);
    }
}

/// Parse a W3C datetime (the forms sitemaps.org allows): `YYYY`, `YYYY-MM`, `YYYY-MM-DD`
/// (midnight UTC), `YYYY-MM-DDThh:mmTZD`, `YYYY-MM-DDThh:mm:ss[.s]TZD` with `TZD` = `Z` or
/// `±hh:mm`. Anything else is `None`.
pub fn lastmod(text: &str) -> Option<Timestamp> {
    let text = text.trim();
    let digits = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
    let date = match text.len() {
        4 if digits(text) => format!("{text}-01-01"),
        7 if digits(&text[..4]) && &text[4..5] == "-" && digits(&text[5..]) => format!("{text}-01"),
        10 => text.to_string(),
        _ => {
            let (date, time) = text.split_once('T')?;
            // hh:mm without seconds: add them, so jiff's RFC 3339 parser takes it.
            let time = if time.len() > 5
                && time
                    .as_bytes()
                    .get(5)
                    .is_some_and(|b| !b.is_ascii_digit() && *b != b':')
            {
                format!("{}:00{}", &time[..5], &time[5..])
            } else {
                time.to_string()
            };
            return format!("{date}T{time}").parse().ok();
        }
    };
    format!("{date}T00:00:00Z").parse().ok()
}

#[cfg(test)]
mod tests;
