//! A direct cluster and a GitOps cluster side by side (EMCO's `examples/test-flux` arrangement): the vFW on both,
//! emco given no kubeconfig for the GitOps one and never opening a connection to it (asserted from its request
//! log); the GitOps cluster plays Flux (kubesim's `flux`) from a real Git server (`git http-backend`) and runs the
//! monitor that commits its status to the status branch; both are Ready in one status answer; an update is one
//! commit of what changed, applied by the cluster's Flux; a terminate leaves the repository without the context's
//! folder.

use std::time::Duration;

use emco_git::{GitServer, Limits, Mirror};
use kube::api::{Api, DynamicObject, PostParams};
use kube::core::{ApiResource, GroupVersionKind};
use serde_json::json;

use crate::support::*;

const TOKEN: &str = "fleet-token";
const PROVIDER: &str = "/v2/cluster-providers/vfw-cluster-provider";
const GITOPS_CLUSTER: &str = "vfw-cluster-provider+edge02";

/// `git log --format=%s main` of the served repository, newest first.
fn git_log(server: &GitServer) -> Vec<String> {
    let output = std::process::Command::new("git")
        .arg("--git-dir")
        .arg(server.repository_dir("fleet"))
        .args(["log", "--format=%s", "main"])
        .output()
        .unwrap();
    String::from_utf8_lossy(&output.stdout)
        .lines()
        .map(str::to_string)
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_direct_and_a_gitops_cluster_run_the_vfw_side_by_side() {
    let dir = tempfile::tempdir().unwrap();
    let Some((server, url)) = GitServer::start_if_available(&dir.path().join("served"), TOKEN, "fleet").await
    else {
        return;
    };
    let sim = vfw_clusters(2).await;
    let (edge01, edge02) = (&sim.clusters()[0], &sim.clusters()[1]);
    let _direct_monitor = start_monitor(edge01);

    // The GitOps cluster as its owner set it up: the bundles' CRD (the monitor's chart), Flux bootstrapped on
    // clusters/<provider>+<cluster>, the monitor committing status to Git — all from inside the cluster.
    let inside = edge02.in_cluster_client();
    Api::<DynamicObject>::all_with(
        inside.clone(),
        &ApiResource::from_gvk_with_plural(
            &GroupVersionKind::gvk("apiextensions.k8s.io", "v1", "CustomResourceDefinition"),
            "customresourcedefinitions",
        ),
    )
    .create(
        &PostParams::default(),
        &serde_json::from_value(emco_k8s::rbs_crd()).unwrap(),
    )
    .await
    .unwrap();
    let flux = kubesim::flux::FluxConfig {
        remote: server.remote("fleet", "main", "edge02"),
        path: format!("clusters/{GITOPS_CLUSTER}"),
        interval: Duration::from_millis(300),
        mirror_dir: dir.path().join("flux"),
    };
    let _flux = tokio::spawn(kubesim::flux::run(inside.clone(), flux, std::future::pending()));
    let _monitor = tokio::spawn(emco_monitor::run(
        inside.clone(),
        quick_monitor_config(),
        std::future::pending(),
    ));
    let git_status = emco_monitor::git::GitStatusConfig {
        remote: server.remote("fleet", "main", "edge02"),
        cluster: GITOPS_CLUSTER.into(),
        interval: Duration::from_millis(300),
        mirror_dir: dir.path().join("monitor"),
    };
    let _publisher = tokio::spawn(emco_monitor::git::publish_status(
        inside,
        git_status,
        std::future::pending(),
    ));

    // emco: the vFW on the direct cluster (label "edge"), then the GitOps cluster with the same label, as EMCO's
    // emcoctl sends it (its values file in place of a kubeconfig).
    let emco = Emco::start().await;
    onboard_vfw(&emco.http, &[(edge01.name().to_string(), edge01.kubeconfig())]).await;
    for (name, kv) in [
        (
            "GitObjectFluxRepo",
            json!([{"userName": "emco"}, {"gitToken": TOKEN}, {"repoName": "fleet"},
            {"branch": "main"}, {"url": url}]),
        ),
        (
            "GitObjectFluxRes",
            json!([{"timeOut": "60"}, {"syncInterval": "1"}, {"retryInterval": "1"}]),
        ),
    ] {
        emco.http
            .post(
                &format!("{PROVIDER}/cluster-sync-objects"),
                json!({"metadata": {"name": name}, "spec": {"kv": kv}}),
            )
            .await
            .expect(201);
    }
    emco.http
        .post_form(
            &format!("{PROVIDER}/clusters"),
            json!({"metadata": {"name": "edge02"}, "spec": {"gitOps": {"gitOpsType": "fluxcd",
                "gitOpsReferenceObject": "GitObjectFluxRepo", "gitOpsResourceObject": "GitObjectFluxRes"}}}),
            b"PackagesPath: output\n",
        )
        .await
        .expect(201);
    emco.http
        .post(
            &format!("{PROVIDER}/clusters/edge02/labels"),
            json!({"clusterLabel": "edge"}),
        )
        .await
        .expect(201);
    let outside_before = edge02
        .shared()
        .requests()
        .iter()
        .filter(|request| !request.in_cluster)
        .count();

    emco.http
        .post_empty(&format!("{DIG}/instantiate"))
        .await
        .expect(202);
    let ready = emco
        .http
        .wait_for(
            "?status=ready&output=summary",
            Duration::from_secs(90),
            |answer| answer["deployedStatus"] == "Instantiated" && answer["readyStatus"] == "Ready",
        )
        .await;
    let status = emco.http.get(&format!("{DIG}/status")).await.expect(200).json();
    let clusters: Vec<String> = status["apps"][0]["clusters"]
        .as_array()
        .unwrap()
        .iter()
        .map(|cluster| {
            format!(
                "{}+{}",
                cluster["cluster-provider"].as_str().unwrap(),
                cluster["cluster"].as_str().unwrap()
            )
        })
        .collect();
    assert!(
        clusters.contains(&GITOPS_CLUSTER.to_string()),
        "{clusters:?} {ready}"
    );
    assert_eq!(
        edge02
            .shared()
            .requests()
            .iter()
            .filter(|request| !request.in_cluster)
            .count(),
        outside_before,
        "emco never opens a connection to the GitOps cluster"
    );

    // An update (the sink's replicas): one commit, of the sink's Deployment only, in the same context folder; the
    // cluster's Flux applies it.
    let commits_before = git_log(&server);
    crate::updates::put_dig(&emco.http, 2, None).await;
    emco.http.post_empty(&format!("{DIG}/update")).await.expect(202);
    let deployments = Api::<DynamicObject>::namespaced_with(
        edge02.in_cluster_client(),
        "default",
        &ApiResource::from_gvk_with_plural(&GroupVersionKind::gvk("apps", "v1", "Deployment"), "deployments"),
    );
    let deadline = tokio::time::Instant::now() + Duration::from_secs(60);
    while deployments.get("fw0-sink").await.unwrap().data["spec"]["replicas"] != 2 {
        assert!(
            tokio::time::Instant::now() < deadline,
            "Flux did not apply the update"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let new_commits: Vec<String> = git_log(&server)
        .into_iter()
        .filter(|commit| !commits_before.contains(commit))
        .collect();
    let updates: Vec<&String> = new_commits
        .iter()
        .filter(|commit| commit.contains(" update "))
        .collect();
    assert_eq!(updates.len(), 1, "only the sink changed: {new_commits:?}");
    assert!(updates[0].contains("app sink"), "{updates:?}");

    // Terminated: the repository keeps no context folder for the cluster.
    emco.http
        .post_empty(&format!("{DIG}/terminate"))
        .await
        .expect(202);
    emco.http
        .wait_for(
            "?status=ready&output=summary",
            Duration::from_secs(60),
            |answer| answer["deployedStatus"] == "Terminated",
        )
        .await;
    let (reader, reader_remote) = (
        dir.path().join("reader"),
        server.remote("fleet", "main", "reader"),
    );
    let left = tokio::task::spawn_blocking(move || {
        Mirror::open(&reader, reader_remote, Limits::default())
            .unwrap()
            .read(&format!("clusters/{GITOPS_CLUSTER}/context"))
            .unwrap()
            .files
    })
    .await
    .unwrap();
    assert!(left.is_empty(), "{left:?}");
}
