//! Per-kind status configurations end to end (issue #16 §4): a status config for `apps/v1 Deployment` with
//! `statusPath: .status.readyReplicas`, created before the vFW example is instantiated, travels with each app's
//! ResourceBundleState to every cluster's monitor, and the status answer shows, per cluster, the sink Deployment's
//! ready replicas as `statusRemote` — as emcoctl's table does in its REMOTE column.

use std::time::Duration;

use emco_k8s::k8s_openapi::api::apps::v1::Deployment;
use emcoctl::client::EmcoClient;
use kube::api::Api;
use serde_json::{Value as Json, json};

use crate::support::*;

const SETTLE: Duration = Duration::from_secs(60);

/// The sink Deployment's entry on each cluster of a readiness answer, by cluster name.
pub(crate) fn sink_deployments(answer: &Json) -> Vec<(String, Json)> {
    answer["apps"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|app| app["name"] == "sink")
        .flat_map(|app| app["clusters"].as_array().unwrap())
        .filter_map(|cluster| {
            let deployment = cluster["resources"]
                .as_array()?
                .iter()
                .find(|resource| resource["GVK"]["Kind"] == "Deployment")?;
            Some((cluster["cluster"].as_str()?.to_string(), deployment.clone()))
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_status_config_rolls_up_ready_replicas_per_cluster() {
    let sim = vfw_clusters(2).await;
    let _monitors = start_monitors(&sim);
    let emco = Emco::start().await;
    emco.http
        .post(
            "/v2/status-configs",
            json!({"metadata": {"name": "deployments"},
                "spec": {"targetType": {"group": "apps", "version": "v1", "kind": "Deployment"},
                         "statusCollection": "Enabled", "statusPath": ".status.readyReplicas",
                         "readyCondition": "Available", "rawStatus": false}}),
        )
        .await
        .expect(201);
    onboard_vfw(&emco.http, &kubeconfigs(&sim)).await;
    emco.http
        .post_empty(&format!("{DIG}/instantiate"))
        .await
        .expect(202);

    let answer = emco
        .http
        .wait_for("?status=ready&app=sink", SETTLE, |answer| {
            let deployments = sink_deployments(answer);
            deployments.len() == 2
                && deployments
                    .iter()
                    .all(|(_, deployment)| deployment["statusRemote"].as_u64().is_some_and(|n| n > 0))
        })
        .await;
    for (cluster_name, deployment) in sink_deployments(&answer) {
        let cluster = sim
            .clusters()
            .iter()
            .find(|cluster| cluster.name() == cluster_name)
            .unwrap();
        let name = deployment["name"].as_str().unwrap();
        let live = Api::<Deployment>::namespaced(cluster.client().unwrap(), "default")
            .get(name)
            .await
            .unwrap();
        let ready = live.status.and_then(|status| status.ready_replicas).unwrap();
        assert_eq!(
            deployment["statusRemote"],
            json!(ready),
            "{cluster_name}: statusRemote is the Deployment's .status.readyReplicas"
        );
    }

    // The detail view carries it too; the rsync view does not.
    let detail = emco
        .http
        .get(&format!("{DIG}/status?type=cluster&output=detail&app=sink"))
        .await
        .expect(200)
        .json();
    let with_remote = detail["apps"][0]["clusters"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|cluster| cluster["resources"].as_array().unwrap())
        .filter(|resource| resource["statusRemote"].is_u64())
        .count();
    assert_eq!(with_remote, 2, "one sink Deployment per cluster: {detail}");
    let rsync = emco
        .http
        .get(&format!("{DIG}/status?app=sink"))
        .await
        .expect(200)
        .json()
        .to_string();
    assert!(!rsync.contains("statusRemote"), "{rsync}");

    // emcoctl's table gains a REMOTE column holding the value.
    let client = EmcoClient::new(&format!("http://{}", emco.http.address)).unwrap();
    let answers = emcoctl::status::fetch(&client, DIG, "app=sink").await.unwrap();
    let rows = emcoctl::status::rows(&answers);
    let remote = emcoctl::status::remote_column(&answers, &rows).unwrap();
    for (row, value) in rows.iter().zip(&remote) {
        if row[2] == "Deployment" {
            assert!(value.parse::<u64>().is_ok_and(|n| n > 0), "{row:?}: {value}");
        } else {
            assert_eq!(value, "-", "{row:?}");
        }
    }
    assert!(emcoctl::status::view(&answers).to_string().contains("REMOTE"));
}
