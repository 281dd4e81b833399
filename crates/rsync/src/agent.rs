//! rsync inside a pull cluster's agent: the orders emco sends are applied to the agent's own cluster by rsync's own
//! batches (`apply.rs`: CRDs first and waited for, hooks in Helm's order with their delete policies, main resources
//! with server-side apply in order, the ResourceBundleState, deletes in reverse, a handover's deletes) — the same
//! code a direct cluster's batches run in emco, not a copy. The agent keeps what it was sent in a store of its own
//! (memory): each order's context and (app, cluster) record as emco holds them, so an update finds what its
//! predecessor applied and a handover what its successor holds. Its ResourceBundleStates are read by the agent
//! itself ([`AgentApplier::bundle_statuses`], rsync's bundle stream), so the local engine watches none.

use emco_appcontext::{
    AgentEnd, AgentOperation, AgentOrder, AgentResult, AppContexts, AppMeta, Catalog, ClusterRecord,
    ContextMeta, ContextOwner, Kind, ResourcePath, ResourceRecord, UserCredentials,
};
use emco_model::{ContextId, ContextStatus, RsyncStatus};
use emco_store::{Store, Txn};
use futures::{Stream, StreamExt as _};
use tokio_util::sync::CancellationToken;

use crate::apply::{BatchOutcome, Direction};
use crate::{Rsync, RsyncConfig};

/// The provider the agent's own cluster is kept under in its store.
const LOCAL_PROVIDER: &str = "local";
/// The agent's own cluster in its store.
const LOCAL_CLUSTER: &str = "cluster";

/// Why the agent's applier cannot be set up or cannot keep an order.
#[derive(Debug, thiserror::Error)]
pub enum AgentError {
    /// The agent's own store refused a write (a bug: it is in memory).
    #[error("the agent's store: {0}")]
    Store(String),
    /// An order names no context of the tracking label's shape.
    #[error("order of app '{app}': the label '{label}' is not '<context>-<app>'")]
    Label {
        /// The app.
        app: String,
        /// The label.
        label: String,
    },
}

/// What running an order came to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OrderRun {
    /// How it ended.
    pub end: AgentEnd,
    /// Each resource's result, in the order's resources' order.
    pub results: Vec<Option<AgentResult>>,
    /// An update that changed no object: the bundle stays as it was (and may not change to report itself again).
    pub unchanged: bool,
}

impl OrderRun {
    /// Whether the batch ended done with no resource failed, even alone.
    #[must_use]
    pub fn nothing_failed(&self) -> bool {
        self.end == AgentEnd::Done
            && self
                .results
                .iter()
                .flatten()
                .all(|result| result.status != RsyncStatus::Failed)
    }
}

/// What the agent runs orders with.
pub struct AgentApplier {
    rsync: Rsync,
    contexts: AppContexts,
    store: Store,
    cluster_key: String,
    client: kube::Client,
}

impl AgentApplier {
    /// An applier to the cluster `kubeconfig` reaches (the agent's own), checked by the kubeconfig policy of
    /// `config` as emco checks every kubeconfig; `config.watch_bundles` is turned off.
    pub async fn new(kubeconfig: &[u8], config: RsyncConfig) -> Result<Self, AgentError> {
        Self::set_up(Some(kubeconfig), None, config).await
    }

    /// An applier to the cluster `client` reaches (the agent's own, in-process: software a simulated cluster
    /// runs); a logical cloud's apps are applied through it as their user (`Impersonate-User`), as through a
    /// kubeconfig.
    pub async fn with_client(client: kube::Client, config: RsyncConfig) -> Result<Self, AgentError> {
        Self::set_up(None, Some(client), config).await
    }

    async fn set_up(
        kubeconfig: Option<&[u8]>,
        given: Option<kube::Client>,
        config: RsyncConfig,
    ) -> Result<Self, AgentError> {
        // No history: thousands of agents may share a process, and nothing watches an agent's store.
        let store = Store::memory_without_history();
        let catalog = Catalog::new(store.clone());
        let contexts = AppContexts::new(store.clone());
        let store_error = |err: emco_appcontext::CatalogError| AgentError::Store(err.to_string());
        catalog
            .create(
                &ResourcePath::new(Kind::ClusterProvider, vec![LOCAL_PROVIDER.into()]),
                &serde_json::json!({"metadata": {"name": LOCAL_PROVIDER}}),
                None,
                Vec::new(),
            )
            .await
            .map_err(store_error)?;
        catalog
            .create(
                &ResourcePath::new(Kind::Cluster, vec![LOCAL_PROVIDER.into(), LOCAL_CLUSTER.into()]),
                &serde_json::json!({"metadata": {"name": LOCAL_CLUSTER}}),
                kubeconfig,
                Vec::new(),
            )
            .await
            .map_err(store_error)?;
        let rsync = Rsync::new(
            catalog,
            contexts.clone(),
            RsyncConfig {
                watch_bundles: false,
                impersonate_users: true,
                ..config
            },
        );
        let cluster_key = format!("{LOCAL_PROVIDER}+{LOCAL_CLUSTER}");
        if let Some(given) = given {
            rsync.inner.clients.give(&cluster_key, given);
        }
        let client = rsync
            .inner
            .clients
            .client(&cluster_key)
            .await
            .map_err(|err| AgentError::Store(err.to_string()))?;
        Ok(Self {
            rsync,
            contexts,
            store,
            cluster_key,
            client,
        })
    }

    /// Keeps an order and the resources it is about as emco holds them (replacing what the agent had for that
    /// context and app).
    pub async fn keep(
        &self,
        context: ContextId,
        app: &str,
        order: &AgentOrder,
        resources: Vec<ResourceRecord>,
    ) -> Result<(), AgentError> {
        let root = label_root(app, &order.label)?;
        let mut meta = match self.contexts.meta(context).await {
            Ok(meta) => meta,
            Err(_) => ContextMeta::for_owner(
                context,
                ContextOwner::DeploymentIntentGroup,
                &order.namespace,
                Vec::new(),
            ),
        };
        meta.namespace.clone_from(&order.namespace);
        meta.lineage = (root != context).then_some(root);
        if order.operation == AgentOperation::Update {
            meta.supersedes = order.other;
        }
        meta.status = ContextStatus::Instantiated;
        meta.credentials = local_credentials(order, root);
        if !meta.apps.iter().any(|known| known.name == app) {
            meta.apps.push(AppMeta {
                name: app.to_string(),
                dependencies: Vec::new(),
                clusters: vec![self.cluster_key.clone()],
                excluded: Vec::new(),
            });
        }
        let mut record = ClusterRecord::pending(app, &self.cluster_key, resources);
        record.agent_order = Some(Box::new(order.clone()));
        let (_, ops) = AppContexts::create_txn_parts(&meta, &[record]);
        self.store
            .txn(Txn::new().and_then(ops))
            .await
            .map_err(|err| AgentError::Store(err.to_string()))?;
        Ok(())
    }

    /// Runs a kept order on the cluster with rsync's batch (retrying what rsync retries) and answers its outcome
    /// as emco takes it; `None` when `cancel` ended it first.
    pub async fn run(
        &self,
        context: ContextId,
        app: &str,
        order: &AgentOrder,
        cancel: CancellationToken,
    ) -> Option<OrderRun> {
        let direction = match (order.operation, order.other) {
            (AgentOperation::Update, Some(predecessor)) => Direction::Update(predecessor),
            (AgentOperation::Supersede, Some(successor)) => Direction::Supersede(successor),
            (AgentOperation::Delete, _) => Direction::Delete,
            // An update without its predecessor applies everything; a handover without its successor is not
            // sent by emco, and is taken as nothing to keep: nothing is deleted on a guess.
            (AgentOperation::Apply | AgentOperation::Update, _) => Direction::Apply,
            (AgentOperation::Supersede, None) => {
                return Some(OrderRun {
                    end: AgentEnd::Done,
                    results: Vec::new(),
                    unchanged: true,
                });
            }
        };
        // An update whose every resource its predecessor applied as it is changes no object (rsync's batch marks
        // them Applied without a request).
        let unchanged = match direction {
            Direction::Update(predecessor) => {
                let record = self
                    .contexts
                    .cluster(context, app, &self.cluster_key)
                    .await
                    .ok()?;
                let credentials = local_credentials(order, label_root(app, &order.label).ok()?);
                let previous = crate::apply::predecessor_record(
                    &self.rsync.inner,
                    predecessor,
                    &record,
                    &order.namespace,
                    credentials.as_ref(),
                )
                .await
                .ok()
                .flatten();
                previous.is_some()
                    && crate::apply::unchanged_resources(&record, previous.as_ref())
                        .iter()
                        .all(Option::is_some)
            }
            _ => false,
        };
        let credentials = local_credentials(order, label_root(app, &order.label).ok()?);
        let outcome = crate::apply::sync_cluster(
            self.rsync.inner.clone(),
            context,
            app.to_string(),
            self.cluster_key.clone(),
            order.namespace.clone(),
            direction,
            credentials,
            cancel,
        )
        .await;
        let end = match outcome {
            BatchOutcome::Succeeded => AgentEnd::Done,
            BatchOutcome::Failed => AgentEnd::Failed,
            BatchOutcome::Cancelled => return None,
        };
        let record = self
            .contexts
            .cluster(context, app, &self.cluster_key)
            .await
            .ok()?;
        let results = record
            .resources
            .iter()
            .map(|resource| {
                matches!(
                    resource.status,
                    RsyncStatus::Applied | RsyncStatus::Deleted | RsyncStatus::Failed
                )
                .then(|| AgentResult {
                    status: resource.status,
                    error: resource.error.clone(),
                })
            })
            .collect();
        Some(OrderRun {
            end,
            results,
            unchanged,
        })
    }

    /// The cluster's ResourceBundleStates labelled by emco, as rsync's watcher reads them: every one listed, then
    /// each change, as (its `emco/deployment-id` label, its status as JSON text); errors are logged and the
    /// stream lists again.
    pub fn bundle_statuses(&self) -> impl Stream<Item = (String, String)> + Send + 'static {
        crate::bundle_stream::bundle_states(self.client.clone(), None).filter_map(|bundle| async move {
            match bundle {
                Ok(bundle) => {
                    let label = bundle
                        .metadata_labels()
                        .and_then(|labels| labels.get(emco_k8s::DEPLOYMENT_ID_LABEL))?
                        .clone();
                    let status = bundle.status.as_ref().filter(|raw| raw.get() != "null")?;
                    Some((label, status.get().to_string()))
                }
                Err(err) => {
                    tracing::info!(error = %err, "reading the cluster's ResourceBundleStates; listing again");
                    None
                }
            }
        })
    }

    /// Applies again what a kept, applied order applied (a repair: CRDs if absent, main resources, the bundle; no
    /// hook), with rsync's batch; whether every resource is Applied after it. `false` also when `cancel` ended it.
    pub async fn repair(&self, context: ContextId, app: &str, cancel: CancellationToken) -> bool {
        let Ok(record) = self.contexts.cluster(context, app, &self.cluster_key).await else {
            return false;
        };
        let Some(order) = record.agent_order else {
            return false;
        };
        let Ok(root) = label_root(app, &order.label) else {
            return false;
        };
        let credentials = local_credentials(&order, root);
        let outcome = crate::apply::sync_cluster(
            self.rsync.inner.clone(),
            context,
            app.to_string(),
            self.cluster_key.clone(),
            order.namespace.clone(),
            Direction::Repair,
            credentials,
            cancel,
        )
        .await;
        outcome == BatchOutcome::Succeeded
    }

    /// The kept (context, app) pairs a repair applies again: each applied (not deleted, not handed over) order of
    /// a context no kept update took over from, whose resources were applied.
    pub async fn repairable(&self) -> Vec<(ContextId, String)> {
        let Ok(ids) = self.contexts.ids().await else {
            return Vec::new();
        };
        let mut metas = Vec::new();
        for id in ids {
            if let Ok(meta) = self.contexts.meta(id).await {
                metas.push(meta);
            }
        }
        let mut pairs = Vec::new();
        for meta in &metas {
            if metas.iter().any(|other| other.supersedes == Some(meta.id)) {
                continue;
            }
            let Ok(records) = self.contexts.clusters(meta.id).await else {
                continue;
            };
            for record in records {
                let applied_order = record.agent_order.as_ref().is_some_and(|order| {
                    matches!(order.operation, AgentOperation::Apply | AgentOperation::Update)
                });
                let applied = record
                    .resources
                    .iter()
                    .all(|resource| !matches!(resource.status, RsyncStatus::Pending | RsyncStatus::Retrying));
                if applied_order && applied {
                    pairs.push((meta.id, record.app));
                }
            }
        }
        pairs
    }

    /// The repairable (context, app) pairs whose bundle — labelled `label`, with status `status` (JSON) — lists
    /// an object of theirs missing that the cluster confirms is gone (deleted behind emco's back).
    pub async fn missing_objects(&self, label: &str, status: &str) -> Vec<(ContextId, String)> {
        let Some((root, app)) = crate::watch::parse_label(label) else {
            return Vec::new();
        };
        let Ok(status) = serde_json::from_str::<serde_json::Value>(status) else {
            return Vec::new();
        };
        let mut missing = Vec::new();
        for (context, pair_app) in self.repairable().await {
            if pair_app != app {
                continue;
            }
            let in_chain = context == root
                || self
                    .contexts
                    .meta(context)
                    .await
                    .is_ok_and(|meta| meta.lineage == Some(root));
            if !in_chain {
                continue;
            }
            let Ok(record) = self.contexts.cluster(context, app, &self.cluster_key).await else {
                continue;
            };
            let namespace = record
                .agent_order
                .as_ref()
                .map_or_else(String::new, |order| order.namespace.clone());
            for resource in &record.resources {
                let shown_missing = resource.role.is_main()
                    && resource.status == RsyncStatus::Applied
                    && emco_k8s::bundle::presence(
                        Some(&status),
                        &resource.gvk().group,
                        &resource.kind,
                        &resource.name,
                    ) == emco_model::ClusterResourceStatus::NotPresent;
                // A bundle written from a cache that has not seen the object yet shows it missing too: the
                // cluster has the last word.
                if shown_missing
                    && crate::apply::is_absent(
                        &self.rsync.inner,
                        &self.cluster_key,
                        &self.client,
                        resource,
                        &namespace,
                    )
                    .await
                {
                    missing.push((context, pair_app));
                    break;
                }
            }
        }
        missing
    }

    /// The rsync engine the applier runs (its own, over the agent's store).
    #[must_use]
    pub fn rsync(&self) -> &Rsync {
        &self.rsync
    }
}

impl std::fmt::Debug for AgentApplier {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AgentApplier").finish_non_exhaustive()
    }
}

/// Whether bundle status `new` (JSON text) says more than `old` did: they differ in a field other than the
/// heartbeat (or either is not a JSON object).
#[must_use]
pub fn changed_beyond_heartbeat(old: &str, new: &str) -> bool {
    match (
        crate::watch::fingerprint_text(old),
        crate::watch::fingerprint_text(new),
    ) {
        (Some(old), Some(new)) => old != new,
        _ => true,
    }
}

/// Whom an order's main resources and hooks are applied as, as rsync's batch takes it: the user its local engine
/// impersonates (`RsyncConfig::impersonate_users`), the same for every context of the chain (so an update compares
/// with its predecessor).
fn local_credentials(order: &AgentOrder, root: ContextId) -> Option<UserCredentials> {
    order.apply_as.as_ref().map(|user| UserCredentials {
        project: String::new(),
        logical_cloud: String::new(),
        context: root,
        user: user.clone(),
    })
}

/// The first context of an update chain, from the tracking label `<context>-<app>` an order carries.
fn label_root(app: &str, label: &str) -> Result<ContextId, AgentError> {
    label
        .strip_suffix(app)
        .and_then(|rest| rest.strip_suffix('-'))
        .and_then(|id| id.parse().ok())
        .ok_or_else(|| AgentError::Label {
            app: app.to_string(),
            label: label.to_string(),
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_label_names_the_first_context_of_the_chain() {
        assert_eq!(
            label_root("web-api", "7-web-api").unwrap(),
            ContextId::new(7).unwrap()
        );
        assert!(label_root("web", "7-api").is_err());
        assert!(label_root("web", "x-web").is_err());
    }

    #[test]
    fn a_run_failed_nowhere_only_when_done_with_no_resource_failed() {
        let result = |status| Some(AgentResult { status, error: None });
        let run = |end, results| OrderRun {
            end,
            results,
            unchanged: false,
        };
        assert!(run(AgentEnd::Done, vec![result(RsyncStatus::Applied), None]).nothing_failed());
        assert!(
            !run(
                AgentEnd::Done,
                vec![result(RsyncStatus::Applied), result(RsyncStatus::Failed)]
            )
            .nothing_failed()
        );
        assert!(!run(AgentEnd::Failed, vec![result(RsyncStatus::Applied)]).nothing_failed());
    }
}
