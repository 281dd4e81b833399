//! Behaviour of the store through its public API, run against every backend (memory, redb, and etcd when an
//! `etcd` binary is installed; see `emco_store::etcd_testing`): revisions, transactions, prefix ranges, watches,
//! large values, persistence, and atomicity when the process is killed in the middle of writing.

// Helpers of a test may unwrap: a panic there is a failed test.
#![allow(clippy::unwrap_used)]

use std::process::Command;
use std::time::Duration;

use emco_store::etcd_testing::EtcdServer;
use emco_store::{Compare, Error, EventKind, Op, Store, Txn};

/// What keeps a backend alive: its directory or its etcd server.
#[allow(dead_code)]
enum Keep {
    Nothing,
    Dir(tempfile::TempDir),
    Etcd(EtcdServer),
}

/// The prefix the etcd stores of these tests use (not the default, to show callers never see it).
const ETCD_PREFIX: &str = "/conformance";

/// A fresh etcd server and a store on it; `None` when no etcd is installed (the case skips).
async fn etcd_store() -> Option<(Store, EtcdServer)> {
    let server = EtcdServer::start().await.unwrap()?;
    let store = Store::open_etcd(&[server.endpoint().to_string()], ETCD_PREFIX, None)
        .await
        .unwrap();
    Some((store, server))
}

async fn backends() -> Vec<(Store, Keep)> {
    let dir = tempfile::tempdir().unwrap();
    let redb = Store::open_redb(dir.path()).unwrap();
    let mut backends = vec![(Store::memory(), Keep::Nothing), (redb, Keep::Dir(dir))];
    if let Some((store, server)) = etcd_store().await {
        backends.push((store, Keep::Etcd(server)));
    }
    backends
}

#[tokio::test]
async fn revisions_rise_once_per_write_transaction() {
    for (store, _keep) in backends().await {
        // etcd starts at revision 1, the others at 0.
        let base = store.revision();
        assert_eq!(store.put("/a", "1").await.unwrap(), base + 1, "{store:?}");
        assert_eq!(store.put("/a", "2").await.unwrap(), base + 2);
        let kv = store.get("/a").await.unwrap().unwrap();
        assert_eq!(
            (kv.create_revision, kv.mod_revision, kv.version, kv.value),
            (base + 1, base + 2, 2, b"2".to_vec())
        );
        // One transaction with two puts is one revision, shared by both keys.
        let response = store
            .txn(Txn::new().and_then([Op::put("/b", "x"), Op::put("/c", "y")]))
            .await
            .unwrap();
        assert_eq!(response.revision, base + 3);
        assert_eq!(store.get("/c").await.unwrap().unwrap().mod_revision, base + 3);
        // Deleting nothing changes nothing.
        assert!(!store.delete("/missing").await.unwrap());
        assert_eq!(store.revision(), base + 3);
        assert!(store.delete("/a").await.unwrap());
        assert_eq!(store.revision(), base + 4);
        assert_eq!(store.get("/a").await.unwrap(), None);
        // A re-created key starts a new life.
        store.put("/a", "3").await.unwrap();
        let kv = store.get("/a").await.unwrap().unwrap();
        assert_eq!((kv.create_revision, kv.version), (base + 5, 1));
    }
}

#[tokio::test]
async fn ranges_are_by_prefix_in_key_order() {
    for (store, _keep) in backends().await {
        let base = store.revision();
        for key in ["/p/b", "/p/a", "/p/a/x", "/q/a", "/p"] {
            store.put(key, key).await.unwrap();
        }
        let (items, revision) = store.range("/p/").await.unwrap();
        let keys: Vec<_> = items.iter().map(|kv| kv.key.as_str()).collect();
        assert_eq!(keys, ["/p/a", "/p/a/x", "/p/b"]);
        assert_eq!(revision, base + 5);
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
    for (store, _keep) in backends().await {
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

#[tokio::test]
async fn a_prefix_compare_fails_once_a_key_under_it_is_created_or_changed_but_not_deleted() {
    for (store, _keep) in backends().await {
        store.put("/parent/a", "1").await.unwrap();
        store.put("/parentless", "x").await.unwrap();
        let (_, read_at) = store.range("/parent/").await.unwrap();
        let guarded = |revision| {
            Txn::new()
                .when([Compare::prefix_unchanged_since("/parent/", revision)])
                .and_then([Op::put("/guarded", "written")])
        };
        assert!(store.txn(guarded(read_at)).await.unwrap().succeeded, "{store:?}");
        // A key beside the prefix (not under it) does not count.
        store.put("/parentless", "y").await.unwrap();
        let (_, read_at) = store.range("/parent/").await.unwrap();
        assert!(store.txn(guarded(read_at)).await.unwrap().succeeded);
        // Deleting a key under it does not count either ("no children" only gets truer).
        store.delete("/parent/a").await.unwrap();
        assert!(store.txn(guarded(read_at)).await.unwrap().succeeded, "{store:?}");
        // An empty prefix holds; a key created under it afterwards fails the compare.
        store.put("/parent/b", "2").await.unwrap();
        assert!(!store.txn(guarded(read_at)).await.unwrap().succeeded, "{store:?}");
        let (_, read_at) = store.range("/parent/").await.unwrap();
        store.put("/parent/b", "3").await.unwrap();
        assert!(
            !store.txn(guarded(read_at)).await.unwrap().succeeded,
            "a changed key fails it"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn concurrent_compare_and_swap_loses_no_update() {
    for (store, _keep) in backends().await {
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
    for (store, _keep) in backends().await {
        let base = store.revision();
        store.put("/w/a", "1").await.unwrap(); // base + 1
        store.put("/other", "x").await.unwrap(); // base + 2
        store.put("/w/b", "2").await.unwrap(); // base + 3
        let mut watcher = store.watch("/w/", Some(base + 1)).unwrap();
        let first = watcher.next().await.unwrap().unwrap();
        assert_eq!(
            (first.kind, first.kv.key.as_str(), first.kv.mod_revision),
            (EventKind::Put, "/w/b", base + 3),
            "{store:?}"
        );
        store.delete("/w/a").await.unwrap(); // base + 4
        store.put("/other", "y").await.unwrap(); // base + 5, not under the prefix
        store.put("/w/c", "3").await.unwrap(); // base + 6
        let second = watcher.next().await.unwrap().unwrap();
        assert_eq!(
            (second.kind, second.kv.key.as_str(), second.kv.mod_revision),
            (EventKind::Delete, "/w/a", base + 4)
        );
        let third = tokio::time::timeout(Duration::from_secs(5), watcher.next())
            .await
            .unwrap()
            .unwrap()
            .unwrap();
        assert_eq!((third.kv.key.as_str(), third.kv.mod_revision), ("/w/c", base + 6));

        let mut from_now = store.watch("/w/", None).unwrap();
        store.put("/w/d", "4").await.unwrap();
        assert_eq!(from_now.next().await.unwrap().unwrap().kv.key, "/w/d");

        // One transaction arrives as one batch.
        let mut batches = store.watch("/w/", None).unwrap();
        let response = store
            .txn(Txn::new().and_then([Op::put("/w/e", "5"), Op::delete("/w/b"), Op::put("/x", "6")]))
            .await
            .unwrap();
        let (revision, events) = batches.next_batch().await.unwrap().unwrap();
        assert_eq!(revision, response.revision);
        let keys: Vec<_> = events
            .iter()
            .map(|event| (event.kind, event.kv.key.as_str()))
            .collect();
        assert_eq!(keys, [(EventKind::Put, "/w/e"), (EventKind::Delete, "/w/b")]);
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

/// Environment variable that turns [`acknowledging_writer_child`] into the writer half of its crash test.
const ACK_DIR_ENV: &str = "EMCO_STORE_ACK_DIR";
/// Writers at once in [`acknowledging_writer_child`]: enough for the store to commit their writes in groups.
const ACK_WRITERS: usize = 32;

/// Runs [`ACK_WRITERS`] writers at once, each writing its own keys one after the other and printing a key on
/// stdout once the store answered its write. Run only by [`a_sigkill_loses_no_write_the_store_acknowledged`].
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "helper process of a_sigkill_loses_no_write_the_store_acknowledged"]
async fn acknowledging_writer_child() {
    let Ok(dir) = std::env::var(ACK_DIR_ENV) else {
        return;
    };
    let store = std::sync::Arc::new(Store::open_redb(std::path::Path::new(&dir)).unwrap());
    let writers: Vec<_> = (0..ACK_WRITERS)
        .map(|writer| {
            let store = store.clone();
            tokio::spawn(async move {
                for n in 0.. {
                    let key = format!("/ack/{writer}/{n}");
                    store
                        .txn(Txn::new().and_then([Op::put(&key, vec![b'v'; 2048])]))
                        .await
                        .unwrap();
                    // One write per line, flushed: a line read by the parent is a write the store answered.
                    use std::io::Write as _;
                    let mut out = std::io::stdout().lock();
                    writeln!(out, "{key}").unwrap();
                    out.flush().unwrap();
                }
            })
        })
        .collect();
    for writer in writers {
        writer.await.unwrap();
    }
}

/// A SIGKILL while many writers' transactions are committed in groups loses none the store had answered.
#[test]
fn a_sigkill_loses_no_write_the_store_acknowledged() {
    use std::io::BufRead as _;
    let dir = tempfile::tempdir().unwrap();
    let mut child = Command::new(std::env::current_exe().unwrap())
        .args([
            "--exact",
            "acknowledging_writer_child",
            "--ignored",
            "--nocapture",
            "-q",
        ])
        .env(ACK_DIR_ENV, dir.path())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let stdout = child.stdout.take().unwrap();
    let (lines, received) = std::sync::mpsc::channel();
    let reader = std::thread::spawn(move || {
        for line in std::io::BufReader::new(stdout).lines() {
            let Ok(line) = line else { break };
            if line.starts_with("/ack/") && lines.send(line).is_err() {
                break;
            }
        }
    });
    // Killed once plenty of writes were answered, while the writers go on.
    let mut acknowledged = Vec::new();
    while acknowledged.len() < 2_000 {
        match received.recv_timeout(Duration::from_secs(60)) {
            Ok(key) => acknowledged.push(key),
            Err(err) => panic!("the writer answered {} writes, then: {err}", acknowledged.len()),
        }
    }
    child.kill().unwrap(); // SIGKILL: no destructor, no flush.
    child.wait().unwrap();
    reader.join().unwrap();
    // Lines written before the kill and not yet read are acknowledged writes too.
    acknowledged.extend(received.try_iter());

    let runtime = tokio::runtime::Runtime::new().unwrap();
    runtime.block_on(async {
        let store = Store::open_redb(dir.path()).unwrap();
        let stored: std::collections::HashSet<String> = store
            .range("/ack/")
            .await
            .unwrap()
            .0
            .into_iter()
            .map(|kv| kv.key)
            .collect();
        let lost: Vec<&String> = acknowledged.iter().filter(|key| !stored.contains(*key)).collect();
        assert!(
            lost.is_empty(),
            "{} of {} acknowledged writes lost, e.g. {:?}",
            lost.len(),
            acknowledged.len(),
            lost.first()
        );
        // The writers' own keys are whole sequences: a key of a writer is there only if all its earlier ones are.
        for writer in 0..ACK_WRITERS {
            let count = stored
                .iter()
                .filter(|key| key.starts_with(&format!("/ack/{writer}/")))
                .count();
            for n in 0..count {
                assert!(
                    stored.contains(&format!("/ack/{writer}/{n}")),
                    "writer {writer}: {n} of {count} missing"
                );
            }
        }
    });
}

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

#[tokio::test]
async fn overlapping_writes_in_one_transaction_end_as_written_last() {
    for (store, _keep) in backends().await {
        store
            .txn(Txn::new().and_then([Op::put("/f/a", "1"), Op::put("/f/b", "1"), Op::put("/f/c", "1")]))
            .await
            .unwrap();
        let response = store
            .txn(Txn::new().and_then([
                Op::delete_prefix("/f/"),
                Op::put("/f/b", "2"),
                Op::put("/g", "1"),
                Op::put("/g", "2"),
                Op::delete("/f/c"),
            ]))
            .await
            .unwrap();
        let (items, _) = store.range("/f/").await.unwrap();
        let found: Vec<_> = items
            .iter()
            .map(|kv| (kv.key.as_str(), kv.value.as_slice()))
            .collect();
        assert_eq!(found, [("/f/b", b"2".as_slice())], "{store:?}");
        let g = store.get("/g").await.unwrap().unwrap();
        assert_eq!(
            (g.value.as_slice(), g.mod_revision),
            (b"2".as_slice(), response.revision)
        );
    }
}

/// A value of `len` bytes that differs from chunk to chunk (so chunks out of order would show).
fn big_value(len: usize, seed: u8) -> Vec<u8> {
    (0..len)
        .map(|i| ((i / 1000) as u8).wrapping_mul(31).wrapping_add(seed))
        .collect()
}

/// How many chunk keys an etcd store keeps under `prefix`.
async fn chunk_keys(endpoint: &str, prefix: &str) -> i64 {
    emco_store::etcd_testing::key_count(endpoint, &format!("{prefix}/c"))
        .await
        .unwrap()
}

/// Waits (bounded) until an etcd store keeps `expected` chunk keys; returns how many it keeps.
async fn settle_chunk_keys(endpoint: &str, prefix: &str, expected: i64) -> i64 {
    let mut count = chunk_keys(endpoint, prefix).await;
    for _ in 0..100 {
        if count == expected {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
        count = chunk_keys(endpoint, prefix).await;
    }
    count
}

#[tokio::test]
async fn values_above_etcds_request_limit_are_whole_in_every_read_and_event() {
    const SIZE: usize = 5 * 1024 * 1024;
    for (store, keep) in backends().await {
        let etcd = match &keep {
            Keep::Etcd(server) => Some(server.endpoint().to_string()),
            _ => None,
        };
        let big = big_value(SIZE, 1);
        let mut watcher = store.watch("/big/", None).unwrap();
        store.put("/big/chart", big.clone()).await.unwrap();
        store.put("/big/small", "s").await.unwrap();

        let kv = store.get("/big/chart").await.unwrap().unwrap();
        assert!(
            kv.value == big,
            "{store:?}: get returned {} bytes",
            kv.value.len()
        );
        assert_eq!(kv.version, 1);
        let (items, _) = store.range("/big/").await.unwrap();
        let keys: Vec<_> = items.iter().map(|kv| kv.key.as_str()).collect();
        assert_eq!(keys, ["/big/chart", "/big/small"], "chunks never show in a range");
        assert!(items[0].value == big);
        let event = watcher.next().await.unwrap().unwrap();
        assert_eq!(event.kv.key, "/big/chart");
        assert!(event.kv.value == big, "the event carries the whole value");
        // A compare on the whole value means what it says.
        let same = Txn::new().when([Compare::value_is("/big/chart", big.clone())]);
        assert!(store.txn(same).await.unwrap().succeeded);
        let other = Txn::new().when([Compare::value_is("/big/chart", big_value(SIZE, 2))]);
        assert!(!store.txn(other).await.unwrap().succeeded);
        if let Some(endpoint) = &etcd {
            assert_eq!(chunk_keys(endpoint, ETCD_PREFIX).await, 5);
        }

        // Replaced by another large value, then by a small one: the old chunks go.
        let bigger = big_value(SIZE + 10, 3);
        store.put("/big/chart", bigger.clone()).await.unwrap();
        assert!(store.get("/big/chart").await.unwrap().unwrap().value == bigger);
        if let Some(endpoint) = &etcd {
            assert_eq!(settle_chunk_keys(endpoint, ETCD_PREFIX, 6).await, 6);
        }
        // A failed transaction leaves no chunks behind.
        let refused = Txn::new()
            .when([Compare::absent("/big/chart")])
            .and_then([Op::put("/big/chart", big_value(SIZE, 4))]);
        assert!(!store.txn(refused).await.unwrap().succeeded);
        assert!(store.get("/big/chart").await.unwrap().unwrap().value == bigger);
        if let Some(endpoint) = &etcd {
            assert_eq!(settle_chunk_keys(endpoint, ETCD_PREFIX, 6).await, 6);
        }
        assert!(store.delete("/big/chart").await.unwrap());
        assert_eq!(store.get("/big/chart").await.unwrap(), None);
        if let Some(endpoint) = &etcd {
            assert_eq!(
                settle_chunk_keys(endpoint, ETCD_PREFIX, 0).await,
                0,
                "delete removes every chunk"
            );
        }
    }
}

#[tokio::test]
async fn etcd_refuses_a_transaction_above_its_request_limit_by_name() {
    let Some((store, _server)) = etcd_store().await else {
        return;
    };
    // Each value is inline (below the chunk threshold), together they exceed 1.5 MiB.
    let ops: Vec<Op> = (0..7)
        .map(|i| Op::put(format!("/many/{i}"), vec![b'x'; 250 * 1024]))
        .collect();
    let err = store.txn(Txn::new().and_then(ops)).await.unwrap_err();
    let message = err.to_string();
    assert!(matches!(err, Error::TooLarge(_)), "{err:?}");
    assert!(
        message.contains("--max-request-bytes") && message.contains("'/many/"),
        "{message}"
    );
    assert!(
        store.range("/many/").await.unwrap().0.is_empty(),
        "nothing was written"
    );
}

#[tokio::test]
async fn etcd_watch_at_a_compacted_revision_ends_with_compacted() {
    let Some((store, _server)) = etcd_store().await else {
        return;
    };
    let base = store.revision();
    for i in 0..3 {
        store.put("/c/k", i.to_string()).await.unwrap();
    }
    let Store::Etcd(etcd) = &store else {
        panic!("an etcd store")
    };
    etcd.compact(store.revision()).await.unwrap();
    let mut watcher = store.watch("/c/", Some(base)).unwrap();
    let first = tokio::time::timeout(Duration::from_secs(10), watcher.next())
        .await
        .unwrap()
        .unwrap();
    assert!(matches!(first, Err(Error::Compacted { .. })), "{first:?}");
    // From the newest revision the watch works.
    let mut watcher = store.watch("/c/", Some(store.revision())).unwrap();
    store.put("/c/k", "next").await.unwrap();
    assert_eq!(watcher.next().await.unwrap().unwrap().kv.value, b"next");
}

#[tokio::test]
async fn etcd_data_survives_reopen_prefixes_are_separate_and_others_writes_raise_the_revision() {
    let Some((store, server)) = etcd_store().await else {
        return;
    };
    let endpoints = [server.endpoint().to_string()];
    store.put("/keep", "value").await.unwrap();
    let written = store.revision();
    drop(store);

    let reopened = Store::open_etcd(&endpoints, ETCD_PREFIX, None).await.unwrap();
    assert!(reopened.revision() >= written);
    let kv = reopened.get("/keep").await.unwrap().unwrap();
    assert_eq!(
        (kv.value.as_slice(), kv.mod_revision),
        (b"value".as_slice(), written)
    );
    let other = Store::open_etcd(&endpoints, "/elsewhere", None).await.unwrap();
    assert_eq!(other.get("/keep").await.unwrap(), None);
    assert!(other.range("").await.unwrap().0.is_empty());

    // A write through another handle reaches this one's revision through its background watch.
    let writer = Store::open_etcd(&endpoints, ETCD_PREFIX, None).await.unwrap();
    let revision = writer.put("/from-elsewhere", "x").await.unwrap();
    for _ in 0..100 {
        if reopened.revision() >= revision {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert_eq!(reopened.revision(), revision);
    // The other prefix's revision does not move for writes it cannot see.
    assert!(other.revision() < revision);
}

#[tokio::test]
async fn the_current_revision_counts_another_handles_write_at_once_and_never_outruns_a_watch() {
    for (store, _keep) in backends().await {
        store.put("/cur/a", "1").await.unwrap();
        assert_eq!(
            store.current_revision().await.unwrap(),
            store.revision(),
            "{store:?}"
        );
    }
    let Some((store, server)) = etcd_store().await else {
        return;
    };
    let endpoints = [server.endpoint().to_string()];
    let reader = Store::open_etcd(&endpoints, ETCD_PREFIX, None).await.unwrap();
    // Writes outside the prefix (another store's) raise etcd's revision but not this prefix's current revision,
    // which a watch of the prefix could never reach.
    let other = Store::open_etcd(&endpoints, "/elsewhere", None).await.unwrap();
    let before = reader.current_revision().await.unwrap();
    other.put("/x", "y").await.unwrap();
    assert_eq!(reader.current_revision().await.unwrap(), before);
    // A write through another handle counts as soon as it is acknowledged, before any watch delivered it.
    for round in 0..20 {
        let written = store.put(&format!("/cur/{round}"), "v").await.unwrap();
        assert!(reader.current_revision().await.unwrap() >= written);
    }
    // And a watch of the prefix reaches it.
    let target = reader.current_revision().await.unwrap();
    for _ in 0..100 {
        if reader.revision() >= target {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert_eq!(reader.revision(), target);
}

#[tokio::test]
async fn etcd_lost_connection_is_a_backend_error_naming_the_endpoint() {
    let Some((store, mut server)) = etcd_store().await else {
        return;
    };
    store.put("/k", "v").await.unwrap();
    let mut watcher = store.watch("/", None).unwrap();
    server.kill();
    let endpoint = server.endpoint().to_string();
    let err = tokio::time::timeout(Duration::from_secs(30), store.get("/k"))
        .await
        .expect("a read of a lost etcd ends")
        .unwrap_err();
    assert!(
        matches!(&err, Error::Backend(message) if message.contains(&endpoint)),
        "{err:?}"
    );
    let err = tokio::time::timeout(Duration::from_secs(30), store.put("/k", "w"))
        .await
        .expect("a write to a lost etcd ends")
        .unwrap_err();
    assert!(err.to_string().contains(&endpoint), "{err}");
    let ended = tokio::time::timeout(Duration::from_secs(60), watcher.next())
        .await
        .expect("a watch of a lost etcd ends");
    assert!(matches!(ended, Some(Err(Error::Backend(_)))), "{ended:?}");
}

#[tokio::test]
async fn etcd_open_of_a_bad_endpoint_fails_soon_naming_it() {
    let closed = format!("http://127.0.0.1:{}", {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        listener.local_addr().unwrap().port()
    });
    let err = tokio::time::timeout(
        Duration::from_secs(20),
        Store::open_etcd(std::slice::from_ref(&closed), "/emco", None),
    )
    .await
    .expect("opening gives up by itself")
    .unwrap_err();
    assert!(err.to_string().contains(&closed), "{err}");
    let err = Store::open_etcd(&["localhost:2379".to_string()], "/emco", None)
        .await
        .unwrap_err();
    assert!(
        err.to_string()
            .contains("'localhost:2379' is not an etcd endpoint"),
        "{err}"
    );
}

#[tokio::test]
async fn etcd_open_sweeps_chunk_sets_no_head_names() {
    let Some((store, server)) = etcd_store().await else {
        return;
    };
    let endpoint = server.endpoint().to_string();
    let big = big_value(2 * 1024 * 1024, 5);
    store.put("/kept", big.clone()).await.unwrap();
    assert_eq!(chunk_keys(&endpoint, ETCD_PREFIX).await, 2);
    drop(store);
    // Chunks of a writer that stopped before its transaction: of a missing head, and of a head naming another set.
    let digest = "ab".repeat(32);
    for key in ["/gone", "/kept"] {
        emco_store::etcd_testing::put_key(
            &endpoint,
            &format!("{ETCD_PREFIX}/c{key}\0{digest}/000000"),
            b"stale",
        )
        .await
        .unwrap();
    }
    assert_eq!(chunk_keys(&endpoint, ETCD_PREFIX).await, 4);
    let reopened = Store::open_etcd(std::slice::from_ref(&endpoint), ETCD_PREFIX, None)
        .await
        .unwrap();
    assert_eq!(settle_chunk_keys(&endpoint, ETCD_PREFIX, 2).await, 2);
    assert!(reopened.get("/kept").await.unwrap().unwrap().value == big);
}

/// PEM files of a CA, a serving certificate for 127.0.0.1 and a client certificate, in `dir`.
fn tls_files(dir: &std::path::Path) -> (std::path::PathBuf, std::path::PathBuf, emco_store::EtcdTls) {
    use rcgen::{BasicConstraints, CertificateParams, ExtendedKeyUsagePurpose, IsCa, Issuer, KeyPair};
    let ca_key = KeyPair::generate().unwrap();
    let mut ca_params = CertificateParams::new(Vec::<String>::new()).unwrap();
    ca_params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    let ca = ca_params.self_signed(&ca_key).unwrap();
    let issuer = Issuer::new(ca_params, ca_key);
    let issue = |names: Vec<String>, usage: ExtendedKeyUsagePurpose| {
        let key = KeyPair::generate().unwrap();
        let mut params = CertificateParams::new(names).unwrap();
        params.extended_key_usages = vec![usage];
        (
            params.signed_by(&key, &issuer).unwrap().pem(),
            key.serialize_pem(),
        )
    };
    let (server_cert, server_key) = issue(
        vec!["127.0.0.1".into(), "localhost".into()],
        ExtendedKeyUsagePurpose::ServerAuth,
    );
    let (client_cert, client_key) = issue(vec!["emco".into()], ExtendedKeyUsagePurpose::ClientAuth);
    let write = |name: &str, pem: &str| {
        let path = dir.join(name);
        std::fs::write(&path, pem).unwrap();
        path
    };
    let tls = emco_store::EtcdTls {
        ca_file: Some(write("ca.pem", &ca.pem())),
        cert_file: Some(write("client.pem", &client_cert)),
        key_file: Some(write("client-key.pem", &client_key)),
    };
    (
        write("server.pem", &server_cert),
        write("server-key.pem", &server_key),
        tls,
    )
}

#[tokio::test]
async fn etcd_over_tls_with_a_client_certificate() {
    let dir = tempfile::tempdir().unwrap();
    let (server_cert, server_key, tls) = tls_files(dir.path());
    let Some(server) = EtcdServer::start_tls(&server_cert, &server_key, &tls)
        .await
        .unwrap()
    else {
        return;
    };
    let endpoints = [server.endpoint().to_string()];
    assert!(endpoints[0].starts_with("https://"));
    let store = Store::open_etcd(&endpoints, ETCD_PREFIX, Some(&tls))
        .await
        .unwrap();
    store.put("/secure", "yes").await.unwrap();
    assert_eq!(store.get("/secure").await.unwrap().unwrap().value, b"yes");
    // Without the client certificate etcd refuses the connection, and the open says so.
    let no_client_cert = emco_store::EtcdTls {
        cert_file: None,
        key_file: None,
        ..tls.clone()
    };
    let err = Store::open_etcd(&endpoints, ETCD_PREFIX, Some(&no_client_cert))
        .await
        .unwrap_err();
    assert!(err.to_string().contains(&endpoints[0]), "{err}");
    // A missing file is named.
    let missing = emco_store::EtcdTls {
        ca_file: Some(dir.path().join("nope.pem")),
        ..tls
    };
    let err = Store::open_etcd(&endpoints, ETCD_PREFIX, Some(&missing))
        .await
        .unwrap_err();
    assert!(err.to_string().contains("nope.pem"), "{err}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn etcd_concurrent_writers_of_large_values_never_leave_a_torn_or_orphaned_value() {
    let Some((first, server)) = etcd_store().await else {
        return;
    };
    let endpoint = server.endpoint().to_string();
    let second = Store::open_etcd(std::slice::from_ref(&endpoint), ETCD_PREFIX, None)
        .await
        .unwrap();
    let values: Vec<Vec<u8>> = (0..3).map(|seed| big_value(1_500_000, seed)).collect();
    let mut writers = Vec::new();
    for (store, order) in [(first.clone(), [0, 1, 2]), (second.clone(), [2, 1, 0])] {
        let values = values.clone();
        writers.push(tokio::spawn(async move {
            for round in 0..6 {
                store
                    .put("/shared", values[order[round % 3]].clone())
                    .await
                    .unwrap();
            }
        }));
    }
    let reader = {
        let store = first.clone();
        let values = values.clone();
        tokio::spawn(async move {
            for _ in 0..20 {
                if let Some(kv) = store.get("/shared").await.unwrap() {
                    assert!(values.contains(&kv.value), "a read saw a torn value");
                }
            }
        })
    };
    for writer in writers {
        writer.await.unwrap();
    }
    reader.await.unwrap();
    let last = first.get("/shared").await.unwrap().unwrap();
    assert!(values.contains(&last.value));
    // Only the current value's two chunks stay.
    assert_eq!(settle_chunk_keys(&endpoint, ETCD_PREFIX, 2).await, 2);
}
