//! Instantiating at scale: 1,000 kubesim clusters (kubesim in its own process) × 30 resources (3 apps × 10), timed
//! until the status says Instantiated; as the reference, the same number of objects applied by a tight kube-rs
//! loop from one process with the same concurrency; then, with 200 clusters down during a second instantiation,
//! the CPU emco uses while they stay down, how long after they heal the DIG is Instantiated, and the CPU with every
//! cluster up again (the baseline of what the down clusters cost).
//!
//! Run with `cargo bench -p emco --bench instantiate`.

// Benchmark helpers may unwrap: a panic is a failed run.
#![allow(clippy::unwrap_used, missing_docs)]

#[path = "../tests/e2e/support.rs"]
#[allow(dead_code, unreachable_pub)]
mod support;

#[path = "common/bench_apps.rs"]
#[allow(dead_code, unreachable_pub)]
mod bench_apps;

#[path = "common/scale_harness.rs"]
#[allow(dead_code, unreachable_pub)]
mod scale_harness;

use std::time::{Duration, Instant};

use bench_apps::{APPS, onboard};
use emco_rsync::RsyncConfig;
use emco_store::Store;
use serde_json::json;
use support::{Emco, Http};

const CLUSTERS: usize = 1_000;
const DOWN: usize = 200;

async fn wait_status(http: &Http, dig: &str, done: impl Fn(&serde_json::Value) -> bool) -> serde_json::Value {
    loop {
        let answer = http
            .get(&format!(
                "/v2/projects/bench/composite-apps/ca/v1/deployment-intent-groups/{dig}/status?output=summary"
            ))
            .await
            .expect(200)
            .json();
        if done(&answer) {
            return answer;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// Takes the clusters `names` down (`true`) or up again through kubesim's admin API.
async fn set_down<'a>(admin: &Http, names: impl Iterator<Item = &'a String>, down: bool) {
    let body = if down {
        br#"{"down": true}"#.as_slice()
    } else {
        br#"{"down": false}"#.as_slice()
    };
    for name in names {
        admin
            .request(
                "PUT",
                &format!("/clusters/{name}/faults"),
                Some("application/json"),
                body,
            )
            .await
            .expect(200);
    }
}

/// The share of a core this process used over the next `window`.
async fn cpu_share_over(window: Duration) -> f64 {
    let (before, wall) = (scale_harness::cpu_seconds(std::process::id()), Instant::now());
    tokio::time::sleep(window).await;
    (scale_harness::cpu_seconds(std::process::id()) - before) / wall.elapsed().as_secs_f64()
}

async fn run() {
    let dir = tempfile::tempdir().unwrap();
    let kubesim = support::KubesimProcess::start(CLUSTERS).await;
    let kubeconfigs = kubesim.kubeconfigs.clone();
    let names: Vec<String> = kubeconfigs.iter().map(|(name, _)| name.clone()).collect();

    // Reference: a tight kube-rs loop applying 30 objects to each cluster (same objects, own names), clusters in
    // parallel up to the same concurrency rsync uses.
    let concurrency = RsyncConfig::default().concurrency;
    let mut objects = Vec::new();
    for app in APPS {
        objects.push(json!({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": format!("ref-{app}")},
            "spec": {"replicas": 1, "selector": {"matchLabels": {"app": format!("ref-{app}")}}, "template": {"metadata": {"labels": {"app": format!("ref-{app}")}}, "spec": {"containers": [{"name": "main", "image": "registry.local/x:1"}]}}}}));
        for i in 0..2 {
            objects.push(json!({"apiVersion": "v1", "kind": "Service", "metadata": {"name": format!("ref-{app}-svc-{i}")}, "spec": {"ports": [{"port": 8000 + i}]}}));
        }
        for i in 0..7 {
            objects.push(json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": format!("ref-{app}-config-{i}")}, "data": {"key": i.to_string()}}));
        }
    }
    let objects = std::sync::Arc::new(objects);
    let total = (CLUSTERS * objects.len()) as f64;
    let reference = scale_harness::reference(&kubeconfigs, objects, concurrency).await;
    println!(
        "reference: tight kube-rs loop applied {total} objects in {:.2} s ({:.0} objects/s)",
        reference.as_secs_f64(),
        total / reference.as_secs_f64()
    );

    // emco: onboard (not timed), instantiate, wait for Instantiated.
    let emco = Emco::start_with(
        Store::open_redb(&dir.path().join("emco")).unwrap(),
        // `EMCO_BENCH_PROBE_RATE`: the probes per second of all probed clusters together (rsync's `probe_rate`),
        // to measure the trade between a healed cluster's wait and the CPU the probes cost.
        RsyncConfig {
            probe_rate: std::env::var("EMCO_BENCH_PROBE_RATE")
                .ok()
                .and_then(|rate| rate.parse().ok())
                .unwrap_or(RsyncConfig::default().probe_rate),
            ..RsyncConfig::default()
        },
    )
    .await;
    onboard(
        &emco.http,
        &kubeconfigs,
        |_| "edge".into(),
        &[("dig", "edge"), ("dig2", "edge")],
    )
    .await;
    let dig = "/v2/projects/bench/composite-apps/ca/v1/deployment-intent-groups/dig";
    let started = Instant::now();
    emco.http
        .post_empty(&format!("{dig}/instantiate"))
        .await
        .expect(202);
    let done = wait_status(&emco.http, "dig", |a| a["status"] != "Instantiating").await;
    let elapsed = started.elapsed();
    println!(
        "emco: instantiate {CLUSTERS} clusters x 30 resources: {} after {:.2} s ({:.0} objects/s, {:.2}x the reference rate); counts {}",
        done["status"],
        elapsed.as_secs_f64(),
        total / elapsed.as_secs_f64(),
        reference.as_secs_f64() / elapsed.as_secs_f64(),
        done["rsync-status"]
    );

    // CPU while 200 clusters are down and retrying.
    let admin = &kubesim.admin;
    set_down(admin, names.iter().take(DOWN), true).await;
    emco.http
        .post_empty("/v2/projects/bench/composite-apps/ca/v1/deployment-intent-groups/dig2/instantiate")
        .await
        .expect(202);
    let expected_applied = ((CLUSTERS - DOWN) * 30) as u64;
    wait_status(&emco.http, "dig2", |a| {
        a["rsync-status"]["Applied"].as_u64() == Some(expected_applied)
            && a["rsync-status"]["Retrying"].as_u64() == Some((DOWN * 30) as u64)
    })
    .await;
    // Measure once every batch's first attempts are behind it (a batch that cannot reach its cluster then waits
    // for the cluster's prober), while the clusters stay down.
    tokio::time::sleep(Duration::from_secs(40)).await;
    let cpu = cpu_share_over(Duration::from_secs(30)).await;
    println!(
        "emco: CPU while {DOWN} clusters stay down and retrying (30 s window from 40 s after they went down): {:.2}% of a core",
        cpu * 100.0
    );
    // Heal them all at once; time until the DIG is Instantiated.
    let healed = Instant::now();
    set_down(admin, names.iter().take(DOWN), false).await;
    let heal_requests = healed.elapsed();
    let done = wait_status(&emco.http, "dig2", |a| a["status"] == "Instantiated").await;
    println!(
        "emco: {DOWN} clusters healed (the heal requests took {:.2} s): Instantiated {:.2} s after the first heal; counts {}",
        heal_requests.as_secs_f64(),
        healed.elapsed().as_secs_f64(),
        done["rsync-status"]
    );
    // The same two DIGs with every cluster up: the baseline of the window while 200 were down.
    tokio::time::sleep(Duration::from_secs(10)).await;
    let baseline = cpu_share_over(Duration::from_secs(30)).await;
    println!(
        "emco: CPU with every cluster up, both DIGs instantiated (30 s window): {:.2}% of a core; the down clusters cost {:+.2} points",
        baseline * 100.0,
        (cpu - baseline) * 100.0
    );
    drop(kubesim);
}

fn main() {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap();
    runtime.block_on(run());
}
