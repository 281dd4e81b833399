//! Stale cluster status (issue #16 §5): when a cluster's monitor stops, its last report is not shown as truth for
//! ever: after the grace its resources are `Unknown` and the cluster says why; a monitor running again makes it
//! fresh and Ready again.

use std::time::Duration;

use emco_monitor::MonitorConfig;
use emco_server::ServerConfig;
use emco_store::Store;
use serde_json::Value as Json;

use crate::support::*;

const SETTLE: Duration = Duration::from_secs(30);
const STALE_CLUSTER: &str = "edge02";

/// A monitor whose heartbeat comes every second.
fn start_heartbeating_monitor(cluster: &kubesim::SimCluster) -> tokio::task::JoinHandle<()> {
    let config = MonitorConfig {
        heartbeat: Duration::from_secs(1),
        ..quick_monitor_config()
    };
    start_monitor_with(cluster, config)
}

/// Every cluster entry of every app, as (app, entry).
fn cluster_entries(answer: &Json) -> Vec<(String, Json)> {
    answer["apps"]
        .as_array()
        .into_iter()
        .flatten()
        .flat_map(|app| {
            let name = app["name"].as_str().unwrap_or_default().to_string();
            app["clusters"]
                .as_array()
                .into_iter()
                .flatten()
                .map(move |cluster| (name.clone(), cluster.clone()))
        })
        .collect()
}

fn stale_everywhere(answer: &Json) -> bool {
    let entries = cluster_entries(answer);
    entries
        .iter()
        .filter(|(_, cluster)| cluster["cluster"] == STALE_CLUSTER)
        .all(|(_, cluster)| cluster["statusFresh"] == false)
        && entries
            .iter()
            .any(|(_, cluster)| cluster["cluster"] == STALE_CLUSTER)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cluster_whose_monitor_stopped_turns_unknown_and_comes_back() {
    let sim = vfw_clusters(2).await;
    let mut monitors: Vec<_> = sim.clusters().iter().map(start_heartbeating_monitor).collect();
    let emco = Emco::start_with_configs(
        Store::memory(),
        test_rsync_config(),
        ServerConfig {
            status_grace: Duration::from_secs(3),
            ..ServerConfig::default()
        },
    )
    .await;
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
    assert!(
        cluster_entries(&ready)
            .iter()
            .all(|(_, cluster)| cluster.get("statusFresh").is_none() && cluster["lastHeard"].is_string()),
        "fresh clusters say when they were heard, nothing more: {ready}"
    );

    // edge02's monitor dies: its last report stands in the store, but after the grace it is no longer believed.
    let position = sim
        .clusters()
        .iter()
        .position(|cluster| cluster.name() == STALE_CLUSTER)
        .unwrap();
    monitors[position].abort();
    let stale = emco
        .http
        .wait_for("?status=ready", SETTLE, stale_everywhere)
        .await;
    assert_eq!(stale["readyStatus"], "NotReady");
    let mut unknown = 0;
    for (app, cluster) in cluster_entries(&stale) {
        let resources = cluster["resources"].as_array().unwrap();
        if cluster["cluster"] == STALE_CLUSTER {
            let message = cluster["statusMessage"].as_str().unwrap();
            assert!(
                message.starts_with("no report from edge02 for ") && message.ends_with(" s"),
                "{app}: {message}"
            );
            assert!(cluster["lastHeard"].is_string(), "{app}: {cluster}");
            assert!(
                resources.iter().all(|r| r["readyStatus"] == "Unknown"),
                "{app}: {cluster}"
            );
            unknown += resources.len();
        } else {
            assert!(cluster.get("statusFresh").is_none(), "{app}: {cluster}");
            assert!(
                resources.iter().all(|r| r["readyStatus"] == "Ready"),
                "{app}: {cluster}"
            );
        }
    }
    assert!(unknown > 0);
    assert_eq!(stale["readyCounts"]["Unknown"], unknown);

    // The seed shape says the same.
    let seed = emco
        .http
        .get(&format!("{DIG}/status?type=cluster"))
        .await
        .expect(200)
        .json();
    assert_eq!(seed["cluster-status"]["Unknown"], unknown);
    for app in seed["apps"].as_array().unwrap() {
        for cluster in app["clusters"].as_array().unwrap() {
            if cluster["cluster"] == STALE_CLUSTER {
                assert_eq!(cluster["status-fresh"], false);
                assert!(
                    cluster["resources"]
                        .as_array()
                        .unwrap()
                        .iter()
                        .all(|r| r["cluster-status"] == "Unknown"),
                    "{cluster}"
                );
            }
        }
    }

    // A monitor runs again: the cluster is heard, fresh and Ready.
    monitors[position] = start_heartbeating_monitor(&sim.clusters()[position]);
    let again = emco
        .http
        .wait_for("?status=ready", SETTLE, |a| a["readyStatus"] == "Ready")
        .await;
    assert!(
        cluster_entries(&again)
            .iter()
            .all(|(_, cluster)| cluster.get("statusFresh").is_none()),
        "{again}"
    );
    assert!(again["readyCounts"].get("Unknown").is_none(), "{again}");
    for monitor in monitors {
        monitor.abort();
    }
}
