//! The workspace's HTML reading against html5ever's tokenizer (the reference of the
//! differential test), on pages shaped as the crawler benchmark's (`testweb::linked_pages`:
//! 20–60 KB, 30 links) and on the same pages with their filler as tag soup (a tag every ~20
//! bytes, a script and a comment every ~150).
//!
//! `cargo run -p page --release --example html_bench [rounds]`: interleaved rounds
//! (reference, page, reference, page, ...), each reading every page once, for two readings:
//! - `links`: every tag of the page (the crawler's `read_links` against html5ever's
//!   tokenizer given the same raw-text switches, collecting the same links);
//! - `head`: the head's meta tags, the body fed in 16 KB chunks (`HeadReader` against the
//!   html5ever head scanner it replaced, which decoded each chunk and stopped at the head's
//!   end).
//!
//! Prints the median round as MB/s and µs per page.

use std::cell::{Cell, RefCell};
use std::hint::black_box;
use std::time::{Duration, Instant};

use html5ever::tendril::StrTendril;
use html5ever::tokenizer::states::RawKind;
use html5ever::tokenizer::{
    BufferQueue, TagKind, Token, TokenSink, TokenSinkResult, Tokenizer, TokenizerOpts,
};
use page::head::HeadReader;
use page::links::read_links;

/// Bytes per chunk of a body read as it downloads.
const CHUNK: usize = 16 * 1024;

/// A page of `testweb::linked_pages` (the same shape; that generator is not public).
fn linked_page(n: u32, soup: bool) -> Vec<u8> {
    const PAGES: u32 = 1_000;
    let mut html = format!("<!doctype html><html><head><title>page {n}</title></head><body>");
    for i in 0..30u32 {
        let target = if i == 0 {
            (n + 1) % PAGES
        } else {
            (n.wrapping_mul(2_654_435_761)
                .wrapping_add(i.wrapping_mul(40_503)))
                % PAGES
        };
        html.push_str(&format!(
            "<p><a href=\"/p{target}.html\">page {target}</a></p>"
        ));
    }
    let size = 20_000 + (n as usize).wrapping_mul(7_919) % 40_001;
    let filler = if soup {
        "<div class=\"c\"><span id=s1>lorem</span> <em>ipsum</em></div><!-- c -->\n\
         <script>if (a < b) { x = '<p>'; }</script><img alt=\"\" width=1>"
    } else {
        "lorem ipsum dolor sit amet consectetur adipiscing elit "
    };
    html.push_str("<p>");
    while html.len() < size {
        html.push_str(filler);
    }
    html.push_str("</p></body></html>");
    html.into_bytes()
}

/// html5ever's tokenizer with a sink that does what `page`'s readers do: the tree builder's
/// raw-text switches, the links of `<a href>`, and (for a head) a stop at its end.
struct Sink {
    links: RefCell<Vec<String>>,
    metas: RefCell<Vec<(String, String)>>,
    head_only: bool,
    ended: Cell<bool>,
}

impl TokenSink for Sink {
    type Handle = ();

    fn process_token(&self, token: Token, _line: u64) -> TokenSinkResult<()> {
        let Token::TagToken(tag) = token else {
            return TokenSinkResult::Continue;
        };
        if self.ended.get() {
            return TokenSinkResult::Continue;
        }
        let name: &str = &tag.name;
        let attr = |wanted: &str| {
            tag.attrs
                .iter()
                .find(|a| &*a.name.local == wanted)
                .map(|a| a.value.to_string())
        };
        if self.head_only
            && matches!(
                (tag.kind, name),
                (TagKind::EndTag, "head") | (TagKind::StartTag, "body")
            )
        {
            self.ended.set(true);
            return TokenSinkResult::Continue;
        }
        if tag.kind == TagKind::EndTag {
            return TokenSinkResult::Continue;
        }
        match name {
            "a" if !self.head_only => {
                if let Some(href) = attr("href") {
                    self.links.borrow_mut().push(href);
                }
            }
            "meta" => {
                if let Some(name) = attr("name") {
                    let content = attr("content").unwrap_or_default();
                    self.metas.borrow_mut().push((name, content));
                }
            }
            _ => {}
        }
        match name {
            "script" => TokenSinkResult::RawData(RawKind::ScriptData),
            "style" | "xmp" | "iframe" | "noembed" | "noframes" | "noscript" => {
                TokenSinkResult::RawData(RawKind::Rawtext)
            }
            "title" | "textarea" => TokenSinkResult::RawData(RawKind::Rcdata),
            _ => TokenSinkResult::Continue,
        }
    }
}

/// Reads `page` with html5ever, in chunks, as the head scanner did (or whole, for links).
fn reference(page: &[u8], head_only: bool) -> usize {
    let sink = Sink {
        links: RefCell::new(Vec::new()),
        metas: RefCell::new(Vec::new()),
        head_only,
        ended: Cell::new(false),
    };
    let tokenizer = Tokenizer::new(sink, TokenizerOpts::default());
    let chunk = if head_only { CHUNK } else { page.len().max(1) };
    for piece in page.chunks(chunk) {
        let input = BufferQueue::default();
        input.push_back(StrTendril::from(
            String::from_utf8_lossy(piece).into_owned(),
        ));
        let _ = tokenizer.feed(&input);
        if tokenizer.sink.ended.get() {
            break;
        }
    }
    tokenizer.end();
    let found = tokenizer.sink.links.borrow().len() + tokenizer.sink.metas.borrow().len();
    found
}

/// Reads `page` with `page`'s readers.
fn ours(page: &[u8], head_only: bool) -> usize {
    if head_only {
        let mut reader = HeadReader::new();
        for piece in page.chunks(CHUNK) {
            if reader.feed(piece) == page::head::HeadState::Ended {
                break;
            }
        }
        reader.finish().len()
    } else {
        let mut metas = 0;
        let found = read_links(page, None, |_, _| metas += 1);
        found.links.len() + metas
    }
}

type Reader = fn(&[u8], bool) -> usize;

/// One round: every page read once; returns its time.
fn round(read: Reader, pages: &[Vec<u8>], head_only: bool) -> Duration {
    let start = Instant::now();
    for page in pages {
        black_box(read(black_box(page), head_only));
    }
    start.elapsed()
}

fn report(name: &str, mut times: Vec<Duration>, pages: &[Vec<u8>]) {
    times.sort();
    let median = times[times.len() / 2].as_secs_f64();
    let bytes: usize = pages.iter().map(Vec::len).sum();
    println!(
        "{name}: {:.0} MB/s, {:.1} µs per page (median of {} rounds)",
        bytes as f64 / median / 1e6,
        median * 1e6 / pages.len() as f64,
        times.len()
    );
}

fn main() {
    let rounds: usize = std::env::args()
        .nth(1)
        .and_then(|a| a.parse().ok())
        .unwrap_or(31);
    for soup in [false, true] {
        let pages: Vec<Vec<u8>> = (0..200).map(|n| linked_page(n, soup)).collect();
        assert_eq!(ours(&pages[7], false), reference(&pages[7], false));
        let kind = if soup { "tag soup" } else { "bench pages" };
        for head_only in [false, true] {
            let reading = if head_only { "head" } else { "links" };
            let (mut theirs, mut mine) = (Vec::new(), Vec::new());
            for _ in 0..rounds {
                theirs.push(round(reference, &pages, head_only));
                mine.push(round(ours, &pages, head_only));
            }
            report(&format!("{kind}, {reading}, html5ever"), theirs, &pages);
            report(&format!("{kind}, {reading}, page     "), mine, &pages);
        }
    }
}
