//! Freshness of a GitOps cluster's status: how long after the cluster's monitor pushed a status commit the change
//! is visible in the status query's `status=ready` answer. Path: kubesim → emco-monitor (its ResourceBundleStates)
//! → the monitor's Git status (a commit to the branch named after the cluster, on a real Git server:
//! `git http-backend`) → rsync's status reader (it fetches the branch every `git_status_poll`, 1 s by default) →
//! AppContext → status index → query. Goal: ≤ the sync interval + 1 s.
//!
//! Runs at 10 and 50 GitOps clusters (in this process: kubesim, the Git server, emco with the product's defaults,
//! and per cluster Flux reconciling every 10 s, a monitor, and its Git status committing at most once a second),
//! each with one app (a Deployment
//! of one replica and a ConfigMap). A sample flips one pod's Ready condition through the status subresource, round
//! after round over the clusters (False on each, then True again on each); the clock of a sample starts when the server's branch of that
//! cluster moves (read from the served repository's refs every 2 ms), and stops when the cluster's status answer
//! says the change (polled every 5 ms). The end-to-end time from the pod's change is given too, and how many
//! requests a second emco's status readers make to the Git server meanwhile (one fetch serves every cluster of the
//! repository).
//!
//! Run with `cargo bench -p emco --bench gitops_freshness`.

// Benchmark helpers may unwrap: a panic is a failed run.
#![allow(clippy::unwrap_used, missing_docs)]

#[path = "../tests/e2e/support.rs"]
#[allow(dead_code, unreachable_pub)]
mod support;

#[path = "common/freshness_probe.rs"]
mod freshness_probe;

use std::path::Path;
use std::time::{Duration, Instant};

use emco_git::GitServer;
use emco_rsync::RsyncConfig;
use emco_store::Store;

use freshness_probe::{
    instantiate_until_ready, print_percentiles, ready_query, set_readiness, web_chart, web_pod,
};
use support::{Emco, GIT_TOKEN};

const SAMPLES: usize = 40;

/// The commit `branch` of the served repository `repository` points at (loose or packed), read from disk.
fn branch_head(repository: &Path, branch: &str) -> Option<String> {
    let reference = format!("refs/heads/{branch}");
    if let Ok(head) = std::fs::read_to_string(repository.join(&reference)) {
        return Some(head.trim().to_string());
    }
    let packed = std::fs::read_to_string(repository.join("packed-refs")).ok()?;
    packed.lines().find_map(|line| {
        let (commit, name) = line.split_once(' ')?;
        (name == reference).then(|| commit.to_string())
    })
}

async fn measure(clusters: usize) {
    let setup = Instant::now();
    let dir = tempfile::tempdir().unwrap();
    let server = GitServer::start(&dir.path().join("served"), GIT_TOKEN)
        .await
        .unwrap();
    let url = server.create_repository("fleet").unwrap();
    let repository = server.repository_dir("fleet");
    let sim = kubesim::Simulator::start_named(clusters).await.unwrap();
    let mut agents = Vec::new();
    for cluster in sim.clusters() {
        agents.push(
            support::start_gitops_agents(
                &server,
                cluster,
                dir.path(),
                Duration::from_secs(10),
                Duration::from_secs(1),
            )
            .await,
        );
    }
    let emco = Emco::start_with(Store::memory(), RsyncConfig::default()).await;
    support::onboard_apps(&emco.http, &[], &[("web", web_chart())]).await;
    support::register_gitops_sync_objects(&emco.http, &url).await;
    for cluster in sim.clusters() {
        support::register_gitops_cluster(&emco.http, cluster.name()).await;
    }
    instantiate_until_ready(&emco.http, Duration::from_secs(900)).await;
    println!(
        "{clusters} GitOps clusters: instantiated and Ready everywhere after {:.1} s",
        setup.elapsed().as_secs_f64()
    );

    let (sampling, emco_requests) = (Instant::now(), server.requests_of("emco"));
    let mut after_commit = Vec::with_capacity(SAMPLES);
    let mut end_to_end = Vec::with_capacity(SAMPLES);
    for sample in 0..SAMPLES {
        // Round after round over the clusters: NotReady on each, then Ready again on each, and so on.
        let index = sample % clusters;
        let ready = (sample / clusters) % 2 == 1;
        let cluster = &sim.clusters()[index];
        let branch = format!("vfw-cluster-provider+{}", cluster.name());
        let (pods, pod) = web_pod(cluster.in_cluster_client()).await;
        let query = ready_query(cluster.name());
        let (want, was) = if ready {
            ("Ready", "NotReady")
        } else {
            ("NotReady", "Ready")
        };
        // The cluster's answer says the state the change leaves, first.
        let settled = Instant::now();
        while emco.http.get(&query).await.expect(200).json()["readyStatus"] != was {
            assert!(
                settled.elapsed() < Duration::from_secs(60),
                "{} never settled",
                cluster.name()
            );
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        if settled.elapsed() > Duration::from_millis(100) {
            eprintln!("{}: {was} only after {:?}", cluster.name(), settled.elapsed());
        }
        let before = branch_head(&repository, &branch);
        let started = Instant::now();
        set_readiness(&pods, &pod, ready).await;
        let mut committed: Option<Instant> = None;
        let mut next_query = Instant::now();
        loop {
            if committed.is_none() && branch_head(&repository, &branch) != before {
                committed = Some(Instant::now());
            }
            if Instant::now() >= next_query {
                let answer = emco.http.get(&query).await.expect(200).json();
                if answer["readyStatus"] == want {
                    break;
                }
                next_query = Instant::now() + Duration::from_millis(5);
            }
            assert!(
                started.elapsed() < Duration::from_secs(60),
                "{} never became {want}",
                cluster.name()
            );
            tokio::time::sleep(Duration::from_millis(2)).await;
        }
        let visible = Instant::now();
        let committed = committed.expect("the change became visible without a status commit");
        after_commit.push(visible - committed);
        end_to_end.push(visible - started);
    }
    println!(
        "{clusters} GitOps clusters: emco's requests to the Git server while sampling (status reads): {:.1}/s",
        (server.requests_of("emco") - emco_requests) as f64 / sampling.elapsed().as_secs_f64()
    );
    print_percentiles(
        &format!("{clusters} GitOps clusters, {SAMPLES} readiness changes: visible after the status commit"),
        &mut after_commit,
    );
    print_percentiles(
        &format!("{clusters} GitOps clusters, {SAMPLES} readiness changes: visible after the pod's change"),
        &mut end_to_end,
    );
    drop(agents);
}

fn main() {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap();
    runtime.block_on(async {
        if !GitServer::git_available() {
            println!("git is not installed: nothing measured");
            return;
        }
        for clusters in std::env::var("GITOPS_FRESHNESS_CLUSTERS")
            .unwrap_or_else(|_| "10,50".into())
            .split(',')
            .filter_map(|count| count.trim().parse::<usize>().ok())
        {
            measure(clusters).await;
        }
    });
}
