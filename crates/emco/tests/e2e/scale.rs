//! The scale harness (`cargo bench -p emco --bench scale`) on 50 clusters with emco's monitor in each: the
//! reference and emco apply the same objects (the same number of writes reach the clusters), everything is
//! instantiated and reported Ready, every measurement is taken (freshness on 3 clusters), and a cold restart
//! serves the status again.

use std::time::Duration;

use crate::scale_harness;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_scale_harness_runs_on_fifty_clusters() {
    let report = scale_harness::run(scale_harness::Shape {
        clusters: 50,
        apps: 3,
        replicas: 2,
        idle_window: Duration::from_secs(1),
        freshness_samples: 3,
        monitors: true,
        pull: false,
    })
    .await;
    assert_eq!(report.done["status"], "Instantiated", "{}", report.done);
    assert_eq!(report.done["rsync-status"]["Applied"], 50 * 30, "{}", report.done);
    // The CRD, 30 objects and 3 ResourceBundleStates per cluster, on both sides.
    assert_eq!(report.reference_writes, 50 * 34);
    assert_eq!(
        report.emco_writes, report.reference_writes,
        "emco applies what the reference applies"
    );
    let rows: Vec<&str> = report.rows.iter().map(|(what, _)| what.as_str()).collect();
    let ready = report
        .rows
        .iter()
        .find(|(what, _)| what.starts_with("instantiate until everything is Ready"));
    assert!(
        ready.is_some_and(|(_, figure)| figure.ends_with(" s")),
        "the monitors' reports make everything Ready: {ready:?}"
    );
    for needed in [
        "emco rate / reference rate",
        "instantiate until everything is Ready (monitors' reports)",
        "freshness: pod deleted → gone from status=ready, p50 / p99 (3 clusters)",
        "status all: p50 / p99, answer",
        "serde_json serializing the same `all` answer in process, p50; all through HTTP / that",
        "status all, gzip-compressed (Accept-Encoding: gzip)",
        "emco RSS: onboarded / tracking everything / after the status queries",
        "cold restart until the status of everything is served",
    ] {
        assert!(rows.contains(&needed), "{needed} missing from {rows:?}");
    }
}

/// The harness with pull clusters on 20 clusters: each cluster's agent (deployed by its Secret) applies what the
/// reference applies — kubesim counts the same object writes, made inside the clusters — while emco opens no
/// connection to any cluster; everything is Instantiated and reported Ready, and freshness is measured through the
/// agents' reports.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_scale_harness_runs_on_twenty_pull_clusters() {
    let report = scale_harness::run(scale_harness::Shape {
        clusters: 20,
        apps: 3,
        replicas: 2,
        idle_window: Duration::from_secs(1),
        freshness_samples: 3,
        monitors: true,
        pull: true,
    })
    .await;
    assert_eq!(report.done["status"], "Instantiated", "{}", report.done);
    assert_eq!(report.done["rsync-status"]["Applied"], 20 * 30, "{}", report.done);
    assert_eq!(report.reference_writes, 20 * 34);
    assert_eq!(
        report.emco_writes, report.reference_writes,
        "the agents apply what the reference applies"
    );
    assert_eq!(report.emco_connections, 0, "emco never dials a pull cluster");
    let figure = |name: &str| {
        report
            .rows
            .iter()
            .find(|(what, _)| what.starts_with(name))
            .map(|(_, figure)| figure.clone())
    };
    assert!(
        figure("instantiate until everything is Ready").is_some_and(|figure| figure.ends_with(" s")),
        "the agents' reports make everything Ready: {:?}",
        report.rows
    );
    for needed in [
        "pull agents: Secrets written / until every agent polls emco",
        "emco RSS: onboarded / every agent's poll parked (per pull cluster)",
        "freshness: pod deleted → gone from status=ready, p50 / p99 (3 clusters)",
        "cold restart until the status of everything is served",
    ] {
        assert!(
            figure(needed).is_some(),
            "{needed} missing from {:?}",
            report.rows
        );
    }
}
