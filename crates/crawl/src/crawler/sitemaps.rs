//! Sitemaps first: for each host, a seed's or one first reached by a link, its robots.txt's
//! `Sitemap:` lines (or `/sitemap.xml` when it declares none), indexes followed, entries
//! queued before any link. Every host has its own robots.txt and so its own sitemaps: hosts
//! of one site are read each on its own. An unchanged index (a 304) lists again the
//! sitemaps its last full read recorded under it.
//!
//! Every run reads them again, conditionally (`If-None-Match` / `If-Modified-Since` from the
//! last read), so a changed `lastmod` queues its URL again and an unchanged sitemap costs a
//! 304. One process at a time reads a host's sitemaps (a named lease in the store, per
//! robots.txt).
//! Entries must belong to the site whose robots.txt declared the sitemap.
//!
//! A sitemap that fails for a reason that may pass (429, 5xx, a reset or timeout) is read
//! again after the origin's back-off (or its `Retry-After`), up to [`MAX_SITEMAP_TRIES`]
//! times in all, before the site falls back to links: the pacer holds the next try until the
//! origin's turn, within [`SITEMAP_TURN_WAIT`].

use std::collections::{HashMap, VecDeque};
use std::time::Duration;

use fetch::{
    Operation, OriginKey, Outcome as Polite, PoliteRequest, Request, Scope, StoredState, Validators,
};
use jiff::Timestamp;

use super::archive::{Archive, Payload};
use super::committer::Work;
use super::config::{PAGE_TOKENS, URL_DEADLINE};
use super::outcome::{origin_update, requests_of};
use super::parts::Crew;
use super::places::Places;
use super::turns::wait_for_turn;
use super::CrawlError;
use crate::normal::NormalUrl;
use crate::site::Site;
use crate::store::{HostInfo, NewUrl, OriginId, SiteId, UrlKind, PRIORITY_SITEMAPS};
use sitemap::{
    parse_sitemap, Location, SitemapKind, MAX_SITEMAP_BYTES, MAX_SITEMAP_DEPTH,
    MAX_SITEMAP_FILES_PER_SITE, MAX_SITEMAP_URLS_PER_SITE,
};

/// How long one process may hold a host's sitemap reading.
const SITEMAP_LEASE: Duration = Duration::from_secs(10 * 60);
/// Waiting for a turn while reading sitemaps (they come before everything else of a site):
/// 60 s. A back-off or `Retry-After` longer than this gives the failed sitemap up for the run.
pub const SITEMAP_TURN_WAIT: Duration = Duration::from_secs(60);
/// The most times one sitemap is requested in a run when it keeps failing for a reason that
/// may pass: 3.
pub const MAX_SITEMAP_TRIES: u32 = 3;

/// Read the sitemaps `seed` (a host's robots.txt) declares and queue their URLs, under the lease of origin `key`
/// (row `origin_id`, whose request count includes theirs). Returns false when the crawl
/// stopped before they were all read (they are read again).
pub(crate) async fn read_site(
    crew: &Crew,
    seed: NormalUrl,
    (key, origin_id): (&OriginKey, OriginId),
) -> Result<bool, CrawlError> {
    let Crew {
        req,
        keep,
        progress,
        ..
    } = crew;
    let site = Site::of(&seed);
    let (host, events) = req.places.host(&seed, req.polite.pacer()).await?;
    progress.emit_all(events);
    // Per robots.txt (scheme aside: both forms are one entry), not per site: each host of a
    // site declares its own sitemaps.
    let lease_name = format!("sitemaps:{}", seed.key());
    let lease = db::Lease {
        holder: &keep.holder,
        now: Timestamp::now(),
        ttl: SITEMAP_LEASE,
    };
    if !keep.store.db().try_lease(&lease_name, &lease).await? {
        return Ok(true);
    }
    let read = read_leased(crew, seed, (key, origin_id), &host, &site).await;
    let total = match read {
        Ok(Some(total)) => total,
        stopped_or_failed => {
            // Nothing to record: the lease is given back alone.
            keep.store
                .db()
                .release_lease(&lease_name, &keep.holder)
                .await?;
            return stopped_or_failed.map(|_| false);
        }
    };
    // The read recorded and the lease given back in one transaction.
    let usable = keep
        .store
        .set_host_sitemaps_releasing(
            (host.host_id, host.site_id),
            Timestamp::now(),
            total as u64,
            (&lease_name, &keep.holder),
        )
        .await?;
    crew.rules.set_site_follow(host.site_id, !usable);
    Ok(true)
}

/// The frontier entry that has a host's sitemaps read (its robots.txt URL, of kind
/// [`UrlKind::Sitemaps`]), for a host (`url` is any URL of it) this process has not queued
/// one for yet: seed hosts and hosts first reached by a link alike, since each host's
/// robots.txt declares its own sitemaps.
pub(crate) fn entry_for_host(places: &Places, url: &NormalUrl, host: &HostInfo) -> Option<NewUrl> {
    let key = robots_key(url.key())?;
    if !places.first_sight(&key) {
        return None;
    }
    Some(NewUrl {
        key,
        host: host.clone(),
        kind: UrlKind::Sitemaps,
        priority: PRIORITY_SITEMAPS,
        in_sitemap: false,
        lastmod: None,
    })
}

/// The frontier key of the robots.txt of a URL's host, from the URL's key (`//host:port/...`,
/// already normalised): cut from the text, since it is asked for every link found.
fn robots_key(key: &str) -> Option<String> {
    let authority = key.strip_prefix("//")?.split(['/', '?', '#']).next()?;
    (!authority.is_empty()).then(|| format!("//{authority}/robots.txt"))
}

/// [`read_site`] with the host's sitemap lease in hand: how many URLs the host's sitemaps
/// listed, or `None` when the crawl stopped before they were all read.
async fn read_leased(
    crew: &Crew,
    seed: NormalUrl,
    (key, origin_id): (&OriginKey, OriginId),
    host: &crate::store::HostInfo,
    site: &Site,
) -> Result<Option<usize>, CrawlError> {
    let Crew { req, progress, .. } = crew;
    if !wait_for_turn(req, progress, key, SITEMAP_TURN_WAIT).await {
        return Ok(None);
    }
    let operation = Operation::within(URL_DEADLINE * 4).with_max_wait(SITEMAP_TURN_WAIT);
    let (start, declared) =
        declared_by_robots(crew, seed, (key, origin_id), host, &operation).await?;
    let todo: VecDeque<Listed> = if declared.is_empty() {
        let fallback = NormalUrl::join(start.url(), "/sitemap.xml");
        fallback.into_iter().map(Listed::declared).collect()
    } else {
        declared.into_iter().map(Listed::declared).collect()
    };
    let reading = Reading {
        start: &start,
        origin: (key, origin_id),
        site_id: host.site_id,
        site,
        operation: &operation,
    };
    read_listed(crew, &reading, todo).await
}

/// The sitemaps the host's robots.txt (`seed`) declares, read over HTTPS first and over HTTP
/// at once where the host has no HTTPS; its records go to the writer. Returns the robots.txt
/// URL as read, and the sitemaps.
async fn declared_by_robots(
    crew: &Crew,
    seed: NormalUrl,
    (key, origin_id): (&OriginKey, OriginId),
    host: &crate::store::HostInfo,
    operation: &Operation,
) -> Result<(NormalUrl, Vec<NormalUrl>), CrawlError> {
    let Crew { req, keep, .. } = crew;
    let mut start = seed;
    let mut archive = Archive::default();
    let mut requests = 0;
    // The first HTTPS attempt at a host not known to serve it: failing to connect says the
    // host has no HTTPS, nothing of the origin's load (the pacer learns nothing).
    let https_probe = start.is_https() && host.https != Some(true);
    let (mut declared, no_https) = declared_sitemaps(
        crew,
        &start,
        https_probe,
        operation,
        &mut archive,
        &mut requests,
    )
    .await;
    if let Some(why) = no_https.filter(|_| https_probe) {
        // No working HTTPS on this host now: remember it and read over HTTP at once.
        req.https
            .failed(start.host(), &format!("robots.txt: {why}"));
        if host.https != Some(false) {
            keep.store.set_host_https(host.host_id, false).await?;
            req.places
                .update_host(start.host(), |h| h.https = Some(false));
        }
        start = start.with_scheme(false);
        declared = declared_sitemaps(crew, &start, false, operation, &mut archive, &mut requests)
            .await
            .0;
    }
    keep.committer
        .send(Work {
            members: archive.members,
            origin: Some(origin_update(req, key, origin_id, requests, 0)),
            ..Work::default()
        })
        .await?;
    Ok((start, declared))
}

/// What one host's sitemap reading works with.
struct Reading<'a> {
    /// The host's robots.txt URL, as read (its scheme says whether the host serves HTTPS).
    start: &'a NormalUrl,
    /// The origin leased, and its row.
    origin: (&'a OriginKey, OriginId),
    site_id: SiteId,
    site: &'a Site,
    operation: &'a Operation,
}

/// A sitemap to read: declared by robots.txt, or listed by an index.
struct Listed {
    url: NormalUrl,
    /// 0 when declared, +1 per index level.
    depth: u32,
    /// The index that lists it (its row).
    parent: Option<i64>,
}

impl Listed {
    fn declared(url: NormalUrl) -> Listed {
        Listed {
            url,
            depth: 0,
            parent: None,
        }
    }
}

/// Reads the sitemaps in `todo`, indexes followed, within the limits, and queues the URLs
/// they list. Returns how many they listed, or `None` when the crawl stopped first.
async fn read_listed(
    crew: &Crew,
    reading: &Reading<'_>,
    mut todo: VecDeque<Listed>,
) -> Result<Option<usize>, CrawlError> {
    let Crew {
        req,
        keep,
        progress,
        ..
    } = crew;
    let (key, origin_id) = reading.origin;
    let start = reading.start;
    let (mut files, mut total) = (0usize, 0usize);
    let mut tries: HashMap<String, u32> = HashMap::new();
    while let Some(Listed { url, depth, parent }) = todo.pop_front() {
        // HTTPS wherever available: a sitemap declared as http:// on a host known to serve
        // HTTPS is read over HTTPS.
        let url = if !url.is_https()
            && ((url.host() == start.host() && start.is_https())
                || req.places.known_https(url.host()) == Some(true))
        {
            url.with_scheme(true)
        } else {
            url
        };
        if files >= MAX_SITEMAP_FILES_PER_SITE || total >= MAX_SITEMAP_URLS_PER_SITE {
            break;
        }
        if !wait_for_turn(req, progress, key, SITEMAP_TURN_WAIT).await {
            return Ok(None);
        }
        files += 1;
        let row = keep
            .store
            .add_listed_sitemap(url.as_str(), reading.site_id, depth, parent)
            .await?;
        let id = row.id;
        let mut read = read_one(crew, &url, row, reading.site, reading.operation).await?;
        keep.committer
            .send(Work {
                members: std::mem::take(&mut read.members),
                origin: Some(origin_update(req, key, origin_id, read.requests, 0)),
                ..Work::default()
            })
            .await?;
        if read.retryable {
            let tried = tries.entry(url.as_str().to_string()).or_insert(0);
            *tried += 1;
            if *tried < MAX_SITEMAP_TRIES {
                // Again at once: the pacer holds the request until the origin's back-off
                // (or the server's Retry-After) has passed.
                files -= 1;
                todo.push_front(Listed { url, depth, parent });
                continue;
            }
        }
        if depth < MAX_SITEMAP_DEPTH {
            todo.extend(read.children.into_iter().map(|child| Listed {
                url: child,
                depth: depth + 1,
                parent: Some(id),
            }));
        }
        let room = MAX_SITEMAP_URLS_PER_SITE - total;
        let mut urls = read.urls;
        urls.truncate(room);
        total += urls.len() + read.unchanged_entries;
        queue(crew, urls).await?;
    }
    Ok(Some(total))
}

/// The `Sitemap:` lines of the site's robots.txt (fetched now, or the stored copy), and
/// whether the fetch failed as a host without HTTPS fails.
async fn declared_sitemaps(
    crew: &Crew,
    start: &NormalUrl,
    https_probe: bool,
    operation: &Operation,
    archive: &mut Archive,
    requests: &mut u64,
) -> (Vec<NormalUrl>, Option<String>) {
    let Crew { req, keep, .. } = crew;
    let check = req
        .polite
        .check_robots_as(start.url(), &PAGE_TOKENS, operation, https_probe)
        .await;
    let mut body: Option<Vec<u8>> = None;
    let mut no_https = None;
    if let Ok(check) = &check {
        if let Some(rf) = &check.fetched {
            if let Err(e) = super::unreachable::counted(keep, rf).await {
                tracing::warn!(error = %e, "could not count a robots.txt fetch");
            }
            no_https = rf
                .error
                .as_ref()
                .filter(|e| fetch::shows_no_https(e))
                .map(|e| e.full_message());
            archive.robots_fetch(rf);
            *requests += rf.exchanges.len() as u64;
            body = rf.robots.is_some().then(|| rf.body.clone());
        }
    }
    if body.is_none() {
        if let Ok(scope) = Scope::of(start.url()) {
            if let Some(entry) = req.polite.robots().entry(&scope) {
                body = match entry.state {
                    StoredState::Fresh(copy) => Some(copy.body),
                    StoredState::Failing(f) | StoredState::BackingOff(f) => f.copy.map(|c| c.body),
                    _ => None,
                };
            }
        }
    }
    let Some(body) = body else {
        return (Vec::new(), no_https);
    };
    let urls = robots::RobotsTxt::parse(&body)
        .sitemaps()
        .iter()
        .filter_map(|s| NormalUrl::parse(&s.url).ok())
        .collect();
    (urls, no_https)
}

#[derive(Default)]
struct Read {
    urls: Vec<NewUrl>,
    children: Vec<NormalUrl>,
    /// Entries of a sitemap that answered 304 (counted as still there).
    unchanged_entries: usize,
    /// It failed for a reason that may pass (429, 5xx, a retryable network error).
    retryable: bool,
    /// Its WARC records.
    members: Vec<Vec<u8>>,
    /// The requests it took.
    requests: u64,
}

async fn read_one(
    crew: &Crew,
    url: &NormalUrl,
    row: crate::store::SitemapRow,
    site: &Site,
    operation: &Operation,
) -> Result<Read, CrawlError> {
    let Crew { req, keep, .. } = crew;
    let id = row.id;
    let request = sitemap_request(url, &row);
    let response = req
        .polite
        .fetch(PoliteRequest::new(request, &PAGE_TOKENS), operation)
        .await;
    let mut archive = Archive::default();
    let mut read = Read {
        retryable: matches!(response.trail.learned, Some(fetch::Learned::Failure { .. })),
        ..Read::default()
    };
    let mut error = None;
    let (mut etag, mut last_modified, mut entries) = (None, None, 0u64);
    archive.trail(
        &response.trail,
        matches!(response.outcome, Polite::Fetched(_)),
    );
    match response.outcome {
        Polite::Fetched(f) => {
            let hop = response.trail.exchanges.last().cloned();
            let status = f.head.status;
            let header = |n: http::header::HeaderName| {
                f.head
                    .headers
                    .get(n)
                    .and_then(|v| v.to_str().ok())
                    .map(str::to_string)
            };
            etag = header(http::header::ETAG);
            last_modified = header(http::header::LAST_MODIFIED);
            let body = f.body.read_to_end(None).await;
            if status.as_u16() == 304 {
                if let Some(hop) = &hop {
                    archive.not_modified(hop, None);
                }
                etag = etag.or(row.etag.clone());
                last_modified = last_modified.or(row.last_modified.clone());
                entries = unchanged(crew, &row, &mut read).await?;
            } else if let (Ok(body), Some(hop)) = (body, &hop) {
                archive.exchange(hop, Some(Payload::of_body(&body)), false);
                if status.is_success() {
                    (entries, error) = listed(crew, &body.bytes, site, &mut read).await?;
                } else {
                    error = Some(format!("status {status}"));
                }
            }
        }
        Polite::Skipped { reason, .. } => error = Some(format!("not fetched: {reason:?}")),
        Polite::Failed(e) => error = Some(e.full_message()),
    }
    read.members = archive.members;
    read.requests = requests_of(&response.trail);
    keep.store
        .sitemap_read(
            id,
            Timestamp::now(),
            etag.as_deref(),
            last_modified.as_deref(),
            entries,
            error.as_deref(),
        )
        .await?;
    Ok(read)
}

/// The request for a sitemap, conditional when an earlier read left validators (`row`).
fn sitemap_request(url: &NormalUrl, row: &crate::store::SitemapRow) -> Request {
    let mut request = Request::get(url.url().clone());
    request.max_body_bytes = usize::try_from(MAX_SITEMAP_BYTES).unwrap_or(usize::MAX);
    request.keep_raw = true;
    request.kind = fetch::RequestKind::Sitemap;
    if row.fetched_at.is_some() && (row.etag.is_some() || row.last_modified.is_some()) {
        request.validators = Some(Validators {
            etag: row.etag.clone(),
            last_modified: row.last_modified.clone(),
        });
    }
    request
}

/// A sitemap (`r`) answered 304: it lists what it listed before. The children of an
/// unchanged index are the sitemaps its last full read listed (those recorded under it: not
/// the other sitemaps of its site, which other hosts' robots.txt declare); its entries count
/// as still there. Returns how many.
async fn unchanged(
    crew: &Crew,
    r: &crate::store::SitemapRow,
    read: &mut Read,
) -> Result<u64, CrawlError> {
    read.children = crew
        .keep
        .store
        .sitemap_children(r.id)
        .await?
        .iter()
        .filter_map(|k| NormalUrl::parse(&k.url).ok())
        .collect();
    read.unchanged_entries = usize::try_from(r.entries).unwrap_or(usize::MAX);
    Ok(r.entries)
}

/// What a sitemap's body lists: its children (an index) or its URLs (a urlset, a text file)
/// into `read`; returns how many entries it had, and why it is not a sitemap, if it is not.
async fn listed(
    crew: &Crew,
    body: &[u8],
    site: &Site,
    read: &mut Read,
) -> Result<(u64, Option<String>), CrawlError> {
    let Crew { req, progress, .. } = crew;
    let map = match parse_sitemap(body, locate_in(site)).await {
        Ok(map) => map,
        Err(e) => return Ok((0, Some(e.to_string()))),
    };
    let entries = map.entries.len() as u64;
    match map.kind {
        SitemapKind::Index => read.children = map.entries.into_iter().map(|e| e.loc).collect(),
        SitemapKind::UrlSet | SitemapKind::Text => {
            for e in map.entries {
                let (host, events) = req.places.host(&e.loc, req.polite.pacer()).await?;
                progress.emit_all(events);
                read.urls.push(NewUrl {
                    key: e.loc.key().to_string(),
                    host,
                    kind: UrlKind::Page,
                    priority: crate::store::PRIORITY_LISTED,
                    in_sitemap: true,
                    lastmod: e.lastmod,
                });
            }
        }
        SitemapKind::UnknownXml => return Ok((entries, Some("not a sitemap".to_string()))),
    }
    Ok((entries, None))
}

/// How the crawler reads a sitemap's `loc`: a crawlable URL (normalised) of the sitemap's own
/// site (registrable domain); other sites' URLs are outside it, as the protocol says.
fn locate_in(site: &Site) -> impl Fn(&str) -> Location<NormalUrl> + '_ {
    move |loc| match NormalUrl::parse(loc) {
        Ok(url) if Site::of(&url) == *site => Location::Take(url),
        Ok(_) => Location::Outside,
        Err(_) => Location::Invalid,
    }
}

async fn queue(crew: &Crew, urls: Vec<NewUrl>) -> Result<(), CrawlError> {
    let Crew { keep, .. } = crew;
    for chunk in urls.chunks(5_000) {
        keep.store.enqueue(chunk).await?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_hosts_robots_key_is_cut_from_any_of_its_urls_keys() {
        for (url, robots) in [
            ("https://a.test/x/y?z", "//a.test/robots.txt"),
            ("http://a.test:8080/?q#f", "//a.test:8080/robots.txt"),
            ("https://a.test:443/", "//a.test/robots.txt"),
        ] {
            let url = NormalUrl::parse(url).unwrap();
            let joined = NormalUrl::join(url.url(), "/robots.txt").unwrap();
            assert_eq!(robots_key(url.key()).as_deref(), Some(robots));
            assert_eq!(joined.key(), robots);
        }
    }

    #[tokio::test]
    async fn entries_are_normalised_urls_of_the_sitemaps_own_site() {
        let xml = br#"<urlset>
            <url><loc>https://WWW.example.test:443/a/./b?x=%7e</loc></url>
            <url><loc>https://example.test/c</loc></url>
            <url><loc>https://shop.example.test/d</loc></url>
            <url><loc>https://other.test/e</loc></url>
            <url><loc>ftp://example.test/f</loc></url>
        </urlset>"#;
        let site = Site::of_host("example.test");
        let map = parse_sitemap(&xml[..], locate_in(&site)).await.unwrap();
        let locs: Vec<&str> = map.entries.iter().map(|e| e.loc.as_str()).collect();
        assert_eq!(
            locs,
            [
                "https://www.example.test/a/b?x=~",
                "https://example.test/c",
                "https://shop.example.test/d"
            ]
        );
        assert_eq!((map.outside_site, map.invalid), (1, 1));
    }
}
