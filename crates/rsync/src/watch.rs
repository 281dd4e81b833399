//! One watcher per cluster on its ResourceBundleStates: each status the monitor writes is stored in the AppContext
//! named by the bundle's label (`<contextId>-<app>`), with the time it was heard. A deleted bundle leaves the last
//! status in place (the final state of a terminated app). The watcher relists after errors and is restarted if it
//! ever ends, so a restarted monitor or a broken watch does not stop status from flowing.

use std::sync::Arc;
use std::time::Duration;

use emco_k8s::{DEPLOYMENT_ID_LABEL, RBS_GROUP, RBS_KIND, RBS_PLURAL, RBS_VERSION};
use emco_model::{ContextId, now_timestamp};
use futures::StreamExt;
use kube::api::{Api, DynamicObject};
use kube::core::{ApiResource, GroupVersionKind};
use kube::runtime::{WatchStreamExt, watcher};

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
    let Some((id, app)) = parse_label(label) else {
        return;
    };
    let status = &bundle.data["status"];
    if status.is_null() {
        return;
    }
    // Skip writes that would change nothing (the watcher relists now and then).
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

/// Follows one cluster's ResourceBundleStates until the task is aborted.
pub(crate) async fn watch_cluster(inner: Arc<Inner>, cluster: String) {
    let resource = ApiResource::from_gvk_with_plural(
        &GroupVersionKind::gvk(RBS_GROUP, RBS_VERSION, RBS_KIND),
        RBS_PLURAL,
    );
    loop {
        let client = match inner.clients.watch_client(&cluster).await {
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
                    store(&inner, &cluster, &bundle).await
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
