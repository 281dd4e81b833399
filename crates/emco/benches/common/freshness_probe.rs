//! What the freshness benchmarks (direct and GitOps clusters) share: the one-app chart they instantiate, the pod
//! status change they time, and their percentiles.

use std::time::Duration;

use emco_k8s::k8s_openapi::api::core::v1::Pod;
use serde_json::{Value as Json, json};

/// The app `web`: a Deployment of one replica and a ConfigMap.
pub(crate) fn web_chart() -> Vec<u8> {
    emco_helm::archive::write_tgz(&[
        ("web/Chart.yaml", b"apiVersion: v2\nname: web\nversion: 0.1.0\n"),
        ("web/templates/deployment.yaml", b"apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\nspec:\n  replicas: 1\n  selector:\n    matchLabels: {app: web}\n  template:\n    metadata:\n      labels: {app: web}\n    spec:\n      containers:\n      - name: main\n        image: registry.local/web:1\n"),
        ("web/templates/config.yaml", b"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: web\ndata:\n  a: b\n"),
    ])
}

/// The pod with its Ready and ContainersReady conditions and container readiness set to `ready`.
pub(crate) fn readiness_patch(pod: &Pod, ready: bool) -> Json {
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
pub(crate) fn percentile(sorted: &[Duration], p: f64) -> Duration {
    let index = ((sorted.len() as f64 * p).ceil() as usize).clamp(1, sorted.len()) - 1;
    sorted[index]
}
