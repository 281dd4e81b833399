//! What the freshness benchmarks (direct and GitOps clusters) share: the one-app chart they instantiate and wait
//! Ready for, the pod status change they time, the status query they poll, and their percentiles.

use std::time::Duration;

use emco_k8s::k8s_openapi::api::core::v1::Pod;
use kube::api::{Api, ListParams, Patch, PatchParams};
use serde_json::{Value as Json, json};

use crate::support::{DIG, Http};

/// The app `web`: a Deployment of one replica and a ConfigMap.
pub(crate) fn web_chart() -> Vec<u8> {
    emco_helm::archive::write_tgz(&[
        ("web/Chart.yaml", b"apiVersion: v2\nname: web\nversion: 0.1.0\n"),
        ("web/templates/deployment.yaml", b"apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\nspec:\n  replicas: 1\n  selector:\n    matchLabels: {app: web}\n  template:\n    metadata:\n      labels: {app: web}\n    spec:\n      containers:\n      - name: main\n        image: registry.local/web:1\n"),
        ("web/templates/config.yaml", b"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: web\ndata:\n  a: b\n"),
    ])
}

/// Instantiates the DIG and waits (up to `limit`) until its status says Ready.
pub(crate) async fn instantiate_until_ready(http: &Http, limit: Duration) {
    http.post_empty(&format!("{DIG}/instantiate")).await.expect(202);
    http.wait_for("?status=ready&output=summary", limit, |a| {
        a["readyStatus"] == "Ready"
    })
    .await;
}

/// The summary readiness query of the vFW provider's cluster `cluster`.
pub(crate) fn ready_query(cluster: &str) -> String {
    format!("{DIG}/status?status=ready&output=summary&cluster=vfw-cluster-provider%2B{cluster}")
}

/// The pod of app `web` in the cluster `client` reaches, and the API it was read from.
pub(crate) async fn web_pod(client: kube::Client) -> (Api<Pod>, Pod) {
    let pods: Api<Pod> = Api::namespaced(client, "default");
    let pod = pods
        .list(&ListParams::default().labels("app=web"))
        .await
        .unwrap()
        .items
        .remove(0);
    (pods, pod)
}

/// Sets `pod`'s readiness to `ready` through its status subresource.
pub(crate) async fn set_readiness(pods: &Api<Pod>, pod: &Pod, ready: bool) {
    pods.patch_status(
        pod.metadata.name.as_deref().unwrap(),
        &PatchParams::default(),
        &Patch::Merge(readiness_patch(pod, ready)),
    )
    .await
    .unwrap();
}

/// The pod with its Ready and ContainersReady conditions and container readiness set to `ready`.
fn readiness_patch(pod: &Pod, ready: bool) -> Json {
    let mut status = serde_json::to_value(pod.status.clone().unwrap_or_default()).unwrap();
    let value = if ready { "True" } else { "False" };
    for condition in status["conditions"].as_array_mut().into_iter().flatten() {
        if condition["type"] == "Ready" || condition["type"] == "ContainersReady" {
            condition["status"] = json!(value);
        }
    }
    for container in status["containerStatuses"].as_array_mut().into_iter().flatten() {
        container["ready"] = json!(ready);
    }
    json!({"status": {"conditions": status["conditions"], "containerStatuses": status["containerStatuses"]}})
}

/// The `p` percentile (0 to 1) of `sorted`, nearest rank.
fn percentile(sorted: &[Duration], p: f64) -> Duration {
    let index = ((sorted.len() as f64 * p).ceil() as usize).clamp(1, sorted.len()) - 1;
    sorted[index]
}

/// Prints `label` with the p50, p90, p99 and max of `latencies` (sorted here).
pub(crate) fn print_percentiles(label: &str, latencies: &mut [Duration]) {
    latencies.sort();
    println!(
        "{label}: p50 {:.0} ms, p90 {:.0} ms, p99 {:.0} ms, max {:.0} ms",
        percentile(latencies, 0.5).as_secs_f64() * 1000.0,
        percentile(latencies, 0.9).as_secs_f64() * 1000.0,
        percentile(latencies, 0.99).as_secs_f64() * 1000.0,
        latencies[latencies.len() - 1].as_secs_f64() * 1000.0,
    );
}
