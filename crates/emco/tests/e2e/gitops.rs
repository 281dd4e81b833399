//! A direct cluster and a GitOps cluster side by side (EMCO's `examples/test-flux` arrangement): the vFW on both,
//! emco given no kubeconfig for the GitOps one and never opening a connection to it (asserted from its request
//! log); the GitOps cluster plays Flux (kubesim's `flux`) from a real Git server (`git http-backend`) and runs the
//! monitor that commits its status to the status branch; both are Ready in one status answer; an update is one
//! commit of what changed, applied by the cluster's Flux; a terminate leaves the repository without the context's
//! folder. emco killed (SIGKILL) after the server took its push but before it heard so commits nothing twice and
//! loses nothing after its restart; a stop while a push is under way keeps what was committed, shown as Applied.
//! A level-1 logical cloud on a GitOps cluster: its objects go through Git with the service account its apps are
//! applied as (no certificate request), and the DIG on it gets a GitRepository and Kustomization in the cloud's
//! namespace naming that account. A status config travels in the bundle's file and its value comes back.

use std::path::Path;
use std::time::Duration;

use emco_git::{GitServer, Limits, Mirror};
use kube::api::{Api, DynamicObject};
use kube::core::{ApiResource, GroupVersionKind};
use serde_json::{Value as Json, json};

use crate::support::*;

const GITOPS_CLUSTER: &str = "vfw-cluster-provider+edge02";
const SETTLE: Duration = Duration::from_secs(60);

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

/// The files under `folder` of the served repository's `main`, read by a mirror of its own under `dir`.
async fn repository_files(server: &GitServer, dir: &Path, folder: &str) -> Vec<String> {
    let (reader, reader_remote, folder) = (
        dir.join("reader"),
        server.remote("fleet", "main", "reader"),
        folder.to_string(),
    );
    tokio::task::spawn_blocking(move || {
        Mirror::open(&reader, reader_remote, Limits::default())
            .unwrap()
            .read(&folder)
            .unwrap()
            .files
            .into_iter()
            .map(|(path, _)| path)
            .collect()
    })
    .await
    .unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_direct_and_a_gitops_cluster_run_the_vfw_side_by_side() {
    let dir = tempfile::tempdir().unwrap();
    let Some((server, url)) =
        GitServer::start_if_available(&dir.path().join("served"), GIT_TOKEN, "fleet").await
    else {
        return;
    };
    let sim = vfw_clusters(2).await;
    let (edge01, edge02) = (&sim.clusters()[0], &sim.clusters()[1]);
    let _direct_monitor = start_monitor(edge01);
    let _agents = start_gitops_agents(
        &server,
        edge02,
        dir.path(),
        Duration::from_millis(300),
        Duration::from_millis(300),
    )
    .await;

    // emco: the vFW on the direct cluster (label "edge"), then the GitOps cluster with the same label, as EMCO's
    // emcoctl sends it (its values file in place of a kubeconfig).
    let emco = Emco::start().await;
    emco.http
        .post(
            "/v2/status-configs",
            json!({"metadata": {"name": "deployments"},
                "spec": {"targetType": {"group": "apps", "version": "v1", "kind": "Deployment"},
                         "statusCollection": "Enabled", "statusPath": ".status.readyReplicas",
                         "readyCondition": "Available", "rawStatus": false}}),
        )
        .await
        .expect(201);
    onboard_vfw(&emco.http, &[(edge01.name().to_string(), edge01.kubeconfig())]).await;
    register_gitops_sync_objects(&emco.http, &url).await;
    register_gitops_cluster(&emco.http, "edge02").await;
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
    // The status config travelled in the bundle's file to the GitOps cluster's monitor, and its answer back.
    let ready_answer = emco
        .http
        .get(&format!("{DIG}/status?status=ready&app=sink"))
        .await
        .expect(200)
        .json();
    let remote: Vec<(String, Json)> = crate::status_configs::sink_deployments(&ready_answer)
        .into_iter()
        .map(|(cluster, deployment)| (cluster, deployment["statusRemote"].clone()))
        .collect();
    assert_eq!(
        remote,
        [("edge01".to_string(), json!(1)), ("edge02".to_string(), json!(1))],
        "{ready_answer}"
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
    let left = repository_files(&server, dir.path(), &format!("clusters/{GITOPS_CLUSTER}/context")).await;
    assert!(left.is_empty(), "{left:?}");
}

/// One simulated cluster, `edge01`, set up by its owner as a GitOps cluster of the repository `fleet` on a Git
/// server of its own (see [`start_gitops_agents`]); `None` (the test skipped) without git.
struct GitOpsSite {
    dir: tempfile::TempDir,
    server: GitServer,
    url: String,
    sim: kubesim::Simulator,
    _agents: GitOpsAgents,
}

impl GitOpsSite {
    async fn start() -> Option<Self> {
        let dir = tempfile::tempdir().unwrap();
        let (server, url) =
            GitServer::start_if_available(&dir.path().join("served"), GIT_TOKEN, "fleet").await?;
        let sim = vfw_clusters(1).await;
        let agents = start_gitops_agents(
            &server,
            &sim.clusters()[0],
            dir.path(),
            Duration::from_millis(300),
            Duration::from_millis(300),
        )
        .await;
        Some(Self {
            dir,
            server,
            url,
            sim,
            _agents: agents,
        })
    }
}

/// The subjects of `main`'s commits that emco made (`emco: …`), newest first.
fn emco_commits(server: &GitServer) -> Vec<String> {
    git_log(server)
        .into_iter()
        .filter(|subject| subject.starts_with("emco: "))
        .collect()
}

/// Waits until `server` took a push of emco's whose answer it holds.
async fn until_a_push_is_held(server: &GitServer) {
    let deadline = tokio::time::Instant::now() + Duration::from_secs(60);
    while server.held_pushes() == 0 {
        assert!(tokio::time::Instant::now() < deadline, "no push arrived");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn emco_killed_between_its_push_and_the_answer_commits_nothing_twice_and_loses_nothing() {
    let Some(GitOpsSite {
        dir,
        server,
        url,
        sim: _sim,
        _agents,
    }) = GitOpsSite::start().await
    else {
        return;
    };
    let data = dir.path().join("emco");
    let port = crate::rsync::free_port();
    let http = Http {
        address: ([127, 0, 0, 1], port).into(),
    };
    let mut emco = crate::rsync::start_emco_process(&data, port).await;
    onboard_vfw(&http, &[]).await;
    register_gitops_sync_objects(&http, &url).await;
    register_gitops_cluster(&http, "edge01").await;

    // The server takes emco's first push, and emco is killed before it hears so.
    server.hold_answers_to_pushes_of(Some("emco"));
    http.post_empty(&format!("{DIG}/instantiate")).await.expect(202);
    until_a_push_is_held(&server).await;
    emco.start_kill().unwrap(); // SIGKILL
    emco.wait().await.unwrap();
    let taken = emco_commits(&server);
    assert!(!taken.is_empty(), "the held push was taken");
    server.hold_answers_to_pushes_of(None);

    let mut emco = crate::rsync::start_emco_process(&data, port).await;
    let ready = http
        .wait_for(
            "?status=ready&output=summary",
            Duration::from_secs(90),
            |answer| answer["deployedStatus"] == "Instantiated" && answer["readyStatus"] == "Ready",
        )
        .await;
    assert_eq!(counts(&http.summary().await), json!({"Applied": 6}), "{ready}");
    // Each app's commit once: the one taken before the kill was not made again, none was lost.
    let commits = emco_commits(&server);
    let mut apps: Vec<&str> = commits
        .iter()
        .filter_map(|subject| subject.strip_prefix("emco: instantiate app "))
        .filter_map(|rest| rest.split(' ').next())
        .collect();
    apps.sort_unstable();
    assert_eq!(apps, ["firewall", "packetgen", "sink"], "{commits:?}");
    assert_eq!(commits.len(), 3, "{commits:?}");
    let files = repository_files(
        &server,
        dir.path(),
        "clusters/vfw-cluster-provider+edge01/context",
    )
    .await;
    for app in ["firewall", "packetgen", "sink"] {
        assert!(
            files.iter().any(|path| path.contains(&format!("/app/{app}/"))),
            "{app}: {files:?}"
        );
    }
    emco.start_kill().unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stop_while_a_push_is_under_way_keeps_what_was_committed_and_terminate_removes_it() {
    let Some(GitOpsSite {
        dir,
        server,
        url,
        sim: _sim,
        _agents,
    }) = GitOpsSite::start().await
    else {
        return;
    };
    let emco = Emco::start().await;
    onboard_vfw(&emco.http, &[]).await;
    register_gitops_sync_objects(&emco.http, &url).await;
    register_gitops_cluster(&emco.http, "edge01").await;

    server.hold_answers_to_pushes_of(Some("emco"));
    emco.http
        .post_empty(&format!("{DIG}/instantiate"))
        .await
        .expect(202);
    until_a_push_is_held(&server).await;
    emco.http.post_empty(&format!("{DIG}/stop")).await.expect(202);
    server.hold_answers_to_pushes_of(None);
    let stopped = emco
        .http
        .wait_for("?output=summary", SETTLE, |a| a["status"] != "Instantiating")
        .await;
    assert_eq!(stopped["status"], "InstantiateFailed", "{stopped}");
    // What the status says was applied is exactly what the repository holds: each app Applied has its folder, the
    // others have none, and nothing is committed after the stop.
    let detail = emco
        .http
        .get(&format!("{DIG}/status?output=detail"))
        .await
        .expect(200)
        .json();
    let files = repository_files(
        &server,
        dir.path(),
        "clusters/vfw-cluster-provider+edge01/context",
    )
    .await;
    let mut applied_apps = 0;
    for app in detail["apps"].as_array().unwrap() {
        let name = app["name"].as_str().unwrap();
        let resources = app["clusters"][0]["resources"].as_array().unwrap();
        let applied = resources.iter().all(|r| r["rsync-status"] == "Applied");
        let committed = files.iter().any(|path| path.contains(&format!("/app/{name}/")));
        assert_eq!(applied, committed, "{name}: {files:?} {detail}");
        applied_apps += usize::from(applied);
    }
    assert!(applied_apps >= 1, "the push under way was kept: {detail}");
    let commits = emco_commits(&server);
    tokio::time::sleep(Duration::from_millis(1500)).await;
    assert_eq!(emco_commits(&server), commits, "stopped means stopped");

    emco.http
        .post_empty(&format!("{DIG}/terminate"))
        .await
        .expect(202);
    emco.http
        .wait_for("?output=summary", SETTLE, |a| a["status"] == "Terminated")
        .await;
    let left = repository_files(&server, dir.path(), "clusters/vfw-cluster-provider+edge01").await;
    assert!(left.iter().all(|path| !path.contains("/context/")), "{left:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_level1_logical_cloud_on_a_gitops_cluster_is_applied_as_its_service_account() {
    use crate::logical_clouds::{LC, create_level1, wait_lc};
    let Some(GitOpsSite {
        dir: _dir,
        server: _server,
        url,
        sim,
        _agents,
    }) = GitOpsSite::start().await
    else {
        return;
    };
    let edge01 = &sim.clusters()[0];
    let emco = Emco::start().await;
    onboard_apps_on(&emco.http, &[], &[("sink", vfw_chart("sink"))], "lc1").await;
    register_gitops_sync_objects(&emco.http, &url).await;
    register_gitops_cluster(&emco.http, "edge01").await;
    create_level1(&emco.http).await;
    emco.http
        .post_empty(&format!("{LC}/instantiate"))
        .await
        .expect(202);
    wait_lc(&emco.http, |a| a["deployedStatus"] == "Instantiated").await;

    // The cloud's objects reached the cluster through Git: its namespace and the service account Flux applies the
    // cloud's apps as, bound to the cloud's role; no certificate request (nobody there signs it for emco).
    let inside = edge01.in_cluster_client();
    assert_level1_service_account_objects(&inside, SETTLE).await;
    let api = |version: &str, kind: &str, plural: &str, namespace: Option<&str>| {
        dynamic_api(&inside, version, kind, plural, namespace)
    };

    // The DIG on the cloud: its Kustomization applies it as that service account, from a GitRepository in the
    // cloud's namespace; the sink runs there and is Ready.
    emco.http
        .post_empty(&format!("{DIG}/instantiate"))
        .await
        .expect(202);
    emco.http
        .wait_for("?status=ready&output=summary", SETTLE, |answer| {
            answer["deployedStatus"] == "Instantiated" && answer["readyStatus"] == "Ready"
        })
        .await;
    api("apps/v1", "Deployment", "deployments", Some("tenant1"))
        .get("fw0-sink")
        .await
        .unwrap();
    let kustomizations: Vec<DynamicObject> = api(
        "kustomize.toolkit.fluxcd.io/v1beta2",
        "Kustomization",
        "kustomizations",
        Some("tenant1"),
    )
    .list(&Default::default())
    .await
    .unwrap()
    .items;
    assert_eq!(kustomizations.len(), 1, "{kustomizations:?}");
    let spec = &kustomizations[0].data["spec"];
    assert_eq!(spec["serviceAccountName"], "lc1-sa", "{spec}");
    assert_eq!(spec["sourceRef"]["kind"], "GitRepository", "{spec}");
    api(
        "source.toolkit.fluxcd.io/v1beta1",
        "GitRepository",
        "gitrepositories",
        Some("tenant1"),
    )
    .get(spec["sourceRef"]["name"].as_str().unwrap())
    .await
    .unwrap();
}
