//! Replicas of emco on one store and the work each owns, through store leases.
//!
//! A replica registers `/emco/v1/replicas/member/<id>` (its address and start time) with its lease and owns a
//! context's running operation through `/emco/v1/replicas/owner/context/<contextId>` and a cluster's
//! ResourceBundleState watcher through `/emco/v1/replicas/owner/cluster/<provider+cluster>`, each holding the
//! owner's id and put with its lease: when the replica dies (or is paused past its lease), its keys vanish and
//! another replica claims the work. A claim's [`Fence`] is the owner key's mod revision at the claim; every write
//! the owner makes for that work compares it, so a replica that lost the work can no longer write for it.
//!
//! Which live replica claims an orphan first is decided by rendezvous hashing over the live replicas' ids
//! ([`Replica::prefers_me`]): the preferred one claims at once, the others after a grace period.

use std::collections::hash_map::DefaultHasher;
use std::collections::{BTreeMap, BTreeSet};
use std::hash::{Hash, Hasher};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use emco_model::ContextId;
use emco_store::{Compare, LeaseId, Op, Revision, Store, Txn};
use serde::{Deserialize, Serialize};

const MEMBER_ROOT: &str = "/emco/v1/replicas/member/";
const CONTEXT_OWNER_ROOT: &str = "/emco/v1/replicas/owner/context/";
const CLUSTER_OWNER_ROOT: &str = "/emco/v1/replicas/owner/cluster/";
/// How many owner keys a restarted replica moves onto its new lease per transaction.
const RECLAIM_BATCH: usize = 60;
/// The most replicas (and owner keys) read when listing them.
const MAX_LISTED: usize = 100_000;

/// Errors of replica bookkeeping.
#[derive(Debug, thiserror::Error)]
pub enum ReplicaError {
    /// The store failed.
    #[error(transparent)]
    Store(#[from] emco_store::Error),
    /// A member record cannot be read.
    #[error("replica record '{key}' is not valid: {message}")]
    Record {
        /// The key.
        key: String,
        /// Why.
        message: String,
    },
}

/// The result type of replica operations.
pub type Result<T, E = ReplicaError> = std::result::Result<T, E>;

/// What a replica says of itself in its member record.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct MemberRecord {
    /// The replica id (`hostname@address`, see [`replica_id`]).
    pub id: String,
    /// The address its API listens on.
    pub address: String,
    /// When it started.
    pub started_at: String,
    /// The lease its keys are put with.
    pub lease: LeaseId,
}

/// The proof of a claim: the owner key and its mod revision when claimed. Writes made for the claimed work
/// carry [`Fence::compare`]; once the key is gone or claimed anew, they are refused.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Fence {
    /// The owner key.
    pub key: String,
    /// Its mod revision at the claim.
    pub mod_revision: Revision,
}

impl Fence {
    /// The compare that holds while the claim does.
    #[must_use]
    pub fn compare(&self) -> Compare {
        Compare::mod_revision_is(&self.key, self.mod_revision)
    }

    /// Whether the claim still holds (read from the store).
    pub async fn holds(&self, store: &Store) -> Result<bool> {
        Ok(store
            .get(&self.key)
            .await?
            .is_some_and(|kv| kv.mod_revision == self.mod_revision))
    }
}

/// Whether a claim takes the work from a live owner.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Claim {
    /// Only when nobody owns it (a takeover, a resume).
    IfFree,
    /// Even from another owner (this replica received the API call that starts the work; the other one's
    /// fence breaks).
    Force,
}

/// One replica in a listing ([`list`]).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ReplicaView {
    /// The member record.
    #[serde(flatten)]
    pub member: MemberRecord,
    /// The context ids and clusters it owns, in order.
    pub owns: Owned,
}

/// What a replica owns.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Owned {
    /// Context ids whose operation it runs.
    pub contexts: Vec<String>,
    /// Clusters (`provider+cluster`) whose status it watches.
    pub clusters: Vec<String>,
}

/// The owner key of a context's operation.
#[must_use]
pub fn context_owner_key(id: ContextId) -> String {
    format!("{CONTEXT_OWNER_ROOT}{id}")
}

/// Whether `key` is the owner key of a context's operation.
#[must_use]
pub fn is_context_owner_key(key: &str) -> bool {
    key.starts_with(CONTEXT_OWNER_ROOT)
}

/// The owner key of a cluster's status watcher.
#[must_use]
pub fn cluster_owner_key(cluster: &str) -> String {
    format!("{CLUSTER_OWNER_ROOT}{cluster}")
}

/// The live replicas and what each owns, by id (owner keys of replicas no longer registered are left out).
pub async fn list(store: &Store) -> Result<Vec<ReplicaView>> {
    let (members, _) = store.range_limit(MEMBER_ROOT, MAX_LISTED).await?;
    let mut views: BTreeMap<String, ReplicaView> = BTreeMap::new();
    for kv in members {
        let member: MemberRecord = serde_json::from_slice(&kv.value).map_err(|err| ReplicaError::Record {
            key: kv.key.clone(),
            message: err.to_string(),
        })?;
        views.insert(
            member.id.clone(),
            ReplicaView {
                member,
                owns: Owned::default(),
            },
        );
    }
    for (root, contexts) in [(CONTEXT_OWNER_ROOT, true), (CLUSTER_OWNER_ROOT, false)] {
        let (owners, _) = store.range_limit(root, MAX_LISTED).await?;
        for kv in owners {
            let (Some(name), Ok(owner)) = (kv.key.strip_prefix(root), std::str::from_utf8(&kv.value)) else {
                continue;
            };
            if let Some(view) = views.get_mut(owner) {
                let list = if contexts {
                    &mut view.owns.contexts
                } else {
                    &mut view.owns.clusters
                };
                list.push(name.to_string());
            }
        }
    }
    Ok(views.into_values().collect())
}

/// The owners of every context operation now: context id → replica id.
pub async fn context_owners(store: &Store) -> Result<BTreeMap<ContextId, String>> {
    let (owners, _) = store.range_limit(CONTEXT_OWNER_ROOT, MAX_LISTED).await?;
    Ok(owners
        .into_iter()
        .filter_map(|kv| {
            let id = kv.key.strip_prefix(CONTEXT_OWNER_ROOT)?.parse().ok()?;
            Some((id, String::from_utf8(kv.value).ok()?))
        })
        .collect())
}

/// The id of the replica serving on `address` (bound by this process): `hostname@address`. No other live
/// process can hold the same address on the same host, and a process restarted on it is the same replica: it
/// takes back at once the work its predecessor owned ([`Replica::register`]) instead of waiting for that one's
/// lease to expire.
#[must_use]
pub fn replica_id(address: &std::net::SocketAddr) -> String {
    let host = std::env::var("HOSTNAME")
        .ok()
        .or_else(|| std::fs::read_to_string("/etc/hostname").ok())
        .map(|name| name.trim().to_string())
        .filter(|name| !name.is_empty() && name.len() <= 64 && !name.contains('/'))
        .unwrap_or_else(|| "emco".to_string());
    format!("{host}@{address}")
}

/// This process as a replica: its id, its lease (renewed by [`Replica::keep_alive`]; granted anew when it was
/// lost) and the live replicas it last saw.
#[derive(Debug)]
pub struct Replica {
    store: Store,
    ttl: Duration,
    state: Mutex<ReplicaState>,
}

#[derive(Debug)]
struct ReplicaState {
    member: MemberRecord,
    live: BTreeSet<String>,
}

impl Replica {
    /// Registers this process as replica `id` on `store`, with a lease of `ttl`.
    pub async fn register(store: Store, id: String, address: String, ttl: Duration) -> Result<Arc<Self>> {
        let lease = store.grant_lease(ttl).await?;
        let member = MemberRecord {
            id: id.clone(),
            address,
            started_at: emco_model::now_timestamp(),
            lease,
        };
        let replica = Self {
            store,
            ttl,
            state: Mutex::new(ReplicaState {
                member,
                live: BTreeSet::from([id]),
            }),
        };
        replica.put_member().await?;
        let reclaimed = replica.reclaim().await?;
        if reclaimed > 0 {
            tracing::info!(
                work = reclaimed,
                "took back the work this replica owned before it restarted"
            );
        }
        Ok(Arc::new(replica))
    }

    /// Moves every owner key holding this replica's id onto its (new) lease: the work a previous process of the
    /// same replica owned (it was killed; its lease has not expired yet) is this one's now, at once — and the
    /// old process's fences fail. Returns how many keys moved.
    async fn reclaim(&self) -> Result<usize> {
        let member = self.member();
        let id = member.id.as_bytes();
        let mut moved = 0;
        for root in [CONTEXT_OWNER_ROOT, CLUSTER_OWNER_ROOT] {
            let (owners, _) = self.store.range_limit(root, MAX_LISTED).await?;
            let ours: Vec<String> = owners
                .into_iter()
                .filter(|kv| kv.value == id)
                .map(|kv| kv.key)
                .collect();
            // Many keys per transaction (within etcd's default of 128 operations); a batch one of whose keys
            // changed owner meanwhile is moved key by key.
            for batch in ours.chunks(RECLAIM_BATCH) {
                let move_key = |key: &String| Op::put_with_lease(key, id, member.lease);
                let txn = Txn::new()
                    .when(batch.iter().map(|key| Compare::value_is(key, id)))
                    .and_then(batch.iter().map(move_key));
                if self.store.txn(txn).await?.succeeded {
                    moved += batch.len();
                    continue;
                }
                for key in batch {
                    let txn = Txn::new()
                        .when([Compare::value_is(key, id)])
                        .and_then([move_key(key)]);
                    if self.store.txn(txn).await?.succeeded {
                        moved += 1;
                    }
                }
            }
        }
        Ok(moved)
    }

    fn state(&self) -> std::sync::MutexGuard<'_, ReplicaState> {
        self.state
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    async fn put_member(&self) -> Result<()> {
        let member = self.member();
        let value = serde_json::to_vec(&member).map_err(|err| ReplicaError::Record {
            key: member.id.clone(),
            message: err.to_string(),
        })?;
        self.store
            .txn(Txn::new().and_then([Op::put_with_lease(
                format!("{MEMBER_ROOT}{}", member.id),
                value,
                member.lease,
            )]))
            .await?;
        Ok(())
    }

    /// The member record (its lease may change when a lost one is replaced).
    #[must_use]
    pub fn member(&self) -> MemberRecord {
        self.state().member.clone()
    }

    /// The replica id.
    #[must_use]
    pub fn id(&self) -> String {
        self.state().member.id.clone()
    }

    /// The lease's time to live.
    #[must_use]
    pub fn ttl(&self) -> Duration {
        self.ttl
    }

    /// The store.
    #[must_use]
    pub fn store(&self) -> &Store {
        &self.store
    }

    /// Renews the lease; when it was lost (this process was paused or cut off past its time to live), grants a
    /// new one and registers again: everything owned under the old one is gone, and its fences fail. Returns
    /// whether the lease was lost.
    pub async fn keep_alive(&self) -> Result<bool> {
        let lease = self.state().member.lease;
        if self.store.keep_alive(lease).await?.is_some() {
            return Ok(false);
        }
        let fresh = self.store.grant_lease(self.ttl).await?;
        self.state().member.lease = fresh;
        tracing::warn!(
            lost = lease,
            lease = fresh,
            "this replica's lease was lost; its work is dropped"
        );
        self.put_member().await?;
        Ok(true)
    }

    /// Reads the live replicas (for [`Replica::prefers_me`]); returns them.
    pub async fn refresh_members(&self) -> Result<BTreeSet<String>> {
        let (members, _) = self.store.range_limit(MEMBER_ROOT, MAX_LISTED).await?;
        let mut live: BTreeSet<String> = members
            .iter()
            .filter_map(|kv| kv.key.strip_prefix(MEMBER_ROOT).map(str::to_string))
            .collect();
        let mut state = self.state();
        live.insert(state.member.id.clone());
        state.live.clone_from(&live);
        Ok(live)
    }

    /// The live replicas as last read ([`Replica::refresh_members`]), this one among them.
    #[must_use]
    pub fn live(&self) -> BTreeSet<String> {
        self.state().live.clone()
    }

    /// Whether this replica is the one rendezvous hashing over the live replicas picks for `work` (an owner
    /// key): it claims an orphan at once, others after a grace period.
    #[must_use]
    pub fn prefers_me(&self, work: &str) -> bool {
        let state = self.state();
        let score = |replica: &str| {
            let mut hasher = DefaultHasher::new();
            (work, replica).hash(&mut hasher);
            hasher.finish()
        };
        state
            .live
            .iter()
            .max_by_key(|replica| (score(replica), (*replica).clone()))
            .is_none_or(|best| *best == state.member.id)
    }

    /// Claims `key` for this replica (create-if-absent with [`Claim::IfFree`], overwrite with [`Claim::Force`]);
    /// the fence, or `None` when another replica owns it.
    pub async fn claim(&self, key: &str, claim: Claim) -> Result<Option<Fence>> {
        let member = self.member();
        let put = Op::put_with_lease(key, member.id.as_bytes(), member.lease);
        let txn = match claim {
            Claim::IfFree => Txn::new().when([Compare::absent(key)]).and_then([put]),
            Claim::Force => Txn::new().and_then([put]),
        };
        self.store.txn(txn).await?;
        // Read back: the key's own mod revision (a store's response revision may be a later one), and whether it
        // is ours (claimed now, or already before: the work restarted in this process).
        Ok(match self.store.get(key).await? {
            Some(kv) if kv.value == member.id.as_bytes() => Some(Fence {
                key: key.to_string(),
                mod_revision: kv.mod_revision,
            }),
            _ => None,
        })
    }

    /// Gives a claim up (nothing happens when it was lost meanwhile).
    pub async fn release(&self, fence: &Fence) -> Result<()> {
        self.store
            .txn(
                Txn::new()
                    .when([fence.compare()])
                    .and_then([Op::delete(&fence.key)]),
            )
            .await?;
        Ok(())
    }

    /// Leaves: revokes the lease, so every key of this replica goes at once.
    pub async fn leave(&self) -> Result<()> {
        let lease = self.state().member.lease;
        self.store.revoke_lease(lease).await?;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn claims_fence_release_and_list_per_replica() {
        let store = Store::memory();
        let ttl = Duration::from_secs(5);
        let a = Replica::register(store.clone(), "a".into(), "127.0.0.1:1".into(), ttl)
            .await
            .unwrap();
        let b = Replica::register(store.clone(), "b".into(), "127.0.0.1:2".into(), ttl)
            .await
            .unwrap();
        let id = ContextId::new(7).unwrap();
        let key = context_owner_key(id);
        let fence = a.claim(&key, Claim::IfFree).await.unwrap().unwrap();
        assert!(b.claim(&key, Claim::IfFree).await.unwrap().is_none());
        // Claiming again what it owns gives the same fence.
        assert_eq!(a.claim(&key, Claim::IfFree).await.unwrap(), Some(fence.clone()));
        b.claim(&cluster_owner_key("p+c1"), Claim::IfFree)
            .await
            .unwrap()
            .unwrap();
        let listed = list(&store).await.unwrap();
        assert_eq!(listed.len(), 2);
        assert_eq!(listed[0].owns.contexts, vec!["7".to_string()]);
        assert_eq!(listed[1].owns.clusters, vec!["p+c1".to_string()]);
        assert_eq!(context_owners(&store).await.unwrap()[&id], "a");
        // A forced claim breaks the previous owner's fence.
        let taken = b.claim(&key, Claim::Force).await.unwrap().unwrap();
        assert!(!fence.holds(&store).await.unwrap());
        assert!(taken.holds(&store).await.unwrap());
        a.release(&fence).await.unwrap();
        assert!(
            taken.holds(&store).await.unwrap(),
            "a stale release removes nothing"
        );
        // Leaving drops every key of the replica.
        b.leave().await.unwrap();
        assert!(!taken.holds(&store).await.unwrap());
        assert_eq!(list(&store).await.unwrap().len(), 1);
    }

    #[tokio::test]
    async fn a_replica_restarted_under_its_id_takes_its_work_back_at_once() {
        let store = Store::memory();
        let ttl = Duration::from_secs(30);
        let before = Replica::register(store.clone(), "a".into(), "127.0.0.1:1".into(), ttl)
            .await
            .unwrap();
        let other = Replica::register(store.clone(), "b".into(), "127.0.0.1:2".into(), ttl)
            .await
            .unwrap();
        let key = context_owner_key(ContextId::new(7).unwrap());
        let old_fence = before.claim(&key, Claim::IfFree).await.unwrap().unwrap();
        // More watchers than one transaction moves.
        let clusters: Vec<String> = (0..130).map(|n| cluster_owner_key(&format!("p+c{n}"))).collect();
        for cluster in &clusters {
            before.claim(cluster, Claim::IfFree).await.unwrap().unwrap();
        }
        let theirs = other
            .claim(&cluster_owner_key("q+c1"), Claim::IfFree)
            .await
            .unwrap()
            .unwrap();
        // The process is killed (its lease lives on for 30 s) and starts again as the same replica.
        let after = Replica::register(store.clone(), "a".into(), "127.0.0.1:1".into(), ttl)
            .await
            .unwrap();
        assert!(
            !old_fence.holds(&store).await.unwrap(),
            "the dead process can no longer write"
        );
        let fence = after.claim(&key, Claim::IfFree).await.unwrap().unwrap();
        let mut cluster_fences = Vec::new();
        for cluster in &clusters {
            cluster_fences.push(after.claim(cluster, Claim::IfFree).await.unwrap().unwrap());
        }
        // The key lives on the new lease: the old one's expiry (here: its revocation) does not take it.
        before.leave().await.unwrap();
        assert!(fence.holds(&store).await.unwrap());
        assert!(
            theirs.holds(&store).await.unwrap(),
            "another replica's work stays its own"
        );
        assert_eq!(
            replica_id(&"10.0.0.7:9015".parse().unwrap())
                .rsplit_once('@')
                .unwrap()
                .1,
            "10.0.0.7:9015"
        );
    }

    #[tokio::test]
    async fn fenced_context_writes_are_refused_once_the_claim_is_lost() {
        use crate::{AppContexts, AppMeta, ClusterRecord, ContextMeta, ContextOwner};
        let store = Store::memory();
        let contexts = AppContexts::new(store.clone());
        let id = ContextId::new(9).unwrap();
        let meta = ContextMeta::for_owner(
            id,
            ContextOwner::default(),
            "default",
            vec![AppMeta {
                name: "app".into(),
                dependencies: vec![],
                clusters: vec!["p+c".into()],
                excluded: Vec::new(),
            }],
        );
        let (guard, ops) =
            AppContexts::create_txn_parts(&meta, &[ClusterRecord::pending("app", "p+c", vec![])]);
        store.txn(Txn::new().when([guard]).and_then(ops)).await.unwrap();
        let replica = Replica::register(store.clone(), "a".into(), String::new(), Duration::from_secs(5))
            .await
            .unwrap();
        let fence = replica
            .claim(&context_owner_key(id), Claim::IfFree)
            .await
            .unwrap()
            .unwrap();
        contexts
            .update_cluster_fenced(id, "app", "p+c", Some(&fence), |record| {
                record.heard_at = Some("first".into());
            })
            .await
            .unwrap();
        store.revoke_lease(replica.member().lease).await.unwrap();
        let err = contexts
            .update_cluster_fenced(id, "app", "p+c", Some(&fence), |record| {
                record.heard_at = Some("second".into());
            })
            .await
            .unwrap_err();
        assert!(
            matches!(&err, crate::ContextError::Fenced { owner_key, .. } if *owner_key == fence.key),
            "{err}"
        );
        assert!(
            contexts
                .update_meta_fenced(id, Some(&fence), |meta| meta.stop_requested = true)
                .await
                .is_err()
        );
        assert_eq!(
            contexts
                .cluster(id, "app", "p+c")
                .await
                .unwrap()
                .heard_at
                .as_deref(),
            Some("first")
        );
        assert!(!contexts.meta(id).await.unwrap().stop_requested);
    }

    #[tokio::test]
    async fn rendezvous_spreads_work_and_agrees_between_replicas() {
        let store = Store::memory();
        let ttl = Duration::from_secs(5);
        let mut replicas = Vec::new();
        for name in ["r1", "r2", "r3"] {
            replicas.push(
                Replica::register(store.clone(), name.into(), String::new(), ttl)
                    .await
                    .unwrap(),
            );
        }
        let mut preferred = BTreeMap::new();
        for replica in &replicas {
            replica.refresh_members().await.unwrap();
        }
        for work in 0..60 {
            let key = context_owner_key(ContextId::new(work + 1).unwrap());
            let choosers: Vec<String> = replicas
                .iter()
                .filter(|replica| replica.prefers_me(&key))
                .map(|replica| replica.id())
                .collect();
            assert_eq!(choosers.len(), 1, "exactly one replica prefers {key}");
            *preferred.entry(choosers[0].clone()).or_insert(0) += 1;
        }
        assert_eq!(preferred.len(), 3, "every replica gets work: {preferred:?}");
    }

    #[tokio::test]
    async fn a_lost_lease_is_replaced_and_its_claims_are_gone() {
        let store = Store::memory();
        let replica = Replica::register(store.clone(), "a".into(), String::new(), Duration::from_secs(5))
            .await
            .unwrap();
        let fence = replica
            .claim(&cluster_owner_key("p+c"), Claim::IfFree)
            .await
            .unwrap()
            .unwrap();
        assert!(!replica.keep_alive().await.unwrap());
        store.revoke_lease(replica.member().lease).await.unwrap();
        assert!(replica.keep_alive().await.unwrap());
        assert!(!fence.holds(&store).await.unwrap());
        assert_eq!(
            list(&store).await.unwrap()[0].member.lease,
            replica.member().lease
        );
    }
}
