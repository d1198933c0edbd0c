//! The policy towards notable crawlers: who is blocked by name, and incoherent choices.

use robots::GroupSelection;

use crate::catalogue::CheckId;
use crate::collect::Findings;
use crate::crawlers::{CrawlerAccess, Purpose};
use crate::finding::{Evidence, Finding};

use super::MAX_RELATED_LINES;

/// Whether a crawler is shut out of `/` by a group that names it.
fn named_block(row: &CrawlerAccess) -> bool {
    !row.root.allowed && matches!(row.group, GroupSelection::Named(_))
}

/// The deciding lines of some rows, at most [`MAX_RELATED_LINES`].
fn lines(rows: &[&CrawlerAccess]) -> Vec<usize> {
    rows.iter()
        .filter_map(|row| row.root.rule.as_ref().map(|rule| rule.line))
        .take(MAX_RELATED_LINES)
        .collect()
}

/// A finding listing the crawlers of `rows` by token.
fn blocked_list(id: CheckId, rows: &[&CrawlerAccess]) -> Finding {
    let tokens: Vec<&str> = rows.iter().map(|row| row.token.as_str()).collect();
    Finding::new(id, Evidence::default().with_related(lines(rows))).with("crawlers", tokens)
}

pub(super) fn crawler_policy(table: &[CrawlerAccess], findings: &mut Findings) {
    let training: Vec<&CrawlerAccess> = table
        .iter()
        .filter(|row| row.purpose == Purpose::AiTraining && named_block(row))
        .collect();
    if !training.is_empty() {
        findings.push(blocked_list(CheckId::PolicyAiTrainingBlocked, &training));
    }
    let others: Vec<&CrawlerAccess> = table
        .iter()
        .filter(|row| {
            matches!(
                row.purpose,
                Purpose::AiSearch
                    | Purpose::AiUserFetch
                    | Purpose::SeoTool
                    | Purpose::SocialPreview
                    | Purpose::Ads
            ) && named_block(row)
        })
        .collect();
    if !others.is_empty() {
        findings.push(blocked_list(CheckId::PolicyCrawlerBlocked, &others));
    }
    incoherent(table, findings);
}

/// An operator's visible uses (AI search, user fetches) refused while its training crawler
/// may crawl.
fn incoherent(table: &[CrawlerAccess], findings: &mut Findings) {
    let mut operators: Vec<&str> = Vec::new();
    for row in table {
        if !operators.contains(&row.operator.as_str()) {
            operators.push(&row.operator);
        }
    }
    for operator in operators {
        let rows: Vec<&CrawlerAccess> = table
            .iter()
            .filter(|row| row.operator == operator)
            .collect();
        let Some(training) = rows
            .iter()
            .find(|row| row.purpose == Purpose::AiTraining && row.root.allowed)
        else {
            continue;
        };
        let refused = rows.iter().filter(|row| {
            matches!(row.purpose, Purpose::AiSearch | Purpose::AiUserFetch) && named_block(row)
        });
        for row in refused {
            let evidence = Evidence {
                line: row.root.rule.as_ref().map(|rule| rule.line),
                ..Evidence::default()
            };
            findings.push(
                Finding::new(CheckId::CrawlersIncoherent, evidence)
                    .with("operator", operator)
                    .with("crawler", &row.token)
                    .with("training_crawler", &training.token),
            );
        }
    }
}
