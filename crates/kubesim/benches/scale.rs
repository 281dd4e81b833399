//! kubesim at scale: 1,000 clusters in one process. Prints memory per idle cluster, server-side-apply throughput
//! from one kube-rs client (sequential and 16 in flight), and watch fan-out (how fast one change reaches many
//! watchers).
//!
//! Run with `cargo bench -p kubesim`.

use std::time::{Duration, Instant};

use emco_k8s::k8s_openapi::api::core::v1::ConfigMap;
use futures::{StreamExt, TryStreamExt};
use kube::api::{Api, Patch, PatchParams, WatchEvent, WatchParams};
use kubesim::Simulator;
use serde_json::json;

fn resident_bytes() -> usize {
    std::fs::read_to_string("/proc/self/status")
        .unwrap_or_default()
        .lines()
        .find_map(|line| line.strip_prefix("VmRSS:"))
        .and_then(|rest| rest.trim().trim_end_matches("kB").trim().parse::<usize>().ok())
        .map_or(0, |kib| kib * 1024)
}

fn percentile(sorted: &[Duration], p: f64) -> Duration {
    sorted[((sorted.len() as f64 - 1.0) * p).round() as usize]
}

async fn apply_throughput(api: &Api<ConfigMap>, prefix: &str, count: usize, in_flight: usize) -> f64 {
    let params = PatchParams::apply("bench");
    let started = Instant::now();
    futures::stream::iter(0..count)
        .map(|i| {
            let name = format!("{prefix}-{i:05}");
            let body = json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name}, "data": {"i": i.to_string()}});
            let api = api.clone();
            let params = params.clone();
            async move { api.patch(&name, &params, &Patch::Apply(body)).await.expect("apply succeeds") }
        })
        .buffer_unordered(in_flight)
        .for_each(|_| async {})
        .await;
    count as f64 / started.elapsed().as_secs_f64()
}

async fn run() {
    const CLUSTERS: usize = 1_000;
    let before = resident_bytes();
    let started = Instant::now();
    let sim = Simulator::start_named(CLUSTERS).await.expect("clusters start");
    let start_time = started.elapsed();
    tokio::time::sleep(Duration::from_secs(2)).await;
    let idle = resident_bytes().saturating_sub(before);
    println!(
        "clusters: {CLUSTERS} started in {:.2} s",
        start_time.as_secs_f64()
    );
    println!(
        "memory per idle cluster: {:.1} KiB ({:.1} MiB for {CLUSTERS})",
        idle as f64 / CLUSTERS as f64 / 1024.0,
        idle as f64 / 1048576.0
    );

    let cluster = &sim.clusters()[0];
    let mut config = cluster.client_config().expect("config");
    config.default_retry = false;
    let client = kube::Client::try_from(config).expect("client");
    let api: Api<ConfigMap> = Api::namespaced(client.clone(), "default");
    let _ = apply_throughput(&api, "warmup", 200, 8).await;
    let sequential = apply_throughput(&api, "seq", 2_000, 1).await;
    let concurrent = apply_throughput(&api, "par", 4_000, 16).await;
    println!("server-side apply, one client, sequential: {sequential:.0} objects/s");
    println!("server-side apply, one client, 16 in flight: {concurrent:.0} objects/s");

    // Watch fan-out: 500 watchers on one cluster, then 200 changes; delay from write to each delivery.
    const WATCHERS: usize = 500;
    const CHANGES: usize = 200;
    let target = &sim.clusters()[1];
    let target_api: Api<ConfigMap> = Api::namespaced(target.client().expect("client"), "default");
    let rv = target_api
        .list(&Default::default())
        .await
        .expect("list")
        .metadata
        .resource_version
        .unwrap_or_default();
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel::<(usize, Instant)>();
    let mut tasks = Vec::new();
    for _ in 0..WATCHERS {
        let api = target_api.clone();
        let rv = rv.clone();
        let tx = tx.clone();
        tasks.push(tokio::spawn(async move {
            let mut events = api
                .watch(&WatchParams::default().timeout(120), &rv)
                .await
                .expect("watch")
                .boxed();
            let mut seen = 0;
            while let Ok(Some(event)) = events.try_next().await {
                if let WatchEvent::Added(cm) | WatchEvent::Modified(cm) = event {
                    let index: usize = cm
                        .data
                        .and_then(|d| d.get("i").and_then(|i| i.parse().ok()))
                        .unwrap_or(0);
                    let _ = tx.send((index, Instant::now()));
                    seen += 1;
                    if seen == CHANGES {
                        break;
                    }
                }
            }
        }));
    }
    drop(tx);
    tokio::time::sleep(Duration::from_millis(500)).await;
    let mut written = Vec::with_capacity(CHANGES);
    let params = PatchParams::apply("bench");
    let fan_started = Instant::now();
    for i in 0..CHANGES {
        written.push(Instant::now());
        let body = json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "fanout"}, "data": {"i": i.to_string()}});
        target_api
            .patch("fanout", &params, &Patch::Apply(body))
            .await
            .expect("apply");
    }
    let mut delays = Vec::with_capacity(WATCHERS * CHANGES);
    while let Some((index, at)) = rx.recv().await {
        delays.push(at.saturating_duration_since(written[index]));
    }
    let total = fan_started.elapsed();
    delays.sort();
    println!(
        "watch fan-out: {WATCHERS} watchers x {CHANGES} changes = {} events delivered in {:.2} s ({:.0} events/s); write-to-delivery p50 {:.1} ms, p99 {:.1} ms",
        delays.len(),
        total.as_secs_f64(),
        delays.len() as f64 / total.as_secs_f64(),
        percentile(&delays, 0.5).as_secs_f64() * 1000.0,
        percentile(&delays, 0.99).as_secs_f64() * 1000.0
    );
    for task in tasks {
        let _ = task.await;
    }
}

fn main() {
    // `cargo bench` passes `--bench`; this benchmark takes no filters.
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .expect("runtime");
    runtime.block_on(run());
}
