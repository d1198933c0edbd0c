//! The tokenizer fed in chunks: what it keeps between them, and its cap on a tag.

use std::ops::ControlFlow;

use super::{scan, Fed, Stop, Tokenizer};

/// Feeds `chunks` one by one, keeping what each call says; returns the tag names seen and
/// the most bytes kept between two calls.
fn feed_all(chunks: &[&[u8]], max_tag: usize) -> (Vec<String>, usize, Result<(), Stop>) {
    let mut tokenizer = Tokenizer::new(max_tag);
    let mut kept = Vec::new();
    let mut names = Vec::new();
    let mut most = 0;
    for (i, chunk) in chunks.iter().enumerate() {
        kept.extend_from_slice(chunk);
        let end = i + 1 == chunks.len();
        let fed = tokenizer.feed(&kept, end, |tag| {
            names.push(String::from_utf8_lossy(tag.name).into_owned());
            ControlFlow::Continue(())
        });
        match fed {
            Ok(Fed::Keep(keep)) => {
                kept.drain(..keep);
                most = most.max(kept.len());
            }
            Ok(Fed::Stopped) => return (names, most, Ok(())),
            Err(stop) => return (names, most, Err(stop)),
        }
    }
    (names, most, Ok(()))
}

#[test]
fn long_text_is_not_kept_between_chunks() {
    let script = "x = '<!-- <script> -->'; ".repeat(400);
    let comment = "a comment - with -- dashes ".repeat(400);
    let style = "p { color: red } ".repeat(400);
    let mut chunks: Vec<Vec<u8>> = vec![b"<script>".to_vec()];
    chunks.extend(script.as_bytes().chunks(100).map(<[u8]>::to_vec));
    chunks.push(b"</script><!--".to_vec());
    chunks.extend(comment.as_bytes().chunks(100).map(<[u8]>::to_vec));
    chunks.push(b"--><style>".to_vec());
    chunks.extend(style.as_bytes().chunks(100).map(<[u8]>::to_vec));
    chunks.push(b"</style><a href=/end>".to_vec());
    let chunks: Vec<&[u8]> = chunks.iter().map(Vec::as_slice).collect();
    let (names, most, read) = feed_all(&chunks, 1024);
    assert_eq!(read, Ok(()));
    assert_eq!(names, ["script", "script", "style", "style", "a"]);
    // A chunk's worth at most (the last bytes of one, when a marker may start there).
    assert!(most <= 100, "kept {most} bytes");
}

#[test]
fn a_tag_is_kept_until_it_ends_and_capped() {
    let (names, most, read) = feed_all(&[b"<a href=\"/", b"long", b"er\">", b"<b>"], 1024);
    assert_eq!(
        (names, read),
        (vec!["a".to_owned(), "b".to_owned()], Ok(()))
    );
    assert_eq!(most, b"<a href=\"/long".len());
    // Over the cap, whole or in chunks, cut or not: the reading ends there.
    let long = format!("<a href=\"/{}\">", "x".repeat(100));
    assert_eq!(scan(long.as_bytes(), 50, |_| {}), Err(Stop::TooLong));
    assert_eq!(scan(&long.as_bytes()[..80], 50, |_| {}), Err(Stop::TooLong));
    let (names, _, read) = feed_all(
        &[b"<p>", &long.as_bytes()[..40], &long.as_bytes()[40..]],
        50,
    );
    assert_eq!((names, read), (vec!["p".to_owned()], Err(Stop::TooLong)));
}

#[test]
fn the_caller_may_stop_at_any_tag() {
    let mut tokenizer = Tokenizer::new(1024);
    let mut seen = 0;
    let fed = tokenizer.feed(b"<head><meta></head><a href=/x>", false, |tag| {
        seen += 1;
        if tag.end && tag.is(b"head") {
            ControlFlow::Break(())
        } else {
            ControlFlow::Continue(())
        }
    });
    assert_eq!((fed, seen), (Ok(Fed::Stopped), 3));
}
