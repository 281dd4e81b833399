//! Freshness of cluster status: how long after a pod's readiness changes in a cluster the change is visible in the
//! status query's `status=ready` answer. Path: kubesim watch → emco-monitor (coalescing, default 200 ms) →
//! ResourceBundleState status → rsync's bundle watcher → AppContext → status index → query.
//!
//! Runs at 100 and 1,000 kubesim clusters (in this process, with emco and one monitor per cluster), each with one
//! app (a Deployment of one replica and a ConfigMap). A sample flips one pod's Ready condition through the status
//! subresource (False on 50 clusters, then True again on the same 50) and polls that cluster's status every 5 ms.
//!
//! Run with `cargo bench -p emco --bench freshness`.

// Benchmark helpers may unwrap: a panic is a failed run.
#![allow(clippy::unwrap_used, missing_docs)]

#[path = "../tests/e2e/support.rs"]
#[allow(dead_code, unreachable_pub)]
mod support;

#[path = "common/freshness_probe.rs"]
mod freshness_probe;

use std::time::{Duration, Instant};

use emco_monitor::{MonitorConfig, WatchedKind};
use emco_rsync::RsyncConfig;
use emco_store::Store;

use freshness_probe::{
    instantiate_until_ready, print_percentiles, ready_query, set_readiness, web_chart, web_pod,
};
use support::Emco;

const SAMPLES: usize = 100;

async fn measure(clusters: usize) {
    let setup = Instant::now();
    let sim = kubesim::Simulator::start_named(clusters).await.unwrap();
    let emco = Emco::start_with(Store::memory(), RsyncConfig::default()).await;
    support::onboard_apps(&emco.http, &support::kubeconfigs(&sim), &[("web", web_chart())]).await;
    // The product's defaults, watching the two kinds this app has (one process holds every cluster's monitor here;
    // in the field each monitor has its cluster to itself).
    let config = MonitorConfig {
        kinds: vec![
            WatchedKind::new("", "v1", "Pod", "pods"),
            WatchedKind::new("apps", "v1", "Deployment", "deployments"),
            WatchedKind::new("", "v1", "ConfigMap", "configmaps"),
        ],
        ..MonitorConfig::default()
    };
    let monitors: Vec<_> = sim
        .clusters()
        .iter()
        .map(|cluster| {
            tokio::spawn(emco_monitor::run(
                cluster.client().unwrap(),
                config.clone(),
                std::future::pending(),
            ))
        })
        .collect();
    instantiate_until_ready(&emco.http, Duration::from_secs(600)).await;
    println!(
        "{clusters} clusters: instantiated and Ready everywhere after {:.1} s",
        setup.elapsed().as_secs_f64()
    );

    let mut latencies = Vec::with_capacity(SAMPLES);
    for sample in 0..SAMPLES {
        // The first half of the samples makes a pod NotReady on as many different clusters, the second half makes
        // those pods Ready again: each change is the first to its app's bundle in a while, as an isolated change in
        // the field is (a change within 200 ms of its bundle's last write waits for the coalescing interval).
        let index = (sample % (SAMPLES / 2) * 7919) % clusters;
        let ready = sample >= SAMPLES / 2;
        let cluster = &sim.clusters()[index];
        let (pods, pod) = web_pod(cluster.client().unwrap()).await;
        let query = ready_query(cluster.name());
        let want = if ready { "Ready" } else { "NotReady" };
        let started = Instant::now();
        set_readiness(&pods, &pod, ready).await;
        loop {
            let answer = emco.http.get(&query).await.expect(200).json();
            if answer["readyStatus"] == want {
                break;
            }
            assert!(
                started.elapsed() < Duration::from_secs(60),
                "{} never became {want}: {answer}",
                cluster.name()
            );
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
        latencies.push(started.elapsed());
    }
    print_percentiles(
        &format!("{clusters} clusters: {SAMPLES} readiness changes visible in status=ready after"),
        &mut latencies,
    );
    for monitor in monitors {
        monitor.abort();
    }
}

fn main() {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap();
    runtime.block_on(async {
        measure(100).await;
        measure(1_000).await;
    });
}
