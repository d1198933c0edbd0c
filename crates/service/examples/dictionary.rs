//! Prints the stored document that `document-dictionary-v1.json` was made from: the
//! analysis of a small corpus robots.txt (not one of the `load` benchmark's templates, so the
//! benchmark does not compress its own copies), as `Store::finish_report` stores it, without
//! robots.txt's text. Kept to show where the dictionary came from; the file itself must never
//! change (documents stored with encoding 1 need exactly its bytes).
//!
//! ```sh
//! cargo run -p service --example dictionary > crates/service/src/document-dictionary-v1.json
//! ```

use audit::report::RobotsStatus;
use audit::{Analysis, ProvidedFile};

#[path = "../../../testdata/corpus/reader.rs"]
mod corpus;

/// The `load` example takes the first 8 small files; the dictionary is made from a later one.
const SKIP_SMALL_FILES: usize = 12;
/// The largest file considered small (the `load` example's bound).
const SMALL_MAX_BYTES: usize = 4 * 1024;

fn main() -> Result<(), String> {
    let path = corpus::sample_files()
        .into_iter()
        .filter(|p| {
            let body = corpus::read(p);
            body.len() <= SMALL_MAX_BYTES && std::str::from_utf8(&body).is_ok()
        })
        .nth(SKIP_SMALL_FILES)
        .ok_or("too few small corpus files")?;
    let body = corpus::read(&path);
    let mut analysis: Analysis =
        audit::analyze_file(ProvidedFile::whole(&body), Some("https://www.example.com/"));
    analysis.robots.outcome = RobotsStatus::Rules;
    analysis.robots.requested = true;
    analysis.analysed_at = "2026-01-01T00:00:00Z".parse().map_err(|e| format!("{e}"))?;
    analysis.robots.body = String::new();
    let json = serde_json::to_string(&analysis).map_err(|e| e.to_string())?;
    eprintln!("{}: {} bytes of JSON", path.display(), json.len());
    print!("{json}");
    Ok(())
}
