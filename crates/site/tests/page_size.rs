//! Every file of the corpus sample renders as a report page without a panic, with its lines
//! and findings, and under the size budget: 50 KB of HTML apart from the robots.txt
//! it shows.

mod common;

use common::{analysis, app, get, store};

#[path = "../../../testdata/corpus/reader.rs"]
mod corpus;

/// The most HTML a report page may send besides the robots.txt listing.
const PAGE_BUDGET: usize = 50 * 1024;

/// The listing of robots.txt in a report page: from its wrapper to the end of its table.
fn listing_len(body: &str) -> usize {
    let Some(start) = body.find("<div class=\"robots\">") else {
        return 0;
    };
    let end = body[start..]
        .find("</table></div>")
        .map_or(body.len(), |end| start + end);
    end - start
}

#[tokio::test]
async fn every_sample_file_renders_within_the_budget() {
    let data = store().await;
    let files = corpus::sample_files();
    let mut ids = Vec::new();
    for (n, path) in files.iter().enumerate() {
        let body = corpus::read(path);
        let page = format!("https://site{n}.test/");
        let text = String::from_utf8_lossy(&body).into_owned();
        let report = analysis(&page, &text, &[], &[], "2026-11-01T10:00:00Z");
        ids.push((n, data.insert(&report).await, path));
    }
    let app = app(&data);
    let mut largest = (0, String::new());
    for (n, id, path) in ids {
        let answer = get(&app, &format!("/score/site{n}.test/{id}")).await;
        assert_eq!(answer.status(), 200, "{}", path.display());
        let rest = answer.body.len() - listing_len(&answer.body);
        assert!(
            rest < PAGE_BUDGET,
            "{}: {rest} bytes besides the file",
            path.display()
        );
        if rest > largest.0 {
            largest = (rest, path.display().to_string());
        }
    }
    eprintln!(
        "largest report page besides its file: {} bytes ({})",
        largest.0, largest.1
    );
}
