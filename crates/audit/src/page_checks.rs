//! The analysed page: its report and what its headers and meta tags tell crawlers.

use fetch::{FetchError, Fetched};
use page::directives::PageDirectives;
use page::head::{HeadReader, HeadState, MetaTag};
use robots::RobotsTxt;
use url::Url;

use crate::catalogue::CheckId;
use crate::collect::Findings;
use crate::crawlers::{self, CRAWLERS};
use crate::error::RequestFailed;
use crate::finding::{Evidence, Finding};
use crate::report::{PageReport, Purpose, RobotsStatus, SkipReason};
use crate::run::{Obtained, Run};

/// Step 2: the page, if the rules allow it. Its body goes to the HTML tokenizer as it
/// arrives, and the download stops where the tokenizer ends the head (or at the cap).
pub(crate) async fn read_page(run: &mut Run<'_>, target: &Url) -> (PageReport, Option<PageHead>) {
    let operation = run.operation.clone();
    let cap = run.limits.page_max_bytes;
    let mut obtained = run.request(target, Purpose::Page, cap, &operation).await;
    let mut head = match obtained.response.take() {
        Some(fetched) => read_head(fetched, run, &operation).await,
        None => HeadRead::default(),
    };
    if let Some(reason) = head.cut.clone() {
        obtained.skipped = Some(reason);
    }
    let page_head = match (head.html.take(), &obtained.final_url) {
        (Some(html), Some(url)) => Some(PageHead {
            url: url.clone(),
            html,
        }),
        _ => None,
    };
    (page_report(target, obtained, head), page_head)
}

/// The analysed page as read, up to the end of its head (a 2xx HTML answer only): never part
/// of the report, which keeps no page content, but handed to the caller of
/// [`crate::analyze_keeping_head`] (the service reads the home page's icon links from it
/// rather than fetching the page again).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PageHead {
    /// Its final URL (after redirects): relative links resolve against it.
    pub url: Url,
    /// The bytes read, decoded: the head and what came with it in the same chunks, at most
    /// [`crate::limits::PAGE_MAX_BYTES`].
    pub html: Vec<u8>,
}

/// What the page's response said: status, headers, the meta tags of its head.
#[derive(Default)]
struct HeadRead {
    status: Option<http::StatusCode>,
    content_type: Option<String>,
    x_robots_tag: Vec<String>,
    meta: Vec<MetaTag>,
    bytes_read: Option<u64>,
    failure: Option<RequestFailed>,
    /// The analysis's budget ran out while the body was read.
    cut: Option<SkipReason>,
    /// `Retry-After` of a 429 or 5xx answer, in seconds, as sent.
    retry_after_sent_s: Option<u64>,
    /// A bot challenge instead of the page.
    challenge: bool,
    /// The bytes read of a 2xx HTML answer.
    html: Option<Vec<u8>>,
}

/// Whether an answer with `status` may be a challenge page: challenges are served as 401,
/// 403, 429 or 5xx (a 2xx is a challenge only by its `cf-mitigated` header).
fn may_be_challenge(status: http::StatusCode) -> bool {
    matches!(status.as_u16(), 401 | 403 | 429) || status.is_server_error()
}

/// Whether the start of the body is a challenge page.
async fn challenge_body(fetched: &mut Fetched) -> bool {
    let mut body = Vec::new();
    while body.len() < crate::limits::CHALLENGE_READ_BYTES {
        match fetched.body.chunk().await {
            Ok(Some(chunk)) => body.extend_from_slice(&chunk),
            Ok(None) | Err(_) => break,
        }
    }
    crate::file::looks_like_html(&body) == Some(crate::file::HtmlKind::Challenge)
}

/// Every value of header `name`, lossily decoded.
fn header_values(fetched: &Fetched, name: &str) -> Vec<String> {
    fetched
        .head
        .headers
        .get_all(name)
        .iter()
        .map(|value| String::from_utf8_lossy(value.as_bytes()).into_owned())
        .collect()
}

/// Reads the head of an HTML answer chunk by chunk; nothing of any other answer.
async fn read_head(
    mut fetched: Box<Fetched>,
    run: &Run<'_>,
    operation: &fetch::Operation,
) -> HeadRead {
    let status = fetched.head.status;
    let content_type = header_values(&fetched, "content-type").into_iter().next();
    let is_html = status.is_success()
        && content_type.as_deref().is_none_or(|ct| {
            let ct = ct.to_ascii_lowercase();
            ct.contains("html") || ct.contains("xml")
        });
    let overloaded = status.as_u16() == 429 || status.is_server_error();
    let mut read = HeadRead {
        status: Some(status),
        x_robots_tag: header_values(&fetched, "x-robots-tag"),
        content_type,
        retry_after_sent_s: overloaded
            .then(|| fetch::retry_after_sent(&fetched.head.headers, jiff::Timestamp::now()))
            .flatten()
            .map(|wait| wait.as_secs()),
        challenge: header_values(&fetched, "cf-mitigated")
            .iter()
            .any(|value| value.trim().eq_ignore_ascii_case("challenge")),
        ..HeadRead::default()
    };
    if !is_html {
        if !read.challenge && may_be_challenge(status) {
            read.challenge = challenge_body(&mut fetched).await;
        }
        return read;
    }
    if let Some(failure) = crate::run::unreadable(&fetched) {
        read.failure = Some(failure);
        return read;
    }
    let mut reader = HeadReader::new();
    let mut html = Vec::new();
    let ended = loop {
        match fetched.body.chunk().await {
            Ok(Some(chunk)) => {
                html.extend_from_slice(&chunk);
                if reader.feed(&chunk) == HeadState::Ended {
                    break Ok(());
                }
            }
            Ok(None) => break Ok(()),
            Err(error) => break Err(error),
        }
    };
    read.bytes_read = Some(fetched.body.decoded_bytes());
    read.html = Some(html);
    // Dropping the body here stops the download: the rest holds no head metadata.
    if let Err(error) = ended {
        body_failure(&mut read, error, &fetched.url, run, operation);
    }
    read.meta = reader
        .finish()
        .into_iter()
        .filter(|meta| PageDirectives::is_robots_meta(&meta.name, is_crawler))
        .collect();
    tracing::debug!(bytes_read = ?read.bytes_read, robots_meta = read.meta.len(), "page head");
    read
}

/// A body that failed mid-way: the analysis's deadline, or the site.
fn body_failure(
    read: &mut HeadRead,
    error: FetchError,
    url: &Url,
    run: &Run<'_>,
    operation: &fetch::Operation,
) {
    match run.budget_cut(&error, operation) {
        Some(reason) => read.cut = Some(reason),
        None => {
            read.failure = Some(RequestFailed {
                url: url.clone(),
                source: error,
            })
        }
    }
}

fn page_report(target: &Url, obtained: Obtained, head: HeadRead) -> PageReport {
    let directives = PageDirectives::read(
        head.x_robots_tag.iter().map(String::as_str),
        head.meta
            .iter()
            .map(|meta| (meta.name.as_str(), meta.content.as_str())),
        is_crawler,
    );
    let failure = obtained.failure.or(head.failure);
    PageReport {
        url: Some(target.clone()),
        path: Some(target[url::Position::BeforePath..].to_owned()),
        requested: obtained.requested,
        skipped: obtained.skipped,
        status: head.status,
        final_url: obtained.final_url,
        redirects: obtained.redirects,
        content_type: head.content_type,
        // Read whole above; kept cut, as a hostile page can make them as long as its head.
        x_robots_tag: head.x_robots_tag.iter().map(|v| page::excerpt(v)).collect(),
        meta: head
            .meta
            .into_iter()
            .map(|meta| MetaTag {
                content: page::excerpt(&meta.content),
                ..meta
            })
            .collect(),
        directives,
        bytes_read: head.bytes_read,
        error: failure.as_ref().map(RequestFailed::message),
        error_kind: failure.as_ref().map(RequestFailed::kind),
        retry_after_sent_s: head.retry_after_sent_s,
        challenge: head.challenge,
    }
}

/// Whether a meta name addresses a crawler of the directory.
fn is_crawler(name: &str) -> bool {
    crawlers::find(name).is_some()
}

pub(crate) fn page_findings(
    page: &PageReport,
    robots: &RobotsTxt,
    status: RobotsStatus,
    findings: &mut Findings,
) {
    let Some(url) = page.url.as_ref() else {
        return;
    };
    let url = url.as_str();
    if let Some(error) = &page.error {
        let finding = Finding::new(CheckId::PageUnreachable, Evidence::text(error).at_url(url));
        findings.push(match page.error_kind {
            Some(kind) => finding.with("failure", kind),
            None => finding,
        });
    } else if let Some(code) = page.status.filter(|code| code.as_u16() >= 400) {
        findings.push(
            Finding::new(CheckId::PageUnreachable, Evidence::url(url))
                .with("status", code.as_u16()),
        );
    }
    if let Some(finding) = not_checked(page, url) {
        findings.push(finding);
    }
    directive_findings(&page.directives, url, findings);
    if status == RobotsStatus::Rules {
        noindex_unseen(page, robots, url, findings);
    }
}

/// Why the page, or a redirect of it, was not requested, when that is worth a finding.
fn not_checked(page: &PageReport, url: &str) -> Option<Finding> {
    let reason = page.skipped.as_ref()?;
    let redirected = page.requested;
    let worth_it = match reason {
        SkipReason::CrawlDelayBudget { .. }
        | SkipReason::AnalysisBudget { .. }
        | SkipReason::TimeBudget { .. } => true,
        SkipReason::RobotsUnreachable { .. } | SkipReason::Disallowed { .. } => redirected,
        _ => false,
    };
    if !worth_it {
        return None;
    }
    let at = match (&page.final_url, redirected) {
        (Some(final_url), true) => final_url.as_str(),
        _ => url,
    };
    Some(
        Finding::new(CheckId::PageNotChecked, Evidence::url(at))
            .with("skipped", reason)
            .with("redirected", redirected),
    )
}

/// Noindex for all or for some, conflicts and invalid directives.
fn directive_findings(directives: &PageDirectives, url: &str, findings: &mut Findings) {
    let evidence_for = |name: &str| {
        directives
            .directives
            .iter()
            .find(|d| d.name == name || (d.name == "none" && name == "noindex"))
            .map_or_else(
                || Evidence::url(url),
                |d| Evidence::text(d.source.to_string()).at_url(url),
            )
    };
    if directives.noindex_for_all() {
        findings.push(Finding::new(CheckId::PageNoindex, evidence_for("noindex")));
    }
    let scoped = directives.scoped("noindex");
    if !scoped.is_empty() {
        findings.push(
            Finding::new(CheckId::PageNoindexForBot, evidence_for("noindex"))
                .with("crawlers", scoped),
        );
    }
    for conflict in directives.conflicts() {
        findings.push(
            Finding::new(CheckId::PageConflict, evidence_for(&conflict.restrictive))
                .with("permissive", &conflict.permissive)
                .with("restrictive", &conflict.restrictive)
                .with("scope", &conflict.scope),
        );
    }
    for invalid in &directives.invalid {
        findings.push(
            Finding::new(
                CheckId::PageInvalidDirective,
                Evidence::text(invalid.source.to_string()).at_url(url),
            )
            .with("directive", &invalid.text)
            .with("reason", &invalid.reason),
        );
    }
}

/// Disallowed and noindex: the search engines that may not fetch the page never see its
/// noindex.
fn noindex_unseen(page: &PageReport, robots: &RobotsTxt, url: &str, findings: &mut Findings) {
    let path = page.path.as_deref().unwrap_or("/");
    for crawler in CRAWLERS.iter().filter(|crawler| crawler.major) {
        if !page.directives.noindex_for(crawler.token) {
            continue;
        }
        let rules = crawlers::rules_for(robots, crawler);
        let decision = rules.check(path);
        if let (false, Some(rule)) = (decision.allowed, decision.rule) {
            findings.push(
                Finding::new(
                    CheckId::LogicNoindexUnseen,
                    Evidence::line(rule.line, format!("{}: {}", rule.kind, rule.pattern))
                        .at_url(url),
                )
                .with("crawler", crawler.token)
                .with("kind", rule.kind.to_string())
                .with("pattern", rule.pattern),
            );
        }
    }
}
