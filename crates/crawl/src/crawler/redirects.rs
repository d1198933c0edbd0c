//! Redirect chains in the store ("the chain is kept in the store"), and revisits at
//! the chain's end: a URL that redirected is revisited at the URL it ended at, with that
//! response's validators, rather than by following the whole chain again. When the end
//! redirects further, the new hops are added to the chain.

use fetch::{RedirectHop, Url};

use crate::normal::NormalUrl;
use crate::store::ClaimedUrl;

/// A stored redirect chain: the hops followed and the URL that answered.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub(crate) struct Chain {
    /// Every redirect followed, in order.
    pub(crate) hops: Vec<RedirectHop>,
    /// The URL whose response was kept.
    pub(crate) final_url: String,
}

/// Where a revisit of `url` goes: the end of its stored chain, when its last fetch was
/// redirected there and `allowed` (the crawl's scope) accepts it.
pub(crate) fn revisit_target(
    url: &ClaimedUrl,
    allowed: impl Fn(&NormalUrl) -> bool,
) -> Option<NormalUrl> {
    url.fetched_at?;
    let chain: Chain = serde_json::from_str(url.redirects.as_deref()?).ok()?;
    let target = NormalUrl::parse(&chain.final_url).ok()?;
    (target.key() != url.key && allowed(&target)).then_some(target)
}

/// The chain to store after a fetch that ended at `final_url` having followed `hops`:
/// `stored` extended when the fetch was a revisit at its end (`at_end`), else the hops alone.
/// `None` when no redirect led to the response.
pub(crate) fn chain_json(
    stored: Option<&str>,
    at_end: bool,
    hops: &[RedirectHop],
    final_url: &Url,
) -> Option<String> {
    let mut all: Vec<RedirectHop> = match stored.filter(|_| at_end) {
        Some(text) => serde_json::from_str::<Chain>(text)
            .map(|c| c.hops)
            .unwrap_or_default(),
        None => Vec::new(),
    };
    all.extend(hops.iter().cloned());
    if all.is_empty() {
        return None;
    }
    serde_json::to_string(&Chain {
        hops: all,
        final_url: final_url.to_string(),
    })
    .ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hop(from: &str, to: &str) -> RedirectHop {
        RedirectHop {
            url: Url::parse(from).unwrap(),
            status: http::StatusCode::MOVED_PERMANENTLY,
            location: to.to_string(),
        }
    }

    #[test]
    fn chains_are_kept_and_extended_at_their_end() {
        let end = Url::parse("https://a.test/new").unwrap();
        assert_eq!(chain_json(None, false, &[], &end), None);
        let first = chain_json(None, false, &[hop("https://a.test/old", "/new")], &end).unwrap();
        let chain: Chain = serde_json::from_str(&first).unwrap();
        assert_eq!(chain.final_url, "https://a.test/new");
        assert_eq!(chain.hops.len(), 1);
        // A revisit at the end that answered directly keeps the chain.
        assert_eq!(
            chain_json(Some(&first), true, &[], &end),
            Some(first.clone())
        );
        // One that moved on adds the new hop.
        let newer = Url::parse("https://a.test/newer").unwrap();
        let longer = chain_json(
            Some(&first),
            true,
            &[hop("https://a.test/new", "/newer")],
            &newer,
        );
        let chain: Chain = serde_json::from_str(&longer.unwrap()).unwrap();
        assert_eq!(chain.hops.len(), 2);
        assert_eq!(chain.final_url, "https://a.test/newer");
        // A fetch from the start replaces it.
        let again = chain_json(Some(&first), false, &[], &end);
        assert_eq!(again, None);
    }
}
