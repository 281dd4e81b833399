//! Leases through the store's public API, on every backend (memory, redb, and etcd when an `etcd` binary is
//! installed): keys put with a lease go when it is revoked or expires (as a delete in watches), keep-alives keep
//! them, a put naming a missing lease writes nothing, a plain put detaches a key, compares on a leased key's
//! mod revision fail once the lease is gone, and a reopened redb store has lost the previous process's leases.

// Helpers of a test may unwrap: a panic there is a failed test.
#![allow(clippy::unwrap_used)]

use std::time::{Duration, Instant};

use emco_store::etcd_testing::EtcdServer;
use emco_store::{Compare, Error, EventKind, Op, Store, Txn};

/// What keeps a backend alive: its directory or its etcd server.
#[allow(dead_code)]
enum Keep {
    Nothing,
    Dir(tempfile::TempDir),
    Etcd(EtcdServer),
}

async fn backends() -> Vec<(Store, Keep)> {
    let dir = tempfile::tempdir().unwrap();
    let redb = Store::open_redb(dir.path()).unwrap();
    let mut backends = vec![(Store::memory(), Keep::Nothing), (redb, Keep::Dir(dir))];
    if let Some(server) = EtcdServer::start().await.unwrap() {
        let store = Store::open_etcd(&[server.endpoint().to_string()], "/leases", None)
            .await
            .unwrap();
        backends.push((store, Keep::Etcd(server)));
    }
    backends
}

/// etcd raises a shorter time to live to its minimum (about 1.5 s), so the tests use 2 s everywhere.
const TTL: Duration = Duration::from_secs(2);
/// The longest an expiry may take to show (etcd checks expiries every 500 ms, plus a loaded machine).
const EXPIRY_DEADLINE: Duration = Duration::from_secs(15);

async fn wait_until_absent(store: &Store, key: &str) {
    let start = Instant::now();
    while store.get(key).await.unwrap().is_some() {
        assert!(
            start.elapsed() < EXPIRY_DEADLINE,
            "{store:?}: '{key}' outlived its lease"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_expired_lease_deletes_its_keys_as_watch_events_and_breaks_compares() {
    for (store, _keep) in backends().await {
        let lease = store.grant_lease(TTL).await.unwrap();
        let status = store.lease_status(lease).await.unwrap().unwrap();
        assert_eq!(status.granted_ttl, TTL, "{store:?}");
        assert!(status.remaining <= TTL);
        let response = store
            .txn(Txn::new().when([Compare::absent("/owner/a")]).and_then([
                Op::put_with_lease("/owner/a", "me", lease),
                Op::put("/plain", "x"),
            ]))
            .await
            .unwrap();
        assert!(response.succeeded);
        let claimed = store.get("/owner/a").await.unwrap().unwrap().mod_revision;
        let fence = || Compare::mod_revision_is("/owner/a", claimed);
        assert!(
            store
                .txn(Txn::new().when([fence()]).and_then([Op::put("/work", "1")]))
                .await
                .unwrap()
                .succeeded
        );
        let mut watcher = store.watch("/owner/", None).unwrap();
        wait_until_absent(&store, "/owner/a").await;
        let event = tokio::time::timeout(EXPIRY_DEADLINE, watcher.next())
            .await
            .unwrap()
            .unwrap()
            .unwrap();
        assert_eq!(
            (event.kind, event.kv.key.as_str()),
            (EventKind::Delete, "/owner/a"),
            "{store:?}"
        );
        // Work fenced by the claim is refused now; the unleased key stays.
        let fenced = store
            .txn(Txn::new().when([fence()]).and_then([Op::put("/work", "2")]))
            .await
            .unwrap();
        assert!(!fenced.succeeded);
        assert_eq!(store.get("/work").await.unwrap().unwrap().value, b"1");
        assert!(store.get("/plain").await.unwrap().is_some());
        assert_eq!(store.keep_alive(lease).await.unwrap(), None, "{store:?}");
        assert_eq!(store.lease_status(lease).await.unwrap(), None);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn keep_alives_hold_a_lease_and_revoking_ends_it_at_once() {
    for (store, _keep) in backends().await {
        let lease = store.grant_lease(TTL).await.unwrap();
        store
            .txn(Txn::new().and_then([
                Op::put_with_lease("/r/a", "1", lease),
                Op::put_with_lease("/r/b", "1", lease),
            ]))
            .await
            .unwrap();
        // A plain put takes a key off its lease.
        store.put("/r/b", "2").await.unwrap();
        // Kept alive for twice its time to live, the key stays.
        let start = Instant::now();
        while start.elapsed() < TTL * 2 {
            assert_eq!(store.keep_alive(lease).await.unwrap(), Some(TTL), "{store:?}");
            tokio::time::sleep(Duration::from_millis(400)).await;
        }
        assert!(store.get("/r/a").await.unwrap().is_some(), "{store:?}");
        store.revoke_lease(lease).await.unwrap();
        assert_eq!(store.get("/r/a").await.unwrap(), None, "{store:?}");
        assert_eq!(store.get("/r/b").await.unwrap().unwrap().value, b"2");
        // Revoking again is no error.
        store.revoke_lease(lease).await.unwrap();
        assert_eq!(store.keep_alive(lease).await.unwrap(), None);
    }
}

#[tokio::test]
async fn a_put_naming_a_missing_lease_writes_nothing_and_names_the_key() {
    for (store, _keep) in backends().await {
        let lease = store.grant_lease(TTL).await.unwrap();
        store.revoke_lease(lease).await.unwrap();
        let before = store.revision();
        let err = store
            .txn(Txn::new().and_then([Op::put("/x", "1"), Op::put_with_lease("/y", "1", lease)]))
            .await
            .unwrap_err();
        assert!(
            matches!(&err, Error::LeaseNotFound { key, .. } if key == "/y"),
            "{store:?}: {err}"
        );
        assert_eq!(store.get("/x").await.unwrap(), None);
        assert_eq!(store.revision(), before);
        assert!(store.grant_lease(Duration::from_millis(1)).await.is_err());
    }
}

#[tokio::test]
async fn a_reopened_redb_store_has_lost_the_previous_process_leases() {
    let dir = tempfile::tempdir().unwrap();
    {
        let store = Store::open_redb(dir.path()).unwrap();
        let lease = store.grant_lease(Duration::from_secs(60)).await.unwrap();
        store
            .txn(Txn::new().and_then([
                Op::put_with_lease("/replica/1", "a", lease),
                Op::put_with_lease("/replica/2", "a", lease),
                Op::put("/kept", "b"),
            ]))
            .await
            .unwrap();
        store.put("/replica/2", "detached").await.unwrap();
    }
    let store = Store::open_redb(dir.path()).unwrap();
    assert_eq!(store.get("/replica/1").await.unwrap(), None);
    assert_eq!(store.get("/replica/2").await.unwrap().unwrap().value, b"detached");
    assert_eq!(store.get("/kept").await.unwrap().unwrap().value, b"b");
    // The deletion was a write: the revision moved past the last one of the previous process (2 writes).
    assert_eq!(store.revision(), 3);
}
