//! The in-memory backend: a sorted map under a mutex. For unit tests and throw-away runs; nothing survives exit.

use std::collections::BTreeMap;
use std::sync::Mutex;
use std::sync::atomic::AtomicBool;
use std::time::{Duration, Instant};

use crate::engine::{KvTable, Record, apply_txn};
use crate::lease::{Expire, LeaseId, LeaseStatus, Leases};
use crate::watch::WatchHub;
use crate::{KeyValue, Result, Revision, Txn, TxnResponse, Watcher};

/// A store held in memory.
#[derive(Debug)]
pub struct MemoryStore {
    state: Mutex<MemoryState>,
    hub: WatchHub,
    sweeper_started: AtomicBool,
}

#[derive(Debug, Default)]
struct MemoryState {
    map: BTreeMap<String, Record>,
    revision: Revision,
    leases: Leases,
}

impl KvTable for BTreeMap<String, Record> {
    fn read(&self, key: &str) -> Result<Option<Record>> {
        Ok(self.get(key).cloned())
    }

    fn write(&mut self, key: &str, record: &Record) -> Result<()> {
        self.insert(key.to_string(), record.clone());
        Ok(())
    }

    fn remove(&mut self, key: &str) -> Result<()> {
        BTreeMap::remove(self, key);
        Ok(())
    }

    fn keys_with_prefix(&self, prefix: &str) -> Result<Vec<String>> {
        Ok(self
            .range(prefix.to_string()..)
            .take_while(|(key, _)| key.starts_with(prefix))
            .map(|(key, _)| key.clone())
            .collect())
    }
}

impl Default for MemoryStore {
    fn default() -> Self {
        Self::new()
    }
}

impl MemoryStore {
    /// An empty store at revision 0.
    #[must_use]
    pub fn new() -> Self {
        Self::with_watch_bounds(crate::watch::WatchBounds::SERVING)
    }

    /// An empty store whose watchers are kept within `bounds`.
    pub(crate) fn with_watch_bounds(bounds: crate::watch::WatchBounds) -> Self {
        Self {
            state: Mutex::new(MemoryState::default()),
            hub: WatchHub::bounded(0, bounds),
            sweeper_started: AtomicBool::new(false),
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, MemoryState> {
        // A poisoned lock means a panic while applying a transaction, which the engine never does with its own
        // data; the map is still consistent because records are replaced whole.
        self.state
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    pub(crate) fn revision(&self) -> Revision {
        self.lock().revision
    }

    pub(crate) fn get(&self, key: &str) -> Option<KeyValue> {
        self.lock()
            .map
            .get(key)
            .cloned()
            .map(|record| record.into_key_value(key.to_string()))
    }

    pub(crate) fn range(&self, prefix: &str, limit: usize) -> (Vec<KeyValue>, Revision) {
        let state = self.lock();
        let items = state
            .map
            .range(prefix.to_string()..)
            .take_while(|(key, _)| key.starts_with(prefix))
            .take(limit)
            .map(|(key, record)| record.clone().into_key_value(key.clone()))
            .collect();
        (items, state.revision)
    }

    pub(crate) fn txn(&self, txn: &Txn) -> Result<TxnResponse> {
        let mut state = self.lock();
        state.leases.check(txn)?;
        Ok(self.apply(&mut state, txn))
    }

    fn apply(&self, state: &mut MemoryState, txn: &Txn) -> TxnResponse {
        let current = state.revision;
        // The in-memory table cannot fail, so the engine's error path is unreachable here.
        let (response, events) = match apply_txn(&mut state.map, current, txn) {
            Ok(outcome) => outcome,
            Err(_) => unreachable!("in-memory table operations are infallible"),
        };
        state.revision = response.revision;
        state.leases.record(if response.succeeded {
            &txn.success
        } else {
            &txn.failure
        });
        // Publishing under the lock keeps watchers' event order equal to revision order.
        self.hub.publish(events);
        response
    }

    pub(crate) fn grant_lease(&self, ttl: Duration) -> LeaseId {
        self.lock().leases.grant(ttl, Instant::now())
    }

    pub(crate) fn keep_alive(&self, lease: LeaseId) -> Option<Duration> {
        self.lock().leases.keep_alive(lease, Instant::now())
    }

    pub(crate) fn lease_status(&self, lease: LeaseId) -> Option<LeaseStatus> {
        self.lock().leases.status(lease, Instant::now())
    }

    pub(crate) fn revoke_lease(&self, lease: LeaseId) {
        let mut state = self.lock();
        if let Some(txn) = state.leases.take(lease) {
            self.apply(&mut state, &txn);
        }
    }

    pub(crate) fn watch(&self, prefix: &str, after: Option<Revision>) -> Result<Watcher> {
        let state = self.lock();
        self.hub.subscribe(prefix, after, state.revision)
    }
}

impl Expire for MemoryStore {
    fn expire_due(&self) {
        let mut state = self.lock();
        for lease in state.leases.due(Instant::now()) {
            if let Some(txn) = state.leases.take(lease) {
                self.apply(&mut state, &txn);
            }
        }
    }

    fn sweeper_started(&self) -> &AtomicBool {
        &self.sweeper_started
    }
}
