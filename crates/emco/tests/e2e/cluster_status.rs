//! Cluster status: monitors in the clusters, rsync's bundle watchers, and `type=cluster` / `status=ready`.

use std::time::Duration;

use emco_k8s::k8s_openapi::api::apps::v1::Deployment;
use emco_k8s::k8s_openapi::api::core::v1::ConfigMap;
use kube::api::{Api, DeleteParams, Patch, PatchParams};
use kubesim::Faults;
use serde_json::{Value as Json, json};

use crate::support::*;

const SETTLE: Duration = Duration::from_secs(20);

/// `(app, cluster, kind, name) -> value of key` for every resource listed.
fn listed(answer: &Json, key: &str) -> Vec<(String, String, String, String, String)> {
    let mut rows = Vec::new();
    for app in answer["apps"].as_array().into_iter().flatten() {
        for cluster in app["clusters"].as_array().unwrap() {
            for resource in cluster["resources"].as_array().unwrap() {
                rows.push((
                    app["name"].as_str().unwrap().to_string(),
                    cluster["cluster"].as_str().unwrap().to_string(),
                    resource["GVK"]["Kind"].as_str().unwrap().to_string(),
                    resource["name"].as_str().unwrap().to_string(),
                    resource[key].as_str().unwrap_or_default().to_string(),
                ));
            }
        }
    }
    rows
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn vfw_cluster_status_lists_objects_and_pods_present_and_ready() {
    let sim = crate::support::vfw_clusters(2).await;
    let _monitors = start_monitors(&sim);
    let emco = Emco::start().await;
    onboard_vfw(&emco.http, &kubeconfigs(&sim)).await;
    emco.http
        .post_empty(&format!("{DIG}/instantiate"))
        .await
        .expect(202);
    emco.http
        .wait_for("?output=summary", SETTLE, |a| a["status"] == "Instantiated")
        .await;
    let ready = emco
        .http
        .wait_for("?status=ready", SETTLE, |a| a["readyStatus"] == "Ready")
        .await;
    // 12 resources and 6 pods (one per Deployment per cluster), all ready.
    assert_eq!(ready["readyCounts"], json!({"Ready": 18}));

    let cluster = emco
        .http
        .get(&format!("{DIG}/status?type=cluster"))
        .await
        .expect(200)
        .json();
    assert_eq!(cluster["cluster-status"], json!({"Present": 18}));
    let rows = listed(&cluster, "cluster-status");
    assert!(rows.iter().all(|row| row.4 == "Present"), "{rows:?}");
    let kinds = |app: &str, cluster: &str| -> Vec<String> {
        rows.iter()
            .filter(|r| r.0 == app && r.1 == cluster)
            .map(|r| r.2.clone())
            .collect()
    };
    assert_eq!(
        kinds("sink", "edge01"),
        ["Deployment", "ConfigMap", "Service", "Pod"]
    );
    assert_eq!(kinds("packetgen", "edge02"), ["Deployment", "Service", "Pod"]);
    let pod = rows.iter().find(|r| r.0 == "firewall" && r.2 == "Pod").unwrap();
    assert!(pod.3.starts_with("fw0-firewall-"), "{pod:?}");

    // Detail comes from the cluster: the live object with its status.
    let detail = emco.http.get(&format!("{DIG}/status?type=cluster&output=detail&app=sink&resource=fw0-sink&cluster=vfw-cluster-provider%2Bedge01")).await.expect(200).json();
    let deployment = &detail["apps"][0]["clusters"][0]["resources"][0]["detail"];
    assert_eq!(deployment["status"]["readyReplicas"], 1);
    assert!(
        deployment["metadata"]["managedFields"].is_null(),
        "managed fields stay in the cluster"
    );

    // After terminate the bundles are gone from the clusters, but the context keeps what was last heard from them:
    // every resource is still Present or NotPresent, none fell back to Unknown.
    emco.http
        .post_empty(&format!("{DIG}/terminate"))
        .await
        .expect(202);
    emco.http
        .wait_for("?output=summary", SETTLE, |a| a["status"] == "Terminated")
        .await;
    let terminated = emco
        .http
        .get(&format!("{DIG}/status?type=cluster"))
        .await
        .expect(200)
        .json();
    let rows = listed(&terminated, "cluster-status");
    assert!(rows.len() >= 12, "{rows:?}");
    assert!(
        rows.iter().all(|row| row.4 == "Present" || row.4 == "NotPresent"),
        "{rows:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cluster_changes_show_up_in_the_status() {
    let sim = crate::support::vfw_clusters(1).await;
    let monitors = start_monitors(&sim);
    let emco = Emco::start().await;
    onboard_vfw(&emco.http, &kubeconfigs(&sim)).await;
    emco.http
        .post_empty(&format!("{DIG}/instantiate"))
        .await
        .expect(202);
    emco.http
        .wait_for("?status=ready", SETTLE, |a| {
            a["readyStatus"] == "Ready" && a["readyCounts"]["Ready"] == 9
        })
        .await;
    let cluster = &sim.clusters()[0];
    let deployments: Api<Deployment> = Api::namespaced(cluster.client().unwrap(), "default");

    // Scaling adds pods to the answer, and removes them again.
    deployments
        .patch(
            "fw0-firewall",
            &PatchParams::default(),
            &Patch::Merge(json!({"spec": {"replicas": 3}})),
        )
        .await
        .unwrap();
    let pods = |answer: &Json| {
        listed(answer, "readyStatus")
            .iter()
            .filter(|r| r.0 == "firewall" && r.2 == "Pod")
            .count()
    };
    emco.http
        .wait_for("?status=ready&app=firewall", SETTLE, |a| {
            pods(a) == 3 && a["readyStatus"] == "Ready"
        })
        .await;
    deployments
        .patch(
            "fw0-firewall",
            &PatchParams::default(),
            &Patch::Merge(json!({"spec": {"replicas": 1}})),
        )
        .await
        .unwrap();
    emco.http
        .wait_for("?status=ready&app=firewall", SETTLE, |a| pods(a) == 1)
        .await;

    // An object deleted behind emco's back becomes NotPresent.
    Api::<ConfigMap>::namespaced(cluster.client().unwrap(), "default")
        .delete("sink-configmap", &DeleteParams::default())
        .await
        .unwrap();
    let gone = emco
        .http
        .wait_for("?type=cluster&app=sink", SETTLE, |a| {
            a["cluster-status"]["NotPresent"] == 1
        })
        .await;
    let row = listed(&gone, "cluster-status")
        .into_iter()
        .find(|r| r.3 == "sink-configmap")
        .unwrap();
    assert_eq!(row.4, "NotPresent");
    assert_eq!(
        emco.http
            .get(&format!("{DIG}/status?status=ready&app=sink&output=summary"))
            .await
            .expect(200)
            .json()["readyStatus"],
        "NotReady"
    );

    // A restarted monitor, and a broken watch, keep status flowing.
    drop(monitors);
    let _monitor = start_monitor(cluster);
    deployments
        .patch(
            "fw0-packetgen",
            &PatchParams::default(),
            &Patch::Merge(json!({"spec": {"replicas": 2}})),
        )
        .await
        .unwrap();
    emco.http
        .wait_for("?status=ready&app=packetgen", SETTLE, |a| {
            listed(a, "readyStatus").iter().filter(|r| r.2 == "Pod").count() == 2
        })
        .await;
    cluster
        .set_faults(Faults {
            down: true,
            ..Faults::default()
        })
        .await
        .unwrap();
    tokio::time::sleep(Duration::from_millis(300)).await;
    cluster.set_faults(Faults::default()).await.unwrap();
    deployments
        .patch(
            "fw0-packetgen",
            &PatchParams::default(),
            &Patch::Merge(json!({"spec": {"replicas": 1}})),
        )
        .await
        .unwrap();
    emco.http
        .wait_for("?status=ready&app=packetgen", SETTLE, |a| {
            listed(a, "readyStatus").iter().filter(|r| r.2 == "Pod").count() == 1
        })
        .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_crash_looping_pod_makes_its_app_not_ready() {
    let sim = crate::support::vfw_clusters(1).await;
    let _monitors = start_monitors(&sim);
    let emco = Emco::start().await;
    let crashy = emco_helm::archive::write_tgz(&[
        ("crashy/Chart.yaml", b"apiVersion: v2\nname: crashy\nversion: 0.1.0\n"),
        ("crashy/templates/deployment.yaml", b"apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: crashy\nspec:\n  replicas: 1\n  selector:\n    matchLabels: {app: crashy}\n  template:\n    metadata:\n      labels: {app: crashy}\n      annotations: {kubesim.io/fail: CrashLoopBackOff}\n    spec:\n      containers:\n      - name: main\n        image: registry.local/crashy:1\n"),
    ]);
    let calm = emco_helm::archive::write_tgz(&[
        ("calm/Chart.yaml", b"apiVersion: v2\nname: calm\nversion: 0.1.0\n"),
        (
            "calm/templates/cm.yaml",
            b"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: calm\ndata:\n  a: b\n",
        ),
    ]);
    onboard_apps(
        &emco.http,
        &kubeconfigs(&sim),
        &[("crashy", crashy), ("calm", calm)],
    )
    .await;
    emco.http
        .post_empty(&format!("{DIG}/instantiate"))
        .await
        .expect(202);
    let crash_looping = |a: &Json| {
        a["apps"][0]["clusters"][0]["resources"]
            .as_array()
            .into_iter()
            .flatten()
            .any(|r| {
                r["GVK"]["Kind"] == "Pod"
                    && r["detail"]["status"]["containerStatuses"][0]["state"]["waiting"]["reason"]
                        == "CrashLoopBackOff"
            })
    };
    emco.http
        .wait_for("?type=cluster&output=detail&app=crashy", SETTLE, crash_looping)
        .await;
    let answer = emco
        .http
        .get(&format!("{DIG}/status?status=ready"))
        .await
        .expect(200)
        .json();
    assert_eq!(answer["readyStatus"], "NotReady");
    let pod = listed(&answer, "readyStatus")
        .into_iter()
        .find(|r| r.2 == "Pod")
        .unwrap();
    assert_eq!(pod.4, "NotReady");
    let calm = emco
        .http
        .get(&format!("{DIG}/status?status=ready&app=calm&output=summary"))
        .await
        .expect(200)
        .json();
    assert_eq!(
        (calm["readyStatus"].as_str(), &calm["readyCounts"]),
        (Some("Ready"), &json!({"Ready": 1}))
    );
}

/// The times rsync's bundle watcher of `cluster` asked for ResourceBundleStates (a cluster-wide list or watch from
/// outside the cluster; the monitor's own watch of them runs inside).
fn bundle_watch_requests(cluster: &kubesim::SimCluster) -> usize {
    cluster
        .shared()
        .requests()
        .iter()
        .filter(|r| {
            r.method == "GET" && !r.in_cluster && r.path == "/apis/k8splugin.io/v1alpha1/resourcebundlestates"
        })
        .count()
}

/// Drops every connection of `cluster` (a live watcher then lists and watches again) and reports whether its
/// bundle watcher asked again within `window`.
async fn watcher_asks_again_after_reconnect(cluster: &kubesim::SimCluster, window: Duration) -> bool {
    cluster
        .set_faults(Faults {
            down: true,
            ..Faults::default()
        })
        .await
        .unwrap();
    tokio::time::sleep(Duration::from_millis(200)).await;
    let before = bundle_watch_requests(cluster);
    cluster.set_faults(Faults::default()).await.unwrap();
    let deadline = tokio::time::Instant::now() + window;
    while tokio::time::Instant::now() < deadline {
        if bundle_watch_requests(cluster) > before {
            return true;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    false
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_bundle_watcher_ends_with_the_last_live_context_and_returns_with_the_next() {
    const EDGE01: &str = "vfw-cluster-provider+edge01";
    let sim = crate::support::vfw_clusters(1).await;
    let edge01 = &sim.clusters()[0];
    // Inside the cluster: its watch of the bundles is not rsync's.
    let _monitors = start_in_cluster_monitors(&sim);
    let store = emco_store::Store::memory();
    let emco = Emco::start_with(store.clone(), test_rsync_config()).await;
    // What an emco restarted on the same store would watch once it resumed.
    let watched_after_restart = || async {
        let restarted = emco_rsync::Rsync::new(
            emco_appcontext::Catalog::new(store.clone()),
            emco_appcontext::AppContexts::new(store.clone()),
            test_rsync_config(),
        );
        restarted.resume().await.unwrap();
        restarted.watched_clusters()
    };
    onboard_apps(&emco.http, &kubeconfigs(&sim), &[("sink", vfw_chart("sink"))]).await;
    emco.http
        .post_empty(&format!("{DIG}/instantiate"))
        .await
        .expect(202);
    emco.http
        .wait_for("?type=cluster&output=summary", SETTLE, |a| {
            a["status"] == "Instantiated" && a["cluster-status"]["Present"].as_u64() >= Some(3)
        })
        .await;
    assert_eq!(emco.rsync.watched_clusters(), [EDGE01]);
    assert_eq!(watched_after_restart().await, [EDGE01]);
    assert!(
        watcher_asks_again_after_reconnect(edge01, Duration::from_secs(10)).await,
        "a live watcher lists again after its connection dropped"
    );

    emco.http
        .post_empty(&format!("{DIG}/terminate"))
        .await
        .expect(202);
    emco.http
        .wait_for("?output=summary", SETTLE, |a| a["status"] == "Terminated")
        .await;
    let deadline = tokio::time::Instant::now() + Duration::from_secs(5);
    while !emco.rsync.watched_clusters().is_empty() {
        assert!(
            tokio::time::Instant::now() < deadline,
            "the watcher is still running"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert!(watched_after_restart().await.is_empty());
    // Longer than a live watcher takes to come back above (restart pause and kube-rs back-off).
    assert!(
        !watcher_asks_again_after_reconnect(edge01, Duration::from_secs(5)).await,
        "no watcher asks for bundles of a cluster no live context uses"
    );

    // A new instantiation on the same cluster watches it again, and its status flows.
    emco.http
        .post_empty(&format!("{DIG}/instantiate"))
        .await
        .expect(202);
    let again = emco
        .http
        .wait_for("?type=cluster&output=summary", SETTLE, |a| {
            a["status"] == "Instantiated" && a["cluster-status"]["Present"].as_u64() >= Some(3)
        })
        .await;
    let instantiations = again["state"]["Actions"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|action| action["State"] == "Instantiated")
        .count();
    assert_eq!(instantiations, 2, "{again}");
    assert_eq!(emco.rsync.watched_clusters(), [EDGE01]);
}
