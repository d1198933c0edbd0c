//! What is offered to search engines (`/sitemap.xml`): the domain pages and current report
//! pages that may be indexed, each with when it last changed. The site writes the XML.

use std::collections::BTreeMap;

use jiff::Timestamp;

use crate::model::CurrentReport;
use crate::paths;

/// One published page.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Published {
    /// Its path on this site (`/score/example.com`), percent-encoded.
    pub path: String,
    /// When it last changed.
    pub lastmod: Timestamp,
}

/// The published pages, in a stable order: each domain page, then its indexable current
/// reports. A URL that may not be indexed is left out (with its older reports, which are
/// never current); a domain page only when at least one of its URLs may be indexed (the
/// same rule as the domain page's own `noindex`).
pub fn pages(current: &[CurrentReport]) -> Vec<Published> {
    let mut by_domain: BTreeMap<&str, Vec<&CurrentReport>> = BTreeMap::new();
    for report in current.iter().filter(|report| report.indexable) {
        by_domain.entry(&report.domain).or_default().push(report);
    }
    let mut out = Vec::new();
    for (domain, mut reports) in by_domain {
        reports.sort_by(|a, b| a.url.as_str().cmp(b.url.as_str()));
        if let Some(lastmod) = reports.iter().map(|report| report.created_at).max() {
            out.push(Published {
                path: paths::domain(domain),
                lastmod,
            });
        }
        out.extend(reports.iter().map(|report| Published {
            path: paths::report(domain, &report.id),
            lastmod: report.created_at,
        }));
    }
    out
}
