//! The read set of an optimistic write: while a request's check-then-write runs inside [`tracking`], every read
//! the catalog and AppContexts make records what it saw — a key with its mod revision (0: absent), a prefix range
//! with the revision it read at — and the request's final write transaction carries [`compares`] of all of them
//! (the catalog's and the lifecycle's writes add them through [`guard`]). A change by anyone (another request,
//! another replica on the same etcd) to something the request looked at between its read and its write fails
//! that transaction, and the caller runs its logic again on fresh reads. One mechanism for every backend.
//!
//! A key read twice keeps its latest read (a re-check that read again decides on what it read last). A prefix
//! compare fails when a key under it is created or changed, not when one is deleted: every decision taken on a
//! range here ("no children", "no referrer", "no dependency cycle", "the inputs are these") stays true when a
//! key goes away, or re-reads the key itself.
//!
//! The number of compares is bounded ([`MAX_COMPARES`], under etcd's default of 128 per transaction): a larger
//! set is coarsened, largest group first and from deep groups (reads sharing eight path segments) to shallow ones
//! (three, e.g. `/emco/v1/res/`), each group into one prefix compare over its common prefix since its earliest
//! read — stricter (a change to an unread neighbour fails it too, and the caller retries), never looser.

use std::cell::RefCell;
use std::collections::BTreeMap;
use std::future::Future;

use emco_store::{Compare, Revision, Txn};

/// The most compares a read set adds to a transaction.
pub const MAX_COMPARES: usize = 96;

tokio::task_local! {
    static CURRENT: RefCell<ReadSet>;
}

/// What one key read saw.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct KeyRead {
    /// Its mod revision; 0 when it was absent.
    mod_revision: Revision,
    /// A revision the read saw the store at (or later): the earliest a change could have been missed from.
    read_at: Revision,
}

/// The keys and prefixes a request read, with what it saw.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ReadSet {
    keys: BTreeMap<String, KeyRead>,
    prefixes: BTreeMap<String, Revision>,
}

impl ReadSet {
    /// An empty read set.
    #[must_use]
    pub fn new() -> Self {
        Self::default()
    }

    /// Records that `key` was read with `mod_revision` (0: absent) when the store was at `read_at` or later.
    pub fn record_key(&mut self, key: &str, mod_revision: Revision, read_at: Revision) {
        let read_at = read_at.max(mod_revision);
        self.keys.insert(
            key.to_string(),
            KeyRead {
                mod_revision,
                read_at,
            },
        );
    }

    /// Records that the keys under `prefix` were read at `revision`.
    pub fn record_prefix(&mut self, prefix: &str, revision: Revision) {
        self.prefixes.insert(prefix.to_string(), revision);
    }

    /// How many keys and prefixes were recorded.
    #[must_use]
    pub fn len(&self) -> usize {
        self.keys.len() + self.prefixes.len()
    }

    /// Whether nothing was recorded.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The compares that hold while nothing read changed, at most [`MAX_COMPARES`] of them.
    #[must_use]
    pub fn compares(&self) -> Vec<Compare> {
        let mut reads: Vec<Read> = self
            .keys
            .iter()
            .map(|(key, read)| Read {
                path: key.clone(),
                mod_revision: Some(read.mod_revision),
                read_at: read.read_at,
            })
            .chain(self.prefixes.iter().map(|(prefix, revision)| Read {
                path: prefix.clone(),
                mod_revision: None,
                read_at: *revision,
            }))
            .collect();
        for depth in (MIN_GROUP_DEPTH..=MAX_GROUP_DEPTH).rev() {
            if reads.len() <= MAX_COMPARES {
                break;
            }
            reads = coarsen(reads, depth);
        }
        reads.into_iter().map(Read::compare).collect()
    }
}

/// Coarsening first merges reads sharing this many leading path segments (`/emco/v1/res/app/p/ca/v1/`)…
const MAX_GROUP_DEPTH: usize = 8;
/// …and at the most, those sharing this many (`/emco/v1/res/`, `/context/<id>/app/`); a context's meta
/// (`/context/<id>/meta`) is never merged with anything.
const MIN_GROUP_DEPTH: usize = 3;

/// One entry of a read set on its way to a compare.
#[derive(Debug, Clone)]
struct Read {
    /// The key, or the prefix.
    path: String,
    /// A key's mod revision (0: absent); `None` for a prefix.
    mod_revision: Option<Revision>,
    /// When it was read.
    read_at: Revision,
}

impl Read {
    fn compare(self) -> Compare {
        match self.mod_revision {
            Some(revision) => Compare::mod_revision_is(self.path, revision),
            None => Compare::prefix_unchanged_since(self.path, self.read_at),
        }
    }
}

/// The group of a path at `depth`: up to and including its `depth + 1`-th `/`, or all of it.
fn group_of(path: &str, depth: usize) -> &str {
    match path.match_indices('/').nth(depth) {
        Some((index, _)) => &path[..=index],
        None => path,
    }
}

/// Merges the largest groups of `reads` at `depth` into one prefix read each until at most [`MAX_COMPARES`]
/// remain (or every group is one read).
fn coarsen(reads: Vec<Read>, depth: usize) -> Vec<Read> {
    let mut total = reads.len();
    let mut groups: BTreeMap<String, Vec<Read>> = BTreeMap::new();
    for read in reads {
        groups
            .entry(group_of(&read.path, depth).to_string())
            .or_default()
            .push(read);
    }
    let mut by_size: Vec<(usize, String)> = groups
        .iter()
        .map(|(group, members)| (members.len(), group.clone()))
        .collect();
    by_size.sort_by(|a, b| b.0.cmp(&a.0).then_with(|| a.1.cmp(&b.1)));
    for (size, group) in by_size {
        if total <= MAX_COMPARES || size <= 1 {
            break;
        }
        if let Some(members) = groups.remove(&group) {
            groups.insert(group, vec![merge(members)]);
            total -= size - 1;
        }
    }
    groups.into_values().flatten().collect()
}

/// One prefix read covering `members`: their common prefix, cut after a `/` (whole names only), since the earliest
/// of their reads.
fn merge(members: Vec<Read>) -> Read {
    let mut prefix = members.first().map(|read| read.path.clone()).unwrap_or_default();
    let mut read_at = Revision::MAX;
    for member in &members {
        let common = prefix
            .char_indices()
            .zip(member.path.chars())
            .take_while(|((_, a), b)| a == b)
            .last()
            .map_or(0, |((index, c), _)| index + c.len_utf8());
        prefix.truncate(common);
        read_at = read_at.min(member.read_at);
    }
    let cut = prefix.rfind('/').map_or(0, |index| index + 1);
    prefix.truncate(cut);
    Read {
        path: prefix,
        mod_revision: None,
        read_at,
    }
}

/// Runs `work` with a fresh read set that the catalog's and AppContexts' reads inside it record into.
pub async fn tracking<F: Future>(work: F) -> F::Output {
    CURRENT.scope(RefCell::new(ReadSet::new()), work).await
}

/// Whether the current task is tracking reads.
#[must_use]
pub fn is_tracking() -> bool {
    CURRENT.try_with(|_| ()).is_ok()
}

/// Records a key read in the current read set (nothing outside [`tracking`]).
pub fn record_key(key: &str, mod_revision: Revision, read_at: Revision) {
    let _ = CURRENT.try_with(|set| set.borrow_mut().record_key(key, mod_revision, read_at));
}

/// Records a prefix read in the current read set (nothing outside [`tracking`]).
pub fn record_prefix(prefix: &str, revision: Revision) {
    let _ = CURRENT.try_with(|set| set.borrow_mut().record_prefix(prefix, revision));
}

/// The compares of the current read set (none outside [`tracking`]).
#[must_use]
pub fn compares() -> Vec<Compare> {
    CURRENT
        .try_with(|set| set.borrow().compares())
        .unwrap_or_default()
}

/// `txn` guarded by the current read set as well.
#[must_use]
pub fn guard(txn: Txn) -> Txn {
    txn.when(compares())
}

#[cfg(test)]
mod tests {
    use emco_store::{Op, Store};
    use serde_json::json;

    use super::*;
    use crate::{Catalog, CatalogError, Kind, ResourcePath};

    fn project(name: &str) -> ResourcePath {
        ResourcePath::new(Kind::Project, vec![name.to_string()])
    }

    fn composite_app(project: &str, name: &str) -> ResourcePath {
        ResourcePath::new(
            Kind::CompositeApp,
            vec![project.to_string(), name.to_string(), "v1".to_string()],
        )
    }

    #[tokio::test]
    async fn a_write_fails_when_something_it_read_changed_meanwhile() {
        let catalog = Catalog::new(Store::memory());
        let body = json!({"metadata": {"name": "x"}});
        catalog.create(&project("p"), &body, None, vec![]).await.unwrap();
        // Deleting a project whose children were read as none, while a child appears, must fail.
        let outcome = tracking(async {
            assert!(
                catalog
                    .remaining_children(&project("p"))
                    .await
                    .unwrap()
                    .is_empty()
            );
            // Another writer (outside this read set) creates a child now.
            let other = Catalog::new(catalog.store().clone());
            tokio::spawn(async move {
                other
                    .create(&composite_app("p", "ca"), &json!({}), None, vec![])
                    .await
            })
            .await
            .unwrap()
            .unwrap();
            catalog.delete(&project("p"), vec![]).await
        })
        .await;
        // `delete` itself sees the child (it reads again), so it answers HasChildren; the guard matters when the
        // decision was taken on the earlier read only, as below.
        assert!(
            matches!(outcome, Err(CatalogError::HasChildren { .. })),
            "{outcome:?}"
        );

        let stale = tracking(async {
            let _ = catalog
                .list(Kind::CompositeApp, &["p".to_string()])
                .await
                .unwrap();
            let _ = catalog.exists(&project("q")).await.unwrap();
            let txn = guard(Txn::new().and_then([Op::put("/decision", "taken")]));
            assert_eq!(txn.compares.len(), 2, "{:?}", txn.compares);
            // Unchanged: the guarded write goes through.
            assert!(catalog.store().txn(txn.clone()).await.unwrap().succeeded);
            // A new sibling under the listed prefix fails it; so does the key read as absent appearing.
            catalog
                .create(&composite_app("p", "cb"), &json!({}), None, vec![])
                .await
                .unwrap();
            let listed = catalog.store().txn(txn.clone()).await.unwrap().succeeded;
            let txn = guard(Txn::new().and_then([Op::put("/decision", "again")]));
            let _ = catalog.exists(&project("q")).await.unwrap();
            let refreshed = guard(Txn::new());
            catalog.store().put("/emco/v1/res/project/q", "{}").await.unwrap();
            let appeared = catalog.store().txn(refreshed).await.unwrap().succeeded;
            (listed, txn, appeared)
        })
        .await;
        assert!(!stale.0, "a child created after the list fails the write");
        assert!(!stale.2, "a key read as absent that appears fails the write");
        assert!(!stale.1.compares.is_empty(), "the set is kept across reads");
        assert!(
            guard(Txn::new()).compares.is_empty(),
            "outside tracking nothing is added"
        );
        assert!(!is_tracking());
    }

    #[tokio::test]
    async fn a_large_read_set_is_coarsened_within_bounds_and_still_guards_every_read() {
        let store = Store::memory();
        for index in 0..150 {
            store
                .put(&format!("/emco/v1/res/app/p/ca/v1/app{index:03}"), "{}")
                .await
                .unwrap();
        }
        store.put("/emco/v1/state/dig/p/ca/v1/d", "{}").await.unwrap();
        store.put("/elsewhere/k", "x").await.unwrap();
        let read_at = store.revision();
        let mut set = ReadSet::new();
        for index in 0..150 {
            let key = format!("/emco/v1/res/app/p/ca/v1/app{index:03}");
            let kv = store.get(&key).await.unwrap().unwrap();
            set.record_key(&key, kv.mod_revision, store.revision());
        }
        let state = store.get("/emco/v1/state/dig/p/ca/v1/d").await.unwrap().unwrap();
        set.record_key(
            "/emco/v1/state/dig/p/ca/v1/d",
            state.mod_revision,
            store.revision(),
        );
        let compares = set.compares();
        assert!(compares.len() <= MAX_COMPARES, "{}", compares.len());
        assert!(
            compares.iter().any(|c| c.key == "/emco/v1/res/app/p/ca/v1/"
                && c.target == emco_store::CompareTarget::PrefixModRevision(read_at + 1)),
            "{compares:?}"
        );
        assert!(
            compares.iter().any(|c| c.key == "/emco/v1/state/dig/p/ca/v1/d"),
            "a small group stays exact: {compares:?}"
        );
        let guarded = Txn::new().when(compares.clone());
        // A write elsewhere does not fail it…
        store.put("/elsewhere/k", "y").await.unwrap();
        assert!(store.txn(guarded.clone()).await.unwrap().succeeded);
        // …a change to any read key does.
        store
            .put("/emco/v1/res/app/p/ca/v1/app077", "{\"changed\":1}")
            .await
            .unwrap();
        assert!(!store.txn(guarded).await.unwrap().succeeded);
    }

    #[test]
    fn reads_group_by_leading_path_segments() {
        assert_eq!(group_of("/emco/v1/res/app/p", 3), "/emco/v1/res/");
        assert_eq!(group_of("/context/42/meta", 3), "/context/42/meta");
        assert_eq!(group_of("/context/42/app/a/cluster/c", 3), "/context/42/app/");
        let merged = merge(vec![
            Read {
                path: "/emco/v1/res/app/p/ca/v1/fw".into(),
                mod_revision: Some(3),
                read_at: 9,
            },
            Read {
                path: "/emco/v1/res/app/p/ca/v1/fw2".into(),
                mod_revision: Some(4),
                read_at: 7,
            },
        ]);
        assert_eq!(
            (merged.path.as_str(), merged.mod_revision, merged.read_at),
            ("/emco/v1/res/app/p/ca/v1/", None, 7)
        );
    }
}
