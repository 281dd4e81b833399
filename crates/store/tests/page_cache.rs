//! The embedded store's page cache is bounded (`PAGE_CACHE_BYTES`): writing and then reading back eight times that
//! much data grows the process's resident memory by less than half the data (the cache, the watch history's
//! 8 MiB and the allocator's slack; with redb's default 1 GiB cache the same run grew by 2.2 times the data), and
//! every value reads back whole. Alone in its test binary, so no other test allocates meanwhile.

// Helpers of a test may unwrap: a panic there is a failed test.
#![allow(clippy::unwrap_used)]

use emco_store::{Op, PAGE_CACHE_BYTES, Store, Txn};

/// One value's size, and how many values make four caches' worth.
const VALUE_BYTES: usize = 64 * 1024;
const VALUES: usize = 8 * PAGE_CACHE_BYTES / VALUE_BYTES;

/// The resident set of this process, in bytes.
fn resident_bytes() -> usize {
    let statm = std::fs::read_to_string("/proc/self/statm").unwrap();
    let pages: usize = statm.split_whitespace().nth(1).unwrap().parse().unwrap();
    pages * 4096
}

/// A value that tells which key it was written under.
fn value(index: usize) -> Vec<u8> {
    let mut value = vec![(index % 251) as u8; VALUE_BYTES];
    value[..8].copy_from_slice(&(index as u64).to_le_bytes());
    value
}

#[tokio::test(flavor = "current_thread")]
async fn the_page_cache_stays_within_its_bound_while_the_file_grows_past_it() {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open_redb(dir.path()).unwrap();
    store.put("/warm", "up").await.unwrap();
    let before = resident_bytes();

    for batch in (0..VALUES).collect::<Vec<_>>().chunks(16) {
        let ops = batch
            .iter()
            .map(|&index| Op::put(format!("/values/{index:05}"), value(index)));
        store.txn(Txn::new().and_then(ops)).await.unwrap();
    }
    for index in 0..VALUES {
        let read = store.get(&format!("/values/{index:05}")).await.unwrap().unwrap();
        assert!(read.value == value(index), "value {index} read back changed");
    }

    let file = std::fs::metadata(dir.path().join("emco.redb")).unwrap().len() as usize;
    let grown = resident_bytes().saturating_sub(before);
    assert!(
        file >= VALUES * VALUE_BYTES,
        "the file holds every value: {file} bytes"
    );
    let written = VALUES * VALUE_BYTES;
    assert!(
        grown < written / 2,
        "writing and reading {} MiB grew the process by {} MiB; the page cache is bounded at {} MiB",
        written >> 20,
        grown >> 20,
        PAGE_CACHE_BYTES >> 20
    );
}
