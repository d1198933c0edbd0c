//! The levers as one running crawler obeys them: a snapshot read from the store every
//! [`LEVERS_REFRESH`], asked on every request (so the questions are cheap), and handed to
//! fetch's pacer as its [`fetch::Overrides`].

use std::collections::HashMap;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, PoisonError, RwLock};
use std::time::Duration;

use db::DbError;
use fetch::{OriginKey, RobotsCache};
use jiff::Timestamp;

use super::lever::{read_levers, SiteName};
use super::store::{self, SiteLevers};
use crate::input::{InputError, InputErrorKind};
use crate::store::{HostId, OriginId, Store};

/// How often a running crawler reads the levers again (and its `--control` file, when it
/// changed). With the scheduler's tick, a lever pulled is obeyed within about this long
/// (promised: 5 s).
pub const LEVERS_REFRESH: Duration = Duration::from_secs(2);

/// The largest `--control` file read: far more than any list of complaints, and a bound on
/// what a wrong path (a log file) can cost every refresh.
pub const MAX_CONTROL_FILE_BYTES: u64 = 1024 * 1024;

/// Why the levers could not be set up.
#[derive(Debug, thiserror::Error)]
pub enum LeversError {
    /// The `--control` file is unreadable or has a bad line.
    #[error("bad --control file")]
    File(#[from] InputError),
    /// The store failed.
    #[error("cannot read or record the levers")]
    Store(#[from] DbError),
}

/// What the crawler obeys now.
#[derive(Debug, Default)]
struct Snapshot {
    /// The sites with a pace or an exclusion.
    sites: Vec<SiteLevers>,
    /// The floor of each origin serving a paced site (the strictest of its sites).
    origin_floors: HashMap<String, Duration>,
    /// Ids of the known hosts of excluded sites.
    held_hosts: Vec<HostId>,
    /// Origins with no work outside excluded sites: not claimed while so.
    parked: Vec<OriginId>,
}

/// The `--control` file and the last text applied from it.
#[derive(Debug)]
struct ControlFile {
    path: PathBuf,
    applied: Mutex<Option<Vec<u8>>>,
}

/// The levers of one crawler process.
#[derive(Debug, Default)]
pub struct Levers {
    snapshot: RwLock<Arc<Snapshot>>,
    file: Option<ControlFile>,
    /// The robots.txt refreshes already acted on, per site (`None` before the first read:
    /// a process that just started has nothing cached to drop).
    refreshes_seen: Mutex<Option<HashMap<SiteName, i64>>>,
}

fn read_capped(path: &Path) -> Result<Vec<u8>, InputError> {
    let error = |kind| InputError {
        file: path.to_path_buf(),
        line: 0,
        kind,
    };
    let file = std::fs::File::open(path).map_err(|e| error(InputErrorKind::Io(e)))?;
    let mut bytes = Vec::new();
    file.take(MAX_CONTROL_FILE_BYTES + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| error(InputErrorKind::Io(e)))?;
    if bytes.len() as u64 > MAX_CONTROL_FILE_BYTES {
        return Err(error(InputErrorKind::Io(std::io::Error::other(format!(
            "larger than {MAX_CONTROL_FILE_BYTES} bytes"
        )))));
    }
    Ok(bytes)
}

impl Levers {
    /// No levers (a crawl without a store to read them from).
    pub fn none() -> Arc<Levers> {
        Arc::new(Levers::default())
    }

    /// The levers of a crawl of `store`: `control_file`'s commands applied to the store first
    /// (a bad file is an error here, before anything is crawled), then every lever in force
    /// read.
    pub async fn load(
        store: &Store,
        control_file: Option<&Path>,
    ) -> Result<Arc<Levers>, LeversError> {
        let levers = Levers {
            file: control_file.map(|path| ControlFile {
                path: path.to_path_buf(),
                applied: Mutex::new(None),
            }),
            ..Levers::default()
        };
        if let Some(file) = &levers.file {
            let text = read_capped(&file.path)?;
            apply_file(store, &file.path, &text).await?;
            *lock(&file.applied) = Some(text);
        }
        levers.read(store, None).await?;
        Ok(Arc::new(levers))
    }

    /// Reads the levers again: the `--control` file's commands when it changed (a bad file
    /// now is logged and left as it was applied), the store's levers, and drops the cached
    /// robots.txt of sites whose refresh was asked since the last read.
    pub async fn refresh(&self, store: &Store, robots: &RobotsCache) -> Result<(), DbError> {
        if let Some(file) = &self.file {
            let text = read_capped(&file.path);
            let changed = match &text {
                Ok(text) => lock(&file.applied).as_ref() != Some(text),
                Err(_) => false,
            };
            if changed {
                let text = text.unwrap_or_default();
                match apply_file(store, &file.path, &text).await {
                    Ok(()) => {
                        tracing::info!(file = %file.path.display(), "control file applied again");
                        *lock(&file.applied) = Some(text);
                    }
                    Err(LeversError::File(e)) => {
                        tracing::error!(error = %e, "control file not applied: fix it")
                    }
                    Err(LeversError::Store(e)) => return Err(e),
                }
            }
        }
        self.read(store, Some(robots)).await
    }

    async fn read(&self, store: &Store, robots: Option<&RobotsCache>) -> Result<(), DbError> {
        let all = store::levers(store).await?;
        self.refresh_robots(&all, robots);
        let sites: Vec<SiteLevers> = all.into_iter().filter(SiteLevers::in_force).collect();
        let mut snapshot = Snapshot::default();
        let mut held_origins = Vec::new();
        for levers in &sites {
            let hosts = store::hosts_of(store, &levers.site).await?;
            for host in hosts {
                if let Some(floor) = levers.pace {
                    let f = snapshot.origin_floors.entry(host.origin).or_default();
                    *f = (*f).max(floor);
                }
                if levers.excluded {
                    snapshot.held_hosts.push(host.host_id);
                    held_origins.push(host.origin_id);
                }
            }
        }
        held_origins.sort_unstable();
        held_origins.dedup();
        snapshot.parked = store::parked_origins(store, &held_origins, &snapshot.held_hosts).await?;
        snapshot.sites = sites;
        *self
            .snapshot
            .write()
            .unwrap_or_else(PoisonError::into_inner) = Arc::new(snapshot);
        Ok(())
    }

    fn refresh_robots(&self, all: &[SiteLevers], robots: Option<&RobotsCache>) {
        let mut seen = lock(&self.refreshes_seen);
        let now: HashMap<SiteName, i64> = all
            .iter()
            .map(|l| (l.site.clone(), l.robots_refresh))
            .collect();
        if let (Some(before), Some(robots)) = (seen.as_ref(), robots) {
            for levers in all {
                if before.get(&levers.site).copied().unwrap_or(0) < levers.robots_refresh {
                    let dropped = robots.forget(|scope| levers.site.covers(scope.host()));
                    tracing::info!(site = %levers.site, dropped, "robots.txt refresh asked: cached copies dropped");
                }
            }
        }
        *seen = Some(now);
    }

    fn snapshot(&self) -> Arc<Snapshot> {
        Arc::clone(&self.snapshot.read().unwrap_or_else(PoisonError::into_inner))
    }

    /// Whether requests to `host` are held (its site is excluded).
    pub fn holds(&self, host: &str) -> bool {
        let snapshot = self.snapshot();
        snapshot
            .sites
            .iter()
            .any(|l| l.excluded && l.site.covers(host))
    }

    /// The ids of the known hosts of excluded sites (their URLs are not claimed).
    pub fn held_hosts(&self) -> Vec<HostId> {
        self.snapshot().held_hosts.clone()
    }

    /// The origins with no work outside excluded sites (not claimed while so).
    pub fn parked_origins(&self) -> Vec<OriginId> {
        self.snapshot().parked.clone()
    }

    /// When `left` URLs are queued or in flight in the whole crawl: `Some(left)` if every one
    /// of them belongs to an excluded site (the run may end; they stay queued), else `None`.
    pub async fn only_held_left(&self, store: &Store, left: u64) -> Result<Option<u64>, DbError> {
        let held = self.held_hosts();
        if held.is_empty() || left == 0 {
            return Ok(None);
        }
        Ok((store::pending_outside(store, &held).await? == 0).then_some(left))
    }

    /// The levers in force, for a status display.
    pub fn in_force(&self) -> Vec<SiteLevers> {
        self.snapshot().sites.clone()
    }
}

impl fetch::Overrides for Levers {
    fn floor(&self, key: &OriginKey, host: &str) -> Option<Duration> {
        let snapshot = self.snapshot();
        if snapshot.sites.is_empty() {
            return None;
        }
        let by_origin = snapshot.origin_floors.get(key.as_str()).copied();
        // A host not in the store yet when the levers were read is paced by its name.
        let by_host = snapshot
            .sites
            .iter()
            .filter(|l| !host.is_empty() && l.site.covers(host))
            .filter_map(|l| l.pace)
            .max();
        by_origin.max(by_host)
    }

    fn held(&self, host: &str) -> bool {
        self.holds(host)
    }
}

async fn apply_file(store: &Store, path: &Path, text: &[u8]) -> Result<(), LeversError> {
    let levers = read_levers(path, text)?;
    let now = Timestamp::now();
    for lever in &levers {
        store::apply(store, lever, now).await?;
    }
    tracing::info!(file = %path.display(), levers = levers.len(), "control file applied");
    Ok(())
}

fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}
