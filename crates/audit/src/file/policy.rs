//! The policy towards notable crawlers: who is blocked by name, and incoherent choices.

use robots::GroupSelection;

use crate::collect::Findings;
use crate::crawlers::{CrawlerAccess, Purpose};
use crate::finding::{CheckId, Evidence, Finding};

use super::MAX_RELATED_LINES;

pub(super) fn crawler_policy(table: &[CrawlerAccess], findings: &mut Findings) {
    let blocked = |row: &CrawlerAccess| !row.root.allowed;
    let named_block =
        |row: &CrawlerAccess| blocked(row) && matches!(row.group, GroupSelection::Named(_));
    let training: Vec<&CrawlerAccess> = table
        .iter()
        .filter(|row| row.purpose == Purpose::AiTraining && named_block(row))
        .collect();
    if !training.is_empty() {
        let names: Vec<&str> = training.iter().map(|row| row.token.as_str()).collect();
        let lines = training
            .iter()
            .filter_map(|row| row.root.rule.as_ref().map(|rule| rule.line));
        findings.push(Finding::new(
            CheckId::PolicyAiTrainingBlocked,
            format!("AI training crawlers blocked: {}", names.join(", ")),
            Evidence::default().with_related(lines.take(MAX_RELATED_LINES)),
        ));
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
        let names: Vec<String> = others
            .iter()
            .map(|row| format!("{} ({})", row.token, row.purpose.label()))
            .collect();
        findings.push(Finding::new(
            CheckId::PolicyCrawlerBlocked,
            format!("notable crawlers blocked by name: {}", names.join(", ")),
            Evidence::default().with_related(
                others
                    .iter()
                    .filter_map(|row| row.root.rule.as_ref().map(|rule| rule.line))
                    .take(MAX_RELATED_LINES),
            ),
        ));
    }
    // Incoherence: a visible use refused while training is allowed.
    let mut operators: Vec<&str> = table.iter().map(|row| row.operator.as_str()).collect();
    operators.dedup();
    for operator in operators {
        let rows: Vec<&CrawlerAccess> = table
            .iter()
            .filter(|row| row.operator == operator)
            .collect();
        let training_allowed = rows
            .iter()
            .find(|row| row.purpose == Purpose::AiTraining && !blocked(row));
        let Some(training) = training_allowed else {
            continue;
        };
        for row in rows.iter().filter(|row| {
            matches!(row.purpose, Purpose::AiSearch | Purpose::AiUserFetch) && named_block(row)
        }) {
            let line = row.root.rule.as_ref().map_or(0, |rule| rule.line);
            findings.push(Finding::new(
                CheckId::CrawlersIncoherent,
                format!(
                    "{operator}: {} ({}) is blocked but {} (AI training) may crawl",
                    row.token,
                    row.purpose.label(),
                    training.token
                ),
                Evidence {
                    line: (line > 0).then_some(line),
                    ..Evidence::default()
                },
            ));
        }
    }
}
