//! The scale harness: N simulated clusters (kubesim in its own process), the bench composite app (3 apps × 10
//! objects) instantiated by `emco serve` in its own process (redb), and, in the same run, the reference — a raw
//! kube-rs client applying exactly the objects emco applies (the ResourceBundleState CRD, every app's rendered and
//! labelled objects, one ResourceBundleState per app) to N fresh clusters with rsync's concurrency. The writes
//! that reached the clusters are counted by kubesim for both, so the two are seen to apply the same. Then the
//! status query through HTTP (summary, all, detail: p50/p99 and answer size), emco's and kubesim's memory (RSS)
//! and emco's CPU while idle, and a cold restart (SIGKILL, start on the same store: time until the status of
//! everything is served again). Prints one Markdown table.
//!
//! Run with `cargo bench -p emco --bench scale` (`SCALE_CLUSTERS=3000` for another size; 1,000 by default); the
//! harness itself is `common/scale_harness.rs`. `SCALE_PROFILE=perf.data` samples emco's process with `perf record`
//! while it instantiates (`perf report -i perf.data --no-children` shows where the time goes).

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

fn main() {
    let clusters: usize = std::env::var("SCALE_CLUSTERS")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(1_000);
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap();
    let report = runtime.block_on(scale_harness::run(clusters, Duration::from_secs(20)));
    println!("\n| scale harness, {clusters} clusters | measured |\n|---|---|");
    for (what, value) in report.rows {
        println!("| {what} | {value} |");
    }
}
