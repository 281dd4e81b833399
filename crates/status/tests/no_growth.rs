//! The status index does not grow with reports (issue #21 §4): 10,000 clusters' worth of ResourceBundleState
//! reports go through it, and then three times more — new heartbeats, a new pod name each time, readiness
//! flipping, a heartbeat-only beat in between — and the process's resident memory stays where the first pass left
//! it. Alone in its test binary, so no other test allocates meanwhile.

// Helpers of a test may unwrap: a panic there is a failed test.
#![allow(clippy::unwrap_used)]

mod common;

use emco_appcontext::{ClusterRecord, ContextChange, ContextMeta, JsonText, ResourceRecord};
use emco_model::{Connectivity, ContextId, ContextStatus, RsyncStatus};
use emco_status::StatusIndex;
use serde_json::{Value as Json, json};

const CLUSTERS: usize = 10_000;

fn id() -> ContextId {
    ContextId::new(21).unwrap()
}

fn cluster(index: usize) -> String {
    format!("p+edge{index:05}")
}

/// The resident set of this process, in bytes.
fn resident_bytes() -> u64 {
    let statm = std::fs::read_to_string("/proc/self/statm").unwrap();
    let pages: u64 = statm.split_whitespace().nth(1).unwrap().parse().unwrap();
    pages * 4096
}

fn meta() -> ContextMeta {
    common::dig_meta(
        id(),
        "a",
        (0..CLUSTERS).map(cluster),
        ContextStatus::Instantiated,
        "2026-11-27T10:00:00Z",
    )
}

/// The bundle a monitor reports in pass `pass`: a Deployment (ready or not), 2 Services, 7 ConfigMaps and the
/// Deployment's pod, whose name changes every pass.
fn bundle(pass: usize) -> Json {
    let ready = i64::from(pass.is_multiple_of(2));
    json!({
        "ready": ready == 1,
        "heartbeat": format!("2026-11-27T10:{pass:02}:00Z"),
        "deploymentStatuses": [{"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web", "generation": 1},
            "spec": {"replicas": 1},
            "status": {"observedGeneration": 1, "replicas": 1, "readyReplicas": ready, "updatedReplicas": 1, "availableReplicas": ready}}],
        "serviceStatuses": (0..2).map(|i| json!({"apiVersion": "v1", "kind": "Service", "metadata": {"name": format!("svc-{i}")}, "spec": {"clusterIP": "10.0.0.1"}})).collect::<Vec<_>>(),
        "configMapStatuses": (0..7).map(|i| json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": format!("config-{i}")}})).collect::<Vec<_>>(),
        "podStatuses": [{"apiVersion": "v1", "kind": "Pod", "metadata": {"name": format!("web-{pass}-x7k2p")},
            "status": {"phase": "Running", "conditions": [{"type": "Ready", "status": if ready == 1 { "True" } else { "False" }}]}}],
    })
}

fn record(index: usize, pass: usize) -> ClusterRecord {
    let mut resources = vec![ResourceRecord::pending("web", "Deployment", "apps/v1", json!({}))];
    resources
        .extend((0..2).map(|i| ResourceRecord::pending(&format!("svc-{i}"), "Service", "v1", json!({}))));
    resources.extend(
        (0..7).map(|i| ResourceRecord::pending(&format!("config-{i}"), "ConfigMap", "v1", json!({}))),
    );
    for resource in &mut resources {
        resource.status = RsyncStatus::Applied;
    }
    let mut record = ClusterRecord::pending("a", &cluster(index), resources);
    record.connectivity = Connectivity::Available;
    record.cluster_status = Some(JsonText::from(bundle(pass)));
    record.heard_at = Some(format!("2026-11-27T10:{pass:02}:00Z"));
    record
}

/// One pass: every cluster reports, then beats once with nothing else changed.
fn pass(index: &mut StatusIndex, pass: usize) {
    for cluster_index in 0..CLUSTERS {
        index.apply(&ContextChange::Cluster(id(), record(cluster_index, pass)));
        index.apply(&ContextChange::Heard {
            id: id(),
            app: "a".into(),
            cluster: cluster(cluster_index),
            at: format!("2026-11-27T10:{pass:02}:30Z"),
        });
    }
}

#[test]
fn ten_thousand_clusters_reporting_again_and_again_do_not_grow_the_index() {
    let mut index = StatusIndex::new();
    index.apply_meta(&meta());
    pass(&mut index, 1);
    let after_first = resident_bytes();
    for again in 2..=4 {
        pass(&mut index, again);
    }
    let after_more = resident_bytes();
    let context = index.context(id()).unwrap();
    assert_eq!(context.apps[0].clusters.len(), CLUSTERS);
    let first = &context.apps[0].clusters[0];
    assert_eq!(first.resources.len(), 10);
    assert_eq!(first.cluster_only.len(), 1, "the pod of the last pass only");
    assert_eq!(
        first.heard_at.map(|t| t.to_string()).as_deref(),
        Some("2026-11-27T10:04:30Z")
    );
    let grown = after_more.saturating_sub(after_first);
    eprintln!("resident after the first pass: {after_first} bytes; after three more: {after_more}");
    assert!(
        grown <= after_first / 100 + (2 << 20),
        "the process grew by {grown} bytes after the first pass (from {after_first})"
    );
}
