//! Sites whose robots.txt cannot be read: a robots.txt answering 5xx or
//! 429, or failing on the network, disallows everything, so nothing else of the site is
//! requested ("stop crawling the site and keep retrying the file"). The origin is paused and
//! its robots.txt probed on the origin's exponential back-off (`--backoff-base`, doubling, at
//! most `--backoff-max` apart unless a `Retry-After` asks for longer). The site's URLs stay
//! queued, whatever the number of failures: they are not attempts of theirs. Every failed
//! robots.txt request counts against the site, so that a run whose only work left is such
//! sites' URLs ends, leaving them queued for a later run, and says so. A probe that succeeds
//! ends the pause and forgets the failure fetch's cache holds, so the site's URLs go on at
//! once rather than when the cache's own retry would come.

use fetch::{OriginKey, RobotsFetch, RobotsOutcome, Scope, StoredState, Trail, Url};

use super::archive::Archive;
use super::committer::Work;
use super::config::{MAX_TURN_WAIT, URL_DEADLINE};
use super::outcome::{failure, origin_update, requests_of};
use super::parts::{Crew, Keeper, Progress, Requester};
use super::CrawlError;
use crate::normal::NormalUrl;
use crate::store::{ClaimedUrl, OriginId, Outcome, SiteId, UrlState};

/// Whether a robots.txt fetch found the file unreachable (5xx, network error) or was told to
/// back off (429).
pub(crate) fn failed(fetched: &RobotsFetch) -> bool {
    matches!(
        fetched.outcome,
        RobotsOutcome::Unreachable | RobotsOutcome::BackingOff
    )
}

/// The outcome of `url`, whose robots.txt (`robots_url`) is unreachable. When a robots.txt
/// request was made (`fetched`), it counts against the site. A URL of the robots.txt's own
/// host stays queued (not an attempt) and the origin is paused until a probe of that
/// robots.txt succeeds; a redirect's target on another host costs the URL an attempt.
pub(crate) async fn robots_unreachable(
    crew: &Crew,
    key: &OriginKey,
    url: &ClaimedUrl,
    robots_url: &Url,
    fetched: bool,
) -> Result<Outcome, CrawlError> {
    let own_host = NormalUrl::from_key(&url.key, true)
        .ok()
        .is_some_and(|u| Some(u.host()) == robots_url.host_str());
    if fetched {
        count_failure(&crew.keep, robots_url).await?;
    }
    if own_host {
        // Not an attempt of the URL: it waits for its robots.txt, which the probe retries on
        // the origin's back-off.
        pause(&crew.req, key);
        return Ok(Outcome {
            state: Some(UrlState::Queued),
            attempts: url.attempts,
            ..Outcome::of(url.id)
        });
    }
    // A redirect target's robots.txt: an attempt of this URL, whose own site is fine.
    Ok(failure(
        &crew.progress,
        &crew.rules,
        url,
        &format!("robots.txt unreachable: {robots_url}"),
    ))
}

/// Pause the origin: nothing but a probe of its robots.txt until one succeeds.
fn pause(req: &Requester, key: &OriginKey) {
    let pacer = req.polite.pacer();
    let mut snapshot = pacer.export(key).unwrap_or_default();
    if !snapshot.paused {
        snapshot.paused = true;
        pacer.import(key, &snapshot);
    }
}

/// The next probe of a robots.txt that failed again comes within `--backoff-max`: the file is
/// retried on the back-off, not on the day-long probes of an origin whose pages fail.
fn within_backoff_max(req: &Requester, key: &OriginKey) {
    let pacer = req.polite.pacer();
    let Some(mut snapshot) = pacer.export(key) else {
        return;
    };
    let latest = jiff::Timestamp::now() + req.pacing.backoff_max;
    if snapshot.not_before.is_some_and(|t| t > latest) {
        snapshot.not_before = Some(latest);
        pacer.import(key, &snapshot);
    }
}

/// The site of the host of `robots_url`, if known.
async fn site_of(keep: &Keeper, robots_url: &Url) -> Result<Option<SiteId>, CrawlError> {
    let Some(host) = robots_url.host_str() else {
        return Ok(None);
    };
    Ok(keep.store.host(host).await?.map(|h| h.site_id))
}

/// Count a failed robots.txt request against its site: a site with failures in a row has
/// its URLs waiting for its robots.txt (a run with only such URLs left ends).
pub(crate) async fn count_failure(keep: &Keeper, robots_url: &Url) -> Result<(), CrawlError> {
    if let Some(site) = site_of(keep, robots_url).await? {
        let failures = keep.store.site_robots_failed(site).await?;
        tracing::debug!(%robots_url, failures, "robots.txt unreachable");
    }
    Ok(())
}

/// Count a robots.txt fetch made through fetch's cache: a failure against its site, an
/// answer as the end of the site's run of failures.
pub(crate) async fn counted(keep: &Keeper, fetched: &RobotsFetch) -> Result<(), CrawlError> {
    if failed(fetched) {
        count_failure(keep, &fetched.robots_url).await?;
    } else if let Some(site) = site_of(keep, &fetched.robots_url).await? {
        keep.store.site_robots_ok(site).await?;
    }
    Ok(())
}

/// A robots.txt request answered (2xx, 4xx): the site's run of failures ends, and a failure
/// fetch's cache still holds for the scope is forgotten (store and memory), so its URLs go
/// on now.
pub(crate) async fn answered(
    req: &Requester,
    keep: &Keeper,
    robots_url: &Url,
) -> Result<(), CrawlError> {
    if let Some(site) = site_of(keep, robots_url).await? {
        keep.store.site_robots_ok(site).await?;
    }
    let Ok(scope) = Scope::of(robots_url) else {
        return Ok(());
    };
    keep.store.delete_robots_entry(&scope.to_string()).await?;
    let cached_failure = req.polite.robots().entry(&scope).is_some_and(|e| {
        matches!(
            e.state,
            StoredState::Failing(_) | StoredState::BackingOff(_)
        )
    });
    if cached_failure {
        // fetch's cache forgets one scope only by forgetting all: the others reload from the
        // store on their next use.
        req.polite.robots().clear();
    }
    Ok(())
}

/// Probe a paused origin with the robots.txt of the host of its next URL (JittyBot's documentation: nothing
/// else is requested until a probe succeeds); true when the origin is resumed.
pub(crate) async fn probe(
    req: &Requester,
    keep: &Keeper,
    progress: &Progress,
    key: &OriginKey,
    origin_id: OriginId,
) -> Result<bool, CrawlError> {
    let Some(key_text) = keep.store.a_url_of_origin(origin_id).await? else {
        return Ok(false);
    };
    let Ok(any) = NormalUrl::from_key(&key_text, true) else {
        return Ok(false);
    };
    let https = keep.store.host(any.host()).await?.and_then(|h| h.https);
    let Ok(robots_url) =
        NormalUrl::join(any.with_scheme(https != Some(false)).url(), "/robots.txt")
    else {
        return Ok(false);
    };
    let robots_url = robots_url.url().clone();
    let before = req.polite.pacer().export(key).unwrap_or_default();
    let deadline = fetch::Deadline::after(URL_DEADLINE);
    let limit = fetch::WaitLimit {
        deadline: Some(deadline),
        budget: None,
        max_wait: Some(MAX_TURN_WAIT),
    };
    let host_only = robots_url.host_str().unwrap_or_default().to_string();
    let Ok(mut permit) = req
        .polite
        .pacer()
        .acquire(key, &host_only, None, true, limit)
        .await
    else {
        return Ok(false);
    };
    // A redirect into a host the operator excluded is not followed.
    let pacer = req.polite.pacer();
    let held = |target: &Url| target.host_str().is_some_and(|h| pacer.holds(h));
    let fetched =
        fetch::fetch_robots_txt_refusing(req.polite.fetcher(), &robots_url, None, deadline, &held)
            .await;
    permit.answered();
    let learned = match (&fetched.error, fetched.status) {
        (Some(error), _) => fetch::Learned::from_error(error),
        (None, Some(status)) => fetch::Learned::from_robots_txt(status, fetched.retry_after),
        (None, None) => fetch::Learned::Nothing,
    };
    permit.learn(match learned {
        // Unreachable for a reason that says nothing of the origin's load (a redirect loop,
        // a redirect into an excluded host): still retried on the back-off, not at once.
        fetch::Learned::Nothing if failed(&fetched) => {
            fetch::Learned::Failure { retry_after: None }
        }
        learned => learned,
    });
    drop(permit);
    if failed(&fetched) {
        count_failure(keep, &robots_url).await?;
        if fetched.retry_after.is_none() {
            within_backoff_max(req, key);
        }
    } else {
        answered(req, keep, &robots_url).await?;
    }
    let mut archive = Archive::default();
    let trail = Trail {
        robots_fetches: vec![fetched],
        ..Trail::default()
    };
    archive.trail(&trail, false);
    let work = Work {
        members: archive.members,
        origin: Some(origin_update(req, key, origin_id, requests_of(&trail), 0)),
        ..Work::default()
    };
    keep.committer.send(work).await?;
    progress.emit_all(req.pacing_event(key, &before));
    Ok(!req.polite.pacer().export(key).is_some_and(|s| s.paused))
}
