//! Lease holders: the registry of process identities, and which holders' leases a starting
//! process may free (only those it proves dead), on both backends.

use db::testing::on_both_backends;
use db::{with_pool, Db, Holder, HostIdentity, ProcessIdentity, HOLDER_RETENTION};
use jiff::Timestamp;

#[tokio::test]
async fn only_registered_holders_of_this_pid_namespace_proven_dead_are_freed() {
    on_both_backends(|target| async move {
        let db = Db::open(&target, &[]).await.unwrap();
        let me = Holder::new();
        let mine = me.process().expect("Linux with /proc").clone();
        let now = Timestamp::now();
        assert!(db.register_holder(&me, now).await.unwrap());
        assert!(db.register_holder(&me, now).await.unwrap(), "twice is once");
        let mut child = std::process::Command::new("sleep")
            .arg("30")
            .spawn()
            .unwrap();
        let child_start = {
            let stat = std::fs::read_to_string(format!("/proc/{}/stat", child.id())).unwrap();
            let rest = stat.rsplit_once(')').unwrap().1;
            rest.split_ascii_whitespace()
                .nth(19)
                .unwrap()
                .parse()
                .unwrap()
        };
        let holder = |name: &str, pid: u32, started: u64, host: &HostIdentity| {
            Holder::with_identity(
                name,
                ProcessIdentity {
                    host: host.clone(),
                    pid,
                    started,
                },
            )
        };
        let alive = holder("alive", child.id(), child_start, &mine.host);
        let reused = holder("reused", child.id(), child_start + 1, &mine.host);
        let other_ns = HostIdentity {
            pid_namespace: mine.host.pid_namespace + 1,
            ..mine.host.clone()
        };
        // The same process id in another PID namespace (another container, `unshare -p`):
        // not provable, even once the id is free here.
        let elsewhere = holder("elsewhere", child.id(), child_start, &other_ns);
        for h in [&alive, &reused, &elsewhere] {
            assert!(db.register_holder(h, now).await.unwrap());
        }
        assert!(!db
            .register_holder(&Holder::named("old-host:12:0:abc"), now)
            .await
            .unwrap());
        for (name, holder) in [
            ("a", "alive"),
            ("b", "reused"),
            ("c", "elsewhere"),
            ("d", "old-host:12:0:abc"),
        ] {
            with_pool!(&db, pool => sqlx::query(
                "INSERT INTO db_leases (name, lease_holder, lease_until) VALUES ($1, $2, $3)")
                .bind(name).bind(holder).bind(i64::MAX).execute(pool).await.map(drop))
            .unwrap();
        }
        let freed = db.free_dead_holders(&me, &[]).await.unwrap();
        assert_eq!(freed.holders, vec!["reused".to_string()]);
        assert_eq!(freed.leases, 1);
        child.kill().unwrap();
        child.wait().unwrap();
        let freed = db.free_dead_holders(&me, &[]).await.unwrap();
        assert_eq!(
            freed.holders,
            vec!["alive".to_string()],
            "its process ended"
        );
        let held: Vec<(String, Option<String>)> = with_pool!(&db, pool => sqlx::query_as(
            "SELECT name, lease_holder FROM db_leases ORDER BY name").fetch_all(pool).await)
        .unwrap();
        assert_eq!(
            held,
            vec![
                ("a".into(), None),
                ("b".into(), None),
                ("c".into(), Some("elsewhere".into())),
                ("d".into(), Some("old-host:12:0:abc".into())),
            ]
        );
        // Rows older than the retention go when someone registers.
        let later = now
            + jiff::SignedDuration::try_from(HOLDER_RETENTION).unwrap()
            + jiff::SignedDuration::from_secs(1);
        let fresh = Holder::new();
        db.register_holder(&fresh, later).await.unwrap();
        let tokens: Vec<String> = with_pool!(&db, pool => sqlx::query_scalar(
            "SELECT token FROM db_holders ORDER BY token").fetch_all(pool).await)
        .unwrap();
        assert_eq!(tokens, vec![fresh.as_str().to_string()]);
        db.close().await;
    })
    .await;
}
