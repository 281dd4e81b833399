//! A GitOps cluster through rsync's public API, against a real Git server (`git http-backend`): an instantiation is
//! one commit per app in EMCO's layout (the app's objects, labelled and in the namespace, its bundle, the Flux
//! Kustomization), never a connection to the cluster; the status its monitor commits to the status branch reaches
//! the AppContext; a Git server that is down is retried with the reason and converges; a terminate removes the
//! context's folder and its Flux objects.

// Helpers of a test may unwrap: a panic there is a failed test.
#![allow(clippy::unwrap_used)]

use std::collections::BTreeMap;
use std::time::Duration;

use emco_appcontext::{AppContexts, Catalog, ClusterRecord, Engine, Kind, ResourceRecord};
use emco_git::{GitServer, Limits, Mirror, Remote, Secret};
use emco_model::{Connectivity, ContextId, ContextStatus, RsyncStatus};
use emco_rsync::{Rsync, RsyncConfig};
use emco_store::Store;
use serde_json::json;

mod common;
use common::{path, wait_for};

const TOKEN: &str = "fleet-token";
const CLUSTER: &str = "p+edge";

/// The provider `p`, its sync objects and the GitOps cluster `edge`, as the API stores them.
async fn onboard(catalog: &Catalog, url: &str) {
    catalog
        .create(
            &path(Kind::ClusterProvider, &["p"]),
            &json!({"metadata": {"name": "p"}}),
            None,
            vec![],
        )
        .await
        .unwrap();
    let repo = json!({"metadata": {"name": "repo"}, "spec": {"kv": [
        {"userName": "emco"}, {"gitToken": TOKEN}, {"repoName": "fleet"}, {"branch": "main"}, {"url": url}]}});
    let res = json!({"metadata": {"name": "res"}, "spec": {"kv": [{"syncInterval": "30"}]}});
    for (name, body) in [("repo", repo), ("res", res)] {
        catalog
            .create(&path(Kind::ClusterSyncObject, &["p", name]), &body, None, vec![])
            .await
            .unwrap();
    }
    let cluster = json!({"metadata": {"name": "edge"}, "spec": {"gitOps": {"gitOpsType": "fluxcd",
        "gitOpsReferenceObject": "repo", "gitOpsResourceObject": "res"}}});
    catalog
        .create(&path(Kind::Cluster, &["p", "edge"]), &cluster, None, vec![])
        .await
        .unwrap();
}

/// Stores context `raw` of app `web` (a ConfigMap and a Deployment) on the GitOps cluster.
async fn store_context(store: &Store, raw: u64) -> ContextId {
    let resources = vec![
        ResourceRecord::pending_object(json!({"apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": "web-config"}, "data": {"a": "b"}})),
        ResourceRecord::pending_object(json!({"apiVersion": "apps/v1", "kind": "Deployment",
            "metadata": {"name": "web"}, "spec": {"replicas": 1, "selector": {"matchLabels": {"app": "web"}},
            "template": {"metadata": {"labels": {"app": "web"}}, "spec": {"containers": [{"name": "web", "image": "web:1"}]}}}})),
    ];
    let records = vec![ClusterRecord::pending("web", CLUSTER, resources)];
    common::store_context(store, raw, ContextStatus::Instantiating, records).await
}

/// The files of `branch` under `folder`, by path.
async fn files(
    url: &str,
    dir: &std::path::Path,
    branch: &str,
    folder: &str,
) -> BTreeMap<String, serde_json::Value> {
    let (url, dir, branch, folder) = (
        url.to_string(),
        dir.to_path_buf(),
        branch.to_string(),
        folder.to_string(),
    );
    tokio::task::spawn_blocking(move || {
        let remote = Remote {
            url,
            branch,
            username: "reader".into(),
            token: Secret::new(TOKEN),
            ca_pem: None,
        };
        Mirror::open(&dir, remote, Limits::default())
            .unwrap()
            .read(&folder)
            .unwrap()
            .files
            .into_iter()
            .map(|(path, content)| (path, serde_json::from_slice(&content).unwrap()))
            .collect()
    })
    .await
    .unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_gitops_cluster_is_written_to_git_and_its_status_read_from_its_status_branch() {
    let dir = tempfile::tempdir().unwrap();
    let Some((server, url)) = GitServer::start_if_available(&dir.path().join("served"), TOKEN, "fleet").await
    else {
        return;
    };
    let store = Store::memory();
    let catalog = Catalog::new(store.clone());
    let contexts = AppContexts::new(store.clone());
    onboard(&catalog, &url).await;
    let config = RsyncConfig {
        git_dir: Some(dir.path().join("mirrors")),
        git_status_poll: Duration::from_millis(100),
        backoff_max: Duration::from_millis(500),
        ..RsyncConfig::default()
    };
    let rsync = Rsync::new(catalog.clone(), contexts.clone(), config);

    let id = store_context(&store, 7).await;
    rsync.instantiate(id);
    let record = wait_for("the app Applied", async || {
        let record = contexts.cluster(id, "web", CLUSTER).await.ok()?;
        record
            .resources
            .iter()
            .all(|resource| resource.status == RsyncStatus::Applied)
            .then_some(record)
    })
    .await;
    assert_eq!(record.connectivity, Connectivity::Available);
    let reader = dir.path().join("reader");
    let written = files(&url, &reader, "main", &format!("clusters/{CLUSTER}")).await;
    let app = format!("clusters/{CLUSTER}/context/7/app/web");
    assert_eq!(
        written.keys().cloned().collect::<Vec<_>>(),
        [
            format!("{app}/7-web+ResourceBundleState.yaml"),
            format!("{app}/web+Deployment.yaml"),
            format!("{app}/web-config+ConfigMap.yaml"),
            format!("clusters/{CLUSTER}/kust7.yaml"),
        ]
    );
    let config_map = &written[&format!("{app}/web-config+ConfigMap.yaml")];
    assert_eq!(config_map["metadata"]["namespace"], "default");
    assert_eq!(config_map["metadata"]["labels"]["emco/deployment-id"], "7-web");
    let kustomization = &written[&format!("clusters/{CLUSTER}/kust7.yaml")];
    assert_eq!(
        kustomization["spec"],
        json!({"interval": "30s", "retryInterval": "60s", "timeout": "60s", "path": format!("clusters/{CLUSTER}/context/7"),
            "prune": true, "sourceRef": {"kind": "GitRepository", "name": "flux-system"}})
    );

    // The cluster's monitor commits the bundle's status to the branch named after the cluster: it reaches the
    // AppContext.
    let status_remote = Remote {
        url: url.clone(),
        branch: CLUSTER.into(),
        username: "monitor".into(),
        token: Secret::new(TOKEN),
        ca_pem: None,
    };
    let monitor_dir = dir.path().join("monitor");
    let committed_at = tokio::task::spawn_blocking(move || {
        let bundle = json!({"apiVersion": "k8splugin.io/v1alpha1", "kind": "ResourceBundleState",
            "metadata": {"name": "7-web", "namespace": "default", "labels": {"emco/deployment-id": "7-web"}},
            "status": {"ready": true, "resourceCount": 2}});
        let files = BTreeMap::from([(
            format!("clusters/{CLUSTER}/status/7/app/web/7-web"),
            serde_json::to_vec(&bundle).unwrap(),
        )]);
        let mirror = Mirror::open(&monitor_dir, status_remote, Limits::default()).unwrap();
        mirror
            .publish_folder("status", &format!("clusters/{CLUSTER}/status"), &files)
            .unwrap();
        mirror.read("").unwrap().committed_at.unwrap()
    })
    .await
    .unwrap();
    let heard_at = wait_for("the monitor's status in the AppContext", async || {
        let record = contexts.cluster(id, "web", CLUSTER).await.ok()?;
        let status: serde_json::Value = serde_json::from_str(record.cluster_status?.as_str()).ok()?;
        (status["ready"] == true).then_some(record.heard_at)
    })
    .await;
    // Heard when the monitor committed it (how old the newest status commit is), not when emco read it.
    let heard_at: jiff::Timestamp = heard_at.unwrap().parse().unwrap();
    assert_eq!(heard_at.as_second(), committed_at);

    // The Git server is down: the next context's batch is Retrying with the reason, and converges once it is back.
    server.set_down(true);
    let second = store_context(&store, 8).await;
    rsync.instantiate(second);
    let (reason, waiting) = wait_for("Retrying with the reason", async || {
        let record = contexts.cluster(second, "web", CLUSTER).await.ok()?;
        (record.connectivity == Connectivity::Retrying)
            .then_some((record.connectivity_reason?, record.waiting?))
    })
    .await;
    assert!(
        reason.contains("Git server") && reason.contains("503"),
        "{reason}"
    );
    assert!(
        waiting
            .what
            .starts_with("the cluster's Git server to take the commit (Git server: ")
            && waiting.until.is_some(),
        "{waiting:?}"
    );
    server.set_down(false);
    wait_for("the second context Applied", async || {
        let record = contexts.cluster(second, "web", CLUSTER).await.ok()?;
        record
            .resources
            .iter()
            .all(|resource| resource.status == RsyncStatus::Applied)
            .then_some(())
    })
    .await;

    // Terminating the first context removes its folder and its Kustomization; the second's stay.
    contexts
        .update_meta(id, |meta| meta.status = ContextStatus::Terminating)
        .await
        .unwrap();
    rsync.terminate(id);
    wait_for("the first context's folder gone", async || {
        let left = files(&url, &reader, "main", &format!("clusters/{CLUSTER}")).await;
        let gone = left
            .keys()
            .all(|path| !path.contains("/context/7/") && !path.ends_with("/kust7.yaml"));
        (gone && left.keys().any(|path| path.ends_with("/kust8.yaml"))).then_some(())
    })
    .await;
    assert!(
        server.requests().iter().all(|line| !line.contains(TOKEN)),
        "the token travels only as a credential"
    );
}
