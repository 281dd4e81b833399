//! Batches on pull clusters: emco never dials such a cluster; its agent reaches emco. A batch there writes its
//! order into the (app, cluster) record (`emco_appcontext::AgentOrder`: what to do, with the record's resources
//! as the desired state), says that it waits for the agent, and waits until the agent's outcome of that order is
//! in the record — the report endpoint writes it and wakes the batch here ([`PullWaiters::wake`]); a report taken by
//! another replica is found by reading the record again every [`RECHECK`]. The outcome becomes the batch's
//! results, which `apply.rs` records as it records a direct cluster's. A stop or terminate cancels the wait; the
//! order stays, so an agent that applies it anyway still reports what it did.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use emco_appcontext::{
    AgentEnd, AgentOperation, AgentOrder, ClusterRecord, ContextError, UserCredentials, Waiting,
};
use emco_model::{ContextId, now_timestamp};
use tokio::sync::Notify;
use tokio_util::sync::CancellationToken;

use crate::apply::{Attempt, Direction, End};
use crate::engine::Inner;
use crate::error::SyncError;

/// How often a waiting batch reads its record again, for reports another replica took.
const RECHECK: Duration = Duration::from_secs(2);

/// The batches waiting for a pull cluster's agent on this replica, by (context, app, cluster), and what each pull
/// cluster's reported bundles last held (the watcher's fingerprints, so a report that changed only a heartbeat
/// writes a time, not the record).
#[derive(Default)]
pub(crate) struct PullWaiters {
    waiting: Mutex<HashMap<(ContextId, String, String), Arc<Notify>>>,
    stored: Mutex<HashMap<String, Arc<tokio::sync::Mutex<crate::watch::Stored>>>>,
}

impl PullWaiters {
    fn register(&self, key: (ContextId, String, String)) -> Arc<Notify> {
        self.waiting
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .entry(key)
            .or_default()
            .clone()
    }

    fn forget(&self, key: &(ContextId, String, String)) {
        self.waiting
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .remove(key);
    }

    /// Wakes the batch waiting for the agent's outcome of (context, app, cluster), if one waits here.
    pub(crate) fn wake(&self, id: ContextId, app: &str, cluster: &str) {
        if let Some(notify) = self.waiting.lock().unwrap_or_else(PoisonError::into_inner).get(&(
            id,
            app.to_string(),
            cluster.to_string(),
        )) {
            notify.notify_one();
        }
    }
}

/// Removes a batch's waiter however its wait ends.
struct Registered<'a> {
    waiters: &'a PullWaiters,
    key: (ContextId, String, String),
}

impl Drop for Registered<'_> {
    fn drop(&mut self) {
        self.waiters.forget(&self.key);
    }
}

/// One batch on a pull cluster: issue the order, wait for its outcome (or the cancellation).
#[allow(clippy::too_many_arguments)] // the batch's parts, as apply.rs's attempt takes them
pub(crate) async fn attempt(
    inner: &Inner,
    id: ContextId,
    label_id: ContextId,
    record: &ClusterRecord,
    namespace: &str,
    direction: Direction,
    credentials: Option<&UserCredentials>,
    cancel: &CancellationToken,
) -> Result<Attempt, SyncError> {
    let (app, cluster) = (record.app.as_str(), record.cluster.as_str());
    // A level-1 logical cloud's apps are applied as its service account (the pull cluster took the cloud's objects
    // with it, as a GitOps cluster does: no certificate is issued to emco there).
    let apply_as = credentials.map(|credentials| {
        format!(
            "system:serviceaccount:{namespace}:{}",
            emco_k8s::logical_cloud::flux_service_account(&credentials.logical_cloud)
        )
    });
    let cancelled = || Attempt {
        results: vec![None; record.resources.len()],
        certificates: vec![None; record.resources.len()],
        end: End::Cancelled,
        heard: None,
    };
    if cancel.is_cancelled() {
        return Ok(cancelled());
    }
    let (operation, other) = match direction {
        // emco repairs nothing on a pull cluster itself: its agent does.
        Direction::Apply | Direction::Repair => (AgentOperation::Apply, None),
        Direction::Update(predecessor) => (AgentOperation::Update, Some(predecessor)),
        Direction::Delete => (AgentOperation::Delete, None),
        Direction::Supersede(successor) => (AgentOperation::Supersede, Some(successor)),
    };
    let key = (id, app.to_string(), cluster.to_string());
    let registered = Registered {
        waiters: &inner.pull,
        key: key.clone(),
    };
    let notify = inner.pull.register(key);
    let issued_at = now_timestamp();
    let mut seq = 0;
    inner
        .update_cluster(id, app, cluster, |stored| {
            seq = stored.agent_order.as_ref().map_or(1, |order| order.seq + 1);
            stored.agent_order = Some(Box::new(AgentOrder {
                seq,
                operation,
                other,
                label: format!("{label_id}-{app}"),
                namespace: namespace.to_string(),
                apply_as: apply_as.clone(),
                issued_at: issued_at.clone(),
                outcome: None,
            }));
            stored.waiting = Some(Waiting {
                what: format!(
                    "the agent of pull cluster {cluster} to {} the app (order {seq})",
                    operation.as_str()
                ),
                since: issued_at.clone(),
                until: None,
                then: None,
            });
        })
        .await
        .map_err(context_error)?;
    tracing::debug!(context = %id, app, cluster, seq, operation = operation.as_str(), "ordered the pull cluster's agent");
    loop {
        let stored = inner
            .contexts
            .cluster(id, app, cluster)
            .await
            .map_err(context_error)?;
        match stored.agent_order {
            Some(order) if order.seq == seq => {
                if let Some(outcome) = order.outcome {
                    drop(registered);
                    let mut results = vec![None; record.resources.len()];
                    for (slot, reported) in results.iter_mut().zip(outcome.results) {
                        *slot = reported.map(|result| (result.status, result.error));
                    }
                    return Ok(Attempt {
                        certificates: vec![None; results.len()],
                        results,
                        end: match outcome.end {
                            AgentEnd::Done => End::Done,
                            AgentEnd::Failed => End::Failed,
                        },
                        heard: None,
                    });
                }
            }
            // Another batch of this app and cluster ordered since (a takeover): this one has nothing to wait for.
            _ => return Ok(cancelled()),
        }
        tokio::select! {
            () = notify.notified() => {}
            () = tokio::time::sleep(RECHECK) => {}
            () = cancel.cancelled() => return Ok(cancelled()),
        }
    }
}

fn context_error(err: ContextError) -> SyncError {
    SyncError::Context(err.to_string())
}

/// Stores the bundle statuses a pull cluster's agent reported (`(label, status JSON)`), heard now, as a watched
/// cluster's bundles are stored (`watch::store`: the same records, heartbeats and fingerprints).
pub(crate) async fn store_agent_status(engine: &Arc<Inner>, cluster: &str, bundles: Vec<(String, String)>) {
    let weak = Arc::downgrade(engine);
    let heard_at = now_timestamp();
    // One report of a cluster at a time, so its fingerprints stay its own; other clusters' reports go on.
    let cluster_stored = engine
        .pull
        .stored
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .entry(cluster.to_string())
        .or_default()
        .clone();
    let mut fingerprints = cluster_stored.lock().await;
    for (label, status) in bundles {
        let Some(bundle) = crate::watch::BundleState::reported(&label, status) else {
            tracing::debug!(
                cluster,
                label,
                "an agent's bundle status that is not JSON; ignored"
            );
            continue;
        };
        crate::watch::store(
            &weak,
            engine,
            cluster,
            &bundle,
            &heard_at,
            None,
            &mut fingerprints,
        )
        .await;
    }
}
