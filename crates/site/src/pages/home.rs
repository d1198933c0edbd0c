//! `/`: the analyse form, the paste and upload form, the ranking and the totals.

use maud::{html, Markup};

use service::limits::{MAX_PASTE_BYTES, RANKING_PER_GRADE};
use service::paths;
use service::ranking::Ranking;

use super::Html;
use crate::html::{grade_badge, page as shell, visible, Head};

/// The home page; `error` is why a submission was refused, and the URL as entered.
pub(crate) fn page_markup(ranking: &Ranking, error: Option<(&str, &str)>) -> Markup {
    let entered = error.map_or("", |(_, url)| url);
    shell(
        "Audit and score your robots.txt",
        &Head::default(),
        html! {
            h1 { "Audit and score a robots.txt" }
            p { "RobotsTxtParser reads a site's robots.txt as crawlers do, checks every line \
                 and the sitemaps it declares, and scores it out of 100. "
                a href="/scoring" { "How scoring works" } "." }
            @if let Some((error, _)) = error {
                div.error role="alert" { p { (visible(error)) } }
            }
            form method="post" action="/analyze" {
                label for="url" { "Address of a page to analyse" }
                input #url type="url" name="url" required placeholder="https://example.com/" value=(entered) autocomplete="url";
                p.hint { "The bot fetches the site's robots.txt, that page's headers and head if the rules allow it, and the declared sitemaps." }
                button type="submit" { "Analyse" }
            }
            form method="post" action="/paste" enctype="multipart/form-data" {
                label for="robots" { "Or paste a robots.txt" }
                textarea #robots name="robots" rows="6" spellcheck="false" {}
                label for="file" { "or upload one" }
                input #file type="file" name="file" accept=".txt,text/plain";
                p.hint { "Up to " (MAX_PASTE_BYTES / 1024) " KB. Audited offline and never published: the report is shown only at its own unguessable address." }
                button type="submit" { "Audit this file" }
            }
            (ranking_section(ranking))
        },
    )
}

/// The home page as an answer.
pub(crate) fn page(ranking: &Ranking, error: Option<(&str, &str)>) -> Html {
    Html::ok(page_markup(ranking, error))
}

fn ranking_section(ranking: &Ranking) -> Markup {
    html! {
        h2 #ranking { "Ranking" }
        p { (RANKING_PER_GRADE) " sites of each grade, picked at random every 30 minutes, each by its best current score." }
        div.ranking {
            @for (grade, domains) in &ranking.picks {
                section aria-labelledby=(format!("grade-{grade}")) {
                    h3 #(format!("grade-{grade}")) { "Grade " (grade_badge(*grade)) }
                    @if domains.is_empty() {
                        p.hint { "No site with this grade yet." }
                    } @else {
                        ol {
                            @for domain in domains {
                                li {
                                    @if domain.has_icon {
                                        img.icon src=(paths::icon(&domain.domain)) alt="" width="20" height="20";
                                    }
                                    a href=(paths::domain(&domain.domain)) { (visible(&domain.domain)) }
                                    span.score { (domain.score) }
                                }
                            }
                        }
                    }
                }
            }
        }
        h2 { "Every site analysed" }
        div.table-wrap {
            table {
                caption.hint { "Sites by the grade of their best current score" }
                thead { tr { th scope="col" { "Grade" } th.num scope="col" { "Sites" } } }
                tbody {
                    @for (grade, count) in &ranking.totals {
                        tr { td { (grade_badge(*grade)) } td.num { (count) } }
                    }
                }
            }
        }
    }
}
