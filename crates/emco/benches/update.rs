//! Updating at scale (issue #20 §6): 1,000 kubesim clusters (kubesim in its own process) × 30 resources (3 apps ×
//! 10), instantiated; then one value of one object changes (app `alpha`'s Deployment, `replicas` 1 → 2) and
//! `/update` runs, timed until the new revision is Instantiated and the old one handed over, with the writes that
//! reached the clusters counted by kubesim (summed over every cluster); then a rollback to revision 1, the same.
//!
//! Run with `cargo bench -p emco --bench update`.

// Benchmark helpers may unwrap: a panic is a failed run.
#![allow(clippy::unwrap_used, missing_docs)]

#[path = "../tests/e2e/support.rs"]
#[allow(dead_code, unreachable_pub)]
mod support;

#[path = "common/bench_apps.rs"]
#[allow(dead_code, unreachable_pub)]
mod bench_apps;

use std::time::{Duration, Instant};

use bench_apps::{dig, onboard};
use emco_rsync::RsyncConfig;
use emco_store::Store;
use serde_json::{Value as Json, json};
use support::{Emco, Http, last_context, total_writes};

const CLUSTERS: usize = 1_000;

async fn wait(http: &Http, path: &str, done: impl Fn(&Json) -> bool) -> Json {
    loop {
        let answer = http.get(path).await.expect(200).json();
        if done(&answer) {
            return answer;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// Runs `operation` (an update or rollback of the DIG, 202) and waits until its new context is Instantiated and
/// `current` handed over: the seconds it took, the writes that reached the clusters, and the new context.
async fn timed(
    http: &Http,
    admin: &Http,
    current: &str,
    operation: impl std::future::Future<Output = ()>,
) -> (f64, u64, String) {
    let url = dig("dig");
    let before = total_writes(admin).await;
    let started = Instant::now();
    operation.await;
    let done = wait(http, &format!("{url}/status?output=summary"), |a| {
        a["status"] != "Instantiating" && last_context(a) != current
    })
    .await;
    assert_eq!(done["status"], "Instantiated", "{done}");
    wait(
        http,
        &format!("{url}/status?output=summary&instance={current}"),
        |a| a["status"] == "Updated",
    )
    .await;
    let elapsed = started.elapsed().as_secs_f64();
    let writes = total_writes(admin).await - before;
    (elapsed, writes, last_context(&done))
}

async fn run() {
    let dir = tempfile::tempdir().unwrap();
    let kubesim = support::KubesimProcess::start(CLUSTERS).await;
    let emco = Emco::start_with(
        Store::open_redb(&dir.path().join("emco")).unwrap(),
        RsyncConfig::default(),
    )
    .await;
    let http = &emco.http;
    onboard(http, &kubesim.kubeconfigs, |_| "edge".into(), &[("dig", "edge")]).await;
    let url = dig("dig");
    let before = total_writes(&kubesim.admin).await;
    let started = Instant::now();
    http.post_empty(&format!("{url}/instantiate")).await.expect(202);
    let done = wait(http, &format!("{url}/status?output=summary"), |a| {
        a["status"] != "Instantiating"
    })
    .await;
    assert_eq!(done["status"], "Instantiated", "{done}");
    let first = last_context(&done);
    println!(
        "emco: instantiate {CLUSTERS} clusters x 30 resources: {:.2} s, {} writes reached the clusters",
        started.elapsed().as_secs_f64(),
        total_writes(&kubesim.admin).await - before
    );

    let body = json!({"metadata": {"name": "dig"}, "spec": {"compositeProfile": "cp", "version": "dig",
        "overrideValues": [{"app": "alpha", "values": {"replicas": "2"}}]}});
    http.request("PUT", &url, Some("application/json"), body.to_string().as_bytes())
        .await
        .expect(200);
    let (seconds, writes, second) = timed(http, &kubesim.admin, &first, async {
        http.post_empty(&format!("{url}/update")).await.expect(202);
    })
    .await;
    println!(
        "emco: update of {CLUSTERS} clusters x 30 resources, one value of one object changed: {seconds:.2} s until Instantiated and handed over; {writes} writes reached the clusters ({:.2} per cluster)",
        writes as f64 / CLUSTERS as f64
    );

    let (seconds, writes, _) = timed(http, &kubesim.admin, &second, async {
        http.post(
            &format!("{url}/rollback"),
            json!({"metadata": {"description": ""}, "spec": {"revision": "1"}}),
        )
        .await
        .expect(202);
    })
    .await;
    println!(
        "emco: rollback to revision 1 of the same: {seconds:.2} s until Instantiated and handed over; {writes} writes reached the clusters ({:.2} per cluster)",
        writes as f64 / CLUSTERS as f64
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
