//! The monitor's status through Git against a kubesim cluster and a real Git server (`git http-backend`): a bundle's
//! status lands in the cluster's status branch as EMCO's monitor writes it, a deleted bundle's file goes, and
//! nothing is committed while nothing changes.

// Helpers of a test may unwrap: a panic there is a failed test.
#![allow(clippy::unwrap_used)]

use std::time::Duration;

use emco_git::{GitServer, Limits, Mirror, Snapshot};
use emco_monitor::MonitorConfig;
use emco_monitor::git::{GitStatusConfig, publish_status};
use kube::api::{Api, DeleteParams, DynamicObject, PostParams};
use kube::core::{ApiResource, GroupVersionKind};

const TOKEN: &str = "monitor-token";
const CLUSTER: &str = "provider1+edge01";

/// The status branch as `server` has it.
async fn status_branch(server: &GitServer, dir: &std::path::Path) -> Snapshot {
    let (remote, dir) = (server.remote("fleet", CLUSTER, "reader"), dir.to_path_buf());
    tokio::task::spawn_blocking(move || {
        Mirror::open(&dir, remote, Limits::default())
            .unwrap()
            .read(&format!("clusters/{CLUSTER}/status"))
            .unwrap()
    })
    .await
    .unwrap()
}

/// Waits (up to 30 s) until the status branch satisfies `done`.
async fn wait_for(server: &GitServer, dir: &std::path::Path, done: impl Fn(&Snapshot) -> bool) -> Snapshot {
    let deadline = tokio::time::Instant::now() + Duration::from_secs(30);
    loop {
        let snapshot = status_branch(server, dir).await;
        if done(&snapshot) {
            return snapshot;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "not in time: {snapshot:?}"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_bundles_status_is_committed_to_the_clusters_status_branch() {
    let dir = tempfile::tempdir().unwrap();
    let Some((server, _)) = GitServer::start_if_available(&dir.path().join("served"), TOKEN, "fleet").await
    else {
        return;
    };
    let sim = kubesim::Simulator::start_named(1).await.unwrap();
    let client = sim.clusters()[0].client().unwrap();
    Api::<DynamicObject>::all_with(
        client.clone(),
        &ApiResource::from_gvk_with_plural(
            &GroupVersionKind::gvk("apiextensions.k8s.io", "v1", "CustomResourceDefinition"),
            "customresourcedefinitions",
        ),
    )
    .create(
        &PostParams::default(),
        &serde_json::from_value(emco_k8s::rbs_crd()).unwrap(),
    )
    .await
    .unwrap();
    tokio::time::sleep(Duration::from_millis(100)).await;
    let bundles: Api<DynamicObject> = Api::namespaced_with(
        client.clone(),
        "default",
        &ApiResource::from_gvk_with_plural(
            &GroupVersionKind::gvk(emco_k8s::RBS_GROUP, emco_k8s::RBS_VERSION, emco_k8s::RBS_KIND),
            emco_k8s::RBS_PLURAL,
        ),
    );
    bundles
        .create(
            &PostParams::default(),
            &serde_json::from_value(emco_k8s::rbs_object("7-web", "default")).unwrap(),
        )
        .await
        .unwrap();

    // One object of the bundle's app: the monitor reports it.
    Api::<DynamicObject>::namespaced_with(
        client.clone(),
        "default",
        &ApiResource::from_gvk_with_plural(&GroupVersionKind::gvk("", "v1", "ConfigMap"), "configmaps"),
    )
    .create(
        &PostParams::default(),
        &serde_json::from_value(serde_json::json!({"apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": "web-config", "labels": {"emco/deployment-id": "7-web"}}, "data": {"a": "b"}}))
        .unwrap(),
    )
    .await
    .unwrap();
    let monitor = MonitorConfig {
        heartbeat: Duration::from_secs(3600),
        ..MonitorConfig::default()
    };
    let _monitor = tokio::spawn(emco_monitor::run(client.clone(), monitor, std::future::pending()));
    let git = GitStatusConfig {
        remote: server.remote("fleet", "main", "monitor"),
        cluster: CLUSTER.into(),
        interval: Duration::from_millis(200),
        mirror_dir: dir.path().join("monitor-mirror"),
    };
    let _publisher = tokio::spawn(publish_status(client.clone(), git, std::future::pending()));

    let path = format!("clusters/{CLUSTER}/status/7/app/web/7-web");
    let reader = dir.path().join("reader");
    let snapshot = wait_for(&server, &reader, |snapshot| {
        snapshot.files.iter().any(|(file, content)| {
            *file == path
                && serde_json::from_slice::<serde_json::Value>(content)
                    .is_ok_and(|bundle| bundle["status"]["resourceCount"] == 1)
        })
    })
    .await;
    assert_eq!(snapshot.files.len(), 1, "{:?}", snapshot.files);

    // Nothing changes: nothing is committed.
    let settled = status_branch(&server, &reader).await.commit;
    tokio::time::sleep(Duration::from_millis(1200)).await;
    assert_eq!(status_branch(&server, &reader).await.commit, settled);

    bundles.delete("7-web", &DeleteParams::default()).await.unwrap();
    wait_for(&server, &reader, |snapshot| snapshot.files.is_empty()).await;
    assert!(server.requests().iter().all(|line| !line.contains(TOKEN)));
}
