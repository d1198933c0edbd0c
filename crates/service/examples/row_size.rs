//! What one stored report of a robots.txt occupies, column by column, as
//! `Store::finish_report` stores it: the document (the analysis without robots.txt's text,
//! deflated with its dictionary) and robots.txt's bytes, as received (before migration 5) and
//! as stored now (`codec::encode_body`). The README's store-growth figure comes from it.
//!
//! ```sh
//! cargo run -p service --example row_size -- testdata/corpus/robots/egonkm__Robots.txt__robots_nl.wikipedia.org
//! ```

use audit::report::RobotsStatus;
use audit::ProvidedFile;
use service::codec;

fn main() -> Result<(), String> {
    let paths: Vec<String> = std::env::args().skip(1).collect();
    if paths.is_empty() {
        return Err("usage: row_size ROBOTS.TXT...".into());
    }
    println!("file\trobots.txt\tdocument JSON\tdocument stored\tbody stored\tbefore\tafter");
    for path in paths {
        let received = std::fs::read(&path).map_err(|e| format!("{path}: {e}"))?;
        let body = &received[..received.len().min(codec::BODY_MAX_BYTES)];
        let mut analysis =
            audit::analyze_file(ProvidedFile::whole(body), Some("https://www.example.com/"));
        analysis.robots.outcome = RobotsStatus::Rules;
        analysis.robots.requested = true;
        analysis.robots.body = String::new();
        analysis.robots.raw_body = None;
        let json = serde_json::to_string(&analysis).map_err(|e| e.to_string())?;
        let (_, document) = codec::encode(&json).map_err(|e| e.to_string())?;
        let (_, stored_body) = codec::encode_body(body).map_err(|e| e.to_string())?;
        println!(
            "{path}\t{}\t{}\t{}\t{}\t{}\t{}",
            body.len(),
            json.len(),
            document.len(),
            stored_body.len(),
            document.len() + body.len(),
            document.len() + stored_body.len(),
        );
    }
    Ok(())
}
