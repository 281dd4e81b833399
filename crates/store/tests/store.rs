//! Behaviour of the store through its public API, run against both backends: revisions, transactions, prefix
//! ranges, watches, persistence, and atomicity when the process is killed in the middle of writing.

// Helpers of a test may unwrap: a panic there is a failed test.
#![allow(clippy::unwrap_used)]

use std::process::Command;
use std::time::Duration;

use emco_store::{Compare, Error, EventKind, Op, Store, Txn};

fn backends() -> Vec<(Store, Option<tempfile::TempDir>)> {
    let dir = tempfile::tempdir().unwrap();
    let redb = Store::open_redb(dir.path()).unwrap();
    vec![(Store::memory(), None), (redb, Some(dir))]
}

#[tokio::test]
async fn revisions_rise_once_per_write_transaction() {
    for (store, _dir) in backends() {
        assert_eq!(store.revision(), 0, "{store:?}");
        assert_eq!(store.put("/a", "1").await.unwrap(), 1);
        assert_eq!(store.put("/a", "2").await.unwrap(), 2);
        let kv = store.get("/a").await.unwrap().unwrap();
        assert_eq!(
            (kv.create_revision, kv.mod_revision, kv.version, kv.value),
            (1, 2, 2, b"2".to_vec())
        );
        // One transaction with two puts is one revision, shared by both keys.
        let response = store
            .txn(Txn::new().and_then([Op::put("/b", "x"), Op::put("/c", "y")]))
            .await
            .unwrap();
        assert_eq!(response.revision, 3);
        assert_eq!(store.get("/c").await.unwrap().unwrap().mod_revision, 3);
        // Deleting nothing changes nothing.
        assert!(!store.delete("/missing").await.unwrap());
        assert_eq!(store.revision(), 3);
        assert!(store.delete("/a").await.unwrap());
        assert_eq!(store.revision(), 4);
        assert_eq!(store.get("/a").await.unwrap(), None);
        // A re-created key starts a new life.
        store.put("/a", "3").await.unwrap();
        let kv = store.get("/a").await.unwrap().unwrap();
        assert_eq!((kv.create_revision, kv.version), (5, 1));
    }
}

#[tokio::test]
async fn ranges_are_by_prefix_in_key_order() {
    for (store, _dir) in backends() {
        for key in ["/p/b", "/p/a", "/p/a/x", "/q/a", "/p"] {
            store.put(key, key).await.unwrap();
        }
        let (items, revision) = store.range("/p/").await.unwrap();
        let keys: Vec<_> = items.iter().map(|kv| kv.key.as_str()).collect();
        assert_eq!(keys, ["/p/a", "/p/a/x", "/p/b"]);
        assert_eq!(revision, 5);
        let (limited, _) = store.range_limit("/p/", 1).await.unwrap();
        assert_eq!(limited.len(), 1);
        store.delete_prefix("/p/").await.unwrap();
        assert!(store.range("/p/").await.unwrap().0.is_empty());
        assert!(
            store.get("/p").await.unwrap().is_some(),
            "a key equal to the prefix without '/' stays"
        );
    }
}

#[tokio::test]
async fn transactions_apply_only_when_compares_hold() {
    for (store, _dir) in backends() {
        let create = |value: &'static str| {
            Txn::new()
                .when([Compare::absent("/k")])
                .and_then([Op::put("/k", value)])
        };
        assert!(store.txn(create("first")).await.unwrap().succeeded);
        assert!(!store.txn(create("second")).await.unwrap().succeeded);
        assert_eq!(store.get("/k").await.unwrap().unwrap().value, b"first");

        let seen = store.get("/k").await.unwrap().unwrap().mod_revision;
        let cas = |value: &'static str| {
            Txn::new()
                .when([Compare::mod_revision_is("/k", seen)])
                .and_then([Op::put("/k", value)])
                .or_else([Op::put("/conflicts", value)])
        };
        assert!(store.txn(cas("updated")).await.unwrap().succeeded);
        assert!(
            !store.txn(cas("stale")).await.unwrap().succeeded,
            "the revision moved on"
        );
        assert_eq!(store.get("/k").await.unwrap().unwrap().value, b"updated");
        assert_eq!(
            store.get("/conflicts").await.unwrap().unwrap().value,
            b"stale",
            "failure branch ran"
        );
        assert!(
            store
                .txn(Txn::new().when([Compare::value_is("/k", "updated")]))
                .await
                .unwrap()
                .succeeded
        );
        assert!(
            !store
                .txn(Txn::new().when([Compare::value_is("/none", "")]))
                .await
                .unwrap()
                .succeeded
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn concurrent_compare_and_swap_loses_no_update() {
    for (store, _dir) in backends() {
        store.put("/counter", "0").await.unwrap();
        let mut tasks = Vec::new();
        for _ in 0..8 {
            let store = store.clone();
            tasks.push(tokio::spawn(async move {
                for _ in 0..25 {
                    loop {
                        let kv = store.get("/counter").await.unwrap().unwrap();
                        let n: u64 = String::from_utf8(kv.value).unwrap().parse().unwrap();
                        let txn = Txn::new()
                            .when([Compare::mod_revision_is("/counter", kv.mod_revision)])
                            .and_then([Op::put("/counter", (n + 1).to_string())]);
                        if store.txn(txn).await.unwrap().succeeded {
                            break;
                        }
                    }
                }
            }));
        }
        for task in tasks {
            task.await.unwrap();
        }
        assert_eq!(store.get("/counter").await.unwrap().unwrap().value, b"200");
    }
}

#[tokio::test]
async fn watches_replay_from_a_revision_then_follow_live_changes() {
    for (store, _dir) in backends() {
        store.put("/w/a", "1").await.unwrap(); // rev 1
        store.put("/other", "x").await.unwrap(); // rev 2
        store.put("/w/b", "2").await.unwrap(); // rev 3
        let mut watcher = store.watch("/w/", Some(1)).unwrap();
        let first = watcher.next().await.unwrap().unwrap();
        assert_eq!(
            (first.kind, first.kv.key.as_str(), first.kv.mod_revision),
            (EventKind::Put, "/w/b", 3)
        );
        store.delete("/w/a").await.unwrap(); // rev 4
        store.put("/other", "y").await.unwrap(); // rev 5, not under the prefix
        store.put("/w/c", "3").await.unwrap(); // rev 6
        let second = watcher.next().await.unwrap().unwrap();
        assert_eq!(
            (second.kind, second.kv.key.as_str(), second.kv.mod_revision),
            (EventKind::Delete, "/w/a", 4)
        );
        let third = tokio::time::timeout(Duration::from_secs(5), watcher.next())
            .await
            .unwrap()
            .unwrap()
            .unwrap();
        assert_eq!((third.kv.key.as_str(), third.kv.mod_revision), ("/w/c", 6));

        let mut from_now = store.watch("/w/", None).unwrap();
        store.put("/w/d", "4").await.unwrap();
        assert_eq!(from_now.next().await.unwrap().unwrap().kv.key, "/w/d");
    }
}

#[tokio::test]
async fn redb_data_survives_reopen_and_old_history_is_compacted() {
    let dir = tempfile::tempdir().unwrap();
    {
        let store = Store::open_redb(dir.path()).unwrap();
        store.put("/keep", "value").await.unwrap();
        store
            .txn(Txn::new().and_then([Op::put("/a", "1"), Op::put("/b", "2")]))
            .await
            .unwrap();
    }
    // Dropping the store released the file, so it opens again at once.
    let store = Store::open_redb(dir.path()).unwrap();
    assert_eq!(store.revision(), 2);
    let kv = store.get("/keep").await.unwrap().unwrap();
    assert_eq!((kv.value.as_slice(), kv.mod_revision), (b"value".as_slice(), 1));
    assert_eq!(store.range("/").await.unwrap().0.len(), 3);
    assert!(matches!(store.watch("/", Some(0)), Err(Error::Compacted { .. })));
    assert!(store.watch("/", Some(2)).is_ok());
    assert_eq!(store.put("/next", "x").await.unwrap(), 3);
}

/// Environment variable that turns [`crash_writer_child`] into the writer half of the crash test.
const CRASH_DIR_ENV: &str = "EMCO_STORE_CRASH_DIR";

/// Writes generations of two related keys until killed. Run only by [`kill_mid_write_leaves_whole_records`].
#[tokio::test]
#[ignore = "helper process of kill_mid_write_leaves_whole_records"]
async fn crash_writer_child() {
    let Ok(dir) = std::env::var(CRASH_DIR_ENV) else {
        return;
    };
    let store = Store::open_redb(std::path::Path::new(&dir)).unwrap();
    let start = match store.get("/crash/a").await.unwrap() {
        Some(kv) => {
            String::from_utf8(kv.value)
                .unwrap()
                .split(':')
                .next()
                .unwrap()
                .parse::<u64>()
                .unwrap()
                + 1
        }
        None => 0,
    };
    for generation in start.. {
        // A large value makes a torn write likely if writes were not atomic.
        let body = format!("{generation}:{}", "x".repeat(64 * 1024));
        let txn = Txn::new().and_then([Op::put("/crash/a", body.clone()), Op::put("/crash/b", body)]);
        store.txn(txn).await.unwrap();
    }
}

#[test]
fn kill_mid_write_leaves_whole_records() {
    let dir = tempfile::tempdir().unwrap();
    let mut last_generation = None;
    for round in 0..3 {
        let mut child = Command::new(std::env::current_exe().unwrap())
            .args(["--exact", "crash_writer_child", "--ignored", "--nocapture"])
            .env(CRASH_DIR_ENV, dir.path())
            .stdout(std::process::Stdio::null())
            .spawn()
            .unwrap();
        std::thread::sleep(Duration::from_millis(400 + 150 * round));
        child.kill().unwrap(); // SIGKILL: no destructor, no flush.
        child.wait().unwrap();

        let runtime = tokio::runtime::Runtime::new().unwrap();
        runtime.block_on(async {
            let store = Store::open_redb(dir.path()).unwrap();
            let a = store
                .get("/crash/a")
                .await
                .unwrap()
                .expect("some generation was committed");
            let b = store.get("/crash/b").await.unwrap().unwrap();
            assert_eq!(
                a.value, b.value,
                "both keys of one transaction hold the same generation"
            );
            let text = String::from_utf8(a.value).unwrap();
            let (generation, filler) = text.split_once(':').unwrap();
            let generation: u64 = generation.parse().unwrap();
            assert_eq!(filler.len(), 64 * 1024, "the record is whole");
            assert_eq!(a.mod_revision, store.revision());
            // Each round's writer got the file and committed more generations than the round before.
            assert!(
                last_generation.is_none_or(|last| generation > last),
                "round {round} wrote nothing new"
            );
            last_generation = Some(generation);
        });
    }
}

#[test]
fn a_second_open_waits_then_names_the_data_dir_and_the_holder() {
    let dir = tempfile::tempdir().unwrap();
    let first = Store::open_redb(dir.path()).unwrap();
    let pid = std::process::id();
    assert_eq!(
        std::fs::read_to_string(dir.path().join("emco.pid"))
            .unwrap()
            .trim(),
        pid.to_string()
    );
    let wait = Duration::from_millis(400);
    let started = std::time::Instant::now();
    let err = Store::open_redb_waiting(dir.path(), wait).unwrap_err();
    assert!(started.elapsed() >= wait, "gave up before the wait was over");
    assert!(matches!(err, Error::InUse { .. }), "{err:?}");
    let message = err.to_string();
    assert!(
        message.contains(&format!("the store in {} is in use by", dir.path().display()))
            && message.contains(&format!("pid {pid}")),
        "{message}"
    );
    drop(first);
}

#[test]
fn an_open_succeeds_when_the_holder_lets_go_while_it_waits() {
    let dir = tempfile::tempdir().unwrap();
    let first = Store::open_redb(dir.path()).unwrap();
    let release = std::thread::spawn(move || {
        std::thread::sleep(Duration::from_millis(300));
        drop(first);
    });
    let second = Store::open_redb_waiting(dir.path(), Duration::from_secs(10)).unwrap();
    release.join().unwrap();
    let pid_file = dir.path().join("emco.pid");
    assert_eq!(
        std::fs::read_to_string(&pid_file).unwrap().trim(),
        std::process::id().to_string()
    );
    drop(second);
    assert!(!pid_file.exists(), "a clean close removes the pid file");
}

/// Environment variable that turns [`holder_child`] into the process holding the store.
const HOLDER_DIR_ENV: &str = "EMCO_STORE_HOLDER_DIR";

/// Opens the store and holds it until killed. Run only by [`a_store_held_by_another_process_names_it_and_frees_on_kill`].
#[test]
#[ignore = "helper process of a_store_held_by_another_process_names_it_and_frees_on_kill"]
fn holder_child() {
    let Ok(dir) = std::env::var(HOLDER_DIR_ENV) else {
        return;
    };
    let _store = Store::open_redb(std::path::Path::new(&dir)).unwrap();
    loop {
        std::thread::sleep(Duration::from_secs(1));
    }
}

#[test]
fn a_store_held_by_another_process_names_it_and_frees_on_kill() {
    let dir = tempfile::tempdir().unwrap();
    let mut child = Command::new(std::env::current_exe().unwrap())
        .args(["--exact", "holder_child", "--ignored", "--nocapture"])
        .env(HOLDER_DIR_ENV, dir.path())
        .stdout(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let pid_file = dir.path().join("emco.pid");
    let child_pid = child.id().to_string();
    for _ in 0..400 {
        if std::fs::read_to_string(&pid_file).is_ok_and(|text| text.trim() == child_pid) {
            break;
        }
        std::thread::sleep(Duration::from_millis(25));
    }
    let err = Store::open_redb_waiting(dir.path(), Duration::from_millis(200)).unwrap_err();
    assert_eq!(
        err.to_string(),
        format!(
            "the store in {} is in use by another emco (pid {child_pid})",
            dir.path().display()
        )
    );
    // SIGKILL and open at once, without reaping the child first: the open waits for the lock to go.
    child.kill().unwrap();
    let store = Store::open_redb(dir.path());
    child.wait().unwrap();
    let store = store.unwrap();
    assert_eq!(
        std::fs::read_to_string(&pid_file).unwrap().trim(),
        std::process::id().to_string()
    );
    drop(store);
}
