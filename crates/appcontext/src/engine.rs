//! The interface between the lifecycle (which creates and marks AppContexts) and the engine that applies them to
//! clusters (rsync). The lifecycle records every operation in the store first — the context's status says what is
//! wanted — then tells the engine, so an engine that restarts can resume from the store alone.

use std::collections::HashMap;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::time::Duration;

use emco_model::{ContextId, ContextStatus};

use crate::AppContexts;

/// What a cluster tells a chart about itself: Helm's `.Capabilities` as `helm install` reads them from a live
/// cluster (its `/version` and its discovery).
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ClusterCapabilities {
    /// `/version`'s `gitVersion`, e.g. `v1.23.17`.
    pub kube_version: String,
    /// Every group version the cluster serves and every `group/version/Kind` of it (core: `v1`, `v1/Pod`),
    /// sorted.
    pub api_versions: Vec<String>,
}

/// A node as its cluster reports it, for placement that needs hardware: its labels, and what it has left of each
/// allocatable resource once the requests of the pods running on it are taken off (whole units, as
/// `Quantity.MilliValue() / 1000` counts them: cores for `cpu`, bytes for `memory`).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct NodeReport {
    /// The node's name.
    pub name: String,
    /// Its labels.
    pub labels: std::collections::BTreeMap<String, String>,
    /// Allocatable minus the running pods' requests, by resource name.
    pub available: std::collections::BTreeMap<String, i128>,
}

/// Each asked cluster's nodes, or why it could not say (by cluster, `provider+cluster`).
pub type NodesFuture = Pin<Box<dyn Future<Output = HashMap<String, Result<Vec<NodeReport>, String>>> + Send>>;

/// Resolves once an agent's bundle statuses are stored.
pub type AgentStatusFuture = Pin<Box<dyn Future<Output = ()> + Send>>;

/// The capabilities of the clusters that answered, by cluster (`provider+cluster`).
pub type CapabilitiesFuture = Pin<Box<dyn Future<Output = HashMap<String, ClusterCapabilities>> + Send>>;

/// Applies AppContexts to clusters. Calls return at once; the engine reports progress through the AppContext.
pub trait Engine: Send + Sync + 'static {
    /// Start applying context `id` (its status is `Instantiating` already).
    fn instantiate(&self, id: ContextId);
    /// Start deleting the resources of context `id` (its status is `Terminating` already); an instantiation still
    /// running for it is cancelled first.
    fn terminate(&self, id: ContextId);
    /// End the running operation of context `id` (its `stopRequested` flag is set already).
    fn stop(&self, id: ContextId);
    /// A pull cluster's agent reported the outcome of its order for (context `id`, `app`) on `cluster`: it is in
    /// the record now; a batch waiting for it goes on. The default: nothing waits.
    fn agent_reported(&self, id: ContextId, app: &str, cluster: &str) {
        let _ = (id, app, cluster);
    }
    /// A pull cluster's agent sent the status of ResourceBundleStates of its cluster: each its
    /// `emco/deployment-id` label and its `status` as JSON text, heard now. The engine stores them as it stores
    /// the bundles it watches itself. The default: they are dropped.
    fn agent_status(&self, cluster: &str, bundles: Vec<(String, String)>) -> AgentStatusFuture {
        let _ = (cluster, bundles);
        Box::pin(async {})
    }
    /// The capabilities of each of `clusters` (`provider+cluster`) that answers within `wait` (or was asked
    /// recently), for rendering charts as Helm renders them for that cluster; a cluster missing from the answer is
    /// rendered with Helm's defaults. The default: no cluster is asked.
    fn capabilities(&self, clusters: Vec<String>, wait: Duration) -> CapabilitiesFuture {
        let _ = (clusters, wait);
        Box::pin(async { HashMap::new() })
    }
    /// The nodes of each of `clusters` (`provider+cluster`), read now, each cluster within `wait`; a cluster that
    /// does not answer in time, or cannot be read, is answered with why. The default: no cluster can be read.
    fn nodes(&self, clusters: Vec<String>, wait: Duration) -> NodesFuture {
        let _ = wait;
        Box::pin(async move {
            clusters
                .into_iter()
                .map(|cluster| (cluster, Err("no cluster engine reads clusters".to_string())))
                .collect()
        })
    }
}

/// The engine used until a cluster engine is configured: it applies nothing, so every resource stays `Pending`
/// and a running operation only ends when it is stopped (then `InstantiateFailed` / `TerminateFailed`, as rsync
/// reports a stopped operation).
#[derive(Debug, Clone)]
pub struct NoopEngine {
    contexts: AppContexts,
}

impl NoopEngine {
    /// An engine over these contexts.
    #[must_use]
    pub fn new(contexts: AppContexts) -> Arc<Self> {
        Arc::new(Self { contexts })
    }
}

impl Engine for NoopEngine {
    fn instantiate(&self, id: ContextId) {
        tracing::debug!(context = %id, "no cluster engine: resources stay Pending");
    }

    fn terminate(&self, id: ContextId) {
        tracing::debug!(context = %id, "no cluster engine: nothing to delete until stopped");
    }

    fn stop(&self, id: ContextId) {
        let contexts = self.contexts.clone();
        tokio::spawn(async move {
            let result = contexts
                .update_meta(id, |meta| {
                    meta.status = match meta.status {
                        ContextStatus::Instantiating => ContextStatus::InstantiateFailed,
                        ContextStatus::Terminating => ContextStatus::TerminateFailed,
                        other => other,
                    };
                })
                .await;
            if let Err(err) = result {
                tracing::warn!(context = %id, error = %err, "could not record the stopped operation");
            }
        });
    }
}
