//! The scale harness: N simulated clusters (kubesim in its own process), the bench composite app (3 apps × 10
//! objects) instantiated by `emco serve` in its own process (redb), and, in the same run, the reference — a raw
//! kube-rs client applying exactly the objects emco applies (the ResourceBundleState CRD, every app's rendered and
//! labelled objects, one ResourceBundleState per app) to N fresh clusters with rsync's concurrency. The writes
//! that reached the clusters are counted by kubesim for both, so the two are seen to apply the same. Then the
//! status query through HTTP (summary, all, detail: p50/p99 and answer size), emco's and kubesim's memory (RSS)
//! and emco's CPU while idle, and a cold restart (SIGKILL, start on the same store: time until the status of
//! everything is served again). Prints one Markdown table.
//!
//! Run with `cargo bench -p emco --bench scale`: `SCALE_CLUSTERS` clusters (1,000 by default), `SCALE_APPS` apps
//! of 10 objects each (1 to 3; 3 by default), `SCALE_REPLICAS` pods per app's Deployment (1 by default; 20 gives
//! the 60,000 pods of the memory target at 1,000 × 30), freshness on `SCALE_FRESHNESS` clusters (40 by default),
//! `SCALE_MONITORS=0` without emco's monitor in the clusters (no readiness, no freshness), `SCALE_PULL=1` with
//! pull clusters (each served by its agent beside its monitor; emco never dials them); the harness
//! itself is `common/scale_harness.rs`. The process raises its descriptor limit where permitted (as root).
//! `SCALE_PROFILE=perf.data` samples emco's process with `perf record` while it instantiates (`perf report -i
//! perf.data --no-children` shows where the time goes); `SCALE_PROFILE_KUBESIM` samples kubesim meanwhile, and
//! `SCALE_PROFILE_KUBESIM_REFERENCE` the reference's kubesim while the reference applies, and
//! `SCALE_PROFILE_KUBESIM_IDLE` kubesim while emco's idle CPU is measured (the monitors' heartbeats and reports).

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

use std::time::Duration;

/// `name` from the environment, or `default`.
fn setting(name: &str, default: usize) -> usize {
    std::env::var(name)
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(default)
}

fn main() {
    let shape = scale_harness::Shape {
        clusters: setting("SCALE_CLUSTERS", 1_000),
        apps: setting("SCALE_APPS", 3),
        replicas: setting("SCALE_REPLICAS", 1),
        idle_window: Duration::from_secs(20),
        freshness_samples: setting("SCALE_FRESHNESS", 40),
        monitors: setting("SCALE_MONITORS", 1) != 0,
        pull: setting("SCALE_PULL", 0) != 0,
    };
    // kubesim holds a listener and a connection per cluster, emco a connection or two: above a few thousand
    // clusters the usual descriptor limit is too low. Raise it (soft and hard) where permitted; the processes
    // started here inherit it.
    let wanted = (shape.clusters as u64 * 4 + 4096).max(65_536);
    let _ = rustix::process::setrlimit(
        rustix::process::Resource::Nofile,
        rustix::process::Rlimit {
            current: Some(wanted),
            maximum: Some(wanted),
        },
    );
    let (clusters, apps) = (shape.clusters, shape.apps);
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap();
    let report = runtime.block_on(scale_harness::run(shape));
    println!(
        "\n| scale harness, {clusters} clusters × {} objects | measured |\n|---|---|",
        apps * 10
    );
    for (what, value) in report.rows {
        println!("| {what} | {value} |");
    }
}
