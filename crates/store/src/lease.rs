//! Leases, as etcd's: a lease is granted with a time to live, kept alive by its holder, and revoked or left to
//! expire; keys put with a lease are deleted when it ends (a delete event in watches, like any delete).
//!
//! etcd keeps leases itself. The memory and redb backends emulate them in the process ([`Leases`]): each lease has
//! a deadline that a keep-alive moves, and a sweeper thread deletes the keys of a lease whose deadline passed,
//! through the backend's ordinary transaction path (so watches see the deletes in revision order). A redb store
//! remembers which keys were put with a lease; opening it deletes them, because every lease of the process that
//! wrote them ended with that process.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Weak};
use std::time::{Duration, Instant};

use crate::{Error, Op, Result, Txn};

/// The id of a lease (etcd's int64 lease id).
pub type LeaseId = i64;

/// The shortest and longest time to live a lease may be granted with.
pub const MIN_LEASE_TTL: Duration = Duration::from_secs(1);
/// See [`MIN_LEASE_TTL`].
pub const MAX_LEASE_TTL: Duration = Duration::from_secs(3600);
/// How often the sweeper of an emulated store looks for expired leases.
const SWEEP_INTERVAL: Duration = Duration::from_millis(100);

/// A live lease as [`crate::Store::lease_status`] reports it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LeaseStatus {
    /// The lease.
    pub id: LeaseId,
    /// The time to live it was granted with.
    pub granted_ttl: Duration,
    /// How long until it expires unless kept alive.
    pub remaining: Duration,
}

/// Refuses a time to live outside [`MIN_LEASE_TTL`]..=[`MAX_LEASE_TTL`], naming it.
pub(crate) fn check_ttl(ttl: Duration) -> Result<()> {
    if ttl < MIN_LEASE_TTL || ttl > MAX_LEASE_TTL {
        return Err(Error::Lease(format!(
            "a lease's time to live must be between {MIN_LEASE_TTL:?} and {MAX_LEASE_TTL:?}, not {ttl:?}"
        )));
    }
    Ok(())
}

#[derive(Debug)]
struct Entry {
    ttl: Duration,
    deadline: Instant,
    keys: BTreeSet<String>,
}

/// The leases of an emulated (memory or redb) store, and which key belongs to which lease.
#[derive(Debug)]
pub(crate) struct Leases {
    next_id: LeaseId,
    leases: HashMap<LeaseId, Entry>,
    key_lease: BTreeMap<String, LeaseId>,
}

impl Default for Leases {
    fn default() -> Self {
        Self {
            // Random-looking, never 0 (etcd's "no lease").
            next_id: LeaseId::from(std::process::id()) << 20 | 1,
            leases: HashMap::new(),
            key_lease: BTreeMap::new(),
        }
    }
}

impl Leases {
    pub(crate) fn grant(&mut self, ttl: Duration, now: Instant) -> LeaseId {
        let id = self.next_id;
        self.next_id += 1;
        self.leases.insert(
            id,
            Entry {
                ttl,
                deadline: now + ttl,
                keys: BTreeSet::new(),
            },
        );
        id
    }

    /// Moves the lease's deadline a full time to live ahead; `None` when it is gone.
    pub(crate) fn keep_alive(&mut self, id: LeaseId, now: Instant) -> Option<Duration> {
        let entry = self.leases.get_mut(&id).filter(|entry| entry.deadline > now)?;
        entry.deadline = now + entry.ttl;
        Some(entry.ttl)
    }

    pub(crate) fn status(&self, id: LeaseId, now: Instant) -> Option<LeaseStatus> {
        let entry = self.leases.get(&id).filter(|entry| entry.deadline > now)?;
        Some(LeaseStatus {
            id,
            granted_ttl: entry.ttl,
            remaining: entry.deadline - now,
        })
    }

    /// Ends a lease: the transaction that deletes its keys (`None` when there is no such lease).
    pub(crate) fn take(&mut self, id: LeaseId) -> Option<Txn> {
        let entry = self.leases.remove(&id)?;
        for key in &entry.keys {
            self.key_lease.remove(key);
        }
        Some(Txn::new().and_then(entry.keys.into_iter().map(Op::delete)))
    }

    /// The leases whose deadline passed.
    pub(crate) fn due(&self, now: Instant) -> Vec<LeaseId> {
        self.leases
            .iter()
            .filter(|(_, entry)| entry.deadline <= now)
            .map(|(id, _)| *id)
            .collect()
    }

    /// Refuses a transaction that puts a key with a lease that does not exist (on either branch).
    pub(crate) fn check(&self, txn: &Txn) -> Result<()> {
        for op in txn.success.iter().chain(&txn.failure) {
            if let Op::Put {
                key,
                lease: Some(lease),
                ..
            } = op
                && !self.leases.contains_key(lease)
            {
                return Err(Error::LeaseNotFound {
                    lease: *lease,
                    key: key.clone(),
                });
            }
        }
        Ok(())
    }

    /// Records which keys the ops that ran attach to (or detach from) leases.
    pub(crate) fn record(&mut self, ops: &[Op]) {
        for op in ops {
            match op {
                Op::Put { key, lease, .. } => {
                    self.detach(key);
                    if let Some(lease) = lease
                        && let Some(entry) = self.leases.get_mut(lease)
                    {
                        entry.keys.insert(key.clone());
                        self.key_lease.insert(key.clone(), *lease);
                    }
                }
                Op::Delete { key } => self.detach(key),
                Op::DeletePrefix { prefix } => {
                    let keys: Vec<String> = self
                        .key_lease
                        .range(prefix.clone()..)
                        .take_while(|(key, _)| key.starts_with(prefix.as_str()))
                        .map(|(key, _)| key.clone())
                        .collect();
                    for key in keys {
                        self.detach(&key);
                    }
                }
            }
        }
    }

    fn detach(&mut self, key: &str) {
        if let Some(lease) = self.key_lease.remove(key)
            && let Some(entry) = self.leases.get_mut(&lease)
        {
            entry.keys.remove(key);
        }
    }
}

/// Something whose expired leases a sweeper ends.
pub(crate) trait Expire: Send + Sync + 'static {
    /// Ends every lease whose deadline passed.
    fn expire_due(&self);
    /// Set once the store's sweeper runs.
    fn sweeper_started(&self) -> &AtomicBool;
}

/// Starts `store`'s sweeper unless it runs already.
pub(crate) fn start_sweeper_once<S: Expire>(store: &Arc<S>) {
    if !store.sweeper_started().swap(true, Ordering::SeqCst) {
        start_sweeper(Arc::downgrade(store));
    }
}

/// Starts a thread that ends `store`'s expired leases every [`SWEEP_INTERVAL`] until the store is dropped.
fn start_sweeper<S: Expire>(store: Weak<S>) {
    let spawned = std::thread::Builder::new()
        .name("emco-store-leases".into())
        .spawn(move || {
            loop {
                std::thread::sleep(SWEEP_INTERVAL);
                let Some(store) = store.upgrade() else { return };
                store.expire_due();
            }
        });
    if let Err(err) = spawned {
        tracing::error!(error = %err, "cannot start the lease sweeper: leases of this store will not expire");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_follow_their_lease_until_it_is_taken() {
        let now = Instant::now();
        let mut leases = Leases::default();
        let id = leases.grant(Duration::from_secs(2), now);
        leases.record(&[
            Op::put_with_lease("/a", "1", id),
            Op::put_with_lease("/b", "1", id),
            Op::put_with_lease("/c", "1", id),
        ]);
        // A plain put detaches a key; a delete forgets it.
        leases.record(&[Op::put("/b", "2"), Op::delete("/c")]);
        assert_eq!(leases.due(now + Duration::from_secs(1)), Vec::<LeaseId>::new());
        assert_eq!(leases.due(now + Duration::from_secs(2)), vec![id]);
        assert_eq!(
            leases.keep_alive(id, now + Duration::from_secs(1)),
            Some(Duration::from_secs(2))
        );
        assert!(leases.due(now + Duration::from_secs(2)).is_empty());
        let txn = leases.take(id).unwrap();
        assert_eq!(txn.success, vec![Op::delete("/a")]);
        assert!(leases.take(id).is_none());
        assert!(leases.keep_alive(id, now).is_none());
    }

    #[test]
    fn puts_with_unknown_leases_are_refused_naming_the_key() {
        let leases = Leases::default();
        let err = leases
            .check(&Txn::new().and_then([Op::put_with_lease("/k", "v", 42)]))
            .unwrap_err();
        assert!(err.to_string().contains("/k"), "{err}");
        assert!(leases.check(&Txn::new().and_then([Op::put("/k", "v")])).is_ok());
    }

    #[test]
    fn ttls_are_bounded() {
        assert!(check_ttl(Duration::from_millis(10)).is_err());
        assert!(check_ttl(Duration::from_secs(5)).is_ok());
        assert!(check_ttl(Duration::from_secs(100_000)).is_err());
    }
}
