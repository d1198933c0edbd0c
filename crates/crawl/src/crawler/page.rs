//! What a fetched response leaves behind: a revisit, a page (links, media, directives), a
//! media file (stored once by content), and the URLs it leads to.

use std::sync::atomic::Ordering;

use fetch::{Fetched, HopRecord};
use jiff::Timestamp;

use super::archive::{payload_digest, Archive, Payload};
use super::config::FollowLinks;
use super::interactive;
use super::outcome::{facts, failure, Flow};
use super::parts::{Crew, Keeper, Progress, Requester, Rules};
use super::CrawlError;
use crate::event::Event;
use crate::html;
use crate::normal::NormalUrl;
use crate::store::{ClaimedUrl, Due, FetchFacts, NewUrl, Outcome, UrlId, UrlKind, UrlState};

/// What a response adds to the crawl.
#[derive(Debug, Default)]
pub(crate) struct Kept {
    pub(crate) links: Vec<NormalUrl>,
    pub(crate) media: Vec<NormalUrl>,
    pub(crate) stored_media: Vec<(String, UrlId, Option<String>, u64)>,
}

pub(crate) type Settled = (Outcome, Kept, Flow, u64);

/// Settle a fetched response of `url` whose final hop is `hop`.
pub(crate) async fn kept(
    crew: &Crew,
    url: &ClaimedUrl,
    fetched: Fetched,
    hop: &HopRecord,
    archive: &mut Archive,
) -> Result<Settled, CrawlError> {
    let Crew {
        progress, rules, ..
    } = crew;
    let head = fetched.head.clone();
    let final_url = fetched.url.clone();
    let read_started = std::time::Instant::now();
    let body = fetched.body.read_to_end(None).await;
    super::StageTimes::add(&progress.counters.time.fetch, read_started);
    let body = match body {
        Ok(b) => b,
        Err(e) => {
            archive.exchange(hop, None, false);
            let flow = if e.is_retryable() {
                Flow::Yield
            } else {
                Flow::Continue
            };
            let o = failure(progress, rules, url, &e.full_message());
            return Ok((o, Kept::default(), flow, 0));
        }
    };
    let bytes = body.decoded_bytes;
    let status = head.status.as_u16();
    if matches!(status, 429 | 500 | 502 | 503 | 504) {
        // The origin asks for less (the pacer backs off): a failed attempt, archived.
        archive.exchange(hop, Some(Payload::of_body(&body)), false);
        let o = failure(progress, rules, url, &format!("HTTP {status}"));
        return Ok((o, Kept::default(), Flow::Yield, bytes));
    }
    progress.counters.fetched.fetch_add(1, Ordering::Relaxed);
    progress.counters.bytes.fetch_add(bytes, Ordering::Relaxed);
    progress.count_page();
    let content_type = head
        .headers
        .get(http::header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .map(str::to_string);
    let got = Got {
        url,
        hop,
        head: &head,
        body: &body,
        content_type: content_type.as_deref(),
        final_url: &final_url,
    };
    let mut kept = Kept::default();
    let outcome = extracted(crew, &got, archive, &mut kept).await?;
    Ok((outcome, kept, Flow::Continue, bytes))
}

/// The extract step of a response kept: what it is (a revisit, a media file, a page), what it
/// adds to `kept`, the outcome to store and the event that says so.
async fn extracted(
    crew: &Crew,
    got: &Got<'_>,
    archive: &mut Archive,
    kept: &mut Kept,
) -> Result<Outcome, CrawlError> {
    let Crew {
        keep,
        progress,
        rules,
        ..
    } = crew;
    let url = got.url;
    let status = got.head.status.as_u16();
    let media = url.kind == UrlKind::Media;
    let mut outcome = Outcome {
        state: Some(UrlState::Fetched),
        attempts: 0,
        next_due: next_due(rules, url, got.hop),
        ..Outcome::of(url.id)
    };
    let label = if status == 304 {
        outcome.fetch = Some(not_modified(got, archive));
        String::new()
    } else if media {
        let (facts, reason) = media_file(keep, rules, got, archive, kept).await?;
        outcome.fetch = Some(facts);
        outcome.reason = reason;
        String::new()
    } else {
        let facts = page(crew, got, archive, kept).await?;
        let label = facts.directives.clone().unwrap_or_default();
        outcome.fetch = Some(facts);
        label
    };
    progress.emit(Event::Fetch {
        url: url.key.clone(),
        final_url: got.final_url.to_string(),
        status,
        bytes: got.body.decoded_bytes,
        directives: label,
        media,
    });
    Ok(outcome)
}

/// When a fetched URL is due again: a media file never (fetched once: "we have not already
/// stored it"), nor a listed URL with a `lastmod` (it waits for a newer one); any other
/// `--revisit-after` after this fetch.
fn next_due(rules: &Rules, url: &ClaimedUrl, hop: &HopRecord) -> Due {
    if url.kind == UrlKind::Media || (url.in_sitemap && url.lastmod.is_some()) {
        Due::Never
    } else {
        // Saturated at the latest time: still revisited by time (a later run's shorter
        // `--revisit-after` decides), unlike `Due::Never`.
        let after = jiff::SignedDuration::try_from(rules.revisit_after)
            .unwrap_or(jiff::SignedDuration::MAX);
        Due::At(hop.sent_at.checked_add(after).unwrap_or(Timestamp::MAX))
    }
}

/// A response read whole, as the extract step sees it.
struct Got<'a> {
    url: &'a ClaimedUrl,
    hop: &'a HopRecord,
    head: &'a fetch::ResponseHead,
    body: &'a fetch::Body,
    content_type: Option<&'a str>,
    final_url: &'a fetch::Url,
}

/// A 304: the stored response still holds (a `revisit` record), with its validators.
fn not_modified(got: &Got<'_>, archive: &mut Archive) -> FetchFacts {
    let url = got.url;
    archive.not_modified(got.hop, url.warc_record_id.as_deref());
    let mut f = facts(
        got.head,
        got.hop.sent_at,
        None,
        0,
        url.warc_record_id.clone(),
        String::new(),
    );
    f.etag = f.etag.or_else(|| url.etag.clone());
    f.last_modified = f.last_modified.or_else(|| url.last_modified.clone());
    f
}

/// A media file: stored once by content when it is an image, else only archived; returns
/// its facts and why it was not stored, if it was not.
async fn media_file(
    keep: &Keeper,
    rules: &Rules,
    got: &Got<'_>,
    archive: &mut Archive,
    kept: &mut Kept,
) -> Result<(FetchFacts, Option<String>), CrawlError> {
    let (body, hop, status) = (got.body, got.hop, got.head.status.as_u16());
    let bytes = body.decoded_bytes;
    let hash = payload_digest(&body.bytes);
    let is_image = got
        .content_type
        .is_some_and(|c| c.trim().to_ascii_lowercase().starts_with("image/"));
    let mut reason = None;
    if !is_image || !(200..300).contains(&status) {
        archive.exchange(hop, Some(Payload::of_body(body)), true);
        reason = Some(format!(
            "not stored: status {status}, type {}",
            got.content_type.unwrap_or("none")
        ));
    } else if keep.store.media(&hash).await?.is_some() || !rules.first_media(&hash) {
        // The same bytes are stored under another URL: a revisit says so.
        archive.duplicate(hop, &body.bytes);
        reason = Some("duplicate of stored media".into());
    } else {
        archive.exchange(hop, Some(Payload::of_body(body)), true);
        kept.stored_media.push((
            hash.clone(),
            got.url.id,
            got.content_type.map(str::to_string),
            bytes,
        ));
    }
    let f = facts(
        got.head,
        hop.sent_at,
        Some(hash),
        bytes,
        archive.main_id.clone(),
        String::new(),
    );
    Ok((f, reason))
}

/// A page: its directives (header and meta tags), its links and media when they may be
/// followed, rendered too on an interactive site; archived whole, or as metadata only when
/// `noindex`. The facts' `directives` are its label.
async fn page(
    crew: &Crew,
    got: &Got<'_>,
    archive: &mut Archive,
    kept: &mut Kept,
) -> Result<FetchFacts, CrawlError> {
    let (head, body, hop, final_url) = (got.head, got.body, got.hop, got.final_url);
    let status = head.status.as_u16();
    let content_type = got.content_type;
    let now = Timestamp::now();
    let x_robots_tag = head.headers.get_all("x-robots-tag");
    let values = x_robots_tag.iter().filter_map(|v| v.to_str().ok());
    let mut d = html::header_directives(values, now);
    let is_html = content_type.is_some_and(|c| {
        let c = c.trim().to_ascii_lowercase();
        c.starts_with("text/html") || c.starts_with("application/xhtml+xml")
    });
    let parse_started = std::time::Instant::now();
    let mut page =
        is_html.then(|| html::read_page(&body.bytes, final_url, charset(content_type), now));
    super::StageTimes::add(&crew.progress.counters.time.parse, parse_started);
    // Interactive mode: the rendered DOM's links and meta tags join the served page's.
    let rendered = match &mut page {
        // Only a page that was served (2xx): an error page is not worth a browser.
        Some(served)
            if (200..300).contains(&status)
                && crew
                    .rules
                    .interactive
                    .covers(final_url.host_str().unwrap_or("")) =>
        {
            let r = crew.req.render(final_url, head, &body.bytes).await;
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
    let label = d.label();
    if d.noindex {
        let fields = format!(
            "status: {status}\r\nrobots: {label}\r\ncontent-type: {}\r\n",
            content_type.unwrap_or("")
        );
        archive.metadata_only(hop, &fields);
    } else {
        archive.exchange(hop, Some(Payload::of_body(body)), true);
    }
    if let Some(r) = &rendered {
        interactive::archive(r, archive, archive.main_id.clone().as_deref(), !d.noindex);
    }
    if let Some(p) = page {
        if !d.nofollow && follows_links(&crew.req, &crew.keep, &crew.rules, final_url).await? {
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
    let hash = (!d.noindex).then(|| content_hash(archive, body));
    Ok(facts(
        head,
        hop.sent_at,
        hash,
        body.decoded_bytes,
        archive.main_id.clone(),
        label,
    ))
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
    req: &Requester,
    progress: &Progress,
    links: Vec<NormalUrl>,
    media: Vec<NormalUrl>,
) -> Result<Vec<NewUrl>, CrawlError> {
    let mut out = Vec::new();
    let candidates = links
        .into_iter()
        .map(|u| (u, UrlKind::Page))
        .chain(media.into_iter().map(|u| (u, UrlKind::Media)));
    for (url, kind) in candidates {
        if kind == UrlKind::Page && !req.places.in_scope(url.host()) {
            continue;
        }
        if !req.places.first_sight(url.key()) {
            continue;
        }
        let (host, events) = req.places.host(&url, req.polite.pacer()).await?;
        progress.emit_all(events);
        if kind == UrlKind::Page {
            // A host first reached by a link has its own robots.txt and sitemaps too.
            out.extend(super::sitemaps::entry_for_host(&req.places, &url, &host));
        }
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

/// Whether links found on `url`'s site are followed: always with `--follow-links always`,
/// else only on a site without a usable sitemap.
async fn follows_links(
    req: &Requester,
    keep: &Keeper,
    rules: &Rules,
    url: &fetch::Url,
) -> Result<bool, CrawlError> {
    if rules.follow_links == FollowLinks::Always {
        return Ok(true);
    }
    let Ok(normal) = NormalUrl::from_url(url.clone()) else {
        return Ok(false);
    };
    let (host, _) = req.places.host(&normal, req.polite.pacer()).await?;
    if let Some(follow) = rules.site_follow(host.site_id) {
        return Ok(follow);
    }
    let (usable, _) = keep.store.site_sitemap_state(host.site_id).await?;
    let follow = usable != Some(true);
    rules.set_site_follow(host.site_id, follow);
    Ok(follow)
}
