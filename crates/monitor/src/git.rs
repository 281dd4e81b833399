//! The monitor's status through Git, for a cluster emco cannot reach (a GitOps cluster): every `interval` it reads
//! the ResourceBundleStates of its own cluster and, when any changed since the last commit, makes the cluster's
//! status folder of the status branch hold exactly them — one commit at most per interval, none while nothing
//! changed. As EMCO's monitor: the branch is named after the cluster (`provider+cluster`), each bundle is the file
//! `clusters/{cluster}/status/{cid}/app/{app}/{cid}-{app}` (its JSON), `{cid}-{app}` being its `emco/deployment-id`.
//! A Git server that is down or refuses the push is tried again at the next interval; the bundles keep their
//! status in the cluster meanwhile.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use emco_git::{Limits, Mirror, Published, Remote};
use emco_k8s::{DEPLOYMENT_ID_LABEL, RBS_GROUP, RBS_KIND, RBS_PLURAL, RBS_VERSION};
use kube::api::{Api, DynamicObject, ListParams};
use kube::core::{ApiResource, GroupVersionKind};
use serde_json::{Value as Json, json};

/// Where and how often the monitor commits its cluster's status.
#[derive(Debug, Clone)]
pub struct GitStatusConfig {
    /// The repository (its branch is ignored: status goes to the branch named after the cluster).
    pub remote: Remote,
    /// The cluster as emco names it: `provider+cluster`.
    pub cluster: String,
    /// At most one commit per this interval.
    pub interval: Duration,
    /// The folder of the local mirror.
    pub mirror_dir: PathBuf,
}

/// The folder of `cluster`'s status in the repository.
#[must_use]
pub fn status_folder(cluster: &str) -> String {
    format!("clusters/{cluster}/status")
}

/// The status files of `bundles`: path → the bundle's JSON (its metadata's name, namespace and labels, spec and
/// status). A bundle without a `{cid}-{app}` deployment id is left out.
#[must_use]
pub fn status_files(cluster: &str, bundles: &[DynamicObject]) -> BTreeMap<String, Vec<u8>> {
    let folder = status_folder(cluster);
    let mut files = BTreeMap::new();
    for bundle in bundles {
        let Some(id) = bundle
            .metadata
            .labels
            .as_ref()
            .and_then(|labels| labels.get(DEPLOYMENT_ID_LABEL))
        else {
            continue;
        };
        let Some((cid, app)) = id.split_once('-') else {
            continue;
        };
        let valid = |part: &str| {
            !part.is_empty()
                && part
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'))
        };
        if !valid(cid) || !valid(app) {
            continue;
        }
        let object = json!({
            "apiVersion": format!("{RBS_GROUP}/{RBS_VERSION}"),
            "kind": RBS_KIND,
            "metadata": {
                "name": bundle.metadata.name,
                "namespace": bundle.metadata.namespace,
                "labels": bundle.metadata.labels,
            },
            "spec": bundle.data.get("spec").cloned().unwrap_or(Json::Null),
            "status": bundle.data.get("status").cloned().unwrap_or(Json::Null),
        });
        let Ok(bytes) = serde_json::to_vec(&object) else {
            continue;
        };
        files.insert(format!("{folder}/{cid}/app/{app}/{id}"), bytes);
    }
    files
}

/// Commits the cluster's status (see the module's doc) until `shutdown`.
pub async fn publish_status(
    client: kube::Client,
    config: GitStatusConfig,
    shutdown: impl std::future::Future<Output = ()>,
) {
    let remote = Remote {
        branch: config.cluster.clone(),
        ..config.remote.clone()
    };
    let mirror = match Mirror::open_async(config.mirror_dir.clone(), remote, Limits::default()).await {
        Ok(mirror) => Arc::new(mirror),
        Err(err) => {
            tracing::error!(error = %err, "cannot open the status repository: status is not committed to Git");
            return;
        }
    };
    let bundles: Api<DynamicObject> = Api::all_with(
        client,
        &ApiResource::from_gvk_with_plural(
            &GroupVersionKind::gvk(RBS_GROUP, RBS_VERSION, RBS_KIND),
            RBS_PLURAL,
        ),
    );
    let folder = status_folder(&config.cluster);
    let mut published: Option<BTreeMap<String, Vec<u8>>> = None;
    let mut ticks = tokio::time::interval(config.interval);
    ticks.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    tokio::pin!(shutdown);
    loop {
        tokio::select! {
            _ = ticks.tick() => {}
            () = &mut shutdown => return,
        }
        let listed = match bundles.list(&ListParams::default()).await {
            Ok(listed) => listed.items,
            // No CRD yet (nothing deployed): no bundles.
            Err(kube::Error::Api(status)) if status.code == 404 => Vec::new(),
            Err(err) => {
                tracing::warn!(error = %err, "cannot list the ResourceBundleStates; trying again");
                continue;
            }
        };
        let files = status_files(&config.cluster, &listed);
        if published.as_ref() == Some(&files) {
            continue;
        }
        let message = format!("status of {}: {} bundle(s)", config.cluster, files.len());
        let (task_mirror, task_folder, task_files) = (mirror.clone(), folder.clone(), files.clone());
        let outcome = tokio::task::spawn_blocking(move || {
            task_mirror.publish_folder(&message, &task_folder, &task_files)
        })
        .await;
        match outcome {
            Ok(Ok(done)) => {
                if let Published::Committed { commit, .. } = &done {
                    tracing::debug!(commit, bundles = files.len(), "status committed");
                }
                published = Some(files);
            }
            Ok(Err(err)) => {
                tracing::warn!(error = %err, "cannot commit the status; trying again at the next interval")
            }
            Err(err) => tracing::warn!(error = %err, "the status commit stopped"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_bundle_is_the_file_emcos_monitor_writes() {
        let bundle: DynamicObject = serde_json::from_value(json!({
            "apiVersion": "k8splugin.io/v1alpha1", "kind": "ResourceBundleState",
            "metadata": {"name": "7-web", "namespace": "default", "labels": {DEPLOYMENT_ID_LABEL: "7-web"},
                "managedFields": [{"manager": "x"}]},
            "spec": {"selector": {"matchLabels": {DEPLOYMENT_ID_LABEL: "7-web"}}},
            "status": {"ready": true}}))
        .unwrap();
        let unlabelled: DynamicObject = serde_json::from_value(json!({
            "apiVersion": "k8splugin.io/v1alpha1", "kind": "ResourceBundleState",
            "metadata": {"name": "x", "labels": {DEPLOYMENT_ID_LABEL: "1-../x"}}}))
        .unwrap();
        let files = status_files("p+c", &[bundle, unlabelled]);
        assert_eq!(
            files.keys().collect::<Vec<_>>(),
            ["clusters/p+c/status/7/app/web/7-web"]
        );
        let written: Json = serde_json::from_slice(&files["clusters/p+c/status/7/app/web/7-web"]).unwrap();
        assert_eq!(written["status"], json!({"ready": true}));
        assert!(written["metadata"].get("managedFields").is_none());
    }
}
