//! A cluster that plays Flux v2 (a GitOps cluster): as `flux bootstrap` leaves a cluster, it serves Flux's
//! `GitRepository` and `Kustomization` kinds and reconciles the bootstrap path of its repository
//! (`clusters/{provider}+{cluster}`) every `interval`, as Flux's source and kustomize controllers do: it fetches the
//! branch, applies every manifest under the path (recursively, `.yaml`, `.yml` and `.json`; CustomResourceDefinitions
//! and Namespaces first) with server-side apply as `kustomize-controller`, prunes what it applied before and the
//! branch no longer holds, and reports each Kustomization `Ready` with the revision it applied. It talks to its own
//! cluster from inside (as in-cluster software), never through the cluster's listener. An object the cluster refuses
//! (a kind whose CRD is not there yet) is tried again at the next interval.

use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;
use std::time::Duration;

use emco_git::{Limits, Mirror, Remote};
use kube::api::{Api, DeleteParams, DynamicObject, Patch, PatchParams, PostParams};
use kube::core::{ApiResource, GroupVersionKind};
use kube::discovery::Scope;
use serde_json::{Value as Json, json};

/// The field manager of what it applies.
const MANAGER: &str = "kustomize-controller";
/// Flux's source kind.
const SOURCE_GROUP: &str = "source.toolkit.fluxcd.io";
/// Flux's kustomize kind.
const KUSTOMIZE_GROUP: &str = "kustomize.toolkit.fluxcd.io";

/// Where the cluster's Flux reads from.
#[derive(Debug, Clone)]
pub struct FluxConfig {
    /// The repository and branch (`flux bootstrap git --url … --branch …`), with its credentials.
    pub remote: Remote,
    /// The bootstrap path: `clusters/{provider}+{cluster}`.
    pub path: String,
    /// How often the branch is fetched and applied.
    pub interval: Duration,
    /// The folder of its copy of the repository.
    pub mirror_dir: PathBuf,
}

/// The CustomResourceDefinitions of Flux's `GitRepository` and `Kustomization`, as bootstrap installs them (served at
/// the versions emco writes; every field kept).
#[must_use]
pub fn flux_crds() -> Vec<Json> {
    [
        (SOURCE_GROUP, "GitRepository", "gitrepositories", "gitrepository", "v1beta1"),
        (KUSTOMIZE_GROUP, "Kustomization", "kustomizations", "kustomization", "v1beta2"),
    ]
    .into_iter()
    .map(|(group, kind, plural, singular, version)| {
        json!({
            "apiVersion": "apiextensions.k8s.io/v1",
            "kind": "CustomResourceDefinition",
            "metadata": {"name": format!("{plural}.{group}")},
            "spec": {
                "group": group,
                "scope": "Namespaced",
                "names": {"plural": plural, "singular": singular, "kind": kind, "listKind": format!("{kind}List")},
                "versions": [{"name": version, "served": true, "storage": true,
                    "subresources": {"status": {}},
                    "schema": {"openAPIV3Schema": {"type": "object", "x-kubernetes-preserve-unknown-fields": true}}}],
            },
        })
    })
    .collect()
}

/// An applied object's identity: apiVersion, kind, namespace, name.
type Applied = (String, String, String, String);

/// Runs the cluster's Flux (see the module's doc) through `client` until `shutdown`.
pub async fn run(client: kube::Client, config: FluxConfig, shutdown: impl std::future::Future<Output = ()>) {
    let crds: Api<DynamicObject> = Api::all_with(
        client.clone(),
        &ApiResource::from_gvk_with_plural(
            &GroupVersionKind::gvk("apiextensions.k8s.io", "v1", "CustomResourceDefinition"),
            "customresourcedefinitions",
        ),
    );
    for crd in flux_crds() {
        let Ok(crd) = serde_json::from_value::<DynamicObject>(crd) else {
            continue;
        };
        let _ = crds.create(&PostParams::default(), &crd).await;
    }
    let namespaces: Api<DynamicObject> = Api::all_with(
        client.clone(),
        &ApiResource::from_gvk_with_plural(&GroupVersionKind::gvk("", "v1", "Namespace"), "namespaces"),
    );
    if let Ok(namespace) = serde_json::from_value::<DynamicObject>(
        json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "flux-system"}}),
    ) {
        let _ = namespaces.create(&PostParams::default(), &namespace).await;
    }
    let mirror = match Mirror::open_async(
        config.mirror_dir.clone(),
        config.remote.clone(),
        Limits::default(),
    )
    .await
    {
        Ok(mirror) => std::sync::Arc::new(mirror),
        Err(err) => return tracing::error!(error = %err, "flux: cannot open the repository"),
    };
    let mut applied: BTreeSet<Applied> = BTreeSet::new();
    let mut ticks = tokio::time::interval(config.interval);
    ticks.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    tokio::pin!(shutdown);
    loop {
        tokio::select! {
            _ = ticks.tick() => {}
            () = &mut shutdown => return,
        }
        let snapshot = match mirror.read_async(&config.path).await {
            Ok(snapshot) => snapshot,
            Err(err) => {
                tracing::debug!(error = %err, "flux: cannot fetch the branch");
                continue;
            }
        };
        let Some(commit) = snapshot.commit.clone() else {
            continue;
        };
        let objects = manifests(&snapshot.files);
        let complete = reconcile(&client, &objects, &mut applied).await;
        report_ready(&client, &objects, &commit, complete).await;
    }
}

/// The manifests of `files`: every object of every `.yaml`, `.yml` or `.json` file (multi-document YAML too).
fn manifests(files: &[(String, Vec<u8>)]) -> Vec<Json> {
    let mut objects = Vec::new();
    for (path, content) in files {
        if ![".yaml", ".yml", ".json"].iter().any(|ext| path.ends_with(ext)) {
            continue;
        }
        let Ok(text) = std::str::from_utf8(content) else {
            continue;
        };
        let Ok(documents) = serde_saphyr::from_multiple::<Json>(text) else {
            tracing::debug!(path, "flux: a file that is not YAML; skipped");
            continue;
        };
        objects.extend(
            documents
                .into_iter()
                .filter(|object| object["kind"].is_string() && object["metadata"]["name"].is_string()),
        );
    }
    // CustomResourceDefinitions and Namespaces first, as Flux applies them.
    objects.sort_by_key(|object| match object["kind"].as_str() {
        Some("CustomResourceDefinition") => 0,
        Some("Namespace") => 1,
        _ => 2,
    });
    objects
}

/// The API of `object`'s kind in `client`'s cluster, namespaced where the kind is.
async fn api_for(client: &kube::Client, object: &Json) -> Result<(Api<DynamicObject>, bool), String> {
    let api_version = object["apiVersion"].as_str().unwrap_or_default();
    let kind = object["kind"].as_str().unwrap_or_default();
    let (group, version) = api_version.split_once('/').unwrap_or(("", api_version));
    let gvk = GroupVersionKind::gvk(group, version, kind);
    let (resource, capabilities) = kube::discovery::pinned_kind(client, &gvk)
        .await
        .map_err(|err| format!("{kind} is not served: {err}"))?;
    if capabilities.scope == Scope::Namespaced {
        let namespace = object["metadata"]["namespace"].as_str().unwrap_or("default");
        Ok((Api::namespaced_with(client.clone(), namespace, &resource), true))
    } else {
        Ok((Api::all_with(client.clone(), &resource), false))
    }
}

fn identity(object: &Json, namespaced: bool) -> Applied {
    let field = |value: &Json| value.as_str().unwrap_or_default().to_string();
    (
        field(&object["apiVersion"]),
        field(&object["kind"]),
        if namespaced {
            object["metadata"]["namespace"]
                .as_str()
                .unwrap_or("default")
                .to_string()
        } else {
            String::new()
        },
        field(&object["metadata"]["name"]),
    )
}

/// Applies `objects`, prunes what was applied before and is gone; whether every object was applied.
async fn reconcile(client: &kube::Client, objects: &[Json], applied: &mut BTreeSet<Applied>) -> bool {
    let mut now = BTreeSet::new();
    let mut complete = true;
    let params = PatchParams::apply(MANAGER).force();
    for object in objects {
        let (api, namespaced) = match api_for(client, object).await {
            Ok(found) => found,
            Err(err) => {
                tracing::debug!(error = err, "flux: not applied yet");
                complete = false;
                continue;
            }
        };
        let key = identity(object, namespaced);
        let name = key.3.clone();
        match api.patch(&name, &params, &Patch::Apply(object)).await {
            Ok(_) => {
                now.insert(key);
            }
            Err(err) => {
                tracing::debug!(error = %err, name, "flux: the cluster refused an object");
                complete = false;
                // Still held by the branch: not pruned.
                now.insert(key);
            }
        }
    }
    for gone in applied.difference(&now) {
        let object =
            json!({"apiVersion": gone.0, "kind": gone.1, "metadata": {"name": gone.3, "namespace": gone.2}});
        if let Ok((api, _)) = api_for(client, &object).await {
            let _ = api.delete(&gone.3, &DeleteParams::background()).await;
        }
    }
    *applied = now;
    complete
}

/// Marks every Kustomization among `objects` Ready (or not, with why) at `commit`.
async fn report_ready(client: &kube::Client, objects: &[Json], commit: &str, complete: bool) {
    let mut done = BTreeMap::new();
    for object in objects.iter().filter(|object| {
        object["kind"] == "Kustomization"
            && object["apiVersion"]
                .as_str()
                .is_some_and(|version| version.starts_with(KUSTOMIZE_GROUP))
    }) {
        let Ok((api, _)) = api_for(client, object).await else {
            continue;
        };
        let name = object["metadata"]["name"]
            .as_str()
            .unwrap_or_default()
            .to_string();
        let (status, reason, message) = if complete {
            (
                "True",
                "ReconciliationSucceeded",
                format!("Applied revision: {commit}"),
            )
        } else {
            (
                "False",
                "ReconciliationFailed",
                "some objects could not be applied yet".to_string(),
            )
        };
        let patch = json!({"status": {
            "lastAppliedRevision": if complete { commit } else { "" },
            "conditions": [{"type": "Ready", "status": status, "reason": reason, "message": message,
                "lastTransitionTime": jiff::Timestamp::now().to_string()}],
        }});
        let _ = api
            .patch_status(&name, &PatchParams::default(), &Patch::Merge(&patch))
            .await;
        done.insert(name, status);
    }
    tracing::debug!(kustomizations = ?done, "flux: reconciled");
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn manifests_are_read_from_yaml_files_crds_and_namespaces_first() {
        let files = vec![
            (
                "clusters/p+c/context/1/app/web/web+Deployment.yaml".to_string(),
                b"apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web}\n".to_vec(),
            ),
            (
                "clusters/p+c/ns.yaml".to_string(),
                b"apiVersion: v1\nkind: Namespace\nmetadata: {name: apps}\n---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\n".to_vec(),
            ),
            ("clusters/p+c/status/1/app/web/1-web".to_string(), b"{}".to_vec()),
            ("clusters/p+c/broken.yaml".to_string(), b": : :".to_vec()),
        ];
        let kinds: Vec<String> = manifests(&files)
            .iter()
            .map(|object| object["kind"].as_str().unwrap().to_string())
            .collect();
        assert_eq!(kinds, ["Namespace", "Deployment", "ConfigMap"]);
    }
}
