//! The maintenance lease: held, and renewed, for as long as a retention pass (or a data
//! removal) runs, on both backends; another process's attempt fails meanwhile.

use std::time::Duration;

use db::testing::on_both_backends;
use db::{Holder, Lease};
use service::serve::{under_maintenance_lease, MAINTENANCE_LEASE_NAME};
use service::{Clock, Store, SystemClock};

#[tokio::test(flavor = "multi_thread")]
async fn the_lease_is_renewed_while_the_work_runs_and_released_after() {
    on_both_backends(move |target| async move {
        let store = Store::open(&target).await.unwrap();
        let db = store.db().clone();
        let ttl = Duration::from_millis(900);
        let (ours, theirs) = (Holder::new(), Holder::new());
        // Work three times as long as the lease: without renewal another holder takes over
        // after 0.9 s, and two passes fold the same months.
        let work = async {
            let mut taken = 0;
            for _ in 0..14 {
                tokio::time::sleep(Duration::from_millis(200)).await;
                let lease = Lease {
                    holder: &theirs,
                    now: SystemClock.now(),
                    ttl,
                };
                if db.try_lease(MAINTENANCE_LEASE_NAME, &lease).await.unwrap() {
                    taken += 1;
                }
            }
            Ok(taken)
        };
        let taken = under_maintenance_lease(store.db(), &SystemClock, &ours, ttl, None, work)
            .await
            .unwrap();
        assert_eq!(
            taken,
            Some(0),
            "nobody else took the lease while the work ran"
        );
        let lease = Lease {
            holder: &theirs,
            now: SystemClock.now(),
            ttl,
        };
        assert!(
            db.try_lease(MAINTENANCE_LEASE_NAME, &lease).await.unwrap(),
            "released"
        );
        let skipped =
            under_maintenance_lease(store.db(), &SystemClock, &ours, ttl, None, async { Ok(()) })
                .await
                .unwrap();
        assert_eq!(skipped, None, "held by another: not run");
    })
    .await;
}
