//! fetch's robots.txt cache entries, persisted one at a time in the crawl store, so the
//! status table's decisions (failures, back-off, the last good copy) hold across restarts.

use fetch::{BoxFuture, Cause, RobotsStore, Scope, StoreError, StoredEntry};

use crate::store::Store;

/// The crawl store as fetch's per-entry robots store.
#[derive(Debug, Clone)]
pub struct StoreRobots(pub Store);

impl RobotsStore for StoreRobots {
    fn load<'a>(
        &'a self,
        scope: &'a Scope,
    ) -> BoxFuture<'a, Result<Option<StoredEntry>, StoreError>> {
        Box::pin(async move {
            let text = self
                .0
                .robots_entry(&scope.to_string())
                .await
                .map_err(|e| StoreError(Cause::new(e)))?;
            match text {
                None => Ok(None),
                // An entry that no longer reads (an older format) is as good as none.
                Some(t) => Ok(serde_json::from_str(&t).ok()),
            }
        })
    }

    fn save<'a>(&'a self, entry: &'a StoredEntry) -> BoxFuture<'a, Result<(), StoreError>> {
        Box::pin(async move {
            let text = serde_json::to_string(entry).map_err(|e| StoreError(Cause::new(e)))?;
            self.0
                .put_robots_entry(&entry.scope.to_string(), &text)
                .await
                .map_err(|e| StoreError(Cause::new(e)))
        })
    }
}
