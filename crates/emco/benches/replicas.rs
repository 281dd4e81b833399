//! emco on etcd and as replicas, at 1,000 clusters × 30 resources (issue #18 §6), each `emco serve` and kubesim in
//! their own processes:
//!
//! 1. **Cold restart** on redb and on etcd: an instantiation is killed (SIGKILL) half-way; a new `emco serve` on
//!    the same store is timed from spawn to accepting connections, to `/readyz`, to the first status answer that
//!    lists all 30,000 resources, and to the first resource the resumed instantiation applies. It restarts on the
//!    same address, so on etcd it is the same replica and takes its claims back at once (also measured with
//!    `--lease-ttl 2s`, which mattered while a restarted replica had to wait for its old lease to expire).
//! 2. **Status `output=all`** (every resource of every cluster) on each backend once Instantiated: p50/p99 of the
//!    full HTTP answer; the etcd-fed replica's against redb's in the same run.
//! 3. **Instantiate with 2 replicas vs 1** on one etcd: two DIGs of 500 clusters × 30 resources each; with two
//!    replicas each DIG's instantiate goes to a different replica (the receiver owns the operation).
//!
//! Run with `cargo bench -p emco --bench replicas` (not in CI; needs Debian's `etcd`). `REPLICAS_CLUSTERS` (1000)
//! changes the size.

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
use emco_store::etcd_testing::EtcdServer;
use serde_json::Value as Json;
use support::{Http, KubesimProcess, ServeProcess};

fn clusters() -> usize {
    std::env::var("REPLICAS_CLUSTERS")
        .ok()
        .and_then(|value| value.parse().ok())
        .unwrap_or(1000)
}

/// The summary answer of a DIG, or `None` while the server does not answer it.
async fn summary(http: &Http, name: &str) -> Option<Json> {
    let reply = http.get(&format!("{}/status?output=summary", dig(name))).await;
    (reply.status == 200).then(|| reply.json())
}

fn count(answer: &Json, status: &str) -> u64 {
    answer["rsync-status"][status].as_u64().unwrap_or(0)
}

fn total(answer: &Json) -> u64 {
    answer["rsync-status"]
        .as_object()
        .map_or(0, |counts| counts.values().filter_map(Json::as_u64).sum())
}

/// Waits until `done` holds for the DIG's summary (at most 10 minutes; kubesim must stay up).
async fn wait_summary(
    http: &Http,
    kubesim: &mut KubesimProcess,
    name: &str,
    done: impl Fn(&Json) -> bool,
) -> Json {
    let deadline = Instant::now() + Duration::from_secs(600);
    loop {
        let answer = summary(http, name).await;
        if let Some(answer) = &answer
            && done(answer)
        {
            return answer.clone();
        }
        kubesim.assert_running();
        assert!(Instant::now() < deadline, "{name} did not get there: {answer:?}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

fn percentile(sorted: &[Duration], p: f64) -> Duration {
    let index = ((sorted.len() as f64 * p).ceil() as usize).clamp(1, sorted.len()) - 1;
    sorted[index]
}

fn ms(duration: Duration) -> f64 {
    duration.as_secs_f64() * 1000.0
}

/// Scenarios 1 and 2 on one backend (`store_args`); returns the `output=all` latencies.
async fn restart_and_query(
    backend: &str,
    store_args: &[&str],
    serve_args: &[&str],
    clusters: usize,
) -> Vec<Duration> {
    let mut kubesim = KubesimProcess::start(clusters).await;
    let serve = ServeProcess::start_on(store_args, serve_args, None).await;
    let http = Http {
        address: serve.address(),
    };
    onboard(&http, &kubesim.kubeconfigs, |_| "edge".into(), &[("dig", "edge")]).await;
    let resources = (clusters * 30) as u64;
    http.post_empty(&format!("{}/instantiate", dig("dig")))
        .await
        .expect(202);
    let at_kill = wait_summary(&http, &mut kubesim, "dig", |answer| {
        count(answer, "Applied") >= resources / 2
    })
    .await;
    let port = serve.kill().await; // SIGKILL
    let applied_at_kill = count(&at_kill, "Applied");

    // Started again on the same address: on etcd the same replica, which takes its work back at once.
    let spawned = Instant::now();
    let serve = ServeProcess::start_at(port, store_args, serve_args, None).await;
    let listening = spawned.elapsed();
    let http = Http {
        address: serve.address(),
    };
    while http.get("/readyz").await.status != 200 {
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    let ready = spawned.elapsed();
    let first = wait_summary(&http, &mut kubesim, "dig", |answer| total(answer) == resources).await;
    let answered = spawned.elapsed();
    // (A small run may have finished before the kill: then there is nothing to resume.)
    let resumed_answer = wait_summary(&http, &mut kubesim, "dig", |answer| {
        count(answer, "Applied") > count(&first, "Applied").max(applied_at_kill)
            || count(answer, "Applied") == resources
    })
    .await;
    let resumed = spawned.elapsed();
    let done = wait_summary(&http, &mut kubesim, "dig", |answer| {
        answer["status"] != "Instantiating"
    })
    .await;
    println!(
        "{backend}: killed at {applied_at_kill}/{resources} applied; restarted: listening {:.0} ms, /readyz {:.0} ms, \
         status of all {resources} resources {:.0} ms ({} applied), first resumed apply seen {:.0} ms ({} applied); \
         then {} ({})",
        ms(listening),
        ms(ready),
        ms(answered),
        count(&first, "Applied"),
        ms(resumed),
        count(&resumed_answer, "Applied"),
        done["status"],
        done["rsync-status"]
    );

    let path = format!("{}/status?output=all", dig("dig"));
    let size = http.get(&path).await.expect(200).body.len();
    let mut latencies = Vec::new();
    for _ in 0..30 {
        let asked = Instant::now();
        http.get(&path).await.expect(200);
        latencies.push(asked.elapsed());
    }
    latencies.sort();
    println!(
        "{backend}: status output=all ({} KiB): p50 {:.1} ms, p99 {:.1} ms",
        size / 1024,
        ms(percentile(&latencies, 0.5)),
        ms(percentile(&latencies, 0.99))
    );
    latencies
}

/// Scenario 3: two DIGs of half the clusters each, instantiated through `replicas` `emco serve` on one etcd.
async fn instantiate_with(replicas: usize, endpoint: &str, prefix: &str, clusters: usize) -> Duration {
    let mut kubesim = KubesimProcess::start(clusters).await;
    let store_args = ["--etcd-endpoints", endpoint, "--etcd-prefix", prefix];
    let mut serves = Vec::new();
    for _ in 0..replicas {
        serves.push(ServeProcess::start_on(&store_args, &[], None).await);
    }
    let https: Vec<Http> = serves
        .iter()
        .map(|serve| Http {
            address: serve.address(),
        })
        .collect();
    let half = clusters / 2;
    onboard(
        &https[0],
        &kubesim.kubeconfigs,
        |index| if index < half { "a".into() } else { "b".into() },
        &[("dig-a", "a"), ("dig-b", "b")],
    )
    .await;
    let started = Instant::now();
    for (index, name) in ["dig-a", "dig-b"].iter().enumerate() {
        https[index % replicas]
            .post_empty(&format!("{}/instantiate", dig(name)))
            .await
            .expect(202);
    }
    let owners = https[0].get("/v2/replicas").await.json();
    for name in ["dig-a", "dig-b"] {
        let done = wait_summary(&https[0], &mut kubesim, name, |answer| {
            answer["status"] != "Instantiating"
        })
        .await;
        assert_eq!(done["status"], "Instantiated", "{done}");
    }
    let elapsed = started.elapsed();
    let owned: Vec<usize> = owners
        .as_array()
        .map(|list| {
            list.iter()
                .map(|replica| replica["owns"]["contexts"].as_array().map_or(0, Vec::len))
                .collect()
        })
        .unwrap_or_default();
    println!(
        "etcd, {replicas} replica(s): instantiate 2 DIGs x {half} clusters x 30 resources: {:.2} s ({:.0} objects/s); \
         contexts owned per replica during the run: {owned:?}",
        elapsed.as_secs_f64(),
        (clusters * 30) as f64 / elapsed.as_secs_f64()
    );
    elapsed
}

async fn run() {
    let clusters = clusters();
    let Some(etcd) = EtcdServer::start().await.unwrap() else {
        panic!("the replicas bench needs etcd (Debian's etcd-server)");
    };
    let data = tempfile::tempdir().unwrap();
    let redb_dir = data.path().join("redb").display().to_string();
    let redb = restart_and_query("redb", &["--data-dir", &redb_dir], &[], clusters).await;
    let on_etcd = restart_and_query(
        "etcd",
        &["--etcd-endpoints", etcd.endpoint(), "--etcd-prefix", "/restart"],
        &[],
        clusters,
    )
    .await;
    // The killed replica's claim on the instantiation lives until its lease expires: with a shorter lease.
    restart_and_query(
        "etcd --lease-ttl 2s",
        &[
            "--etcd-endpoints",
            etcd.endpoint(),
            "--etcd-prefix",
            "/restart-short",
        ],
        &["--lease-ttl", "2s"],
        clusters,
    )
    .await;
    println!(
        "status output=all, etcd-fed / redb: p50 {:.2}x, p99 {:.2}x",
        percentile(&on_etcd, 0.5).as_secs_f64() / percentile(&redb, 0.5).as_secs_f64(),
        percentile(&on_etcd, 0.99).as_secs_f64() / percentile(&redb, 0.99).as_secs_f64()
    );
    let one = instantiate_with(1, etcd.endpoint(), "/one", clusters).await;
    let two = instantiate_with(2, etcd.endpoint(), "/two", clusters).await;
    println!(
        "instantiate, 2 replicas / 1 replica: {:.2}x the time",
        two.as_secs_f64() / one.as_secs_f64()
    );
}

fn main() {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap();
    runtime.block_on(run());
}
