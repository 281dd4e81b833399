//! One watcher per cluster on its ResourceBundleStates: each status the monitor writes is stored in the AppContext
//! named by the bundle's label (`<contextId>-<app>`), and in the live contexts of that context's update chain
//! (which label their objects with its id), with the time it was heard (`heard_at`). The monitor's
//! heartbeat (`status.heartbeat`) changes the status even when nothing else did, so a live monitor keeps `heard_at`
//! recent and the status answers can tell a silent cluster from a quiet one. A deleted bundle leaves the last
//! status in place (the final state of a terminated app). The watcher relists after errors and is restarted if it
//! ever ends, so a restarted monitor or a broken watch does not stop status from flowing.
//!
//! [`Watchers`] keeps a cluster's watcher exactly while a live context (Instantiating, Instantiated,
//! Terminating) uses the cluster: a batch holds its cluster for its context, the end of every operation settles
//! the context (held while it is still live, released once it is not), and [`Rsync::resume`] holds the clusters
//! of the live contexts it finds after a restart. The last release ends the watcher.
//!
//! [`Rsync::resume`]: crate::Rsync::resume

use std::collections::{BTreeSet, HashMap, HashSet};
use std::sync::{Arc, Mutex, Weak};
use std::time::Duration;

use emco_k8s::{DEPLOYMENT_ID_LABEL, RBS_GROUP, RBS_KIND, RBS_PLURAL, RBS_VERSION};
use emco_model::{ContextId, ContextStatus, now_timestamp};
use futures::StreamExt;
use kube::api::{Api, DynamicObject};
use kube::core::{ApiResource, GroupVersionKind};
use kube::runtime::{WatchStreamExt, watcher};
use tokio::task::JoinHandle;

use crate::engine::Inner;

/// Pause before restarting a watcher whose stream ended or whose client could not be built.
const RESTART_PAUSE: Duration = Duration::from_secs(2);

/// Splits a bundle label into its context and app (at the first `-`: app names may contain `-`).
pub(crate) fn parse_label(label: &str) -> Option<(ContextId, &str)> {
    let (id, app) = label.split_once('-')?;
    Some((id.parse().ok()?, app))
}

async fn store(inner: &Inner, cluster: &str, bundle: &DynamicObject) {
    let Some(label) = bundle
        .metadata
        .labels
        .as_ref()
        .and_then(|l| l.get(DEPLOYMENT_ID_LABEL))
    else {
        return;
    };
    let Some((root, app)) = parse_label(label) else {
        return;
    };
    let status = &bundle.data["status"];
    if status.is_null() {
        return;
    }
    for id in inner.watchers.lineage(root) {
        store_in(inner, id, app, cluster, status).await;
    }
}

async fn store_in(inner: &Inner, id: ContextId, app: &str, cluster: &str, status: &serde_json::Value) {
    // Skip writes that would change nothing (the watcher relists now and then); a new heartbeat is a change, so
    // a live monitor's bundle is stored, with its time, at every beat.
    match inner.contexts.cluster(id, app, cluster).await {
        Ok(record) if record.cluster_status.as_ref() == Some(status) => return,
        Ok(_) => {}
        // Not one of ours (another emco's, or a deleted context): ignore.
        Err(_) => return,
    }
    let heard = now_timestamp();
    let result = inner
        .contexts
        .update_cluster(id, app, cluster, |record| {
            record.cluster_status = Some(status.clone());
            record.heard_at = Some(heard.clone());
        })
        .await;
    if let Err(err) = result {
        tracing::debug!(context = %id, app, cluster, error = %err, "cannot store a cluster status");
    }
}

/// Follows one cluster's ResourceBundleStates until the task is aborted or the engine is gone. It holds the engine
/// only while it handles an event, so dropping the last [`Rsync`](crate::Rsync) handle ends its watchers.
pub(crate) async fn watch_cluster(engine: Weak<Inner>, cluster: String) {
    let resource = ApiResource::from_gvk_with_plural(
        &GroupVersionKind::gvk(RBS_GROUP, RBS_VERSION, RBS_KIND),
        RBS_PLURAL,
    );
    loop {
        let Some(inner) = engine.upgrade() else {
            return;
        };
        let client = inner.clients.watch_client(&cluster).await;
        drop(inner);
        let client = match client {
            Ok(client) => client,
            Err(err) => {
                tracing::debug!(cluster, error = %err, "no client for the bundle watcher yet");
                tokio::time::sleep(RESTART_PAUSE).await;
                continue;
            }
        };
        let api: Api<DynamicObject> = Api::all_with(client, &resource);
        let mut events = watcher::watcher(api, watcher::Config::default().labels(DEPLOYMENT_ID_LABEL))
            .default_backoff()
            .boxed();
        while let Some(event) = events.next().await {
            match event {
                Ok(watcher::Event::Apply(bundle) | watcher::Event::InitApply(bundle)) => {
                    let Some(inner) = engine.upgrade() else {
                        return;
                    };
                    store(&inner, &cluster, &bundle).await;
                }
                Ok(_) => {}
                Err(err) => {
                    tracing::debug!(cluster, error = %err, "bundle watch failed; relisting after back-off")
                }
            }
        }
        tokio::time::sleep(RESTART_PAUSE).await;
    }
}

/// Whether a context in `status` uses its clusters: an operation runs, it is instantiated, or an update is
/// taking over from it.
pub(crate) fn is_live(status: ContextStatus) -> bool {
    matches!(
        status,
        ContextStatus::Instantiating
            | ContextStatus::Instantiated
            | ContextStatus::Terminating
            | ContextStatus::Updating
    )
}

/// The bundle watchers and the live contexts that hold them.
#[derive(Default)]
pub(crate) struct Watchers {
    state: Mutex<WatcherState>,
}

#[derive(Default)]
struct WatcherState {
    /// The clusters each live context holds.
    holders: HashMap<ContextId, HashSet<String>>,
    /// The watcher of each held cluster.
    tasks: HashMap<String, JoinHandle<()>>,
    /// The live contexts of each update chain, by the chain's first context (the label's id).
    lineages: HashMap<ContextId, BTreeSet<ContextId>>,
}

impl Watchers {
    fn state(&self) -> std::sync::MutexGuard<'_, WatcherState> {
        self.state
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Notes that live context `id` uses `cluster`, and starts the cluster's watcher unless it runs already.
    pub(crate) fn hold(&self, inner: &Arc<Inner>, id: ContextId, cluster: &str) {
        let mut state = self.state();
        state.holders.entry(id).or_default().insert(cluster.to_string());
        if state.tasks.get(cluster).is_some_and(|task| !task.is_finished()) {
            return;
        }
        tracing::debug!(cluster, "starting the bundle watcher");
        state.tasks.insert(
            cluster.to_string(),
            tokio::spawn(watch_cluster(Arc::downgrade(inner), cluster.to_string())),
        );
    }

    /// Notes that live context `id` belongs to the update chain whose first context is `root`.
    pub(crate) fn join_lineage(&self, root: ContextId, id: ContextId) {
        self.state().lineages.entry(root).or_default().insert(id);
    }

    /// The contexts whose status a bundle labelled with `root` reports: the live contexts of its chain (`root`
    /// itself until an update takes over from it), else `root`.
    pub(crate) fn lineage(&self, root: ContextId) -> Vec<ContextId> {
        match self.state().lineages.get(&root) {
            Some(members) if !members.is_empty() => members.iter().copied().collect(),
            _ => vec![root],
        }
    }

    /// Context `id` uses no cluster any more: ends the watchers no other live context holds.
    pub(crate) fn release(&self, id: ContextId) {
        let mut state = self.state();
        for members in state.lineages.values_mut() {
            members.remove(&id);
        }
        state.lineages.retain(|_, members| !members.is_empty());
        if state.holders.remove(&id).is_none() {
            return;
        }
        let WatcherState { holders, tasks, .. } = &mut *state;
        tasks.retain(|cluster, task| {
            let held = holders.values().any(|clusters| clusters.contains(cluster));
            if !held {
                tracing::debug!(
                    cluster,
                    "ending the bundle watcher: no live context uses the cluster"
                );
                task.abort();
            }
            held
        });
    }

    /// The clusters watched now, in name order.
    pub(crate) fn clusters(&self) -> Vec<String> {
        let state = self.state();
        let running: BTreeSet<&String> = state
            .tasks
            .iter()
            .filter(|(_, task)| !task.is_finished())
            .map(|(cluster, _)| cluster)
            .collect();
        running.into_iter().cloned().collect()
    }

    /// Ends every watcher (the engine is going away).
    pub(crate) fn abort_all(&self) {
        for task in self.state().tasks.values() {
            task.abort();
        }
    }
}

/// After an operation of context `id` ended: its clusters stay held while it is live, and are released once it
/// is not (finished terminating, failed, stopped).
pub(crate) async fn settle(inner: &Arc<Inner>, id: ContextId) {
    match inner.contexts.meta(id).await {
        Ok(meta) if is_live(meta.status) => {
            for app in &meta.apps {
                for cluster in &app.clusters {
                    inner.watchers.hold(inner, id, cluster);
                }
            }
        }
        Ok(_) | Err(emco_appcontext::ContextError::NotFound(_)) => {
            inner.watchers.release(id);
            crate::engine::forget_root(inner, id);
        }
        Err(err) => {
            tracing::warn!(context = %id, error = %err, "cannot read the context to settle its watchers")
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn labels_split_at_the_first_dash() {
        let (id, app) = parse_label("2755581958183303505-sink-v2").unwrap();
        assert_eq!((id.get(), app), (2755581958183303505, "sink-v2"));
        assert!(parse_label("nodash").is_none());
        assert!(parse_label("x-app").is_none());
    }
}
