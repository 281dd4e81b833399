//! rsync against kubesim clusters.

use std::process::Stdio;
use std::time::Duration;

use emco_k8s::k8s_openapi::api::apps::v1::Deployment;
use emco_k8s::k8s_openapi::api::core::v1::{ConfigMap, Service};
use kube::api::{Api, DynamicObject, ListParams};
use kube::core::{ApiResource, GroupVersionKind};
use kubesim::Faults;
use serde_json::json;

use crate::support::*;

const SETTLE: Duration = Duration::from_secs(20);

async fn labelled(
    cluster: &kubesim::SimCluster,
    selector: &str,
) -> (Vec<Deployment>, Vec<Service>, Vec<ConfigMap>) {
    let client = cluster.client().unwrap();
    let params = ListParams::default().labels(selector);
    let deployments = Api::<Deployment>::namespaced(client.clone(), "default")
        .list(&params)
        .await
        .unwrap()
        .items;
    let services = Api::<Service>::namespaced(client.clone(), "default")
        .list(&params)
        .await
        .unwrap()
        .items;
    let configmaps = Api::<ConfigMap>::namespaced(client, "default")
        .list(&params)
        .await
        .unwrap()
        .items;
    (deployments, services, configmaps)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn vfw_instantiates_to_twelve_applied_and_terminates_to_twelve_deleted() {
    let sim = crate::support::vfw_clusters(2).await;
    let emco = Emco::start().await;
    onboard_vfw(&emco.http, &kubeconfigs(&sim)).await;
    emco.http
        .post_empty(&format!("{DIG}/instantiate"))
        .await
        .expect(202);
    let done = emco
        .http
        .wait_for("?output=summary", SETTLE, |a| a["status"] == "Instantiated")
        .await;
    assert_eq!(counts(&done), json!({"Applied": 12}));
    let id = last_context(&done);

    for cluster in sim.clusters() {
        let (deployments, services, configmaps) = labelled(cluster, "emco/deployment-id").await;
        let mut names: Vec<String> = deployments
            .iter()
            .map(|d| d.metadata.name.clone().unwrap())
            .collect();
        names.sort();
        assert_eq!(
            names,
            ["fw0-firewall", "fw0-packetgen", "fw0-sink"],
            "{}",
            cluster.name()
        );
        assert_eq!((services.len(), configmaps.len()), (2, 1));
        for deployment in &deployments {
            let app = deployment
                .metadata
                .name
                .as_deref()
                .unwrap()
                .trim_start_matches("fw0-");
            let expected = format!("{id}-{app}");
            assert_eq!(
                deployment.metadata.labels.as_ref().unwrap()["emco/deployment-id"],
                expected
            );
            let template_labels = deployment
                .spec
                .template
                .metadata
                .as_ref()
                .unwrap()
                .labels
                .as_ref()
                .unwrap();
            assert_eq!(
                template_labels["emco/deployment-id"], expected,
                "pod templates are labelled too"
            );
            let managers: Vec<_> = deployment
                .metadata
                .managed_fields
                .iter()
                .flatten()
                .filter_map(|m| m.manager.clone())
                .collect();
            assert!(managers.contains(&"emco".to_string()), "{managers:?}");
        }
        // One ResourceBundleState per app.
        let resource = ApiResource::from_gvk_with_plural(
            &GroupVersionKind::gvk("k8splugin.io", "v1alpha1", "ResourceBundleState"),
            "resourcebundlestates",
        );
        let bundles = Api::<DynamicObject>::namespaced_with(cluster.client().unwrap(), "default", &resource)
            .list(&ListParams::default())
            .await
            .unwrap();
        let mut bundle_names: Vec<String> = bundles
            .items
            .iter()
            .map(|b| b.metadata.name.clone().unwrap())
            .collect();
        bundle_names.sort();
        let mut expected: Vec<String> = APPS.iter().map(|app| format!("{id}-{app}")).collect();
        expected.sort();
        assert_eq!(bundle_names, expected);
        assert_eq!(
            bundles.items[0].data["spec"]["selector"]["matchLabels"]["emco/deployment-id"],
            bundle_names[0]
        );
    }

    emco.http
        .post_empty(&format!("{DIG}/terminate"))
        .await
        .expect(202);
    let done = emco
        .http
        .wait_for("?output=summary", SETTLE, |a| a["status"] == "Terminated")
        .await;
    assert_eq!(counts(&done), json!({"Deleted": 12}));
    for cluster in sim.clusters() {
        let (deployments, services, configmaps) = labelled(cluster, "emco/deployment-id").await;
        assert!(
            deployments.is_empty() && services.is_empty() && configmaps.is_empty(),
            "{} still has objects",
            cluster.name()
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_down_cluster_shows_retrying_and_recovers() {
    let sim = crate::support::vfw_clusters(2).await;
    let emco = Emco::start().await;
    onboard_vfw(&emco.http, &kubeconfigs(&sim)).await;
    let edge02 = &sim.clusters()[1];
    edge02
        .set_faults(Faults {
            down: true,
            ..Faults::default()
        })
        .await
        .unwrap();
    emco.http
        .post_empty(&format!("{DIG}/instantiate"))
        .await
        .expect(202);
    let retrying = emco
        .http
        .wait_for("?status=deployed", SETTLE, |a| {
            a["deployedCounts"] == json!({"Applied": 6, "Retrying": 6})
        })
        .await;
    assert_eq!(retrying["deployedStatus"], "Instantiating");
    for app in retrying["apps"].as_array().unwrap() {
        for cluster in app["clusters"].as_array().unwrap() {
            let expected = if cluster["cluster"] == "edge02" {
                "Retrying"
            } else {
                "Available"
            };
            assert_eq!(cluster["connectivity"], expected, "{cluster}");
        }
    }
    // Why, in the detail view: the cluster refuses connections.
    let detail = emco
        .http
        .get(&format!("{DIG}/status?output=detail&app=sink"))
        .await
        .expect(200)
        .json();
    let clusters = &detail["apps"][0]["clusters"];
    assert_eq!(
        (&clusters[1]["connectivity"], &clusters[1]["connectivity-reason"]),
        (&json!("Retrying"), &json!("connection refused")),
        "{detail}"
    );
    assert!(clusters[0].get("connectivity-reason").is_none(), "{detail}");
    assert!(
        clusters[1]["resources"]
            .as_array()
            .unwrap()
            .iter()
            .all(|r| r["rsync-status"] == "Retrying"),
        "{detail}"
    );
    edge02.set_faults(Faults::default()).await.unwrap();
    let done = emco
        .http
        .wait_for("?output=summary", SETTLE, |a| a["status"] == "Instantiated")
        .await;
    assert_eq!(counts(&done), json!({"Applied": 12}));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn stop_while_retrying_then_terminate() {
    let sim = crate::support::vfw_clusters(2).await;
    let emco = Emco::start().await;
    onboard_vfw(&emco.http, &kubeconfigs(&sim)).await;
    let edge02 = &sim.clusters()[1];
    edge02
        .set_faults(Faults {
            down: true,
            ..Faults::default()
        })
        .await
        .unwrap();
    emco.http
        .post_empty(&format!("{DIG}/instantiate"))
        .await
        .expect(202);
    emco.http
        .wait_for("?output=summary", SETTLE, |a| {
            counts(a) == json!({"Applied": 6, "Retrying": 6})
        })
        .await;
    emco.http.post_empty(&format!("{DIG}/stop")).await.expect(202);
    let stopped = emco
        .http
        .wait_for("?output=summary", SETTLE, |a| a["status"] == "InstantiateFailed")
        .await;
    let last = stopped["state"]["Actions"]
        .as_array()
        .unwrap()
        .last()
        .unwrap()
        .clone();
    assert_eq!(last["State"], "InstantiateStopped");
    // Nothing waits any more, so the status no longer says rsync waits for the cluster to answer.
    let detail = emco
        .http
        .get(&format!("{DIG}/status?output=detail"))
        .await
        .expect(200)
        .json();
    assert!(!detail.to_string().contains("the cluster to answer"), "{detail}");
    // Stopped means stopped: the cluster coming back changes nothing.
    edge02.set_faults(Faults::default()).await.unwrap();
    tokio::time::sleep(Duration::from_millis(800)).await;
    assert_eq!(
        counts(&emco.http.summary().await),
        json!({"Applied": 6, "Retrying": 6})
    );
    // Terminate from InstantiateStopped deletes what was applied.
    emco.http
        .post_empty(&format!("{DIG}/terminate"))
        .await
        .expect(202);
    let done = emco
        .http
        .wait_for("?output=summary", SETTLE, |a| a["status"] == "Terminated")
        .await;
    assert_eq!(counts(&done), json!({"Deleted": 12}));
    for cluster in sim.clusters() {
        assert!(labelled(cluster, "emco/deployment-id").await.0.is_empty());
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn terminate_during_instantiate_cancels_it_first() {
    let sim = crate::support::vfw_clusters(2).await;
    let emco = Emco::start().await;
    onboard_vfw(&emco.http, &kubeconfigs(&sim)).await;
    let edge02 = &sim.clusters()[1];
    edge02
        .set_faults(Faults {
            down: true,
            ..Faults::default()
        })
        .await
        .unwrap();
    emco.http
        .post_empty(&format!("{DIG}/instantiate"))
        .await
        .expect(202);
    emco.http
        .wait_for("?output=summary", SETTLE, |a| counts(a)["Retrying"] == 6)
        .await;
    emco.http
        .post_empty(&format!("{DIG}/terminate"))
        .await
        .expect(202);
    // edge01 is cleaned up while edge02 is still unreachable.
    emco.http
        .wait_for(
            "?output=summary&cluster=vfw-cluster-provider%2Bedge01",
            SETTLE,
            |a| counts(a) == json!({"Deleted": 6}),
        )
        .await;
    assert_eq!(emco.http.summary().await["status"], "Terminating");
    edge02.set_faults(Faults::default()).await.unwrap();
    let done = emco
        .http
        .wait_for("?output=summary", SETTLE, |a| a["status"] == "Terminated")
        .await;
    assert_eq!(counts(&done), json!({"Deleted": 12}));
    // The cancelled instantiation never reached edge02 afterwards.
    assert!(labelled(edge02, "emco/deployment-id").await.0.is_empty());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_rejected_object_fails_with_the_clusters_reason_and_the_rest_is_applied() {
    let sim = crate::support::vfw_clusters(2).await;
    let emco = Emco::start().await;
    onboard_vfw(&emco.http, &kubeconfigs(&sim)).await;
    sim.clusters()[0]
        .set_faults(Faults {
            reject_kinds: vec!["ConfigMap".into()],
            ..Faults::default()
        })
        .await
        .unwrap();
    emco.http
        .post_empty(&format!("{DIG}/instantiate"))
        .await
        .expect(202);
    let done = emco
        .http
        .wait_for("?output=summary", SETTLE, |a| a["status"] == "InstantiateFailed")
        .await;
    assert_eq!(counts(&done), json!({"Applied": 11, "Failed": 1}));
    let detail = emco.http.get(&format!("{DIG}/status?app=sink&cluster=vfw-cluster-provider%2Bedge01&resource=sink-configmap&output=detail")).await.expect(200).json();
    let resource = &detail["apps"][0]["clusters"][0]["resources"][0];
    assert_eq!(resource["rsync-status"], "Failed");
    let message = resource["message"].as_str().unwrap();
    assert!(
        message.contains("denied the request") && message.contains("403"),
        "{message}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kubesim_as_its_own_process() {
    let dir = tempfile::tempdir().unwrap();
    let mut kubesim = tokio::process::Command::new(env!("CARGO_BIN_EXE_emco"))
        .args([
            "kubesim",
            "--clusters",
            "2",
            "--admin",
            "127.0.0.1:0",
            "--kubeconfig-dir",
        ])
        .arg(dir.path())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let paths = [dir.path().join("edge01.yaml"), dir.path().join("edge02.yaml")];
    for _ in 0..200 {
        if paths.iter().all(|p| p.exists()) {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let clusters: Vec<(String, String)> = ["edge01", "edge02"]
        .iter()
        .zip(&paths)
        .map(|(n, p)| ((*n).to_string(), std::fs::read_to_string(p).unwrap()))
        .collect();
    let emco = Emco::start().await;
    onboard_vfw(&emco.http, &clusters).await;
    emco.http
        .post_empty(&format!("{DIG}/instantiate"))
        .await
        .expect(202);
    let done = emco
        .http
        .wait_for("?output=summary", SETTLE, |a| a["status"] == "Instantiated")
        .await;
    assert_eq!(counts(&done), json!({"Applied": 12}));
    kubesim.kill().await.unwrap();
}

/// The vFW example instantiating on `clusters` kubesim clusters that answer after `latency_ms`, driven by `emco
/// serve` in its own process (so that it can be killed) on a store in `data`.
pub(crate) struct SlowInstantiation {
    pub(crate) sim: kubesim::Simulator,
    pub(crate) data: tempfile::TempDir,
    pub(crate) port: u16,
    pub(crate) http: Http,
    pub(crate) emco: tokio::process::Child,
}

/// Starts a [`SlowInstantiation`]: clusters slowed, emco started, the vFW example onboarded and instantiated.
pub(crate) async fn start_slow_instantiation(clusters: usize, latency_ms: u64) -> SlowInstantiation {
    let sim = crate::support::vfw_clusters(clusters).await;
    crate::support::slow_down(&sim, latency_ms).await;
    let data = tempfile::tempdir().unwrap();
    let port = free_port();
    let http = Http {
        address: ([127, 0, 0, 1], port).into(),
    };
    let emco = start_emco_process(data.path(), port).await;
    onboard_vfw(&http, &kubeconfigs(&sim)).await;
    http.post_empty(&format!("{DIG}/instantiate")).await.expect(202);
    SlowInstantiation {
        sim,
        data,
        port,
        http,
        emco,
    }
}

pub(crate) fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

pub(crate) async fn start_emco_process(data: &std::path::Path, port: u16) -> tokio::process::Child {
    let child = tokio::process::Command::new(env!("CARGO_BIN_EXE_emco"))
        .args(["serve", "--listen", &format!("127.0.0.1:{port}"), "--data-dir"])
        .arg(data)
        .env("RUST_LOG", "warn")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    for _ in 0..200 {
        if tokio::net::TcpStream::connect(("127.0.0.1", port)).await.is_ok() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    child
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sigkill_mid_instantiation_then_restart_converges() {
    const CLUSTERS: usize = 50;
    // Slow clusters make the instantiation take long enough to be killed in the middle of it.
    let SlowInstantiation {
        sim,
        data,
        port,
        http,
        mut emco,
    } = start_slow_instantiation(CLUSTERS, 150).await;
    let total = CLUSTERS as u64 * 6;
    let partial = http
        .wait_for("?output=summary", Duration::from_secs(60), |a| {
            let applied = counts(a)["Applied"].as_u64().unwrap_or(0);
            applied > 0 && applied < total
        })
        .await;
    // Mid-way, every (app, cluster) with nothing applied yet says what it waits for: rsync (its batch queued or
    // under way), since the instantiation began.
    let detail = http
        .get(&format!("{DIG}/status?status=deployed&output=all"))
        .await
        .expect(200)
        .json();
    let mut queued = 0;
    for app in detail["apps"].as_array().unwrap() {
        for cluster in app["clusters"].as_array().unwrap() {
            let resources = cluster["resources"].as_array().unwrap();
            if resources.iter().all(|r| r["deployedStatus"] == "Pending") {
                queued += 1;
                assert!(cluster["waiting"]["for"].is_string(), "{cluster}");
                assert!(cluster["waiting"]["since"].is_string(), "{cluster}");
            }
        }
    }
    if queued > 0 {
        let message = detail["readiness"]["message"].as_str().unwrap_or_default();
        assert!(message.contains(" waits for "), "{message}");
    }
    emco.start_kill().unwrap(); // SIGKILL
    emco.wait().await.unwrap();
    assert_eq!(partial["status"], "Instantiating");

    let mut emco = start_emco_process(data.path(), port).await;
    let done = http
        .wait_for("?output=summary", Duration::from_secs(90), |a| {
            a["status"] == "Instantiated"
        })
        .await;
    assert_eq!(counts(&done), json!({"Applied": total}));
    let id = last_context(&done);
    for cluster in sim.clusters() {
        let (deployments, services, configmaps) = labelled(cluster, "emco/deployment-id").await;
        assert_eq!(
            (deployments.len(), services.len(), configmaps.len()),
            (3, 2, 1),
            "{}",
            cluster.name()
        );
        assert!(
            deployments
                .iter()
                .all(|d| d.metadata.labels.as_ref().unwrap()["emco/deployment-id"].starts_with(&id))
        );
    }
    emco.start_kill().unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn server_errors_are_retried_until_they_pass() {
    let sim = crate::support::vfw_clusters(2).await;
    let emco = Emco::start().await;
    onboard_vfw(&emco.http, &kubeconfigs(&sim)).await;
    let edge01 = &sim.clusters()[0];
    edge01
        .set_faults(Faults {
            error_rate: 1.0,
            error_code: 503,
            ..Faults::default()
        })
        .await
        .unwrap();
    emco.http
        .post_empty(&format!("{DIG}/instantiate"))
        .await
        .expect(202);
    let retrying = emco
        .http
        .wait_for("?status=deployed", SETTLE, |a| {
            a["deployedCounts"] == json!({"Applied": 6, "Retrying": 6})
        })
        .await;
    // The cluster answers, but with errors: connectivity is Retrying, and says why.
    for app in retrying["apps"].as_array().unwrap() {
        let edge01 = &app["clusters"][0];
        assert_eq!(edge01["connectivity"], "Retrying", "{edge01}");
        assert!(
            edge01["connectivityReason"]
                .as_str()
                .is_some_and(|r| r.starts_with("HTTP 503 Service Unavailable")),
            "{edge01}"
        );
        for resource in edge01["resources"].as_array().unwrap() {
            assert_eq!(resource["deployedStatus"], "Retrying", "{resource}");
        }
    }
    let detail = emco
        .http
        .get(&format!(
            "{DIG}/status?output=detail&cluster=vfw-cluster-provider%2Bedge01"
        ))
        .await
        .expect(200)
        .json();
    for app in detail["apps"].as_array().unwrap() {
        let edge01 = &app["clusters"][0];
        assert_eq!(edge01["connectivity"], "Retrying", "{edge01}");
        assert!(
            edge01["connectivity-reason"]
                .as_str()
                .is_some_and(|r| r.starts_with("HTTP 503 Service Unavailable")),
            "{edge01}"
        );
    }
    edge01.set_faults(Faults::default()).await.unwrap();
    let done = emco
        .http
        .wait_for("?output=summary", SETTLE, |a| a["status"] == "Instantiated")
        .await;
    assert_eq!(counts(&done), json!({"Applied": 12}));
    // Once through, the reason is gone.
    let detail = emco.http.get(&format!("{DIG}/status?output=detail")).await.json();
    for app in detail["apps"].as_array().unwrap() {
        for cluster in app["clusters"].as_array().unwrap() {
            assert!(cluster.get("connectivity-reason").is_none(), "{cluster}");
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cluster_that_answers_too_slowly_is_retrying_because_it_timed_out() {
    let sim = crate::support::vfw_clusters(1).await;
    let edge01 = &sim.clusters()[0];
    let emco = Emco::start_with(
        emco_store::Store::memory(),
        emco_rsync::RsyncConfig {
            request_timeout: Duration::from_millis(300),
            ..test_rsync_config()
        },
    )
    .await;
    onboard_apps(&emco.http, &kubeconfigs(&sim), &[("sink", vfw_chart("sink"))]).await;
    edge01
        .set_faults(Faults {
            latency_ms: 1500,
            ..Faults::default()
        })
        .await
        .unwrap();
    emco.http
        .post_empty(&format!("{DIG}/instantiate"))
        .await
        .expect(202);
    let retrying = emco
        .http
        .wait_for("?output=detail", SETTLE, |a| {
            a["apps"][0]["clusters"][0]["connectivity"] == "Retrying"
        })
        .await;
    let cluster = &retrying["apps"][0]["clusters"][0];
    assert_eq!(cluster["connectivity-reason"], "timed out", "{cluster}");
    assert!(
        cluster["resources"]
            .as_array()
            .unwrap()
            .iter()
            .all(|r| r["rsync-status"] == "Retrying"),
        "{cluster}"
    );
    edge01.set_faults(Faults::default()).await.unwrap();
    let done = emco
        .http
        .wait_for("?output=summary", SETTLE, |a| a["status"] == "Instantiated")
        .await;
    assert_eq!(counts(&done), json!({"Applied": 3}));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cluster_that_comes_back_is_retried_when_a_probe_finds_it_not_after_the_back_off() {
    let sim = crate::support::vfw_clusters(1).await;
    let edge01 = &sim.clusters()[0];
    // A retry after a minute: only the probe (every 200 ms here) can bring it within seconds.
    let emco = Emco::start_with(
        emco_store::Store::memory(),
        emco_rsync::RsyncConfig {
            unreachable_retry: Duration::from_secs(60),
            probe_interval: Duration::from_millis(200),
            ..test_rsync_config()
        },
    )
    .await;
    onboard_apps(&emco.http, &kubeconfigs(&sim), &[("sink", vfw_chart("sink"))]).await;
    edge01
        .set_faults(Faults {
            down: true,
            ..Faults::default()
        })
        .await
        .unwrap();
    emco.http
        .post_empty(&format!("{DIG}/instantiate"))
        .await
        .expect(202);
    let retrying = emco
        .http
        .wait_for("?output=detail", SETTLE, |a| {
            a["apps"][0]["clusters"][0]["connectivity"] == "Retrying"
        })
        .await;
    // The status says what the batch waits for, since when, and when it tries next at the latest (a minute on).
    let waiting = &retrying["apps"][0]["clusters"][0]["waiting"];
    let what = waiting["for"].as_str().unwrap_or_default();
    assert!(
        what.starts_with("the cluster to answer (")
            && what.contains("it is probed every 200 ms or so and tried again at once when it answers"),
        "{retrying}"
    );
    let since: jiff::Timestamp = waiting["since"].as_str().unwrap_or_default().parse().unwrap();
    let until: jiff::Timestamp = waiting["until"].as_str().unwrap_or_default().parse().unwrap();
    let ahead = until.duration_since(since).as_secs_f64();
    assert!(
        (40.0..=80.0).contains(&ahead),
        "the next attempt is {ahead} s after the first: {retrying}"
    );
    // Down for a while: the probes find nothing.
    tokio::time::sleep(Duration::from_secs(1)).await;
    let healed = std::time::Instant::now();
    edge01.set_faults(Faults::default()).await.unwrap();
    let done = emco
        .http
        .wait_for("?output=summary", Duration::from_secs(30), |a| {
            a["status"] == "Instantiated"
        })
        .await;
    assert_eq!(counts(&done), json!({"Applied": 3}));
    let took = healed.elapsed();
    assert!(
        took < Duration::from_secs(20),
        "Instantiated {took:?} after the cluster came back: the retry after a minute was waited out"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_429_with_retry_after_delays_the_next_attempt_by_that() {
    let sim = crate::support::vfw_clusters(1).await;
    let edge01 = &sim.clusters()[0];
    let emco = Emco::start().await;
    // One app on one cluster: one batch, so every write is an attempt (the bundle watcher only reads).
    onboard_apps(&emco.http, &kubeconfigs(&sim), &[("sink", vfw_chart("sink"))]).await;
    edge01
        .set_faults(Faults {
            error_rate: 1.0,
            error_code: 429,
            retry_after_seconds: Some(2),
            ..Faults::default()
        })
        .await
        .unwrap();
    emco.http
        .post_empty(&format!("{DIG}/instantiate"))
        .await
        .expect(202);
    let attempts = || {
        edge01
            .shared()
            .requests()
            .into_iter()
            .filter(|request| request.method != "GET")
            .map(|request| request.at)
            .collect::<Vec<_>>()
    };
    let deadline = tokio::time::Instant::now() + SETTLE;
    while attempts().len() < 3 {
        assert!(tokio::time::Instant::now() < deadline, "rsync stopped trying");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let detail = emco.http.get(&format!("{DIG}/status?output=detail")).await.json();
    let cluster = &detail["apps"][0]["clusters"][0];
    assert_eq!(cluster["connectivity"], "Retrying", "{detail}");
    let reason = cluster["connectivity-reason"].as_str().unwrap_or_default();
    assert!(
        reason.starts_with("HTTP 429 Too Many Requests") && reason.ends_with(", retrying after 2s"),
        "{reason}"
    );
    // What the batch waits for, and since when: the same since for every attempt.
    let waiting = &cluster["waiting"];
    assert!(
        waiting["for"].as_str().is_some_and(|what| {
            what.starts_with("the cluster to answer (HTTP 429 Too Many Requests")
                && what.ends_with(", retrying after 2s)")
        }),
        "{detail}"
    );
    let since = waiting["since"].as_str().unwrap_or_default().to_string();
    assert!(!since.is_empty(), "{detail}");
    // Until the next attempt: what the cluster asked for, after the last one.
    let until: jiff::Timestamp = waiting["until"].as_str().unwrap_or_default().parse().unwrap();
    assert!(until > since.parse::<jiff::Timestamp>().unwrap(), "{detail}");
    // Each attempt waited for what the cluster asked (the test's own back-off is 100 to 500 ms).
    let times = attempts();
    for pair in times.windows(2) {
        let gap = pair[1].duration_since(pair[0]);
        assert!(gap >= Duration::from_millis(1900), "retried after {gap:?}");
    }
    edge01.set_faults(Faults::default()).await.unwrap();
    let done = emco
        .http
        .wait_for("?output=summary", SETTLE, |a| a["status"] == "Instantiated")
        .await;
    assert_eq!(counts(&done), json!({"Applied": 3}));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_app_waits_for_the_app_it_depends_on() {
    let sim = crate::support::vfw_clusters(2).await;
    let emco = Emco::start().await;
    onboard_vfw(&emco.http, &kubeconfigs(&sim)).await;
    let ca = "/v2/projects/testvfw/composite-apps/compositevfw/v1";
    emco.http
        .post(&format!("{ca}/apps/firewall/dependency"), json!({"metadata": {"name": "after-packetgen"}, "spec": {"app": "packetgen", "opStatus": "Deployed", "wait": 0}}))
        .await
        .expect(201);
    emco.http.post_empty(&format!("{DIG}/approve")).await.expect(202);
    // packetgen cannot finish while edge02 is down, so firewall is applied nowhere, not even on edge01.
    sim.clusters()[1]
        .set_faults(Faults {
            down: true,
            ..Faults::default()
        })
        .await
        .unwrap();
    emco.http
        .post_empty(&format!("{DIG}/instantiate"))
        .await
        .expect(202);
    emco.http
        .wait_for("?app=packetgen&output=summary", SETTLE, |a| {
            counts(a) == json!({"Applied": 2, "Retrying": 2})
        })
        .await;
    tokio::time::sleep(Duration::from_millis(500)).await;
    assert_eq!(
        counts(
            &emco
                .http
                .get(&format!("{DIG}/status?app=firewall&output=summary"))
                .await
                .expect(200)
                .json()
        ),
        json!({"Pending": 2})
    );
    assert!(
        labelled(&sim.clusters()[0], "app=firewall").await.0.is_empty(),
        "firewall waits for packetgen"
    );
    // The status says so, per resource and in the DIG's readiness.
    let waiting = emco
        .http
        .get(&format!("{DIG}/status?app=firewall&output=all"))
        .await
        .expect(200)
        .json();
    let resource = &waiting["apps"][0]["clusters"][0]["resources"][0];
    let message = resource["message"].as_str().unwrap_or_default();
    assert!(
        message.starts_with("app firewall on edge0")
            && message.contains(" waits for app packetgen to be deployed (waiting "),
        "{waiting}"
    );
    let ready = emco
        .http
        .get(&format!("{DIG}/status?status=ready&readiness"))
        .await
        .expect(200)
        .json();
    // The DIG's message names the first wait, the cause of the others (the down cluster), and counts the rest.
    let readiness = ready["readiness"]["message"].as_str().unwrap_or_default();
    assert!(
        readiness.contains("app packetgen on edge02 waits for the cluster to answer (connection refused")
            && readiness.contains(" more waiting)"),
        "{readiness}"
    );
    sim.clusters()[1].set_faults(Faults::default()).await.unwrap();
    let done = emco
        .http
        .wait_for("?output=summary", SETTLE, |a| a["status"] == "Instantiated")
        .await;
    assert_eq!(counts(&done), json!({"Applied": 12}));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn crds_are_applied_first_and_waited_for() {
    let sim = crate::support::vfw_clusters(1).await;
    let emco = Emco::start().await;
    let widgets = emco_helm::archive::write_tgz(&[
        ("widgets/Chart.yaml", b"apiVersion: v2\nname: widgets\nversion: 0.1.0\n"),
        // The custom resource's file sorts before the CRD's: rsync must still apply the CRD first.
        ("widgets/templates/a-widget.yaml", b"apiVersion: example.com/v1\nkind: Widget\nmetadata:\n  name: w1\nspec:\n  size: 3\n"),
        ("widgets/templates/crd.yaml", b"apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata:\n  name: widgets.example.com\nspec:\n  group: example.com\n  scope: Namespaced\n  names:\n    plural: widgets\n    kind: Widget\n  versions:\n  - name: v1\n    served: true\n    storage: true\n    schema:\n      openAPIV3Schema:\n        type: object\n        x-kubernetes-preserve-unknown-fields: true\n"),
    ]);
    onboard_apps(&emco.http, &kubeconfigs(&sim), &[("widgets", widgets)]).await;
    emco.http
        .post_empty(&format!("{DIG}/instantiate"))
        .await
        .expect(202);
    let done = emco
        .http
        .wait_for("?output=summary", SETTLE, |a| a["status"] != "Instantiating")
        .await;
    assert_eq!(
        (done["status"].as_str(), counts(&done)),
        (Some("Instantiated"), json!({"Applied": 2}))
    );
    let resource =
        ApiResource::from_gvk_with_plural(&GroupVersionKind::gvk("example.com", "v1", "Widget"), "widgets");
    let widget =
        Api::<DynamicObject>::namespaced_with(sim.clusters()[0].client().unwrap(), "default", &resource)
            .get("w1")
            .await
            .unwrap();
    assert_eq!(widget.data["spec"]["size"], 3);
    assert!(widget.metadata.labels.unwrap()["emco/deployment-id"].ends_with("-widgets"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stored_exec_kubeconfig_fails_the_clusters_resources_and_never_runs() {
    use emco_appcontext::{Catalog, Kind, ResourcePath};

    let sim = crate::support::vfw_clusters(2).await;
    let store = emco_store::Store::memory();
    let emco = Emco::start_with(store.clone(), test_rsync_config()).await;
    onboard_vfw(&emco.http, &kubeconfigs(&sim)).await;
    // A kubeconfig stored before the policy existed: written into the catalog directly, as an older emco would
    // have accepted it.
    let dir = tempfile::tempdir().unwrap();
    let marker = dir.path().join("marker");
    let edge01 = &sim.clusters()[0];
    let hostile = format!(
        "apiVersion: v1\nkind: Config\nclusters:\n- name: edge01\n  cluster:\n    server: {url}\ncontexts:\n- name: edge01\n  context:\n    cluster: edge01\n    user: admin\ncurrent-context: edge01\nusers:\n- name: admin\n  user:\n    exec:\n      apiVersion: client.authentication.k8s.io/v1\n      command: /bin/sh\n      args: [\"-c\", \"touch {marker}\"]\n",
        url = edge01.url(),
        marker = marker.display()
    );
    let catalog = Catalog::new(store.clone());
    let path = ResourcePath::new(
        Kind::Cluster,
        vec!["vfw-cluster-provider".into(), edge01.name().into()],
    );
    let body = catalog.get(&path).await.unwrap().body;
    catalog
        .upsert(&path, &body, Some(hostile.as_bytes()), Vec::new())
        .await
        .unwrap();

    emco.http
        .post_empty(&format!("{DIG}/instantiate"))
        .await
        .expect(202);
    let done = emco
        .http
        .wait_for("?output=summary", SETTLE, |a| a["status"] == "InstantiateFailed")
        .await;
    // edge02 is applied; every resource of edge01 failed.
    assert_eq!(counts(&done), json!({"Applied": 6, "Failed": 6}), "{done}");
    let edge01_summary = emco
        .http
        .get(&format!(
            "{DIG}/status?output=summary&cluster=vfw-cluster-provider%2Bedge01"
        ))
        .await
        .expect(200)
        .json();
    assert_eq!(counts(&edge01_summary), json!({"Failed": 6}), "{edge01_summary}");
    let detail = emco.http.get(&format!("{DIG}/status?app=sink&cluster=vfw-cluster-provider%2Bedge01&resource=sink-configmap&output=detail")).await.expect(200).json();
    let resource = &detail["apps"][0]["clusters"][0]["resources"][0];
    assert_eq!(resource["rsync-status"], "Failed", "{detail}");
    assert_eq!(
        resource["message"],
        "cluster 'edge01': kubeconfig user 'admin': exec credential plugins are not allowed"
    );
    // Nothing reached edge01 and the command never ran.
    assert!(labelled(edge01, "emco/deployment-id").await.0.is_empty());
    assert!(!marker.exists(), "the exec command ran");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn terminate_stop_instantiate_back_to_back_applies_a_new_instance() {
    let sim = crate::support::vfw_clusters(2).await;
    let emco = Emco::start().await;
    onboard_vfw(&emco.http, &kubeconfigs(&sim)).await;
    emco.http
        .post_empty(&format!("{DIG}/instantiate"))
        .await
        .expect(202);
    let first = emco
        .http
        .wait_for("?output=summary", SETTLE, |a| a["status"] == "Instantiated")
        .await;
    let first_id = last_context(&first);
    // edge02 unreachable keeps the termination running, so there is one to stop.
    let edge02 = &sim.clusters()[1];
    edge02
        .set_faults(Faults {
            down: true,
            ..Faults::default()
        })
        .await
        .unwrap();
    for op in ["terminate", "stop", "instantiate"] {
        emco.http.post_empty(&format!("{DIG}/{op}")).await.expect(202);
    }
    edge02.set_faults(Faults::default()).await.unwrap();
    let done = emco
        .http
        .wait_for("?output=summary", SETTLE, |a| a["status"] == "Instantiated")
        .await;
    let second_id = last_context(&done);
    assert_ne!(second_id, first_id);
    assert_eq!(counts(&done), json!({"Applied": 12}));
    let actions: Vec<&str> = done["state"]["Actions"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|a| a["State"].as_str())
        .collect();
    assert!(
        actions.ends_with(&["Instantiated", "Terminated", "TerminateStopped", "Instantiated"]),
        "{actions:?}"
    );
    // Every cluster holds the new instance's objects.
    for cluster in sim.clusters() {
        let (deployments, services, configmaps) = labelled(cluster, "emco/deployment-id").await;
        assert_eq!(
            (deployments.len(), services.len(), configmaps.len()),
            (3, 2, 1),
            "{}",
            cluster.name()
        );
        for deployment in &deployments {
            let label = &deployment.metadata.labels.as_ref().unwrap()["emco/deployment-id"];
            assert!(label.starts_with(&second_id), "{}: {label}", cluster.name());
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn emco_serve_names_the_emco_holding_its_store_and_restarts_at_once_after_sigkill() {
    let data = tempfile::tempdir().unwrap();
    let port = free_port();
    let http = Http {
        address: ([127, 0, 0, 1], port).into(),
    };
    let mut first = start_emco_process(data.path(), port).await;
    http.post("/v2/cluster-providers", json!({"metadata": {"name": "kept"}}))
        .await
        .expect(201);
    let first_pid = first.id().unwrap();

    // A second emco on the same data directory waits a little, then says who holds the store.
    let second = tokio::process::Command::new(env!("CARGO_BIN_EXE_emco"))
        .args([
            "serve",
            "--listen",
            &format!("127.0.0.1:{}", free_port()),
            "--data-dir",
        ])
        .arg(data.path())
        .env("RUST_LOG", "off")
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .output();
    let second = tokio::time::timeout(Duration::from_secs(60), second)
        .await
        .expect("the second emco gives up")
        .unwrap();
    assert!(!second.status.success());
    let stderr = String::from_utf8_lossy(&second.stderr);
    assert!(
        stderr.contains(&format!(
            "the store in {} is in use by another emco (pid {first_pid})",
            data.path().display()
        )),
        "{stderr}"
    );

    // SIGKILL, and a new emco on the same directory and port at once, before the old one is reaped.
    first.start_kill().unwrap();
    let mut restarted = start_emco_process(data.path(), port).await;
    first.wait().await.unwrap();
    // Until the old process was reaped, its socket could still answer the start-up probe: probe the new one.
    let deadline = tokio::time::Instant::now() + Duration::from_secs(30);
    while tokio::net::TcpStream::connect(http.address).await.is_err() {
        assert!(
            tokio::time::Instant::now() < deadline,
            "the restarted emco does not serve"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    http.get("/v2/cluster-providers/kept").await.expect(200);
    let pid_file = data.path().join("emco.pid");
    assert_eq!(
        std::fs::read_to_string(&pid_file).unwrap().trim(),
        restarted.id().unwrap().to_string()
    );

    // A clean exit removes the pid file.
    let terminated = std::process::Command::new("kill")
        .args(["-TERM", &restarted.id().unwrap().to_string()])
        .status()
        .unwrap();
    assert!(terminated.success());
    let exit = tokio::time::timeout(Duration::from_secs(30), restarted.wait())
        .await
        .expect("emco stops on SIGTERM")
        .unwrap();
    assert!(exit.success(), "{exit:?}");
    assert!(!pid_file.exists(), "the pid file outlived a clean exit");
}
