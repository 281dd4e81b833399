//! An etcd-shaped key-value store: string keys, byte values, a store-wide revision that every write transaction
//! raises by one, `get`/`put`/`delete`/`range(prefix)`, transactions guarded by compares on revisions, versions or
//! values, and watches that replay from a revision.
//!
//! The embedded backend ([`RedbStore`], the default) keeps everything in one redb file; [`MemoryStore`] keeps it in
//! memory for tests. Both run every write through the same transaction engine ([`engine`]), so they agree on
//! every semantic, and each maps one to one onto etcd's KV and Watch APIs. [`EtcdStore`] keeps the keys in an
//! etcd cluster under a prefix, with etcd's revisions (see [`etcd`] for what differs: revisions do not start at 0
//! and may skip numbers, large values are chunked).
//!
//! The etcd backend is the cargo feature `etcd` (off by default: the demo and the embedded store need none of
//! gRPC's crates). It speaks etcd's gRPC API through code generated from etcd's `.proto` files and kept in the
//! repository (`etcd_api`), so no build needs `protoc`. Without the feature, [`StoreConfig::Etcd`] still parses and
//! [`Store::open`] refuses it with a message that says how to build with etcd.
//!
//! Architecture invariant: this crate knows no EMCO type and no key layout; it is the only crate that names redb
//! or etcd.
//! A write transaction is atomic: after a crash, every key holds either its old or its new record, never a mix.

mod embedded;
mod engine;
#[cfg(feature = "etcd")]
pub mod etcd;
#[cfg(feature = "etcd")]
mod etcd_api;
#[cfg(feature = "etcd")]
pub mod etcd_testing;
mod lease;
mod memory;
mod op_metrics;
mod watch;

use std::path::Path;
use std::sync::Arc;

pub use embedded::{OPEN_WAIT, PAGE_CACHE_BYTES, RedbStore};
#[cfg(feature = "etcd")]
pub use etcd::EtcdStore;
pub use lease::{LeaseId, LeaseStatus, MAX_LEASE_TTL, MIN_LEASE_TTL};
pub use memory::MemoryStore;
pub use op_metrics::OPERATION_DURATION_METRIC;
pub use watch::Watcher;

/// A store-wide revision; each write transaction raises it by one. `0` means "no such key".
pub type Revision = i64;

/// Errors of the store. Every variant but [`Error::Compacted`] and [`Error::WatchLagged`] means the operation did
/// not take effect and may be retried.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The backend failed to read or write (disk full, corrupt file, I/O error, etcd unreachable; on etcd a write
    /// that timed out may still have taken effect).
    #[error("store backend failed: {0}")]
    Backend(String),
    /// The store file could not be opened.
    #[error("cannot open store at {path}: {message}")]
    Open {
        /// The file or directory.
        path: String,
        /// Why.
        message: String,
    },
    /// Another process (or another handle in this one) holds the store, and it was not released while the open
    /// waited.
    #[error("the store in {data_dir} is in use by {holder}")]
    InUse {
        /// The data directory.
        data_dir: String,
        /// Who holds it: `another emco (pid 1234)`, or what is known of it.
        holder: String,
    },
    /// The store is shutting down; nothing was written.
    #[error("store is closed")]
    Closed,
    /// A watch asked for a revision older than the kept history; re-list and watch from the list's revision.
    #[error("revision {requested} is compacted; history starts after revision {compacted}")]
    Compacted {
        /// The revision asked for.
        requested: Revision,
        /// The newest revision no longer in the history.
        compacted: Revision,
    },
    /// A watcher fell too far behind the writers and lost events; re-list and watch again.
    #[error("watch fell behind by {0} events")]
    WatchLagged(u64),
    /// A value or transaction is larger than the backend accepts (etcd's request size or operation count); the
    /// message names the limit and the largest values. Nothing was written.
    #[error("{0}")]
    TooLarge(String),
    /// A put named a lease that does not exist (expired, revoked, or never granted). Nothing was written.
    #[error("lease {lease} (of key '{key}') does not exist: it expired or was revoked")]
    LeaseNotFound {
        /// The lease.
        lease: LeaseId,
        /// The key put with it.
        key: String,
    },
    /// A lease request was refused (a time to live out of bounds); the message says why.
    #[error("{0}")]
    Lease(String),
}

impl From<::redb::Error> for Error {
    fn from(err: ::redb::Error) -> Self {
        Self::Backend(err.to_string())
    }
}

/// The result type of this crate.
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// A stored key with its value and revisions, as etcd's `mvccpb.KeyValue`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KeyValue {
    /// The key.
    pub key: String,
    /// The value.
    pub value: Vec<u8>,
    /// The revision that created the key.
    pub create_revision: Revision,
    /// The revision of the last change to the key.
    pub mod_revision: Revision,
    /// How many times the key was written since it was created (1 after creation).
    pub version: i64,
}

/// What a compare looks at.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CompareTarget {
    /// The key's create revision (0 when absent).
    CreateRevision(Revision),
    /// The key's mod revision (0 when absent).
    ModRevision(Revision),
    /// The key's version (0 when absent).
    Version(i64),
    /// The key's value (a compare on an absent key's value is false).
    Value(Vec<u8>),
    /// The mod revision of every key that starts with the compare's key, as etcd's compare with a `range_end`:
    /// holds when it holds for each of them, and compares 0 when there is none.
    PrefixModRevision(Revision),
}

/// How a compare compares.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CompareOp {
    /// `==`
    Equal,
    /// `!=`
    NotEqual,
    /// `>`
    Greater,
    /// `<`
    Less,
}

/// A condition of a transaction, as etcd's `Compare`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Compare {
    /// The key looked at.
    pub key: String,
    /// The comparison.
    pub op: CompareOp,
    /// The field and the value it is compared with.
    pub target: CompareTarget,
}

impl Compare {
    /// True when the key does not exist.
    #[must_use]
    pub fn absent(key: impl Into<String>) -> Self {
        Self {
            key: key.into(),
            op: CompareOp::Equal,
            target: CompareTarget::CreateRevision(0),
        }
    }

    /// True when the key exists.
    #[must_use]
    pub fn present(key: impl Into<String>) -> Self {
        Self {
            key: key.into(),
            op: CompareOp::Greater,
            target: CompareTarget::CreateRevision(0),
        }
    }

    /// True when the key was last modified at `revision` (0 also matches an absent key).
    #[must_use]
    pub fn mod_revision_is(key: impl Into<String>, revision: Revision) -> Self {
        Self {
            key: key.into(),
            op: CompareOp::Equal,
            target: CompareTarget::ModRevision(revision),
        }
    }

    /// True when no key starting with `prefix` was created or changed after `revision` (a key deleted since
    /// does not count): the guard of a decision taken on a range read at `revision` ("no children", a list
    /// checked for references).
    #[must_use]
    pub fn prefix_unchanged_since(prefix: impl Into<String>, revision: Revision) -> Self {
        Self {
            key: prefix.into(),
            op: CompareOp::Less,
            target: CompareTarget::PrefixModRevision(revision.saturating_add(1)),
        }
    }

    /// True when the key's value equals `value`.
    #[must_use]
    pub fn value_is(key: impl Into<String>, value: impl Into<Vec<u8>>) -> Self {
        Self {
            key: key.into(),
            op: CompareOp::Equal,
            target: CompareTarget::Value(value.into()),
        }
    }
}

/// A write inside a transaction.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Op {
    /// Set a key.
    Put {
        /// The key.
        key: String,
        /// The new value.
        value: Vec<u8>,
        /// The lease the key is attached to (deleted when the lease ends); `None` detaches it from any lease.
        lease: Option<LeaseId>,
    },
    /// Remove a key (nothing happens when it is absent).
    Delete {
        /// The key.
        key: String,
    },
    /// Remove every key that starts with a prefix.
    DeletePrefix {
        /// The prefix.
        prefix: String,
    },
}

impl Op {
    /// A put.
    #[must_use]
    pub fn put(key: impl Into<String>, value: impl Into<Vec<u8>>) -> Self {
        Self::Put {
            key: key.into(),
            value: value.into(),
            lease: None,
        }
    }

    /// A put attached to `lease`: the key is deleted when the lease expires or is revoked.
    #[must_use]
    pub fn put_with_lease(key: impl Into<String>, value: impl Into<Vec<u8>>, lease: LeaseId) -> Self {
        Self::Put {
            key: key.into(),
            value: value.into(),
            lease: Some(lease),
        }
    }

    /// A delete.
    #[must_use]
    pub fn delete(key: impl Into<String>) -> Self {
        Self::Delete { key: key.into() }
    }

    /// A prefix delete.
    #[must_use]
    pub fn delete_prefix(prefix: impl Into<String>) -> Self {
        Self::DeletePrefix {
            prefix: prefix.into(),
        }
    }
}

/// A transaction: if every compare holds, run `success`, else run `failure` — atomically, as etcd's `Txn`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Txn {
    /// Conditions, all of which must hold.
    pub compares: Vec<Compare>,
    /// Writes when they hold.
    pub success: Vec<Op>,
    /// Writes when one does not.
    pub failure: Vec<Op>,
}

impl Txn {
    /// An empty transaction.
    #[must_use]
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds conditions.
    #[must_use]
    pub fn when(mut self, compares: impl IntoIterator<Item = Compare>) -> Self {
        self.compares.extend(compares);
        self
    }

    /// Adds writes for when the conditions hold.
    #[must_use]
    pub fn and_then(mut self, ops: impl IntoIterator<Item = Op>) -> Self {
        self.success.extend(ops);
        self
    }

    /// Adds writes for when a condition does not hold.
    #[must_use]
    pub fn or_else(mut self, ops: impl IntoIterator<Item = Op>) -> Self {
        self.failure.extend(ops);
        self
    }
}

/// The outcome of a transaction.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TxnResponse {
    /// Whether every compare held (so `success` ran).
    pub succeeded: bool,
    /// The store's revision after the transaction.
    pub revision: Revision,
}

/// Whether an event set or removed its key.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EventKind {
    /// The key was created or changed.
    Put,
    /// The key was removed.
    Delete,
}

/// A change seen by a watch. For a delete, `kv.value` is empty and `kv.mod_revision` is the delete's revision.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Event {
    /// Put or delete.
    pub kind: EventKind,
    /// The key after the change.
    pub kv: KeyValue,
}

/// The prefix every key is stored under in etcd when none is configured.
pub const DEFAULT_ETCD_PREFIX: &str = "/emco";

/// What [`Store::open`] answers for an etcd configuration when this build has no etcd backend: the endpoints, and
/// how to build with it.
#[cfg_attr(feature = "etcd", allow(dead_code))]
fn no_etcd_backend(endpoints: &[String]) -> Error {
    Error::Open {
        path: endpoints.join(","),
        message: "this build of emco has no etcd backend: build it with the feature `etcd` (`cargo build \
                  --release --bin emco --features etcd`)"
            .to_string(),
    }
}

/// TLS towards etcd: the CA that signed its certificates and, for client-certificate authentication, this
/// client's certificate and key (all PEM files).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct EtcdTls {
    /// The CA bundle that verifies etcd's server certificate (the system roots are not used).
    pub ca_file: Option<std::path::PathBuf>,
    /// This client's certificate (with `key_file`).
    pub cert_file: Option<std::path::PathBuf>,
    /// This client's private key (with `cert_file`).
    pub key_file: Option<std::path::PathBuf>,
}

/// Which backend to open.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StoreConfig {
    /// Everything in memory, lost at exit.
    Memory,
    /// One redb file inside this directory.
    Redb {
        /// The data directory (created when missing).
        data_dir: std::path::PathBuf,
    },
    /// An etcd cluster.
    Etcd {
        /// `http://host:port` (or `https://` with `tls`) of one or more members.
        endpoints: Vec<String>,
        /// Every key is stored under it ([`DEFAULT_ETCD_PREFIX`] by default); callers never see it.
        prefix: String,
        /// TLS files, for `https://` endpoints.
        tls: Option<EtcdTls>,
    },
}

/// A store of any backend; callers see no generics (the backends are unified by match dispatch).
#[derive(Clone)]
pub enum Store {
    /// In memory.
    Memory(Arc<MemoryStore>),
    /// Embedded redb file.
    Redb(Arc<RedbStore>),
    /// An etcd cluster.
    #[cfg(feature = "etcd")]
    Etcd(Arc<EtcdStore>),
}

impl std::fmt::Debug for Store {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Memory(_) => f.write_str("Store::Memory"),
            Self::Redb(store) => write!(f, "Store::Redb({})", store.path().display()),
            #[cfg(feature = "etcd")]
            Self::Etcd(store) => write!(f, "Store::Etcd({store:?})"),
        }
    }
}

impl Store {
    /// Opens the configured backend (an etcd store needs to be inside a tokio runtime, which it keeps using).
    pub async fn open(config: &StoreConfig) -> Result<Self> {
        match config {
            StoreConfig::Memory => Ok(Self::memory()),
            StoreConfig::Redb { data_dir } => Self::open_redb(data_dir),
            #[cfg(feature = "etcd")]
            StoreConfig::Etcd {
                endpoints,
                prefix,
                tls,
            } => Self::open_etcd(endpoints, prefix, tls.as_ref()).await,
            #[cfg(not(feature = "etcd"))]
            StoreConfig::Etcd { endpoints, .. } => Err(no_etcd_backend(endpoints)),
        }
    }

    /// Whether other processes may share this store and the work on it (etcd): each registers as a replica. The
    /// memory and redb stores belong to one process.
    #[must_use]
    pub fn is_shared(&self) -> bool {
        match self {
            Self::Memory(_) | Self::Redb(_) => false,
            #[cfg(feature = "etcd")]
            Self::Etcd(_) => true,
        }
    }

    /// Connects to etcd at `endpoints`, keeping every key under `prefix`; fails within a few seconds, naming
    /// the endpoints, when none answers.
    #[cfg(feature = "etcd")]
    pub async fn open_etcd(endpoints: &[String], prefix: &str, tls: Option<&EtcdTls>) -> Result<Self> {
        Ok(Self::Etcd(Arc::new(
            EtcdStore::open(endpoints, prefix, tls).await?,
        )))
    }

    /// A fresh in-memory store.
    #[must_use]
    pub fn memory() -> Self {
        Self::Memory(Arc::new(MemoryStore::new()))
    }

    /// An in-memory store for a process that holds thousands of them and watches none from afar (a pull agent's,
    /// many agents to a simulating process): its watchers may fall 64 transactions behind, and none can resume
    /// from before it started watching ([`Error::Compacted`]). [`Store::memory`]'s watch buffers are allocated or
    /// kept whatever the use: most of an idle agent's memory.
    #[must_use]
    pub fn memory_without_history() -> Self {
        Self::Memory(Arc::new(MemoryStore::with_watch_bounds(
            crate::watch::WatchBounds::LOCAL,
        )))
    }

    /// Opens (or creates) the redb file `emco.redb` inside `data_dir`, waiting up to [`OPEN_WAIT`] for a store
    /// another process still holds (a predecessor killed a moment ago).
    pub fn open_redb(data_dir: &Path) -> Result<Self> {
        Ok(Self::Redb(Arc::new(RedbStore::open(data_dir)?)))
    }

    /// [`Store::open_redb`], waiting up to `wait` (instead of [`OPEN_WAIT`]) for a store another process holds.
    pub fn open_redb_waiting(data_dir: &Path, wait: std::time::Duration) -> Result<Self> {
        Ok(Self::Redb(Arc::new(RedbStore::open_waiting(data_dir, wait)?)))
    }

    /// The current revision. On etcd: the newest revision of a change under the store's prefix this process has
    /// seen (its own writes, and others' once its background watch delivered them).
    #[must_use]
    pub fn revision(&self) -> Revision {
        match self {
            Self::Memory(store) => store.revision(),
            Self::Redb(store) => store.revision(),
            #[cfg(feature = "etcd")]
            Self::Etcd(store) => store.revision(),
        }
    }

    /// The revision of the newest change the store holds now, for read-your-writes across processes: a watch of
    /// the store reaches it. Memory and redb: [`Store::revision`]. etcd: asked of etcd (one request), so changes
    /// other processes made count before this process's watch delivered them (changes that only deleted keys
    /// count once seen).
    pub async fn current_revision(&self) -> Result<Revision> {
        match self {
            Self::Memory(store) => Ok(store.revision()),
            Self::Redb(store) => Ok(store.revision()),
            #[cfg(feature = "etcd")]
            Self::Etcd(store) => store.current_revision().await,
        }
    }

    /// Reads one key.
    pub async fn get(&self, key: &str) -> Result<Option<KeyValue>> {
        let _timer = op_metrics::OpTimer::start("get");
        match self {
            Self::Memory(store) => Ok(store.get(key)),
            Self::Redb(store) => store.get(key),
            #[cfg(feature = "etcd")]
            Self::Etcd(store) => store.get(key).await,
        }
    }

    /// Reads every key starting with `prefix`, in key order, with the revision the read saw.
    pub async fn range(&self, prefix: &str) -> Result<(Vec<KeyValue>, Revision)> {
        self.range_limit(prefix, usize::MAX).await
    }

    /// Reads at most `limit` keys starting with `prefix`, in key order.
    pub async fn range_limit(&self, prefix: &str, limit: usize) -> Result<(Vec<KeyValue>, Revision)> {
        let _timer = op_metrics::OpTimer::start("range");
        match self {
            Self::Memory(store) => Ok(store.range(prefix, limit)),
            Self::Redb(store) => store.range(prefix, limit),
            #[cfg(feature = "etcd")]
            Self::Etcd(store) => store.range(prefix, limit).await,
        }
    }

    /// Runs a transaction.
    pub async fn txn(&self, txn: Txn) -> Result<TxnResponse> {
        let _timer = op_metrics::OpTimer::start("txn");
        match self {
            Self::Memory(store) => store.txn(&txn),
            Self::Redb(store) => store.txn(txn).await,
            #[cfg(feature = "etcd")]
            Self::Etcd(store) => store.txn(txn).await,
        }
    }

    /// Sets a key; returns the new revision.
    pub async fn put(&self, key: &str, value: impl Into<Vec<u8>>) -> Result<Revision> {
        Ok(self
            .txn(Txn::new().and_then([Op::put(key, value)]))
            .await?
            .revision)
    }

    /// Removes a key; returns whether it existed.
    pub async fn delete(&self, key: &str) -> Result<bool> {
        let response = self
            .txn(
                Txn::new()
                    .when([Compare::present(key)])
                    .and_then([Op::delete(key)]),
            )
            .await?;
        Ok(response.succeeded)
    }

    /// Removes every key under `prefix`; returns the revision after it.
    pub async fn delete_prefix(&self, prefix: &str) -> Result<Revision> {
        Ok(self
            .txn(Txn::new().and_then([Op::delete_prefix(prefix)]))
            .await?
            .revision)
    }

    /// Grants a lease that lives `ttl` (whole seconds on etcd, rounded up) unless kept alive; keys put with it
    /// ([`Op::put_with_lease`]) are deleted when it ends. On memory and redb the lease lives in this process
    /// (see [`lease`]).
    pub async fn grant_lease(&self, ttl: std::time::Duration) -> Result<LeaseId> {
        lease::check_ttl(ttl)?;
        match self {
            Self::Memory(store) => {
                let id = store.grant_lease(ttl);
                lease::start_sweeper_once(store);
                Ok(id)
            }
            Self::Redb(store) => {
                let id = store.grant_lease(ttl);
                lease::start_sweeper_once(store);
                Ok(id)
            }
            #[cfg(feature = "etcd")]
            Self::Etcd(store) => store.grant_lease(ttl).await,
        }
    }

    /// Renews a lease for its full time to live; `None` when it no longer exists (expired or revoked).
    pub async fn keep_alive(&self, lease: LeaseId) -> Result<Option<std::time::Duration>> {
        match self {
            Self::Memory(store) => Ok(store.keep_alive(lease)),
            Self::Redb(store) => Ok(store.keep_alive(lease)),
            #[cfg(feature = "etcd")]
            Self::Etcd(store) => store.keep_alive(lease).await,
        }
    }

    /// A lease's time to live and what remains of it; `None` when it no longer exists.
    pub async fn lease_status(&self, lease: LeaseId) -> Result<Option<LeaseStatus>> {
        match self {
            Self::Memory(store) => Ok(store.lease_status(lease)),
            Self::Redb(store) => Ok(store.lease_status(lease)),
            #[cfg(feature = "etcd")]
            Self::Etcd(store) => store.lease_status(lease).await,
        }
    }

    /// Ends a lease now, deleting its keys (nothing happens when it no longer exists).
    pub async fn revoke_lease(&self, lease: LeaseId) -> Result<()> {
        match self {
            Self::Memory(store) => {
                store.revoke_lease(lease);
                Ok(())
            }
            Self::Redb(store) => store.revoke_lease(lease).await,
            #[cfg(feature = "etcd")]
            Self::Etcd(store) => store.revoke_lease(lease).await,
        }
    }

    /// Watches keys under `prefix`, replaying every change after `after_revision` (`None`: only changes after
    /// [`Store::revision`]). A revision older than the kept history is [`Error::Compacted`]: returned here by the
    /// memory and redb backends, and as the watcher's first item by etcd (whose watch starts asynchronously) —
    /// handle both alike (re-list, watch again).
    pub fn watch(&self, prefix: &str, after_revision: Option<Revision>) -> Result<Watcher> {
        match self {
            Self::Memory(store) => store.watch(prefix, after_revision),
            Self::Redb(store) => store.watch(prefix, after_revision),
            #[cfg(feature = "etcd")]
            Self::Etcd(store) => store.watch(prefix, after_revision),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A build without the etcd backend refuses an etcd configuration naming the endpoints and how to build with
    /// it (this crate's tests build with the backend, so the refusal itself is checked by `.ci/run`'s lint of the
    /// default build; its words are checked here).
    #[test]
    fn the_refusal_without_etcd_names_the_endpoints_and_the_feature() {
        let endpoints = [
            "http://10.0.0.1:2379".to_string(),
            "http://10.0.0.2:2379".to_string(),
        ];
        let message = no_etcd_backend(&endpoints).to_string();
        assert!(
            message.starts_with("cannot open store at http://10.0.0.1:2379,http://10.0.0.2:2379: "),
            "{message}"
        );
        assert!(message.contains("--features etcd"), "{message}");
    }

    #[test]
    fn only_etcd_is_shared_by_replicas() {
        assert!(!Store::memory().is_shared());
        let dir = tempfile::tempdir().expect("a temporary directory");
        assert!(!Store::open_redb(dir.path()).expect("a redb store").is_shared());
    }
}
