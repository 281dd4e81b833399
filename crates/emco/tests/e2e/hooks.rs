//! Helm hooks and chart CRDs against a kubesim cluster: a chart with a `crds/` folder, a custom resource, a
//! `pre-install` Job, a `post-install` ConfigMap hook, a `post-delete` Job and a `test` Pod. The order of what
//! happened in the cluster is read from watch events, ordered by the cluster's resource versions. Also: a failing
//! hook, a stop while rsync waits for a hook, and `emco serve` killed while it waits for one.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures::StreamExt;
use kube::api::{Api, DynamicObject, WatchEvent, WatchParams};
use kube::core::{ApiResource, GroupVersionKind};
use kubesim::{Faults, SimCluster, Simulator};
use serde_json::{Value as Json, json};

use crate::support::*;

const SETTLE: Duration = Duration::from_secs(30);

const CRD: &str = "apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: widgets.example.com
spec:
  group: example.com
  scope: Namespaced
  names:
    plural: widgets
    singular: widget
    kind: Widget
  versions:
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema:
        type: object
        x-kubernetes-preserve-unknown-fields: true
";

fn job(name: &str, hook: &str, weight: &str, pod_annotations: &str) -> String {
    format!(
        "apiVersion: batch/v1
kind: Job
metadata:
  name: {name}
  annotations:
    helm.sh/hook: {hook}
    helm.sh/hook-weight: \"{weight}\"
spec:
  backoffLimit: 0
  template:
    metadata:
      annotations: {pod_annotations}
    spec:
      restartPolicy: Never
      containers:
      - name: run
        image: busybox
"
    )
}

/// The chart; `fault` is a kubesim fault for its pre-install Job's pod (`Error` fails it, `CrashLoopBackOff`
/// keeps it running forever).
fn chart(fault: Option<&str>) -> Vec<u8> {
    let pod_annotations = match fault {
        Some(fault) => format!("{{\"kubesim.io/fail\": \"{fault}\"}}"),
        None => "{}".to_string(),
    };
    let pre_install = job("hooks-migrate", "pre-install", "-5", &pod_annotations);
    let post_delete = job("hooks-cleanup", "post-delete", "0", "{}");
    emco_helm::archive::write_tgz(&[
        ("hooks/Chart.yaml", b"apiVersion: v2\nname: hooks\nversion: 0.1.0\n"),
        ("hooks/crds/widgets.yaml", CRD.as_bytes()),
        (
            "hooks/templates/widget.yaml",
            b"apiVersion: example.com/v1\nkind: Widget\nmetadata:\n  name: w1\nspec:\n  size: 3\n",
        ),
        (
            "hooks/templates/deployment.yaml",
            b"apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: hooks-web\nspec:\n  replicas: 1\n  selector:\n    matchLabels:\n      app: hooks-web\n  template:\n    metadata:\n      labels:\n        app: hooks-web\n    spec:\n      containers:\n      - name: web\n        image: nginx\n",
        ),
        ("hooks/templates/pre-install-job.yaml", pre_install.as_bytes()),
        (
            "hooks/templates/post-install-configmap.yaml",
            b"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: hooks-ready\n  annotations:\n    helm.sh/hook: post-install\n    helm.sh/hook-delete-policy: hook-succeeded\ndata:\n  ready: \"yes\"\n",
        ),
        ("hooks/templates/post-delete-job.yaml", post_delete.as_bytes()),
        (
            "hooks/templates/test-pod.yaml",
            b"apiVersion: v1\nkind: Pod\nmetadata:\n  name: hooks-smoke\n  annotations:\n    helm.sh/hook: test-success\nspec:\n  restartPolicy: Never\n  containers:\n  - name: smoke\n    image: busybox\n",
        ),
    ])
}

/// One watch event as the cluster sent it.
#[derive(Debug, Clone)]
struct Seen {
    kind: &'static str,
    action: &'static str,
    name: String,
    revision: u64,
    object: Json,
}

/// Watch events of several kinds, in one log.
#[derive(Clone, Default)]
struct Recorder(Arc<Mutex<Vec<Seen>>>);

impl Recorder {
    /// Starts watching `plural` of `group/version` (namespaced in `default`, or cluster-wide) and returns once the
    /// watch is established.
    async fn watch(
        &self,
        cluster: &SimCluster,
        gvk: (&str, &str, &'static str),
        plural: &str,
        namespaced: bool,
    ) {
        let resource = ApiResource::from_gvk_with_plural(&GroupVersionKind::gvk(gvk.0, gvk.1, gvk.2), plural);
        let client = cluster.client().unwrap();
        let api: Api<DynamicObject> = if namespaced {
            Api::namespaced_with(client, "default", &resource)
        } else {
            Api::all_with(client, &resource)
        };
        let mut stream = api
            .watch(&WatchParams::default().timeout(120), "0")
            .await
            .unwrap()
            .boxed();
        let log = self.0.clone();
        let kind = gvk.2;
        tokio::spawn(async move {
            while let Some(Ok(event)) = stream.next().await {
                let (action, object) = match event {
                    WatchEvent::Added(object) => ("ADDED", object),
                    WatchEvent::Modified(object) => ("MODIFIED", object),
                    WatchEvent::Deleted(object) => ("DELETED", object),
                    _ => continue,
                };
                let revision = object
                    .metadata
                    .resource_version
                    .as_deref()
                    .and_then(|rv| rv.parse().ok())
                    .unwrap_or(0);
                log.lock().unwrap().push(Seen {
                    kind,
                    action,
                    name: object.metadata.name.clone().unwrap_or_default(),
                    revision,
                    object: serde_json::to_value(&object).unwrap(),
                });
            }
        });
    }

    fn events(&self) -> Vec<Seen> {
        self.0.lock().unwrap().clone()
    }

    /// The revision of the first event of `kind`/`name` that satisfies `matches`.
    #[track_caller]
    fn first(&self, kind: &str, name: &str, matches: impl Fn(&Seen) -> bool) -> u64 {
        let events = self.events();
        events
            .iter()
            .find(|e| e.kind == kind && e.name == name && matches(e))
            .map(|e| e.revision)
            .unwrap_or_else(|| panic!("no such event for {kind}/{name}; saw {:?}", summary(&events)))
    }
}

/// POSTs `/{operation}` to the DIG and waits until its deployed status is no longer `running`; the last answer.
async fn run_to_end(emco: &Emco, operation: &str, running: &str) -> Json {
    emco.http
        .post_empty(&format!("{DIG}/{operation}"))
        .await
        .expect(202);
    emco.http
        .wait_for("?status=deployed", SETTLE, |a| a["deployedStatus"] != running)
        .await
}

/// The `output=detail` answer for one resource, and that resource's entry in it.
async fn resource_detail(emco: &Emco, name: &str) -> (Json, Json) {
    let detail = emco
        .http
        .get(&format!("{DIG}/status?resource={name}&output=detail"))
        .await
        .expect(200)
        .json();
    let resource = detail["apps"][0]["clusters"][0]["resources"][0].clone();
    (detail, resource)
}

fn summary(events: &[Seen]) -> Vec<String> {
    events
        .iter()
        .map(|e| format!("{} {} {}/{}", e.revision, e.action, e.kind, e.name))
        .collect()
}

fn complete(seen: &Seen) -> bool {
    seen.object["status"]["conditions"]
        .as_array()
        .is_some_and(|c| c.iter().any(|c| c["type"] == "Complete" && c["status"] == "True"))
}

async fn recorder(cluster: &SimCluster) -> Recorder {
    let recorder = Recorder::default();
    recorder
        .watch(cluster, ("batch", "v1", "Job"), "jobs", true)
        .await;
    recorder
        .watch(cluster, ("apps", "v1", "Deployment"), "deployments", true)
        .await;
    recorder
        .watch(cluster, ("", "v1", "ConfigMap"), "configmaps", true)
        .await;
    recorder.watch(cluster, ("", "v1", "Pod"), "pods", true).await;
    recorder
        .watch(
            cluster,
            ("apiextensions.k8s.io", "v1", "CustomResourceDefinition"),
            "customresourcedefinitions",
            false,
        )
        .await;
    recorder
}

async fn get(
    cluster: &SimCluster,
    gvk: (&str, &str, &str),
    plural: &str,
    name: &str,
) -> Option<DynamicObject> {
    let namespace = (gvk.2 != "CustomResourceDefinition").then_some("default");
    get_object(cluster, gvk, plural, namespace, name).await
}

fn revision(object: &DynamicObject) -> u64 {
    object
        .metadata
        .resource_version
        .as_deref()
        .unwrap()
        .parse()
        .unwrap()
}

/// `name → deployedStatus` of the resources of the (only) app on the (only) cluster.
fn deployed(answer: &Json) -> Vec<(String, String)> {
    answer["apps"][0]["clusters"][0]["resources"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            (
                format!(
                    "{}+{}",
                    r["name"].as_str().unwrap(),
                    r["GVK"]["Kind"].as_str().unwrap()
                ),
                r["deployedStatus"].as_str().unwrap().to_string(),
            )
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn hooks_and_crds_run_in_emcos_order_and_are_cleaned_up() {
    let sim = Simulator::start_named(1).await.unwrap();
    let cluster = &sim.clusters()[0];
    let emco = Emco::start().await;
    onboard_apps(&emco.http, &kubeconfigs(&sim), &[("hooks", chart(None))]).await;
    let recorder = recorder(cluster).await;
    let done = run_to_end(&emco, "instantiate", "Instantiating").await;
    assert_eq!(done["deployedStatus"], "Instantiated", "{done}");
    // Hooks and CRDs are resources of the context, listed with their rsync status; the post-delete hook has not
    // run yet and the test hook is not there at all.
    assert_eq!(
        deployed(&done),
        [
            ("hooks-cleanup+Job", "Pending"),
            ("hooks-migrate+Job", "Applied"),
            ("hooks-ready+ConfigMap", "Applied"),
            ("hooks-web+Deployment", "Applied"),
            ("w1+Widget", "Applied"),
            ("widgets.example.com+CustomResourceDefinition", "Applied"),
        ]
        .map(|(k, s)| (k.to_string(), s.to_string()))
    );
    assert_eq!(done["deployedCounts"], json!({"Applied": 5, "Pending": 1}));

    // The CRD was there (and established) before the custom resource was created.
    let crd = get(
        cluster,
        ("apiextensions.k8s.io", "v1", "CustomResourceDefinition"),
        "customresourcedefinitions",
        "widgets.example.com",
    )
    .await
    .expect("the CRD exists");
    let widget = get(cluster, ("example.com", "v1", "Widget"), "widgets", "w1")
        .await
        .expect("the custom resource exists");
    assert!(
        revision(&crd) < revision(&widget),
        "CRD {} vs CR {}",
        revision(&crd),
        revision(&widget)
    );
    assert!(crd.metadata.labels.unwrap()["emco/deployment-id"].ends_with("-hooks"));

    // The pre-install Job completed before the Deployment was created.
    let migrate_complete = recorder.first("Job", "hooks-migrate", complete);
    let web_created = recorder.first("Deployment", "hooks-web", |e| e.action == "ADDED");
    assert!(
        migrate_complete < web_created,
        "{:?}",
        summary(&recorder.events())
    );
    // The post-install ConfigMap came after the Deployment and went again (hook-succeeded); the pre-install
    // Job stays (its policy is the default, before-hook-creation).
    let ready_created = recorder.first("ConfigMap", "hooks-ready", |e| e.action == "ADDED");
    let ready_deleted = recorder.first("ConfigMap", "hooks-ready", |e| e.action == "DELETED");
    assert!(web_created < ready_created && ready_created < ready_deleted);
    assert!(
        get(cluster, ("", "v1", "ConfigMap"), "configmaps", "hooks-ready")
            .await
            .is_none()
    );
    let migrate = get(cluster, ("batch", "v1", "Job"), "jobs", "hooks-migrate")
        .await
        .expect("the pre-install Job is kept");
    assert!(complete(&Seen {
        kind: "Job",
        action: "",
        name: String::new(),
        revision: 0,
        object: serde_json::to_value(&migrate).unwrap(),
    }));
    // Neither the post-delete Job nor the test Pod ran.
    assert!(
        recorder
            .events()
            .iter()
            .all(|e| e.name != "hooks-cleanup" && e.name != "hooks-smoke")
    );

    let done = run_to_end(&emco, "terminate", "Terminating").await;
    assert_eq!(done["deployedStatus"], "Terminated", "{done}");
    assert_eq!(done["deployedCounts"], json!({"Deleted": 6}), "{done}");

    // The post-delete Job was created once the Deployment was gone, completed, and was removed with every other
    // hook object; the CRD this context created went last.
    let web_deleted = recorder.first("Deployment", "hooks-web", |e| e.action == "DELETED");
    let cleanup_created = recorder.first("Job", "hooks-cleanup", |e| e.action == "ADDED");
    let cleanup_complete = recorder.first("Job", "hooks-cleanup", complete);
    let cleanup_deleted = recorder.first("Job", "hooks-cleanup", |e| e.action == "DELETED");
    let migrate_deleted = recorder.first("Job", "hooks-migrate", |e| e.action == "DELETED");
    let crd_deleted = recorder.first("CustomResourceDefinition", "widgets.example.com", |e| {
        e.action == "DELETED"
    });
    let order = summary(&recorder.events());
    assert!(web_deleted < cleanup_created, "{order:?}");
    assert!(
        cleanup_complete < cleanup_deleted && cleanup_deleted < crd_deleted,
        "{order:?}"
    );
    assert!(migrate_deleted < crd_deleted, "{order:?}");
    for (gvk, plural, name) in [
        (("batch", "v1", "Job"), "jobs", "hooks-migrate"),
        (("batch", "v1", "Job"), "jobs", "hooks-cleanup"),
        (("apps", "v1", "Deployment"), "deployments", "hooks-web"),
        (
            ("apiextensions.k8s.io", "v1", "CustomResourceDefinition"),
            "customresourcedefinitions",
            "widgets.example.com",
        ),
    ] {
        assert!(
            get(cluster, gvk, plural, name).await.is_none(),
            "{name} is still there"
        );
    }
    // The test hook never existed.
    assert!(recorder.events().iter().all(|e| e.name != "hooks-smoke"));
    assert!(
        get(cluster, ("", "v1", "Pod"), "pods", "hooks-smoke")
            .await
            .is_none()
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_failing_pre_install_hook_fails_the_instantiation_and_names_the_hook() {
    let sim = Simulator::start_named(1).await.unwrap();
    let cluster = &sim.clusters()[0];
    let emco = Emco::start().await;
    onboard_apps(&emco.http, &kubeconfigs(&sim), &[("hooks", chart(Some("Error")))]).await;
    let done = run_to_end(&emco, "instantiate", "Instantiating").await;
    assert_eq!(done["deployedStatus"], "InstantiateFailed", "{done}");
    // The CRD was created; nothing after the failed hook was applied.
    assert_eq!(
        done["deployedCounts"],
        json!({"Applied": 1, "Failed": 1, "Pending": 4}),
        "{done}"
    );
    let (detail, resource) = resource_detail(&emco, "hooks-migrate").await;
    assert_eq!(resource["rsync-status"], "Failed", "{detail}");
    let message = resource["message"].as_str().unwrap();
    assert!(
        message.contains("pre-install hook Job/hooks-migrate failed") && message.contains("backoff limit"),
        "{message}"
    );
    assert!(
        get(cluster, ("apps", "v1", "Deployment"), "deployments", "hooks-web")
            .await
            .is_none(),
        "main resources wait for the pre-install hooks"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn stop_while_waiting_for_a_hook_then_terminate_cleans_up() {
    let sim = Simulator::start_named(1).await.unwrap();
    let cluster = &sim.clusters()[0];
    let emco = Emco::start().await;
    onboard_apps(
        &emco.http,
        &kubeconfigs(&sim),
        &[("hooks", chart(Some("CrashLoopBackOff")))],
    )
    .await;
    let recorder = recorder(cluster).await;
    emco.http
        .post_empty(&format!("{DIG}/instantiate"))
        .await
        .expect(202);
    // The pre-install Job never completes: rsync waits for it.
    for _ in 0..200 {
        if recorder
            .events()
            .iter()
            .any(|e| e.kind == "Pod" && e.name.starts_with("hooks-migrate-"))
        {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert_eq!(emco.http.summary().await["status"], "Instantiating");
    emco.http.post_empty(&format!("{DIG}/stop")).await.expect(202);
    let stopped = emco
        .http
        .wait_for("?status=deployed", SETTLE, |a| {
            a["deployedStatus"] != "Instantiating"
        })
        .await;
    assert_eq!(stopped["deployedStatus"], "InstantiateFailed", "{stopped}");
    assert!(
        get(cluster, ("apps", "v1", "Deployment"), "deployments", "hooks-web")
            .await
            .is_none(),
        "a stopped instantiation applies nothing after the hook it was waiting for"
    );

    let done = run_to_end(&emco, "terminate", "Terminating").await;
    assert_eq!(done["deployedStatus"], "Terminated", "{done}");
    assert_eq!(done["deployedCounts"], json!({"Deleted": 6}), "{done}");
    recorder.first("Job", "hooks-cleanup", complete);
    for (gvk, plural, name) in [
        (("batch", "v1", "Job"), "jobs", "hooks-migrate"),
        (("batch", "v1", "Job"), "jobs", "hooks-cleanup"),
        (
            ("apiextensions.k8s.io", "v1", "CustomResourceDefinition"),
            "customresourcedefinitions",
            "widgets.example.com",
        ),
    ] {
        assert!(
            get(cluster, gvk, plural, name).await.is_none(),
            "{name} is still there"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sigkill_while_waiting_for_a_hook_then_restart_reruns_it_and_converges() {
    let sim = Simulator::start_named(1).await.unwrap();
    let cluster = &sim.clusters()[0];
    // A slow cluster keeps rsync in the pre-install hook's wait long enough to be killed there.
    cluster
        .set_faults(Faults {
            latency_ms: 150,
            ..Faults::default()
        })
        .await
        .unwrap();
    let data = tempfile::tempdir().unwrap();
    let port = crate::rsync::free_port();
    let http = Http {
        address: ([127, 0, 0, 1], port).into(),
    };
    let mut emco = crate::rsync::start_emco_process(data.path(), port).await;
    onboard_apps(&http, &kubeconfigs(&sim), &[("hooks", chart(None))]).await;
    let recorder = recorder(cluster).await;
    http.post_empty(&format!("{DIG}/instantiate")).await.expect(202);
    for _ in 0..400 {
        if recorder
            .events()
            .iter()
            .any(|e| e.kind == "Job" && e.name == "hooks-migrate")
        {
            break;
        }
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
    emco.start_kill().unwrap(); // SIGKILL, while the hook's Job runs
    emco.wait().await.unwrap();
    assert!(
        get(cluster, ("apps", "v1", "Deployment"), "deployments", "hooks-web")
            .await
            .is_none(),
        "killed before the main resources"
    );

    let mut emco = crate::rsync::start_emco_process(data.path(), port).await;
    let done = http
        .wait_for("?status=deployed", Duration::from_secs(60), |a| {
            a["deployedStatus"] != "Instantiating"
        })
        .await;
    assert_eq!(done["deployedStatus"], "Instantiated", "{done}");
    assert_eq!(
        done["deployedCounts"],
        json!({"Applied": 5, "Pending": 1}),
        "{done}"
    );
    // The resumed instantiation ran the hook again from the start: its old Job deleted (before-hook-creation),
    // a new one created and completed, and only then the Deployment.
    let events = recorder.events();
    let migrate: Vec<_> = events
        .iter()
        .filter(|e| e.kind == "Job" && e.name == "hooks-migrate" && e.action != "MODIFIED")
        .map(|e| e.action)
        .collect();
    assert_eq!(migrate, ["ADDED", "DELETED", "ADDED"], "{:?}", summary(&events));
    let rerun_created = events
        .iter()
        .filter(|e| e.kind == "Job" && e.name == "hooks-migrate" && e.action == "ADDED")
        .map(|e| e.revision)
        .max()
        .unwrap();
    let rerun_complete = events
        .iter()
        .filter(|e| e.kind == "Job" && e.name == "hooks-migrate" && e.revision > rerun_created && complete(e))
        .map(|e| e.revision)
        .min()
        .expect("the rerun completed");
    let web_created = recorder.first("Deployment", "hooks-web", |e| e.action == "ADDED");
    assert!(rerun_complete < web_created, "{:?}", summary(&events));
    emco.start_kill().unwrap();
}

/// A chart whose hooks are bare Pods (`restartPolicy: Never`, `sh -c "echo … && sleep 10"`, as in EMCO's own
/// dependency example) and a Job: a `pre-install` Pod, a `post-install` Job, a `pre-delete` Pod.
fn pod_hooks_chart(pre_install_run_ms: u32) -> Vec<u8> {
    let pod = |name: &str, hook: &str, run_ms: u32| {
        format!(
            "apiVersion: v1
kind: Pod
metadata:
  name: {name}
  annotations:
    helm.sh/hook: {hook}
    kubesim.io/run-ms: \"{run_ms}\"
spec:
  restartPolicy: Never
  containers:
  - name: hook
    image: busybox
    command: [\"sh\", \"-c\", \"echo {hook} hook && sleep 10\"]
"
        )
    };
    let pre_install = pod("pre-install-hook-pod", "pre-install", pre_install_run_ms);
    let pre_delete = pod("pre-delete-hook-pod", "pre-delete", 500);
    let post_install = job("post-install-job", "post-install", "0", "{}");
    emco_helm::archive::write_tgz(&[
        ("podhooks/Chart.yaml", b"apiVersion: v2\nname: podhooks\nversion: 0.1.0\n"),
        (
            "podhooks/templates/deployment.yaml",
            b"apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: podhooks-web\nspec:\n  replicas: 1\n  selector:\n    matchLabels:\n      app: podhooks-web\n  template:\n    metadata:\n      labels:\n        app: podhooks-web\n    spec:\n      containers:\n      - name: web\n        image: nginx\n",
        ),
        ("podhooks/templates/pre-install-pod.yaml", pre_install.as_bytes()),
        ("podhooks/templates/post-install-job.yaml", post_install.as_bytes()),
        ("podhooks/templates/pre-delete-pod.yaml", pre_delete.as_bytes()),
    ])
}

fn phase(pod: &DynamicObject) -> String {
    serde_json::to_value(pod).unwrap()["status"]["phase"]
        .as_str()
        .unwrap_or_default()
        .to_string()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn hook_pods_run_to_completion_and_the_dig_is_ready_then_terminates_cleanly() {
    let sim = Simulator::start_named(1).await.unwrap();
    let cluster = &sim.clusters()[0];
    let emco = Emco::start().await;
    let _monitor = start_monitor(cluster);
    onboard_apps(
        &emco.http,
        &kubeconfigs(&sim),
        &[("podhooks", pod_hooks_chart(4_000))],
    )
    .await;
    let recorder = recorder(cluster).await;
    emco.http
        .post_empty(&format!("{DIG}/instantiate"))
        .await
        .expect(202);
    // While the pre-install Pod runs, the status says what rsync waits for, since when and until when; the
    // cluster, with nothing applied yet, is not called silent.
    let hook =
        "app podhooks on edge01 waits for pre-install hook Pod/pre-install-hook-pod to complete (waiting";
    let waiting = emco
        .http
        .wait_for("?status=deployed&output=all", SETTLE, |a| {
            a["readiness"]["message"]
                .as_str()
                .is_some_and(|m| m.contains(hook))
        })
        .await;
    let message = waiting["readiness"]["message"].as_str().unwrap();
    assert!(message.starts_with("instantiating: "), "{message}");
    assert!(message.contains(", fails at 300 s)"), "{message}");
    let cluster_answer = &waiting["apps"][0]["clusters"][0];
    assert_eq!(
        cluster_answer["waiting"]["for"], "pre-install hook Pod/pre-install-hook-pod to complete",
        "{waiting}"
    );
    assert!(cluster_answer["waiting"]["since"].is_string() && cluster_answer["waiting"]["until"].is_string());
    let web = cluster_answer["resources"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["name"] == "podhooks-web")
        .expect("the Deployment is listed");
    assert_eq!(web["deployedStatus"], "Pending", "{waiting}");
    assert!(web["message"].as_str().is_some_and(|m| m.contains(hook)), "{web}");
    let fresh = waiting["readiness"]["conditions"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["type"] == "StatusFresh")
        .cloned()
        .unwrap_or_default();
    assert_ne!(fresh["status"], "False", "{fresh}");
    let done = emco
        .http
        .wait_for("?status=deployed", SETTLE, |a| {
            a["deployedStatus"] != "Instantiating"
        })
        .await;
    assert_eq!(done["deployedStatus"], "Instantiated", "{done}");
    let ready = emco
        .http
        .wait_for("?status=ready", SETTLE, |a| a["readyStatus"] == "Ready")
        .await;
    assert_eq!(ready["readyStatus"], "Ready", "{ready}");
    // The pre-install Pod ran to completion before the Deployment was created; the post-install Job completed.
    let hook_succeeded = recorder.first("Pod", "pre-install-hook-pod", |e| {
        e.object["status"]["phase"] == "Succeeded"
    });
    let web_created = recorder.first("Deployment", "podhooks-web", |e| e.action == "ADDED");
    assert!(hook_succeeded < web_created, "{:?}", summary(&recorder.events()));
    let hook = get(cluster, ("", "v1", "Pod"), "pods", "pre-install-hook-pod")
        .await
        .expect("the pre-install Pod is kept (before-hook-creation)");
    assert_eq!(phase(&hook), "Succeeded");
    recorder.first("Job", "post-install-job", complete);

    let done = run_to_end(&emco, "terminate", "Terminating").await;
    assert_eq!(done["deployedStatus"], "Terminated", "{done}");
    // The pre-delete Pod ran to completion before the Deployment was deleted; nothing of the app is left.
    let pre_delete_succeeded = recorder.first("Pod", "pre-delete-hook-pod", |e| {
        e.object["status"]["phase"] == "Succeeded"
    });
    let web_deleted = recorder.first("Deployment", "podhooks-web", |e| e.action == "DELETED");
    assert!(
        pre_delete_succeeded < web_deleted,
        "{:?}",
        summary(&recorder.events())
    );
    for (gvk, plural, name) in [
        (("", "v1", "Pod"), "pods", "pre-install-hook-pod"),
        (("", "v1", "Pod"), "pods", "pre-delete-hook-pod"),
        (("batch", "v1", "Job"), "jobs", "post-install-job"),
        (("apps", "v1", "Deployment"), "deployments", "podhooks-web"),
    ] {
        assert!(
            get(cluster, gvk, plural, name).await.is_none(),
            "{name} is still there"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_hook_pod_the_cluster_fails_fails_the_instantiation_and_names_the_hook() {
    let sim = Simulator::start_named(1).await.unwrap();
    let cluster = &sim.clusters()[0];
    cluster
        .set_faults(Faults {
            fail_pods: vec!["pre-install-hook-pod".into()],
            ..Faults::default()
        })
        .await
        .unwrap();
    let emco = Emco::start().await;
    onboard_apps(
        &emco.http,
        &kubeconfigs(&sim),
        &[("podhooks", pod_hooks_chart(500))],
    )
    .await;
    let done = run_to_end(&emco, "instantiate", "Instantiating").await;
    assert_eq!(done["deployedStatus"], "InstantiateFailed", "{done}");
    let (detail, resource) = resource_detail(&emco, "pre-install-hook-pod").await;
    assert_eq!(resource["rsync-status"], "Failed", "{detail}");
    let message = resource["message"].as_str().unwrap();
    assert!(
        message.contains("pre-install hook Pod/pre-install-hook-pod failed"),
        "{message}"
    );
    assert!(
        get(
            cluster,
            ("apps", "v1", "Deployment"),
            "deployments",
            "podhooks-web"
        )
        .await
        .is_none(),
        "main resources wait for the pre-install hooks"
    );
}

/// The whole path: a chain of dependencies (sink waits for firewall to be Ready, firewall for packetgen,
/// whose chart has a `pre-install` hook Pod) is Ready within a minute on kubesim, and while it waits `emcoctl
/// status` says for what.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_chain_of_dependencies_behind_a_hook_pod_is_ready_and_emcoctl_says_what_it_waits_for() {
    let sim = vfw_clusters(1).await;
    let _monitors = start_monitors(&sim);
    let emco = Emco::start().await;
    onboard_apps(
        &emco.http,
        &kubeconfigs(&sim),
        &[
            ("packetgen", pod_hooks_chart(3_000)),
            ("firewall", vfw_chart("firewall")),
            ("sink", vfw_chart("sink")),
        ],
    )
    .await;
    let ca = "/v2/projects/testvfw/composite-apps/compositevfw/v1";
    for (app, after, wait) in [("firewall", "packetgen", 1), ("sink", "firewall", 0)] {
        emco.http
            .post(
                &format!("{ca}/apps/{app}/dependency"),
                json!({"metadata": {"name": format!("after-{after}")}, "spec": {"app": after, "opStatus": "Ready", "wait": wait}}),
            )
            .await
            .expect(201);
    }
    emco.http.post_empty(&format!("{DIG}/approve")).await.expect(202);
    let started = tokio::time::Instant::now();
    emco.http
        .post_empty(&format!("{DIG}/instantiate"))
        .await
        .expect(202);
    let client = emcoctl::client::EmcoClient::new(&format!("http://{}", emco.http.address)).unwrap();
    let dig = "projects/testvfw/composite-apps/compositevfw/v1/deployment-intent-groups/vfw_deployment_intent_group";
    // What `emcoctl status <dig>` prints above its table, read until it names each wait in turn.
    let mut seen = Vec::new();
    let deadline = started + Duration::from_secs(60);
    let mut ready = false;
    while tokio::time::Instant::now() < deadline {
        let answers = emcoctl::status::fetch(&client, dig, "").await.unwrap();
        let line = emcoctl::status::summary_line(&answers);
        for wait in [
            "packetgen on edge01: waiting for pre-install hook Pod/pre-install-hook-pod to complete (since ",
            "firewall on edge01: waiting for app packetgen to be Ready",
            "sink on edge01: waiting for app firewall to be Ready",
        ] {
            if line.contains(wait) && !seen.contains(&wait) {
                seen.push(wait);
            }
        }
        if answers.ready["readyStatus"] == "Ready" {
            ready = true;
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert!(ready, "not Ready within a minute");
    assert!(
        seen.iter().any(|w| w.starts_with("packetgen")) && seen.iter().any(|w| w.starts_with("firewall")),
        "emcoctl status named the waits: {seen:?}"
    );
}
