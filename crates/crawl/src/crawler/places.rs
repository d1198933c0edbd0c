//! Hosts, origins and sites as the running crawl sees them: the origin model, the host cache,
//! the crawl's scope, and the origin map the fetch pipeline paces by.

use std::collections::{HashMap, HashSet};
use std::hash::{BuildHasher, BuildHasherDefault, Hasher};
use std::net::IpAddr;
use std::sync::{Arc, Mutex, PoisonError, RwLock};

use db::Holder;
use fetch::{Fetcher, OriginKey, OriginMap, OriginSnapshot, Pacer, Url};

use super::config::SEEN_KEYS;
use super::CrawlError;
use crate::event::{Event, MergeEvidence};
use crate::normal::NormalUrl;
use crate::origins::{Evidence, Merge, OriginModel, OriginName};
use crate::site::Site;
use crate::store::{HostId, HostInfo, OriginId, Store};

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

/// Host name → origin name, read by the fetch pipeline for every request.
#[derive(Debug, Default)]
pub(crate) struct HostOrigins(RwLock<HashMap<String, String>>);

impl HostOrigins {
    fn set(&self, host: &str, origin: &str) {
        self.0
            .write()
            .unwrap_or_else(PoisonError::into_inner)
            .insert(host.to_string(), origin.to_string());
    }

    pub(crate) fn get(&self, host: &str) -> Option<String> {
        self.0
            .read()
            .unwrap_or_else(PoisonError::into_inner)
            .get(host)
            .cloned()
    }
}

impl OriginMap for HostOrigins {
    fn origin_of(&self, url: &Url) -> OriginKey {
        let host = url.host_str().unwrap_or_default();
        OriginKey::new(self.get(host).unwrap_or_else(|| host.to_string()))
    }
}

/// The crawl's view of places.
pub(crate) struct Places {
    store: Store,
    /// This process's lease holder (merges pass other processes' leases on, not its own).
    holder: Holder,
    fetcher: Fetcher,
    model: Mutex<OriginModel>,
    pub(crate) origins: Arc<HostOrigins>,
    hosts: Mutex<HashMap<String, HostInfo>>,
    seeds: RwLock<HashSet<Site>>,
    seen: Mutex<HashSet<u64, BuildHasherDefault<Prehashed>>>,
    /// Seeded per process; foldhash, not SipHash: every link found is hashed here, and
    /// SipHash was ~1.5 % of the crawler's CPU.
    hasher: foldhash::fast::RandomState,
    /// The certificate and backend evidence this process last stored per host row: a
    /// response only writes what changed. Every HTTPS response carries its certificate, and
    /// writing it each time was one store round trip (and write lock) per page: 11,000
    /// `UPDATE`s in a 10,000-page crawl.
    stored_evidence: Mutex<HashMap<HostId, StoredEvidence>>,
}

/// Hashes of the evidence last written for a host (see [`Places::observe`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
struct StoredEvidence {
    tls: Option<u64>,
    backends: Option<u64>,
}

impl Places {
    pub(crate) fn new(
        store: Store,
        fetcher: Fetcher,
        model: OriginModel,
        holder: Holder,
    ) -> Places {
        Places {
            store,
            holder,
            fetcher,
            model: Mutex::new(model),
            origins: Arc::new(HostOrigins::default()),
            hosts: Mutex::new(HashMap::new()),
            seeds: RwLock::new(HashSet::new()),
            seen: Mutex::new(HashSet::default()),
            hasher: foldhash::fast::RandomState::default(),
            stored_evidence: Mutex::new(HashMap::new()),
        }
    }

    /// Load what the store knows: seed sites, and every host's origin and evidence (so this
    /// process groups hosts as the others did).
    ///
    /// The model is built from every host's evidence first, and only then compared with the
    /// store: merging host by host would take an intermediate grouping for the final one (a
    /// host linked to its group only by a host loaded later would pull its stored origin
    /// into a short-lived one of its own, moving every URL twice).
    pub(crate) async fn load(&self) -> Result<Vec<Event>, CrawlError> {
        let sites = self.store.seed_sites().await?;
        self.seeds
            .write()
            .unwrap_or_else(PoisonError::into_inner)
            .extend(sites.iter().map(|s| Site::of_host(s)));
        let stored = self.store.hosts_with_evidence().await?;
        let mut stored_origins: HashMap<String, String> = HashMap::with_capacity(stored.len());
        {
            let mut model = lock(&self.model);
            for (host, stored_origin, addresses, tls, backends) in stored {
                model.add_host(&host);
                for evidence in stored_evidence(addresses, tls, backends) {
                    model.observe(&host, &evidence);
                }
                stored_origins.insert(host, stored_origin);
            }
        }
        // Each stored origin whose hosts the model now groups under another name joins it.
        let mut moves: Vec<(String, OriginName)> = Vec::new();
        for (host, stored_origin) in &stored_origins {
            let Some(origin) = lock(&self.model).origin_of(host) else {
                continue;
            };
            self.origins.set(host, &origin.0);
            if origin.0 != *stored_origin && !moves.iter().any(|(s, _)| s == stored_origin) {
                moves.push((stored_origin.clone(), origin));
            }
        }
        moves.sort();
        let mut events = Vec::with_capacity(moves.len());
        for (absorbed, into) in moves {
            self.store
                .merge_origins(&OriginName(absorbed.clone()), &into, &self.holder)
                .await?;
            events.push(Event::Merge {
                absorbed,
                into: into.0,
                evidence: MergeEvidence::Stored,
            });
        }
        Ok(events)
    }

    /// Make `url`'s site a seed site of the crawl.
    pub(crate) async fn add_seed_site(&self, url: &NormalUrl) -> Result<(), CrawlError> {
        let site = Site::of(url);
        self.store.ensure_site(site.as_str(), true).await?;
        self.seeds
            .write()
            .unwrap_or_else(PoisonError::into_inner)
            .insert(site);
        Ok(())
    }

    /// Whether `host` belongs to one of the crawl's sites.
    pub(crate) fn in_scope(&self, host: &str) -> bool {
        self.seeds
            .read()
            .unwrap_or_else(PoisonError::into_inner)
            .contains(&Site::of_host(host))
    }

    /// Where `url`'s host belongs, creating it (resolved first, so it joins the origin of
    /// the hosts it shares an address with before its first request).
    pub(crate) async fn host(
        &self,
        url: &NormalUrl,
        pacer: &Pacer,
    ) -> Result<(HostInfo, Vec<Event>), CrawlError> {
        let name = url.host().to_string();
        if let Some(info) = lock(&self.hosts).get(&name) {
            return Ok((info.clone(), Vec::new()));
        }
        if let Some(info) = self.store.host(&name).await? {
            self.remember(&name, info.clone()).await?;
            return Ok((info, Vec::new()));
        }
        let port = url.url().port_or_known_default().unwrap_or(443);
        let addresses = self.fetcher.resolve(&name, port).await.unwrap_or_default();
        // Hosts another process placed at these addresses join the model first, so every
        // process groups them alike.
        let mut events = self.join_hosts_at(&addresses, pacer).await?;
        let (_, mut merges) = lock(&self.model).add_host(&name);
        if !addresses.is_empty() {
            merges
                .extend(lock(&self.model).observe(&name, &Evidence::Addresses(addresses.clone())));
        }
        events.extend(
            self.apply_merges(merges, MergeEvidence::Addresses, pacer)
                .await?,
        );
        let origin = lock(&self.model)
            .origin_of(&name)
            .unwrap_or_else(|| OriginName(name.clone()));
        let site = Site::of(url);
        let site_id = self.store.ensure_site(site.as_str(), false).await?;
        let list = (!addresses.is_empty()).then(|| {
            addresses
                .iter()
                .map(IpAddr::to_string)
                .collect::<Vec<_>>()
                .join(" ")
        });
        let mut info = self
            .store
            .ensure_host_at(&name, &origin, site_id, list.as_deref())
            .await?;
        // Another process may have placed a host at the same addresses at the same moment,
        // before it could see this one: look again now that this host is stored (of two
        // placements at once, the one that commits second sees the first, and both name the
        // merged origin alike).
        let again = self.join_hosts_at(&addresses, pacer).await?;
        let origin = lock(&self.model)
            .origin_of(&name)
            .unwrap_or_else(|| OriginName(name.clone()));
        if !again.is_empty() {
            events.extend(again);
            if let Some(moved) = self.store.host(&name).await? {
                info = moved;
            }
        }
        self.remember(&name, info.clone()).await?;
        self.origins.set(&name, &origin.0);
        Ok((info, events))
    }

    /// Add to the model the hosts stored at `addresses` (placed by any process) with their
    /// evidence, merging origins the way the model groups them.
    async fn join_hosts_at(
        &self,
        addresses: &[IpAddr],
        pacer: &Pacer,
    ) -> Result<Vec<Event>, CrawlError> {
        let mut events = Vec::new();
        for address in addresses {
            for (other, stored_origin, a, t, b) in self.store.hosts_at(&address.to_string()).await?
            {
                let mut merges = lock(&self.model).add_host(&other).1;
                for evidence in stored_evidence(a, t, b) {
                    merges.extend(lock(&self.model).observe(&other, &evidence));
                }
                events.extend(
                    self.apply_merges(merges, MergeEvidence::Addresses, pacer)
                        .await?,
                );
                let model_origin = lock(&self.model).origin_of(&other);
                if let Some(o) = model_origin.filter(|o| o.0 != stored_origin) {
                    self.store
                        .merge_origins(&OriginName(stored_origin), &o, &self.holder)
                        .await?;
                }
            }
        }
        Ok(events)
    }

    async fn remember(&self, name: &str, info: HostInfo) -> Result<(), CrawlError> {
        if self.origins.get(name).is_none() {
            if let Some(row) = self.store.origin(info.origin_id).await? {
                self.origins.set(name, &row.name.0);
                lock(&self.model).add_host(name);
            }
        }
        lock(&self.hosts).insert(name.to_string(), info);
        Ok(())
    }

    /// Pace `host` under `origin` (row `origin_id`), the origin whose lease this process
    /// claimed the host's URLs under: the store's placement wins over this process's model.
    ///
    /// Another process may have merged the host's origin into another after this process
    /// placed it (its model learns of the merge only from its own evidence, later). Until
    /// then the fetch pipeline would pace the host under its old name while the worker holds
    /// the lease of the merged origin, and two requests of one origin could start closer than
    /// the pace (seen: 20–67 ms at a 200 ms pace with two processes). The host's old pacing
    /// joins the origin's, keeping the stricter. Returns the old origin name when it moved.
    pub(crate) fn adopt(
        &self,
        host: &str,
        origin: &OriginKey,
        origin_id: OriginId,
        pacer: &Pacer,
    ) -> Option<String> {
        let old = self.origins.get(host).unwrap_or_else(|| host.to_string());
        if old == origin.as_str() {
            return None;
        }
        let old_key = OriginKey::new(old.clone());
        if let Some(merged) = merge_snapshots(pacer.export(&old_key), pacer.export(origin)) {
            pacer.import(origin, &merged);
        }
        self.origins.set(host, origin.as_str());
        self.update_host(host, |info| info.origin_id = origin_id);
        Some(old)
    }

    /// Whether `host` is known to serve HTTPS (`None`: not known, or not cached here).
    pub(crate) fn known_https(&self, host: &str) -> Option<bool> {
        lock(&self.hosts).get(host).and_then(|info| info.https)
    }

    /// The cached placement of a host, after a change made elsewhere (HTTPS learnt).
    pub(crate) fn update_host(&self, name: &str, f: impl FnOnce(&mut HostInfo)) {
        if let Some(info) = lock(&self.hosts).get_mut(name) {
            f(info);
        }
    }

    /// Record evidence seen in a response; merges origins it links.
    pub(crate) async fn observe(
        &self,
        host: &str,
        evidence: Evidence,
        label: MergeEvidence,
        pacer: &Pacer,
    ) -> Result<Vec<Event>, CrawlError> {
        let merges = lock(&self.model).observe(host, &evidence);
        let host_id = lock(&self.hosts).get(host).map(|info| info.host_id);
        if let Some(host_id) = host_id {
            match &evidence {
                Evidence::TlsLeaf(sha) if self.evidence_changed(host_id, |e| &mut e.tls, sha) => {
                    let hex: String = sha.iter().map(|b| format!("{b:02x}")).collect();
                    self.store
                        .set_host_evidence(host_id, None, Some(&hex), None)
                        .await?;
                }
                Evidence::Backends(ids)
                    if !ids.is_empty()
                        && self.evidence_changed(host_id, |e| &mut e.backends, ids) =>
                {
                    self.store
                        .set_host_evidence(host_id, None, None, Some(&ids.join(" ")))
                        .await?;
                }
                _ => {}
            }
        }
        self.apply_merges(merges, label, pacer).await
    }

    /// Whether `value` differs from the evidence of this kind last stored for `host_id`
    /// (remembering it as stored if so).
    fn evidence_changed<T: std::hash::Hash + ?Sized>(
        &self,
        host_id: HostId,
        field: impl FnOnce(&mut StoredEvidence) -> &mut Option<u64>,
        value: &T,
    ) -> bool {
        let hash = self.hasher.hash_one(value);
        let mut stored = lock(&self.stored_evidence);
        let slot = field(stored.entry(host_id).or_default());
        let changed = *slot != Some(hash);
        *slot = Some(hash);
        changed
    }

    async fn apply_merges(
        &self,
        merges: Vec<Merge>,
        label: MergeEvidence,
        pacer: &Pacer,
    ) -> Result<Vec<Event>, CrawlError> {
        let mut events = Vec::new();
        for m in merges {
            let into_id = self
                .store
                .merge_origins(&m.absorbed, &m.into, &self.holder)
                .await?;
            // The merged origin keeps the stricter pacing of the two in this process too.
            let (a, b) = (
                OriginKey::new(m.absorbed.0.clone()),
                OriginKey::new(m.into.0.clone()),
            );
            // From now on one turn and one state for both names, in this process: a worker
            // still holding the absorbed origin's lease waits for the merged origin's turn.
            pacer.merge(&a, &b);
            let hosts: Vec<String> = lock(&self.model)
                .hosts_of(&m.into)
                .iter()
                .map(|h| h.to_string())
                .collect();
            for h in &hosts {
                self.origins.set(h, &m.into.0);
                self.update_host(h, |info| info.origin_id = into_id);
            }
            events.push(Event::Merge {
                absorbed: m.absorbed.0,
                into: m.into.0,
                evidence: label,
            });
        }
        Ok(events)
    }

    /// Whether `key` was already queued by this process (remembering it if not).
    pub(crate) fn first_sight(&self, key: &str) -> bool {
        let hash = self.hasher.hash_one(key);
        let mut seen = lock(&self.seen);
        if seen.len() >= SEEN_KEYS {
            seen.clear();
        }
        seen.insert(hash)
    }
}

/// The hasher of the set of seen keys: its values are already (foldhash) hashes of the
/// keys, so hashing them again (SipHash, as a plain `HashSet<u64>` does) only cost time.
#[derive(Default)]
struct Prehashed(u64);

impl Hasher for Prehashed {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        // Only `write_u64` is used (the set holds `u64`s); anything else is folded in.
        for b in bytes {
            self.0 = self.0.rotate_left(8) ^ u64::from(*b);
        }
    }

    fn write_u64(&mut self, n: u64) {
        self.0 = n;
    }
}

fn stored_evidence(
    addresses: Option<String>,
    tls: Option<String>,
    backends: Option<String>,
) -> Vec<Evidence> {
    let mut out = Vec::new();
    if let Some(a) = addresses {
        let list: Vec<IpAddr> = a
            .split_whitespace()
            .filter_map(|x| x.parse().ok())
            .collect();
        if !list.is_empty() {
            out.push(Evidence::Addresses(list));
        }
    }
    if let Some(hex) = tls.filter(|h| h.len() == 64) {
        let mut sha = [0u8; 32];
        let ok = (0..32).all(|i| {
            u8::from_str_radix(&hex[2 * i..2 * i + 2], 16)
                .map(|b| sha[i] = b)
                .is_ok()
        });
        if ok {
            out.push(Evidence::TlsLeaf(sha));
        }
    }
    if let Some(b) = backends {
        out.push(Evidence::Backends(
            b.split_whitespace().map(str::to_string).collect(),
        ));
    }
    out
}

/// The stricter of two pacer states: later starts, more failures, paused if either was.
fn merge_snapshots(a: Option<OriginSnapshot>, b: Option<OriginSnapshot>) -> Option<OriginSnapshot> {
    match (a, b) {
        (None, b) => b,
        (a, None) => a,
        (Some(a), Some(b)) => {
            let mut host_starts = a.host_starts.clone();
            for (h, t) in b.host_starts {
                let e = host_starts.entry(h).or_insert(t);
                *e = (*e).max(t);
            }
            Some(OriginSnapshot {
                last_start: a.last_start.max(b.last_start),
                host_starts,
                failures: a.failures.max(b.failures),
                not_before: a.not_before.max(b.not_before),
                paused: a.paused || b.paused,
                next_start: a.next_start.max(b.next_start),
                complete: false,
            })
        }
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use db::testing::TestDb;
    use db::Backend;
    use fetch::{FetchConfig, OriginMap, PacerConfig};
    use jiff::{SignedDuration, Timestamp};

    use super::*;

    #[tokio::test]
    async fn a_host_claimed_under_the_origin_another_process_merged_it_into_is_paced_with_it() {
        let db = TestDb::new(Backend::Sqlite).await;
        let store = Store::open(&db.target).await.unwrap();
        let fetcher =
            Fetcher::new(FetchConfig::new("JittyBot", "https://jittybot.test/bot")).unwrap();
        let me = Holder::named("me");
        let places = Places::new(store.clone(), fetcher, OriginModel::default(), me);
        let site = store.ensure_site("two.test", true).await.unwrap();
        let (a1, a2) = (
            OriginName("a1.two.test".into()),
            OriginName("a2.two.test".into()),
        );
        store.ensure_host("a1.two.test", &a1, site).await.unwrap();
        store.ensure_host("a2.two.test", &a2, site).await.unwrap();
        let pacer = Pacer::new(PacerConfig {
            pace: Duration::from_millis(200),
            ..PacerConfig::default()
        });
        // This process placed a2 in its own origin and just made a request to it.
        let url = NormalUrl::parse("https://a2.two.test/p0.html").unwrap();
        places.host(&url, &pacer).await.unwrap();
        let old = OriginKey::new("a2.two.test");
        let just_now = Timestamp::now();
        pacer.import(
            &old,
            &OriginSnapshot {
                last_start: Some(just_now),
                ..OriginSnapshot::default()
            },
        );
        assert_eq!(places.origins.origin_of(url.url()), old);
        // Another process merges a2 into a1; this one claims a1 and works a2's URLs under it.
        let other = Holder::named("other");
        let a1_id = store.merge_origins(&a2, &a1, &other).await.unwrap();
        let key = OriginKey::new("a1.two.test");
        assert_eq!(
            places.adopt("a2.two.test", &key, a1_id, &pacer),
            Some("a2.two.test".to_string())
        );
        assert_eq!(places.origins.origin_of(url.url()), key, "paced under a1");
        let merged = pacer.export(&key).unwrap();
        // (The pacer keeps its own clock: a round trip through it may move a stamp by a µs.)
        let last = merged.last_start.unwrap();
        assert!(
            last.duration_since(just_now).abs() < SignedDuration::from_millis(1),
            "a2's last request counts: {merged:?}"
        );
        assert!(
            merged.next_start.unwrap() >= just_now + SignedDuration::from_millis(198),
            "the next request of a1 waits for the pace after a2's: {merged:?}"
        );
        let (info, _) = places.host(&url, &pacer).await.unwrap();
        assert_eq!(info.origin_id, a1_id);
        assert_eq!(places.adopt("a2.two.test", &key, a1_id, &pacer), None);
        store.close().await;
        db.cleanup().await;
    }
}
