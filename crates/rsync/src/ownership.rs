//! Ownership of work when several emco replicas share one store (see [`emco_appcontext::replicas`]).
//!
//! A context's operation runs on the replica that owns the context's owner key; a cluster's ResourceBundleState
//! watcher on the replica that owns the cluster's. Every AppContext write rsync makes for owned work carries the
//! claim's fence, and the fence is read before each (app, cluster) batch touches a cluster: a replica that lost a
//! claim (its lease expired while it was paused or cut off, or another replica took the work over by an API call)
//! drops the work at its next write or batch without writing, and does not retry it. A Kubernetes write already
//! in flight when the claim was lost may still land.
//!
//! Without a replica (the memory and redb stores: one process) nothing here is used and no write is fenced.

use std::collections::{BTreeSet, HashMap};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use emco_appcontext::replicas::{self, Claim, Fence, Replica};
use emco_appcontext::{ClusterRecord, ContextError, ContextMeta};
use emco_model::ContextId;

use crate::engine::Inner;

/// How long a replica that rendezvous hashing does not prefer waits before it claims an orphan, so the preferred
/// one gets it first (and work spreads).
pub(crate) const CLAIM_GRACE: Duration = Duration::from_secs(2);
/// How long even the preferred replica sees an orphan before it claims it.
pub(crate) const ORPHAN_CONFIRMATION: Duration = Duration::from_millis(500);
/// How often a full scan of the contexts looks for orphaned operations even when no owner was seen leaving.
const FULL_SCAN_EVERY: Duration = Duration::from_secs(30);

/// This replica's claims.
pub(crate) struct Ownership {
    pub(crate) replica: Arc<Replica>,
    state: Mutex<OwnershipState>,
}

#[derive(Default)]
struct OwnershipState {
    /// The fence of each context whose operation runs here.
    contexts: HashMap<ContextId, Fence>,
    /// Contexts worked on for another context's operation (an update hands over from its predecessor): the
    /// owner's claim fences them.
    aliases: HashMap<ContextId, ContextId>,
    /// The fence of each cluster whose watcher runs here.
    clusters: HashMap<String, Fence>,
    /// When each orphan (an owner key) was first seen unowned.
    orphans: HashMap<String, Instant>,
    /// The owned contexts and live replicas of the previous scan, and when the last full scan ran.
    last_owned: BTreeSet<ContextId>,
    last_members: BTreeSet<String>,
    last_full_scan: Option<Instant>,
}

impl Ownership {
    pub(crate) fn new(replica: Arc<Replica>) -> Self {
        Self {
            replica,
            state: Mutex::new(OwnershipState::default()),
        }
    }

    fn state(&self) -> std::sync::MutexGuard<'_, OwnershipState> {
        self.state
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    pub(crate) fn context_fence(&self, id: ContextId) -> Option<Fence> {
        let state = self.state();
        let owner = state.aliases.get(&id).copied().unwrap_or(id);
        state.contexts.get(&owner).cloned()
    }

    /// The context whose operation works on `id` here (itself unless an update hands over from it).
    pub(crate) fn owner_of(&self, id: ContextId) -> ContextId {
        self.state().aliases.get(&id).copied().unwrap_or(id)
    }

    /// While `owner`'s operation works on context `id`, writes for `id` are fenced by `owner`'s claim.
    pub(crate) fn alias(&self, id: ContextId, owner: ContextId) {
        self.state().aliases.insert(id, owner);
    }

    pub(crate) fn unalias(&self, id: ContextId) {
        self.state().aliases.remove(&id);
    }

    /// Whether this replica may claim the orphan `key` now: at once when it is the preferred one, else once the
    /// grace passed since it first saw the orphan.
    ///
    /// Even the preferred replica waits until it has seen the orphan for [`ORPHAN_CONFIRMATION`]: a context the
    /// lifecycle has just marked is claimed by the replica that received the call a moment later.
    pub(crate) fn may_claim(&self, key: &str) -> bool {
        let preferred = self.replica.prefers_me(key);
        let mut state = self.state();
        let seen = *state.orphans.entry(key.to_string()).or_insert_with(Instant::now);
        seen.elapsed()
            >= if preferred {
                ORPHAN_CONFIRMATION
            } else {
                CLAIM_GRACE
            }
    }

    /// Claims context `id`; its fence, or `None` when another replica owns it (or the store failed: logged).
    pub(crate) async fn claim_context(&self, id: ContextId, claim: Claim) -> Option<Fence> {
        let key = replicas::context_owner_key(id);
        match self.replica.claim(&key, claim).await {
            Ok(Some(fence)) => {
                let mut state = self.state();
                state.orphans.remove(&key);
                state.contexts.insert(id, fence.clone());
                Some(fence)
            }
            Ok(None) => {
                tracing::debug!(context = %id, "another replica owns the context");
                None
            }
            Err(err) => {
                tracing::warn!(context = %id, error = %err, "cannot claim the context");
                None
            }
        }
    }

    /// Claims cluster `cluster`'s watcher if nobody owns it.
    pub(crate) async fn claim_cluster(&self, cluster: &str) -> Option<Fence> {
        let key = replicas::cluster_owner_key(cluster);
        // Only an orphan may be claimed: a watcher another replica runs is left alone (without counting as an
        // orphan waiting for its grace).
        match self.replica.store().get(&key).await {
            Ok(Some(_)) => {
                self.forget_orphan(&key);
                return None;
            }
            Ok(None) => {}
            Err(err) => {
                tracing::debug!(cluster, error = %err, "cannot read the cluster's owner");
                return None;
            }
        }
        if !self.may_claim(&key) {
            return None;
        }
        match self.replica.claim(&key, Claim::IfFree).await {
            Ok(Some(fence)) => {
                let mut state = self.state();
                state.orphans.remove(&key);
                state.clusters.insert(cluster.to_string(), fence.clone());
                tracing::info!(cluster, "watching the cluster's status for this replica");
                Some(fence)
            }
            Ok(None) => None,
            Err(err) => {
                tracing::debug!(cluster, error = %err, "cannot claim the cluster");
                None
            }
        }
    }

    /// Gives context `id` up when `fence` is still its claim here.
    pub(crate) async fn release_context(&self, id: ContextId) {
        let Some(fence) = self.state().contexts.remove(&id) else {
            return;
        };
        if let Err(err) = self.replica.release(&fence).await {
            tracing::warn!(context = %id, error = %err, "cannot give the context up; its lease will");
        }
    }

    /// Gives cluster watchers up (their watchers ended here).
    pub(crate) fn release_clusters(&self, clusters: &[String]) {
        let fences: Vec<Fence> = {
            let mut state = self.state();
            clusters
                .iter()
                .filter_map(|cluster| state.clusters.remove(cluster))
                .collect()
        };
        if fences.is_empty() {
            return;
        }
        let replica = self.replica.clone();
        tokio::spawn(async move {
            for fence in fences {
                if let Err(err) = replica.release(&fence).await {
                    tracing::debug!(key = fence.key, error = %err, "cannot give a cluster up; its lease will");
                }
            }
        });
    }

    pub(crate) fn forget_context(&self, id: ContextId) {
        self.state().contexts.remove(&id);
    }

    pub(crate) fn forget_cluster(&self, cluster: &str) {
        self.state().clusters.remove(cluster);
    }

    /// Forgets every claim (the lease they were made with is gone).
    pub(crate) fn forget_all(&self) {
        let mut state = self.state();
        state.contexts.clear();
        state.clusters.clear();
        state.last_full_scan = None;
    }

    /// Whether the contexts must be scanned for orphans now: first time, an owner or replica left since the
    /// previous scan, an operation started on another replica (this one holds the watchers of its context's
    /// clusters, to take those rendezvous hashing gives it), an orphan waits for its grace, or the periodic scan
    /// is due.
    pub(crate) fn scan_due(&self, owned: BTreeSet<ContextId>, members: BTreeSet<String>) -> bool {
        let mut state = self.state();
        let someone_left = state.last_owned.difference(&owned).next().is_some()
            || state.last_members.difference(&members).next().is_some();
        let operation_started = owned.difference(&state.last_owned).next().is_some();
        // A cluster orphan seen long ago belongs to a watcher that ended meanwhile.
        state.orphans.retain(|_, seen| seen.elapsed() < CLAIM_GRACE * 10);
        let due = someone_left
            || operation_started
            || state
                .orphans
                .keys()
                .any(|key| replicas::is_context_owner_key(key))
            || state
                .last_full_scan
                .is_none_or(|last| last.elapsed() >= FULL_SCAN_EVERY);
        state.last_owned = owned;
        state.last_members = members;
        if due {
            state.last_full_scan = Some(Instant::now());
        }
        due
    }

    /// Forgets orphans that are owned now.
    pub(crate) fn forget_orphan(&self, key: &str) {
        self.state().orphans.remove(key);
    }
}

impl Inner {
    /// The fence of writes made for context `owner`'s operation (`None`: no replicas, nothing is fenced).
    pub(crate) fn fence_of(&self, owner: ContextId) -> Option<Fence> {
        self.ownership.as_ref()?.context_fence(owner)
    }

    /// Drops the operation of context `owner` on this replica: its claim was lost (nothing more is written for
    /// it here, and it is not retried).
    pub(crate) fn fenced_out(&self, owner: ContextId) {
        tracing::warn!(
            context = %owner,
            "this replica no longer owns the context's operation; dropping it without writing"
        );
        let owner = self
            .ownership
            .as_ref()
            .map_or(owner, |ownership| ownership.owner_of(owner));
        if let Some(ownership) = &self.ownership {
            ownership.forget_context(owner);
        }
        self.cancel_worker(owner);
    }

    /// Whether this replica still owns context `owner`'s operation (read from the store; true without
    /// replicas). Checked before each batch touches a cluster.
    pub(crate) async fn still_owns(&self, owner: ContextId) -> bool {
        let Some(ownership) = &self.ownership else {
            return true;
        };
        let Some(fence) = ownership.context_fence(owner) else {
            return false;
        };
        match fence.holds(ownership.replica.store()).await {
            Ok(holds) => holds,
            // An unreachable store: no AppContext write can succeed either; the batch's own retries wait.
            Err(err) => {
                tracing::debug!(context = %owner, error = %err, "cannot check the context's claim");
                true
            }
        }
    }

    /// With replicas, a write for work this replica holds no claim on (dropped meanwhile) is refused.
    fn refuse_unowned(&self, owner: ContextId, fence: Option<&Fence>) -> Result<(), ContextError> {
        if self.ownership.is_some() && fence.is_none() {
            return Err(ContextError::Fenced {
                id: owner,
                owner_key: replicas::context_owner_key(owner),
            });
        }
        Ok(())
    }

    /// Changes context `id`'s meta for context `owner`'s operation, fenced by its claim.
    pub(crate) async fn update_meta(
        &self,
        owner: ContextId,
        id: ContextId,
        change: impl FnMut(&mut ContextMeta),
    ) -> Result<ContextMeta, ContextError> {
        let fence = self.fence_of(owner);
        self.refuse_unowned(owner, fence.as_ref())?;
        let result = self.contexts.update_meta_fenced(id, fence.as_ref(), change).await;
        if let Err(ContextError::Fenced { .. }) = &result {
            self.fenced_out(owner);
        }
        result
    }

    /// Changes an (app, cluster) record of context `id` for the operation working on it, fenced by its claim.
    pub(crate) async fn update_cluster(
        &self,
        id: ContextId,
        app: &str,
        cluster: &str,
        change: impl FnMut(&mut ClusterRecord),
    ) -> Result<ClusterRecord, ContextError> {
        let fence = self.fence_of(id);
        self.refuse_unowned(id, fence.as_ref())?;
        let result = self
            .contexts
            .update_cluster_fenced(id, app, cluster, fence.as_ref(), change)
            .await;
        if let Err(ContextError::Fenced { .. }) = &result {
            self.fenced_out(id);
        }
        result
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_scan_is_due_when_an_operation_starts_or_an_owner_or_replica_leaves() {
        let store = emco_store::Store::memory();
        let replica = Replica::register(store, "a".into(), String::new(), Duration::from_secs(5))
            .await
            .unwrap();
        let ownership = Ownership::new(replica);
        let members = |names: &[&str]| names.iter().map(|name| name.to_string()).collect::<BTreeSet<_>>();
        let owned = |ids: &[u64]| {
            ids.iter()
                .filter_map(|id| ContextId::new(*id))
                .collect::<BTreeSet<_>>()
        };
        assert!(
            ownership.scan_due(owned(&[]), members(&["a", "b"])),
            "the first call scans"
        );
        assert!(
            !ownership.scan_due(owned(&[]), members(&["a", "b"])),
            "nothing changed"
        );
        assert!(
            ownership.scan_due(owned(&[7]), members(&["a", "b"])),
            "an operation started (its context's clusters are held here too)"
        );
        assert!(!ownership.scan_due(owned(&[7]), members(&["a", "b"])));
        assert!(
            ownership.scan_due(owned(&[]), members(&["a", "b"])),
            "an owner left"
        );
        assert!(
            !ownership.scan_due(owned(&[]), members(&["a", "b", "c"])),
            "a replica joined"
        );
        assert!(
            ownership.scan_due(owned(&[]), members(&["a", "c"])),
            "a replica left"
        );
    }
}
