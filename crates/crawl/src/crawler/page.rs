//! What a fetched response leaves behind: a revisit, a page (links, media, directives), a
//! media file (stored once by content), and the URLs it leads to.

use std::sync::atomic::Ordering;
use std::sync::Arc;

use fetch::{Fetched, HopRecord};
use jiff::Timestamp;

use super::archive::{payload_digest, Archive, Payload};
use super::config::FollowLinks;
use super::interactive;
use super::worker::{facts, failure, Flow};
use super::{CrawlError, Ctx};
use crate::event::Event;
use crate::html;
use crate::normal::NormalUrl;
use crate::store::{ClaimedUrl, NewUrl, Outcome, UrlKind, UrlState, NEVER};

/// What a response adds to the crawl.
#[derive(Debug, Default)]
pub(crate) struct Kept {
    pub(crate) links: Vec<NormalUrl>,
    pub(crate) media: Vec<NormalUrl>,
    pub(crate) stored_media: Vec<(String, i64, Option<String>, u64)>,
}

type Settled = (Outcome, Kept, Flow, u64);

/// Settle a fetched response of `url` whose final hop is `hop`.
pub(crate) async fn kept(
    ctx: &Arc<Ctx>,
    url: &ClaimedUrl,
    fetched: Fetched,
    hop: &HopRecord,
    archive: &mut Archive,
) -> Result<Settled, CrawlError> {
    let head = fetched.head.clone();
    let final_url = fetched.url.clone();
    let read_started = std::time::Instant::now();
    let body = fetched.body.read_to_end(None).await;
    super::StageTimes::add(&ctx.counters.time.fetch, read_started);
    let body = match body {
        Ok(b) => b,
        Err(e) => {
            archive.exchange(hop, None, false);
            let flow = if e.is_retryable() {
                Flow::Yield
            } else {
                Flow::Continue
            };
            return Ok((
                failure(ctx, url, &e.full_message()),
                Kept::default(),
                flow,
                0,
            ));
        }
    };
    let bytes = body.decoded_bytes;
    let status = head.status.as_u16();
    if matches!(status, 429 | 500 | 502 | 503 | 504) {
        // The origin asks for less (the pacer backs off): a failed attempt, archived.
        archive.exchange(hop, Some(Payload::of_body(&body)), false);
        let o = failure(ctx, url, &format!("HTTP {status}"));
        return Ok((o, Kept::default(), Flow::Yield, bytes));
    }
    ctx.counters.fetched.fetch_add(1, Ordering::Relaxed);
    ctx.counters.bytes.fetch_add(bytes, Ordering::Relaxed);
    ctx.count_page();
    // A media file is fetched once (JittyBot's documentation: "we have not already stored it"); a listed
    // URL with a lastmod waits for a newer one.
    let next_due = if url.kind == UrlKind::Media || (url.in_sitemap && url.lastmod.is_some()) {
        NEVER
    } else {
        db::millis(hop.sent_at)
            .saturating_add(i64::try_from(ctx.config.revisit_after.as_millis()).unwrap_or(i64::MAX))
    };
    let mut outcome = Outcome {
        id: url.id,
        state: Some(UrlState::Fetched),
        attempts: 0,
        next_due,
        ..Outcome::default()
    };
    let media = url.kind == UrlKind::Media;
    let content_type = head
        .headers
        .get(http::header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .map(str::to_string);
    let mut kept = Kept::default();
    let mut label = String::new();
    if status == 304 {
        archive.not_modified(hop, url.warc_record_id.as_deref());
        let mut f = facts(
            &head,
            hop.sent_at,
            None,
            0,
            url.warc_record_id.clone(),
            String::new(),
        );
        f.etag = f.etag.or_else(|| url.etag.clone());
        f.last_modified = f.last_modified.or_else(|| url.last_modified.clone());
        outcome.fetch = Some(f);
    } else if media {
        let hash = payload_digest(&body.bytes);
        let is_image = content_type
            .as_deref()
            .is_some_and(|c| c.trim().to_ascii_lowercase().starts_with("image/"));
        if !is_image || !(200..300).contains(&status) {
            archive.exchange(hop, Some(Payload::of_body(&body)), true);
            outcome.reason = Some(format!(
                "not stored: status {status}, type {}",
                content_type.as_deref().unwrap_or("none")
            ));
        } else if ctx.store.media(&hash).await?.is_some() || !ctx.first_media(&hash) {
            // The same bytes are stored under another URL: a revisit says so.
            archive.duplicate(hop, &body.bytes);
            outcome.reason = Some("duplicate of stored media".into());
        } else {
            archive.exchange(hop, Some(Payload::of_body(&body)), true);
            kept.stored_media
                .push((hash.clone(), url.id, content_type.clone(), bytes));
        }
        outcome.fetch = Some(facts(
            &head,
            hop.sent_at,
            Some(hash),
            bytes,
            archive.main_id.clone(),
            String::new(),
        ));
    } else {
        let now = Timestamp::now();
        let x_robots_tag = head.headers.get_all("x-robots-tag");
        let values = x_robots_tag.iter().filter_map(|v| v.to_str().ok());
        let mut d = html::header_directives(values, now);
        let is_html = content_type.as_deref().is_some_and(|c| {
            let c = c.trim().to_ascii_lowercase();
            c.starts_with("text/html") || c.starts_with("application/xhtml+xml")
        });
        let parse_started = std::time::Instant::now();
        let mut page = is_html.then(|| {
            html::read_page(
                &body.bytes,
                &final_url,
                charset(content_type.as_deref()),
                now,
            )
        });
        super::StageTimes::add(&ctx.counters.time.parse, parse_started);
        // Interactive mode: the rendered DOM's links and meta tags join the served page's.
        let rendered = match &mut page {
            // Only a page that was served (2xx): an error page is not worth a browser.
            Some(served)
                if (200..300).contains(&status)
                    && ctx
                        .config
                        .interactive
                        .covers(final_url.host_str().unwrap_or("")) =>
            {
                let r = interactive::render_page(ctx, &final_url, &head, &body.bytes).await;
                if let Some(r) = &r {
                    interactive::merge(served, r);
                }
                r
            }
            _ => None,
        };
        if let Some(p) = &page {
            d.add(p.meta);
        }
        label = d.label();
        if d.noindex {
            let fields = format!(
                "status: {status}\r\nrobots: {label}\r\ncontent-type: {}\r\n",
                content_type.as_deref().unwrap_or("")
            );
            archive.metadata_only(hop, &fields);
        } else {
            archive.exchange(hop, Some(Payload::of_body(&body)), true);
        }
        if let Some(r) = &rendered {
            interactive::archive(r, archive, archive.main_id.clone().as_deref(), !d.noindex);
        }
        if let Some(p) = page {
            if !d.nofollow && ctx.follows_links(&final_url).await? {
                kept.links = p
                    .links
                    .into_iter()
                    .filter(|l| !l.nofollow)
                    .map(|l| l.url)
                    .collect();
            }
            if !d.noindex {
                kept.media = p.media;
            }
        }
        let hash = (!d.noindex).then(|| content_hash(archive, &body));
        outcome.fetch = Some(facts(
            &head,
            hop.sent_at,
            hash,
            bytes,
            archive.main_id.clone(),
            label.clone(),
        ));
    }
    ctx.emit(Event::Fetch {
        url: url.key.clone(),
        final_url: final_url.to_string(),
        status,
        bytes,
        directives: label,
        media,
    });
    Ok((outcome, kept, Flow::Continue, bytes))
}

/// The SHA-1 of a page's decoded body: the archived payload's digest when the payload is
/// those very bytes (an uncompressed page kept whole), else hashed here.
fn content_hash(archive: &Archive, body: &fetch::Body) -> String {
    match &archive.main_payload_digest {
        Some(digest) if Payload::of_body(body).bytes == body.bytes.as_slice() => digest.clone(),
        _ => payload_digest(&body.bytes),
    }
}

fn charset(content_type: Option<&str>) -> Option<&str> {
    content_type?
        .split(';')
        .skip(1)
        .find_map(|p| p.trim().strip_prefix("charset="))
        .map(|c| c.trim_matches('"'))
}

/// The frontier entries for links (pages, within the crawl's sites) and media references
/// (any site) found on a page; URLs this process already queued are left out.
pub(crate) async fn queue_found(
    ctx: &Arc<Ctx>,
    links: Vec<NormalUrl>,
    media: Vec<NormalUrl>,
) -> Result<Vec<NewUrl>, CrawlError> {
    let mut out = Vec::new();
    let candidates = links
        .into_iter()
        .map(|u| (u, UrlKind::Page))
        .chain(media.into_iter().map(|u| (u, UrlKind::Media)));
    for (url, kind) in candidates {
        if kind == UrlKind::Page && !ctx.places.in_scope(url.host()) {
            continue;
        }
        if !ctx.places.first_sight(url.key()) {
            continue;
        }
        let (host, events) = ctx.places.host(&url, ctx.polite.pacer()).await?;
        ctx.emit_all(events);
        out.push(NewUrl {
            key: url.key().to_string(),
            host,
            kind,
            priority: crate::store::PRIORITY_LINKED,
            in_sitemap: false,
            lastmod: None,
        });
    }
    Ok(out)
}

impl Ctx {
    /// Whether links found on `url`'s site are followed: always with `--follow-links
    /// always`, else only on a site without a usable sitemap.
    pub(crate) async fn follows_links(&self, url: &fetch::Url) -> Result<bool, CrawlError> {
        if self.config.follow_links == FollowLinks::Always {
            return Ok(true);
        }
        let Ok(normal) = NormalUrl::from_url(url.clone()) else {
            return Ok(false);
        };
        let (host, _) = self.places.host(&normal, self.polite.pacer()).await?;
        if let Some(follow) = self.site_follow(host.site_id) {
            return Ok(follow);
        }
        let (usable, _) = self.store.site_sitemap_state(host.site_id).await?;
        let follow = usable != Some(true);
        self.set_site_follow(host.site_id, follow);
        Ok(follow)
    }
}
