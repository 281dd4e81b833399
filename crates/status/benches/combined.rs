//! Combined status at scale (issue #17 §6): one context of 1,000 clusters × one Deployment, with seed 003's five
//! status collectors attached by one status collection intent. Measures one cluster's report changing (its row
//! evaluated again for the five collectors, the five tables combined again from the 1,000 cached rows) and the GET
//! of every result (the answer written to bytes).
//!
//! Run with `cargo bench -p emco-status --bench combined`.

#![allow(missing_docs, clippy::unwrap_used)]

use std::collections::HashMap;
use std::sync::Arc;

use criterion::Criterion;
use emco_appcontext::{ClusterRecord, JsonText, ResourceRecord};
use emco_model::ContextId;
use emco_model::status_collector::{StatusCollectionIntent, StatusCollectorSpec};
use emco_status::combined::{CombinedFilter, CombinedIndex, Registration, compile_collector};
use serde_json::json;

const CLUSTERS: usize = 1000;

/// Seed 003's five collectors.
fn collectors() -> Vec<(&'static str, serde_json::Value)> {
    vec![
        (
            "count-wecs",
            json!({"combinedFields": [{"name": "count", "type": "COUNT"}], "limit": 10}),
        ),
        (
            "pod-phase",
            json!({"groupBy": [{"name": "phase", "def": "returned.status.phase"}],
                "combinedFields": [{"name": "count", "type": "COUNT"}]}),
        ),
        (
            "available-replicas",
            json!({"groupBy": [{"name": "numAvailable", "def": "returned.status.availableReplicas"}],
                "combinedFields": [{"name": "count", "type": "COUNT"}]}),
        ),
        (
            "not-available",
            json!({"filter": "obj.spec.replicas != returned.status.availableReplicas",
                "select": [{"name": "wec", "def": "inventory.name"}]}),
        ),
        (
            "full-status",
            json!({"select": [{"name": "wec", "def": "inventory.name"},
                {"name": "status", "def": "returned.status"},
                {"name": "retrievalTime", "def": "propagation.lastReturnedUpdateTimestamp"}]}),
        ),
    ]
}

/// Cluster `index`'s record: the Deployment as staged (3 replicas) and as its monitor reported it (`available`).
fn record(index: usize, available: i64, heard_at: &str) -> ClusterRecord {
    let manifest = json!({"apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {"name": "web", "labels": {"tier": "front"}},
        "spec": {"replicas": 3, "selector": {"matchLabels": {"app": "web"}},
            "template": {"metadata": {"labels": {"app": "web"}},
                "spec": {"containers": [{"name": "web", "image": "nginx:1.27"}]}}}});
    let mut record = ClusterRecord::pending(
        "web",
        &format!("provider+edge{index:04}"),
        vec![ResourceRecord::pending("web", "Deployment", "apps/v1", manifest)],
    );
    record.cluster_status = Some(JsonText::from(json!({"ready": true, "deploymentStatuses": [{
        "metadata": {"name": "web", "namespace": "default", "generation": 1},
        "status": {"observedGeneration": 1, "replicas": 3, "readyReplicas": available,
            "availableReplicas": available, "updatedReplicas": 3,
            "conditions": [{"type": "Available", "status": if available == 3 { "True" } else { "False" }}]}}]})));
    record.heard_at = Some(heard_at.to_string());
    record
}

fn main() {
    let mut index = CombinedIndex::new();
    let id = ContextId::new(7).unwrap();
    let mut compiled = HashMap::new();
    for (name, spec) in collectors() {
        let spec: StatusCollectorSpec = serde_json::from_value(spec).unwrap();
        compiled.insert(
            name.to_string(),
            Arc::new(compile_collector(index.env(), name, &spec).unwrap()),
        );
    }
    let intent: StatusCollectionIntent = serde_json::from_value(json!({"metadata": {"name": "web"}, "spec": {
        "resources": [{"kind": "Deployment", "name": "web"}],
        "statusCollectors": ["count-wecs", "pod-phase", "available-replicas", "not-available", "full-status"]}}))
    .unwrap();
    index.register(
        id,
        Registration {
            intents: vec![intent],
            collectors: compiled,
            cluster_labels: HashMap::new(),
            fingerprint: String::new(),
        },
    );
    for cluster in 0..CLUSTERS {
        // 2 % of the clusters run short of replicas.
        let available = if cluster % 50 == 0 { 2 } else { 3 };
        index.apply_record(id, &record(cluster, available, "2026-11-23T20:00:00Z"));
    }
    let mut body = Vec::new();
    index
        .write_answer(Some(id), &CombinedFilter::default(), &mut body)
        .unwrap();
    println!("combined status of {CLUSTERS} clusters: {} bytes", body.len());

    let changed = [
        record(500, 1, "2026-11-23T20:00:20Z"),
        record(500, 3, "2026-11-23T20:00:40Z"),
    ];
    let mut turn = 0;
    let mut criterion = Criterion::default().configure_from_args();
    criterion.bench_function(
        "combined: one of 1,000 clusters reports (5 collectors recomputed)",
        |b| {
            b.iter(|| {
                turn = (turn + 1) % 2;
                index.apply_record(id, &changed[turn]);
            });
        },
    );
    criterion.bench_function(
        "combined: GET of every result (1,000 clusters, 5 collectors)",
        |b| {
            b.iter(|| {
                body.clear();
                index
                    .write_answer(Some(id), &CombinedFilter::default(), &mut body)
                    .unwrap();
                body.len()
            });
        },
    );
    criterion.final_summary();

    // The bounds are on the slow tail: time each call alone and print its percentiles.
    let report = percentiles(2_000, || {
        turn = (turn + 1) % 2;
        index.apply_record(id, &changed[turn]);
    });
    println!("one report, recomputed: {report}");
    let answer = percentiles(2_000, || {
        body.clear();
        index
            .write_answer(Some(id), &CombinedFilter::default(), &mut body)
            .unwrap();
    });
    println!("GET of every result: {answer}");
}

/// Runs `work` `runs` times, timing each call: `p50 … p99 … max` in microseconds.
fn percentiles(runs: usize, mut work: impl FnMut()) -> String {
    let mut times: Vec<std::time::Duration> = (0..runs)
        .map(|_| {
            let start = std::time::Instant::now();
            work();
            start.elapsed()
        })
        .collect();
    times.sort();
    let at = |q: f64| times[((times.len() - 1) as f64 * q) as usize].as_secs_f64() * 1e6;
    format!(
        "p50 {:.0} µs, p99 {:.0} µs, max {:.0} µs ({runs} runs)",
        at(0.5),
        at(0.99),
        at(1.0)
    )
}
