//! Interactive mode: an HTML page of an interactive site is rendered in headless
//! Chromium (`crates/render`) after its fetch. Every request the page makes goes through the
//! crawler's own pipeline (robots.txt of its host, the origin's pacer, JittyBot's User-Agent)
//! and is archived as a request/response pair; media the page asks for go to the crawler's
//! media pipeline (JittyBot-Image rules, fetched once, stored by content) instead of being
//! fetched for the browser. The rendered DOM is archived as a `conversion` record referring
//! to the page's response, and its links and robots meta tags join the served page's.
//!
//! Pages are rendered by a small pool of long-lived browsers ([`render::BrowserPool`]), each
//! page in a fresh incognito context; the pool starts with the crawl's first rendered page
//! and is closed at its end. A render waits only for a browser with room: the page's own
//! fetch is done (its origin's turn is over), and its sub-requests take the origin's turns
//! like any other request, so other origins are not held up.

use std::sync::{Arc, Mutex, OnceLock, PoisonError};

use fetch::ResponseHead;
use jiff::Timestamp;
use render::{
    BrowserPool, DenyReason, GateRecord, GateResponse, PageToRender, PoliteGate, PoliteSource,
    PoolConfig, RenderLimits,
};

use super::archive::{Archive, Payload};
use super::config::{MEDIA_AGENT, MEDIA_TOKENS, PAGE_TOKENS};
use crate::html::{self, Page};
use crate::normal::NormalUrl;
use crate::site::Site;
use warc::{encode_member, RecordKind, WarcRecord};

/// The crawl's browsers: a pool started with the first page rendered (`None` inside: no
/// Chromium found), closed at the crawl's end.
#[derive(Debug, Default)]
pub(crate) struct Browsers {
    pool: OnceLock<Option<BrowserPool>>,
}

impl Browsers {
    fn pool(&self) -> Option<&BrowserPool> {
        self.pool
            .get_or_init(|| render::find_chromium().map(|c| BrowserPool::new(PoolConfig::new(c))))
            .as_ref()
    }

    /// Close the browsers (at the crawl's end).
    pub(crate) async fn close(&self) {
        if let Some(Some(pool)) = self.pool.get() {
            pool.close().await;
        }
    }
}

/// Which sites are rendered in a browser.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub enum Interactive {
    /// None (the default).
    #[default]
    Off,
    /// Every site (`--interactive`).
    All,
    /// These sites (`--interactive-sites FILE`).
    Sites(Vec<Site>),
}

impl Interactive {
    /// True when pages of `host` are rendered.
    pub fn covers(&self, host: &str) -> bool {
        match self {
            Interactive::Off => false,
            Interactive::All => true,
            Interactive::Sites(sites) => sites.contains(&Site::of_host(host)),
        }
    }
}

/// True when a Chromium for interactive mode is installed (see `render::find_chromium`).
pub fn chromium_available() -> bool {
    render::find_chromium().is_some()
}

/// A rendered page, for the page's settlement.
pub(crate) struct RenderedPage {
    /// Links, media and meta directives of the rendered DOM (`None`: rendering failed).
    pub(crate) page: Option<Page>,
    /// Media the page asked for, handed to the media pipeline.
    pub(crate) media: Vec<NormalUrl>,
    dom: String,
    url: fetch::Url,
    records: Vec<GateRecord>,
}

/// Render the page `url` whose response was `head` with decoded `body`; `None` when no
/// browser can be used (logged).
pub(crate) async fn render_page(
    browsers: &Browsers,
    source: Arc<dyn PoliteSource>,
    url: &fetch::Url,
    head: &ResponseHead,
    body: &[u8],
) -> Option<RenderedPage> {
    let Some(pool) = browsers.pool() else {
        tracing::warn!(%url, "interactive mode: no Chromium found; the served HTML is used");
        return None;
    };
    let asked_media = Arc::new(Mutex::new(Vec::new()));
    let seen = Arc::clone(&asked_media);
    let gate = PoliteGate::new(
        source,
        PAGE_TOKENS,
        MEDIA_TOKENS,
        Some(MEDIA_AGENT.to_string()),
    )
    .with_pre_check(Box::new(move |request| {
        if !request.kind.is_media() {
            return None;
        }
        seen.lock()
            .unwrap_or_else(PoisonError::into_inner)
            .push(request.url.clone());
        Some(DenyReason::MediaElsewhere)
    }));
    let gate = Arc::new(gate);
    let document = GateResponse {
        status: head.status,
        headers: head.headers.clone(),
        body: body.to_vec(),
    };
    let page = PageToRender {
        url: url.clone(),
        document,
    };
    // A page whose render fails (its browser crashed or hung included) is not rendered
    // again: the served HTML stands.
    let result = pool
        .render(page, Arc::clone(&gate), &RenderLimits::default())
        .await;
    let records = gate.take_records();
    let media = std::mem::take(&mut *asked_media.lock().unwrap_or_else(PoisonError::into_inner));
    let media = media
        .into_iter()
        .filter_map(|u| NormalUrl::from_url(u).ok())
        .collect();
    let (page, dom) = match result {
        Ok(rendered) => {
            let page = html::read_page(rendered.dom.as_bytes(), url, None, Timestamp::now());
            (Some(page), rendered.dom)
        }
        Err(e) => {
            tracing::warn!(%url, error = %e, "interactive mode: rendering failed");
            (None, String::new())
        }
    };
    Some(RenderedPage {
        page,
        media,
        dom,
        url: url.clone(),
        records,
    })
}

/// Add what the rendered DOM shows to the served page: links, media, robots meta tags (one
/// added by script counts).
pub(crate) fn merge(served: &mut Page, rendered: &RenderedPage) {
    if let Some(r) = &rendered.page {
        served.links.extend(r.links.iter().cloned());
        served.media.extend(r.media.iter().cloned());
        served.meta.add(r.meta);
    }
    served.media.extend(rendered.media.iter().cloned());
}

/// Archive the page's sub-requests (request/response pairs, robots.txt fetches and redirect
/// hops on the way) and, when the page is kept, the rendered DOM as a `conversion` record
/// referring to the page's response record `refers_to`.
pub(crate) fn archive(
    rendered: &RenderedPage,
    archive: &mut Archive,
    refers_to: Option<&str>,
    keep_dom: bool,
) {
    for record in &rendered.records {
        archive.trail(&record.trail, record.body.is_some());
        if let (Some(body), Some(last)) = (&record.body, record.trail.exchanges.last()) {
            archive.exchange(last, Some(Payload::of_body(body)), false);
        }
    }
    if !keep_dom || rendered.page.is_none() {
        return;
    }
    let mut conversion = WarcRecord::new(RecordKind::Conversion, Timestamp::now());
    conversion.target_uri = Some(rendered.url.as_str());
    conversion.content_type = Some("text/html; charset=utf-8");
    conversion.block = vec![rendered.dom.as_bytes()];
    conversion.payload_parts = Some(0..1);
    if let Some(id) = refers_to {
        conversion.fields.push(("WARC-Refers-To", id.to_string()));
    }
    archive.members.push(encode_member(&conversion));
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sites_are_matched_by_registrable_domain() {
        let listed = Interactive::Sites(vec![Site::of_host("shop.example.com")]);
        assert!(listed.covers("www.example.com"));
        assert!(!listed.covers("example.org"));
        assert!(Interactive::All.covers("anything.test"));
        assert!(!Interactive::Off.covers("anything.test"));
    }
}
