//! kube-rs against kubesim.

use std::collections::BTreeSet;
use std::time::Duration;

use emco_k8s::k8s_openapi::api::apps::v1::Deployment;
use emco_k8s::k8s_openapi::api::batch::v1::Job;
use emco_k8s::k8s_openapi::api::core::v1::{ConfigMap, Pod};
use emco_k8s::k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use futures::{StreamExt, TryStreamExt};
use kube::api::{
    Api, DeleteParams, DynamicObject, ListParams, Patch, PatchParams, PostParams, WatchEvent, WatchParams,
};
use kube::core::{ApiResource, GroupVersionKind};
use kube::runtime::wait::{await_condition, conditions};
use kube::runtime::{WatchStreamExt, watcher};
use kube::{Client, Discovery};
use kubesim::{Faults, Simulator};
use serde_json::json;

async fn one_cluster() -> (Simulator, Client) {
    let sim = Simulator::start_named(1).await.unwrap();
    let client = sim.clusters()[0].client().unwrap();
    (sim, client)
}

fn kinds(discovery: &Discovery) -> BTreeSet<String> {
    discovery
        .groups()
        .flat_map(|group| {
            group
                .recommended_resources()
                .into_iter()
                .map(|(ar, _)| format!("{}/{}/{}", ar.group, ar.version, ar.kind))
        })
        .collect()
}

#[tokio::test]
async fn discovery_finds_the_same_kinds_both_ways() {
    let (_sim, client) = one_cluster().await;
    let classic = Discovery::new(client.clone()).run().await.unwrap();
    let aggregated = Discovery::new(client).run_aggregated().await.unwrap();
    let classic_kinds = kinds(&classic);
    assert!(
        classic_kinds.contains("apps/v1/Deployment") && classic_kinds.contains("/v1/ConfigMap"),
        "{classic_kinds:?}"
    );
    assert_eq!(classic_kinds, kinds(&aggregated));
    let version = _sim.clusters()[0]
        .client()
        .unwrap()
        .apiserver_version()
        .await
        .unwrap();
    assert_eq!(
        version.git_version,
        kubesim::KubernetesVersion::NEWEST.git_version()
    );
}

#[tokio::test]
async fn server_side_apply_creates_updates_and_reports_conflicts() {
    let (_sim, client) = one_cluster().await;
    let api: Api<ConfigMap> = Api::namespaced(client, "default");
    let applied = |value: &str| json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "demo"}, "data": {"x": value, "y": "kept"}});
    let created = api
        .patch("demo", &PatchParams::apply("emco"), &Patch::Apply(applied("1")))
        .await
        .unwrap();
    assert_eq!(created.data.as_ref().unwrap()["x"], "1");
    let managers = created.metadata.managed_fields.clone().unwrap();
    assert_eq!(
        (managers[0].manager.as_deref(), managers[0].operation.as_deref()),
        (Some("emco"), Some("Apply"))
    );
    let rv = created.metadata.resource_version.clone();

    // Applying the same configuration again changes nothing, not even the resourceVersion.
    let again = api
        .patch("demo", &PatchParams::apply("emco"), &Patch::Apply(applied("1")))
        .await
        .unwrap();
    assert_eq!(again.metadata.resource_version, rv);

    // Another manager changing an owned field conflicts, unless it forces.
    let theirs =
        json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "demo"}, "data": {"x": "2"}});
    let err = api
        .patch("demo", &PatchParams::apply("other"), &Patch::Apply(&theirs))
        .await
        .unwrap_err();
    let kube::Error::Api(status) = err else {
        panic!("expected an API error")
    };
    assert_eq!((status.code, status.reason.as_str()), (409, "Conflict"));
    assert!(
        status.message.contains("conflict with \"emco\""),
        "{}",
        status.message
    );
    let forced = api
        .patch(
            "demo",
            &PatchParams::apply("other").force(),
            &Patch::Apply(&theirs),
        )
        .await
        .unwrap();
    assert_eq!(forced.data.as_ref().unwrap()["x"], "2");

    // emco stops applying y: it goes away (nobody else owns it); x now belongs to "other" and stays.
    let smaller = json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "demo"}, "data": {}});
    let pruned = api
        .patch("demo", &PatchParams::apply("emco"), &Patch::Apply(&smaller))
        .await
        .unwrap();
    let data = pruned.data.unwrap();
    assert_eq!(data.get("x").map(String::as_str), Some("2"));
    assert!(!data.contains_key("y"), "{data:?}");

    // Finalizers hold a deleted object until they are removed.
    let finalized = api
        .patch(
            "demo",
            &PatchParams::default(),
            &Patch::Merge(json!({"metadata": {"finalizers": ["emco.io/cleanup"]}})),
        )
        .await
        .unwrap();
    assert_eq!(finalized.metadata.finalizers.unwrap(), ["emco.io/cleanup"]);
    api.delete("demo", &DeleteParams::default()).await.unwrap();
    let waiting = api.get("demo").await.unwrap();
    assert!(
        waiting.metadata.deletion_timestamp.is_some(),
        "a finalizer holds the object"
    );
    api.patch(
        "demo",
        &PatchParams::default(),
        &Patch::Merge(json!({"metadata": {"finalizers": null}})),
    )
    .await
    .unwrap();
    let gone = api.get("demo").await.unwrap_err();
    assert!(
        matches!(gone, kube::Error::Api(ref s) if s.reason == "NotFound"),
        "{gone:?}"
    );
}

#[tokio::test]
async fn watches_replay_from_a_resource_version() {
    let (_sim, client) = one_cluster().await;
    let api: Api<ConfigMap> = Api::namespaced(client, "default");
    let list = api.list(&ListParams::default()).await.unwrap();
    let rv = list.metadata.resource_version.unwrap();
    assert!(!rv.is_empty());
    api.create(
        &PostParams::default(),
        &serde_json::from_value(json!({"metadata": {"name": "later"}, "data": {"a": "b"}})).unwrap(),
    )
    .await
    .unwrap();
    let mut events = api
        .watch(&WatchParams::default().timeout(5), &rv)
        .await
        .unwrap()
        .boxed();
    let first = tokio::time::timeout(Duration::from_secs(5), events.try_next())
        .await
        .unwrap()
        .unwrap()
        .unwrap();
    let WatchEvent::Added(added) = first else {
        panic!("expected ADDED, got {first:?}")
    };
    assert_eq!(added.metadata.name.as_deref(), Some("later"));

    // A revision the log no longer holds is an in-stream ERROR 410.
    let mut expired = api
        .watch(&WatchParams::default().timeout(5), "1")
        .await
        .unwrap()
        .boxed();
    match tokio::time::timeout(Duration::from_secs(5), expired.try_next())
        .await
        .unwrap()
        .unwrap()
        .unwrap()
    {
        WatchEvent::Error(status) => assert_eq!((status.code, status.reason.as_str()), (410, "Expired")),
        other => panic!("expected ERROR 410, got {other:?}"),
    }
}

/// ConfigMaps are kept as text: a label-selected watch still sees one enter and leave its selection, and lists
/// select on labels and fields as before.
#[tokio::test]
async fn a_label_selected_watch_sees_a_config_map_enter_and_leave_its_selection() {
    let (_sim, client) = one_cluster().await;
    let api: Api<ConfigMap> = Api::namespaced(client, "default");
    let mut events = api
        .watch(&WatchParams::default().labels("app=web").timeout(10), "0")
        .await
        .unwrap()
        .boxed();
    let mut next = async || {
        tokio::time::timeout(Duration::from_secs(5), events.try_next())
            .await
            .unwrap()
            .unwrap()
            .unwrap()
    };
    let labelled = |app: &str| -> ConfigMap {
        serde_json::from_value(
            json!({"metadata": {"name": "moving", "labels": {"app": app}}, "data": {"a": "b"}}),
        )
        .unwrap()
    };
    api.create(&PostParams::default(), &labelled("web"))
        .await
        .unwrap();
    let WatchEvent::Added(added) = next().await else {
        panic!("expected ADDED")
    };
    assert_eq!(added.data.unwrap()["a"], "b");
    api.replace("moving", &PostParams::default(), &labelled("db"))
        .await
        .unwrap();
    let WatchEvent::Deleted(left) = next().await else {
        panic!("expected DELETED when the labels stop matching")
    };
    assert_eq!(left.metadata.labels.unwrap()["app"], "db");
    api.replace("moving", &PostParams::default(), &labelled("web"))
        .await
        .unwrap();
    let WatchEvent::Added(back) = next().await else {
        panic!("expected ADDED when the labels match again")
    };
    assert_eq!(back.metadata.name.as_deref(), Some("moving"));
    // A list selects on the same kept part and sends the whole object.
    let names = |list: kube::core::ObjectList<ConfigMap>| -> Vec<String> {
        list.items.into_iter().filter_map(|c| c.metadata.name).collect()
    };
    let web = api.list(&ListParams::default().labels("app=web")).await.unwrap();
    assert_eq!(web.items[0].data.as_ref().unwrap()["a"], "b");
    assert_eq!(names(web), vec!["moving".to_string()]);
    let db = api.list(&ListParams::default().labels("app=db")).await.unwrap();
    assert!(db.items.is_empty());
    let by_name = api
        .list(&ListParams::default().fields("metadata.name=moving"))
        .await
        .unwrap();
    assert_eq!(names(by_name), vec!["moving".to_string()]);
}

async fn wait_for(seen: &mut tokio::sync::mpsc::UnboundedReceiver<String>, name: &str) {
    let deadline = tokio::time::Instant::now() + Duration::from_secs(15);
    loop {
        let next = tokio::time::timeout_at(deadline, seen.recv())
            .await
            .expect("the watcher saw the object in time");
        if next.as_deref() == Some(name) {
            return;
        }
    }
}

#[tokio::test]
async fn a_watcher_recovers_after_the_log_is_compacted_and_the_connection_drops() {
    let sim = Simulator::start_named(1).await.unwrap();
    let cluster = &sim.clusters()[0];
    let api: Api<ConfigMap> = Api::namespaced(cluster.client().unwrap(), "default");
    let (seen_tx, mut seen) = tokio::sync::mpsc::unbounded_channel();
    let stream = watcher(api.clone(), watcher::Config::default())
        .default_backoff()
        .applied_objects();
    let task = tokio::spawn(async move {
        let mut stream = stream.boxed();
        while let Some(item) = stream.next().await {
            if let Ok(cm) = item {
                let _ = seen_tx.send(cm.metadata.name.unwrap_or_default());
            }
        }
    });
    api.create(
        &PostParams::default(),
        &serde_json::from_value(json!({"metadata": {"name": "before"}})).unwrap(),
    )
    .await
    .unwrap();
    wait_for(&mut seen, "before").await;
    // Move the revision on outside the watched namespace, forget the log, and drop every connection: the watcher's
    // resume revision is now too old, it gets ERROR 410 and must relist.
    let other: Api<ConfigMap> = Api::namespaced(cluster.client().unwrap(), "kube-system");
    other
        .create(
            &PostParams::default(),
            &serde_json::from_value(json!({"metadata": {"name": "elsewhere"}})).unwrap(),
        )
        .await
        .unwrap();
    cluster.shared().store().compact();
    cluster
        .set_faults(Faults {
            down: true,
            ..Faults::default()
        })
        .await
        .unwrap();
    tokio::time::sleep(Duration::from_millis(200)).await;
    cluster.set_faults(Faults::default()).await.unwrap();
    api.create(
        &PostParams::default(),
        &serde_json::from_value(json!({"metadata": {"name": "after"}})).unwrap(),
    )
    .await
    .unwrap();
    wait_for(&mut seen, "after").await;
    task.abort();
}

#[tokio::test]
async fn custom_resource_definitions_come_and_go_with_their_kinds() {
    let (_sim, client) = one_cluster().await;
    let crds: Api<CustomResourceDefinition> = Api::all(client.clone());
    let crd: CustomResourceDefinition = serde_json::from_value(json!({
        "apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
        "metadata": {"name": "widgets.example.com"},
        "spec": {"group": "example.com", "scope": "Namespaced",
                 "names": {"plural": "widgets", "singular": "widget", "kind": "Widget", "shortNames": ["wg"]},
                 "versions": [{"name": "v1", "served": true, "storage": true, "subresources": {"status": {}},
                               "schema": {"openAPIV3Schema": {"type": "object", "x-kubernetes-preserve-unknown-fields": true}}}]}
    }))
    .unwrap();
    crds.create(&PostParams::default(), &crd).await.unwrap();
    tokio::time::timeout(
        Duration::from_secs(1),
        await_condition(
            crds.clone(),
            "widgets.example.com",
            conditions::is_crd_established(),
        ),
    )
    .await
    .expect("established within a second")
    .unwrap();
    let discovery = Discovery::new(client.clone()).run().await.unwrap();
    assert!(kinds(&discovery).contains("example.com/v1/Widget"));

    let resource =
        ApiResource::from_gvk_with_plural(&GroupVersionKind::gvk("example.com", "v1", "Widget"), "widgets");
    let widgets: Api<DynamicObject> = Api::namespaced_with(client.clone(), "default", &resource);
    let widget = json!({"apiVersion": "example.com/v1", "kind": "Widget", "metadata": {"name": "w1"}, "spec": {"size": 3}});
    let created = widgets
        .patch("w1", &PatchParams::apply("emco"), &Patch::Apply(&widget))
        .await
        .unwrap();
    assert_eq!(created.data["spec"]["size"], 3);
    let generation = created.metadata.generation;
    let with_status = widgets
        .patch_status(
            "w1",
            &PatchParams::default(),
            &Patch::Merge(json!({"status": {"ok": true}})),
        )
        .await
        .unwrap();
    assert_eq!(with_status.data["status"]["ok"], true);
    assert_eq!(
        with_status.metadata.generation, generation,
        "a status write leaves generation alone"
    );
    let ignored = widgets
        .patch(
            "w1",
            &PatchParams::default(),
            &Patch::Merge(json!({"status": {"ok": false}})),
        )
        .await
        .unwrap();
    assert_eq!(
        ignored.data["status"]["ok"], true,
        "the main resource ignores status"
    );

    crds.delete("widgets.example.com", &DeleteParams::default())
        .await
        .unwrap();
    let err = widgets.get("w1").await.unwrap_err();
    assert!(matches!(err, kube::Error::Api(ref s) if s.code == 404), "{err:?}");
    let discovery = Discovery::new(client).run().await.unwrap();
    assert!(!kinds(&discovery).contains("example.com/v1/Widget"));
}

#[tokio::test]
async fn workloads_become_ready_and_garbage_is_collected() {
    let (_sim, client) = one_cluster().await;
    let deployments: Api<Deployment> = Api::namespaced(client.clone(), "default");
    let deployment: Deployment = serde_json::from_value(json!({
        "metadata": {"name": "web"},
        "spec": {"replicas": 3, "selector": {"matchLabels": {"app": "web"}},
                 "template": {"metadata": {"labels": {"app": "web"}}, "spec": {"containers": [{"name": "app", "image": "nginx:1.27"}]}}}
    }))
    .unwrap();
    deployments
        .create(&PostParams::default(), &deployment)
        .await
        .unwrap();
    tokio::time::timeout(
        Duration::from_secs(10),
        await_condition(deployments.clone(), "web", conditions::is_deployment_completed()),
    )
    .await
    .expect("the deployment completes")
    .unwrap();
    let web = deployments.get("web").await.unwrap();
    let status = web.status.unwrap();
    assert_eq!(
        (
            status.ready_replicas,
            status.available_replicas,
            status.observed_generation
        ),
        (Some(3), Some(3), web.metadata.generation)
    );
    let pods: Api<Pod> = Api::namespaced(client.clone(), "default");
    let running = pods.list(&ListParams::default().labels("app=web")).await.unwrap();
    assert_eq!(running.items.len(), 3);
    for pod in &running.items {
        let status = pod.status.as_ref().unwrap();
        assert_eq!(status.phase.as_deref(), Some("Running"));
        assert!(status.pod_ip.is_some());
    }

    // Scale down, then delete: the ReplicaSet and pods go with the Deployment.
    deployments
        .patch(
            "web",
            &PatchParams::default(),
            &Patch::Merge(json!({"spec": {"replicas": 1}})),
        )
        .await
        .unwrap();
    tokio::time::timeout(Duration::from_secs(10), async {
        loop {
            if pods
                .list(&ListParams::default().labels("app=web"))
                .await
                .unwrap()
                .items
                .len()
                == 1
            {
                break;
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    })
    .await
    .expect("scaled down to one pod");
    deployments
        .delete("web", &DeleteParams::background())
        .await
        .unwrap();
    tokio::time::timeout(Duration::from_secs(10), async {
        loop {
            if pods
                .list(&ListParams::default().labels("app=web"))
                .await
                .unwrap()
                .items
                .is_empty()
            {
                break;
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    })
    .await
    .expect("garbage collection removed the pods");

    let jobs: Api<Job> = Api::namespaced(client, "default");
    let job: Job = serde_json::from_value(json!({"metadata": {"name": "pi"},
        "spec": {"template": {"spec": {"restartPolicy": "Never", "containers": [{"name": "pi", "image": "perl:5"}]}}}})).unwrap();
    jobs.create(&PostParams::default(), &job).await.unwrap();
    tokio::time::timeout(
        Duration::from_secs(10),
        await_condition(jobs.clone(), "pi", conditions::is_job_completed()),
    )
    .await
    .expect("the job completes")
    .unwrap();
    assert_eq!(jobs.get("pi").await.unwrap().status.unwrap().succeeded, Some(1));
}

/// Polls a pod until its phase is one of `phases`, within 20 s.
async fn pod_phase(pods: &Api<Pod>, name: &str, phases: &[&str]) -> Pod {
    tokio::time::timeout(Duration::from_secs(20), async {
        loop {
            if let Ok(pod) = pods.get(name).await {
                let phase = pod
                    .status
                    .as_ref()
                    .and_then(|s| s.phase.clone())
                    .unwrap_or_default();
                if phases.contains(&phase.as_str()) {
                    return pod;
                }
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    })
    .await
    .unwrap_or_else(|_| panic!("pod {name} reaches {phases:?}"))
}

fn terminated(pod: &Pod) -> (i32, String) {
    let state = pod
        .status
        .as_ref()
        .and_then(|s| s.container_statuses.as_ref())
        .and_then(|c| c.first())
        .and_then(|c| c.state.clone())
        .and_then(|s| s.terminated)
        .expect("a terminated container");
    (state.exit_code, state.reason.unwrap_or_default())
}

#[tokio::test]
async fn run_to_completion_pods_succeed_or_fail_by_name_and_jobs_follow_their_pods() {
    let sim = Simulator::start_named(1).await.unwrap();
    let cluster = &sim.clusters()[0];
    let client = cluster.client().unwrap();
    cluster
        .set_faults(Faults {
            fail_pods: vec!["doomed".into()],
            ..Faults::default()
        })
        .await
        .unwrap();
    let pods: Api<Pod> = Api::namespaced(client.clone(), "default");
    let bare = |name: &str, policy: &str| -> Pod {
        serde_json::from_value(json!({"metadata": {"name": name, "annotations": {"kubesim.io/run-ms": "300"}},
            "spec": {"restartPolicy": policy, "containers": [{"name": "run", "image": "busybox", "command": ["sh", "-c", "echo hi && sleep 10"]}]}}))
        .unwrap()
    };
    for (name, policy) in [
        ("hook", "Never"),
        ("retry", "OnFailure"),
        ("server", "Always"),
        ("doomed-hook", "Never"),
        ("doomed-server", "Always"),
    ] {
        pods.create(&PostParams::default(), &bare(name, policy))
            .await
            .unwrap();
    }
    // A bare run-to-completion pod runs, then succeeds with exit code 0.
    pod_phase(&pods, "hook", &["Running"]).await;
    let done = pod_phase(&pods, "hook", &["Succeeded", "Failed"]).await;
    assert_eq!(
        done.status.as_ref().and_then(|s| s.phase.as_deref()),
        Some("Succeeded")
    );
    assert_eq!(terminated(&done), (0, "Completed".to_string()));
    let retry = pod_phase(&pods, "retry", &["Succeeded", "Failed"]).await;
    assert_eq!(
        retry.status.as_ref().and_then(|s| s.phase.as_deref()),
        Some("Succeeded")
    );
    // The failPods fault fails a run-to-completion pod by name: exit code 1, Error.
    let doomed = pod_phase(&pods, "doomed-hook", &["Succeeded", "Failed"]).await;
    assert_eq!(
        doomed.status.as_ref().and_then(|s| s.phase.as_deref()),
        Some("Failed")
    );
    assert_eq!(terminated(&doomed), (1, "Error".to_string()));
    // Pods that are restarted keep running, whatever their name.
    tokio::time::sleep(Duration::from_millis(600)).await;
    for name in ["server", "doomed-server"] {
        let pod = pods.get(name).await.unwrap();
        assert_eq!(
            pod.status.and_then(|s| s.phase).as_deref(),
            Some("Running"),
            "{name}"
        );
    }

    // A Job whose pods fail is Failed once its backoffLimit is spent, each failed pod counted.
    let jobs: Api<Job> = Api::namespaced(client, "default");
    let job: Job = serde_json::from_value(json!({"metadata": {"name": "doomed-job"},
        "spec": {"backoffLimit": 1, "template": {"metadata": {"annotations": {"kubesim.io/run-ms": "100"}},
            "spec": {"restartPolicy": "Never", "containers": [{"name": "run", "image": "busybox"}]}}}}))
    .unwrap();
    jobs.create(&PostParams::default(), &job).await.unwrap();
    tokio::time::timeout(
        Duration::from_secs(20),
        await_condition(jobs.clone(), "doomed-job", |job: Option<&Job>| {
            job.and_then(|job| job.status.as_ref())
                .and_then(|status| status.conditions.as_ref())
                .is_some_and(|conditions| {
                    conditions
                        .iter()
                        .any(|c| c.type_ == "Failed" && c.status == "True")
                })
        }),
    )
    .await
    .expect("the job fails")
    .unwrap();
    let status = jobs.get("doomed-job").await.unwrap().status.unwrap();
    assert_eq!(status.failed, Some(2), "backoffLimit 1: two pods ran and failed");
    assert_eq!(status.succeeded, None);
}

#[tokio::test]
async fn faults_make_a_cluster_unreachable_slow_or_erroring() {
    let sim = Simulator::start_named(2).await.unwrap();
    let (edge01, edge02) = (&sim.clusters()[0], &sim.clusters()[1]);
    // kube-rs retries 429/503 with back-off by default; see each fault's first answer.
    let mut config = edge01.client_config().unwrap();
    config.default_retry = false;
    let api: Api<ConfigMap> = Api::namespaced(Client::try_from(config).unwrap(), "default");
    edge01
        .set_faults(Faults {
            down: true,
            ..Faults::default()
        })
        .await
        .unwrap();
    let err = api.list(&ListParams::default()).await.unwrap_err();
    assert!(
        matches!(err, kube::Error::HyperError(_) | kube::Error::Service(_)),
        "connection refused, got {err:?}"
    );
    // The other cluster is unaffected.
    let other: Api<ConfigMap> = Api::namespaced(edge02.client().unwrap(), "default");
    other.list(&ListParams::default()).await.unwrap();
    edge01
        .set_faults(Faults {
            error_rate: 1.0,
            error_code: 429,
            ..Faults::default()
        })
        .await
        .unwrap();
    let err = api.list(&ListParams::default()).await.unwrap_err();
    assert!(matches!(err, kube::Error::Api(ref s) if s.code == 429), "{err:?}");
    edge01
        .set_faults(Faults {
            reject_kinds: vec!["ConfigMap".into()],
            ..Faults::default()
        })
        .await
        .unwrap();
    let err = api
        .create(
            &PostParams::default(),
            &serde_json::from_value(json!({"metadata": {"name": "x"}})).unwrap(),
        )
        .await
        .unwrap_err();
    assert!(
        matches!(err, kube::Error::Api(ref s) if s.code == 403 && s.message.contains("ConfigMap")),
        "{err:?}"
    );
    edge01
        .set_faults(Faults {
            latency_ms: 300,
            ..Faults::default()
        })
        .await
        .unwrap();
    let started = std::time::Instant::now();
    api.list(&ListParams::default()).await.unwrap();
    assert!(
        started.elapsed() >= Duration::from_millis(300),
        "latency is added"
    );
}

#[tokio::test]
async fn injected_errors_carry_retry_after_and_every_request_is_logged() {
    let sim = Simulator::start_named(1).await.unwrap();
    let edge01 = &sim.clusters()[0];
    // kube-rs would retry 429 and 503 answers itself.
    let mut config = edge01.client_config().unwrap();
    config.default_retry = false;
    let client = Client::try_from(config).unwrap();
    for code in [429u16, 503] {
        edge01
            .set_faults(Faults {
                error_rate: 1.0,
                error_code: code,
                retry_after_seconds: Some(3),
                ..Faults::default()
            })
            .await
            .unwrap();
        let request = http::Request::get("/api/v1/namespaces/default/configmaps?watch=1")
            .body(kube::client::Body::empty())
            .unwrap();
        let response = client.send(request).await.unwrap();
        assert_eq!(response.status().as_u16(), code);
        assert_eq!(response.headers()["retry-after"], "3");
        let body = response.into_body().collect_bytes().await.unwrap();
        let status: serde_json::Value = serde_json::from_slice(&body).unwrap();
        assert_eq!(
            (status["code"].as_u64(), &status["details"]["retryAfterSeconds"]),
            (Some(u64::from(code)), &json!(3)),
            "{status}"
        );
    }
    // Without retryAfterSeconds, no header.
    edge01
        .set_faults(Faults {
            error_rate: 1.0,
            error_code: 503,
            ..Faults::default()
        })
        .await
        .unwrap();
    let request = http::Request::get("/api/v1/namespaces/default/configmaps")
        .body(kube::client::Body::empty())
        .unwrap();
    let response = client.send(request).await.unwrap();
    assert_eq!(response.status().as_u16(), 503);
    assert!(response.headers().get("retry-after").is_none());

    // For a while only: answered normally once the window is over.
    edge01
        .set_faults(Faults {
            error_rate: 1.0,
            error_code: 503,
            error_for_ms: Some(1000),
            ..Faults::default()
        })
        .await
        .unwrap();
    let configmaps: Api<ConfigMap> = Api::namespaced(client.clone(), "default");
    let err = configmaps.list(&ListParams::default()).await.unwrap_err();
    assert!(matches!(err, kube::Error::Api(ref s) if s.code == 503), "{err:?}");
    tokio::time::sleep(Duration::from_millis(1100)).await;
    configmaps.list(&ListParams::default()).await.unwrap();

    let logged: Vec<_> = edge01
        .shared()
        .requests()
        .into_iter()
        .filter(|r| r.path == "/api/v1/namespaces/default/configmaps")
        .map(|r| (r.method, r.watch))
        .collect();
    assert_eq!(
        logged,
        [
            ("GET".to_string(), true),
            ("GET".to_string(), true),
            ("GET".to_string(), false),
            ("GET".to_string(), false),
            ("GET".to_string(), false)
        ]
    );
    // Reads are not counted as writes; a create is.
    let writes = edge01.writes();
    configmaps
        .create(
            &PostParams::default(),
            &serde_json::from_value(serde_json::json!({"metadata": {"name": "counted"}})).unwrap(),
        )
        .await
        .unwrap();
    configmaps.get("counted").await.unwrap();
    assert_eq!(edge01.writes(), writes + 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn controllers_that_fall_behind_the_change_feed_resync_and_lose_nothing() {
    // A change feed of 2 slots: the controllers lag behind it at every burst, so each lost change must be made
    // up by a resync from the store, or the Deployment's status stays short of its pods.
    let mut config = kubesim::ClusterConfig::new("edge01");
    config.change_feed_capacity = 2;
    let sim = Simulator::start(vec![config]).await.unwrap();
    let client = sim.clusters()[0].client().unwrap();
    let deployments: Api<Deployment> = Api::namespaced(client.clone(), "default");
    for name in ["lag-a", "lag-b", "lag-c"] {
        let deployment: Deployment = serde_json::from_value(json!({
            "metadata": {"name": name},
            "spec": {"replicas": 40, "selector": {"matchLabels": {"app": name}},
                     "template": {"metadata": {"labels": {"app": name}}, "spec": {"containers": [{"name": "app", "image": "nginx:1.27"}]}}}
        }))
        .unwrap();
        deployments
            .create(&PostParams::default(), &deployment)
            .await
            .unwrap();
    }
    // Polled, not watched: a watch on so small a feed is itself ended with 410 at every burst.
    let deadline = tokio::time::Instant::now() + Duration::from_secs(60);
    for name in ["lag-a", "lag-b", "lag-c"] {
        loop {
            let status = deployments.get(name).await.unwrap().status.unwrap_or_default();
            if (
                status.ready_replicas,
                status.available_replicas,
                status.updated_replicas,
            ) == (Some(40), Some(40), Some(40))
            {
                break;
            }
            assert!(
                tokio::time::Instant::now() < deadline,
                "{name} stays short: {status:?}"
            );
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }
    let pods: Api<Pod> = Api::namespaced(client.clone(), "default");
    let running = pods.list(&ListParams::default()).await.unwrap();
    assert_eq!(running.items.len(), 120);
    assert!(
        sim.clusters()[0].shared().fell_behind() > 0,
        "the resyncs are counted"
    );
}

#[tokio::test]
async fn software_inside_a_cluster_reaches_its_api_without_a_socket_even_when_the_cluster_is_off_the_network()
{
    let sim = Simulator::start_named(1).await.unwrap();
    let cluster = &sim.clusters()[0];
    let inside = cluster.in_cluster_client();
    let configmaps: Api<ConfigMap> = Api::namespaced(inside.clone(), "default");
    let mut seen = watcher(configmaps.clone(), watcher::Config::default())
        .applied_objects()
        .boxed();
    cluster
        .set_faults(Faults {
            down: true,
            ..Faults::default()
        })
        .await
        .unwrap();
    let outside: Api<ConfigMap> = Api::namespaced(cluster.client().unwrap(), "default");
    assert!(outside.list(&ListParams::default()).await.is_err());
    configmaps
        .create(
            &PostParams::default(),
            &serde_json::from_value(json!({"metadata": {"name": "from-inside"}})).unwrap(),
        )
        .await
        .unwrap();
    let first = tokio::time::timeout(Duration::from_secs(5), seen.next())
        .await
        .unwrap()
        .unwrap()
        .unwrap();
    assert_eq!(first.metadata.name.as_deref(), Some("from-inside"));
    // What arrives from inside is not counted among the requests the cluster received over the network.
    assert_eq!(cluster.writes(), 0);
    assert_eq!(cluster.reads(), 0);
    cluster.set_faults(Faults::default()).await.unwrap();
    let listed = outside.list(&ListParams::default()).await.unwrap();
    assert!(
        listed
            .items
            .iter()
            .any(|cm| cm.metadata.name.as_deref() == Some("from-inside"))
    );
    assert_eq!(cluster.reads(), 1);
}

/// A client built the way users build one: from the cluster's kubeconfig (server, CA, `tls-server-name`, admin
/// certificate).
async fn kubeconfig_client(cluster: &kubesim::SimCluster) -> Client {
    let kubeconfig = kube::config::Kubeconfig::from_yaml(&cluster.kubeconfig()).unwrap();
    let mut config =
        kube::Config::from_custom_kubeconfig(kubeconfig, &kube::config::KubeConfigOptions::default())
            .await
            .unwrap();
    config.default_retry = false;
    Client::try_from(config).unwrap()
}

#[tokio::test]
async fn clusters_behind_one_listener_are_told_apart_by_their_tls_server_name() {
    let listener = kubesim::server::SharedListener::bind(std::net::SocketAddr::from(([127, 0, 0, 1], 0)))
        .await
        .unwrap();
    let sim = Simulator::start_shared(
        vec![
            kubesim::ClusterConfig::new("edge01"),
            kubesim::ClusterConfig::new("edge02"),
        ],
        &listener,
    )
    .unwrap();
    let (edge01, edge02) = (&sim.clusters()[0], &sim.clusters()[1]);
    assert_eq!(edge01.url(), edge02.url(), "one port for both");
    assert!(edge01.kubeconfig().contains("tls-server-name: edge01.kubesim"));
    let one: Api<ConfigMap> = Api::namespaced(kubeconfig_client(edge01).await, "default");
    let two: Api<ConfigMap> = Api::namespaced(kubeconfig_client(edge02).await, "default");
    one.create(
        &PostParams::default(),
        &serde_json::from_value(json!({"metadata": {"name": "only-on-edge01"}})).unwrap(),
    )
    .await
    .unwrap();
    let names = |list: kube::core::ObjectList<ConfigMap>| {
        list.items
            .into_iter()
            .filter_map(|cm| cm.metadata.name)
            .collect::<Vec<_>>()
    };
    assert!(names(one.list(&ListParams::default()).await.unwrap()).contains(&"only-on-edge01".to_string()));
    assert!(!names(two.list(&ListParams::default()).await.unwrap()).contains(&"only-on-edge01".to_string()));
    assert_eq!((edge01.writes(), edge02.writes()), (1, 0));

    // edge01's admin certificate is signed by edge01's CA only: edge02 does not take it.
    let mut borrowed = edge02.client_config_for(&edge01.admin_credentials()).unwrap();
    borrowed.default_retry = false;
    let borrowed: Api<ConfigMap> = Api::namespaced(Client::try_from(borrowed).unwrap(), "default");
    assert!(borrowed.list(&ListParams::default()).await.is_err());
    // A server name no cluster answers to is closed before the handshake.
    let mut unknown = edge01.client_config().unwrap();
    unknown.default_retry = false;
    unknown.tls_server_name = Some("edge03.kubesim".into());
    let unknown: Api<ConfigMap> = Api::namespaced(Client::try_from(unknown).unwrap(), "default");
    assert!(unknown.list(&ListParams::default()).await.is_err());

    // Down: an open watch ends and new connections fail; the other cluster behind the listener serves on.
    let mut events = one.watch(&WatchParams::default(), "0").await.unwrap().boxed();
    assert!(
        tokio::time::timeout(Duration::from_secs(5), events.next())
            .await
            .unwrap()
            .is_some(),
        "the watch replays the ConfigMap"
    );
    edge01
        .set_faults(Faults {
            down: true,
            ..Faults::default()
        })
        .await
        .unwrap();
    let ended = tokio::time::timeout(Duration::from_secs(5), async {
        while let Some(Ok(_)) = events.next().await {}
    })
    .await;
    assert!(
        ended.is_ok(),
        "the open watch is dropped when its cluster goes down"
    );
    let fresh: Api<ConfigMap> = Api::namespaced(kubeconfig_client(edge01).await, "default");
    assert!(fresh.list(&ListParams::default()).await.is_err());
    two.list(&ListParams::default()).await.unwrap();
    assert!(edge01.faults().down);
    edge01.set_faults(Faults::default()).await.unwrap();
    assert!(names(fresh.list(&ListParams::default()).await.unwrap()).contains(&"only-on-edge01".to_string()));
}

#[tokio::test]
async fn a_cluster_behind_a_shared_listener_needs_https_and_a_dns_label_name() {
    let listener = kubesim::server::SharedListener::bind(std::net::SocketAddr::from(([127, 0, 0, 1], 0)))
        .await
        .unwrap();
    let mut plain = kubesim::ClusterConfig::new("edge01");
    plain.insecure_http = true;
    let err = Simulator::start_shared(vec![plain], &listener).err().unwrap();
    assert!(err.to_string().contains("HTTPS only"), "{err}");
    let err = Simulator::start_shared(vec![kubesim::ClusterConfig::new("edge_01")], &listener)
        .err()
        .unwrap();
    assert!(err.to_string().contains("DNS label"), "{err}");
    let _first = Simulator::start_shared(vec![kubesim::ClusterConfig::new("edge01")], &listener).unwrap();
    let err = Simulator::start_shared(vec![kubesim::ClusterConfig::new("EDGE01")], &listener)
        .err()
        .unwrap();
    assert!(err.to_string().contains("same server name"), "{err}");
}

#[tokio::test]
async fn a_cluster_plays_its_kubernetes_release() {
    let old: kubesim::KubernetesVersion = "1.23".parse().unwrap();
    let sim = Simulator::start(vec![
        kubesim::ClusterConfig::new("old").with_kubernetes_version(old),
        kubesim::ClusterConfig::new("new"),
    ])
    .await
    .unwrap();
    let (old_client, new_client) = (
        sim.cluster("old").unwrap().client().unwrap(),
        sim.cluster("new").unwrap().client().unwrap(),
    );
    let version = old_client.apiserver_version().await.unwrap();
    assert_eq!(
        (version.minor.as_str(), version.git_version.as_str()),
        ("23", "v1.23.0+kubesim")
    );
    // 1.23 predates aggregated discovery: a client asking for it gets the classic documents and reads every group.
    let every_version = |discovery: &Discovery| -> BTreeSet<String> {
        discovery
            .groups()
            .flat_map(|group| {
                group.versions().flat_map(|version| {
                    group
                        .versioned_resources(version)
                        .into_iter()
                        .map(|(ar, _)| format!("{}/{}/{}", ar.group, ar.version, ar.kind))
                })
            })
            .collect()
    };
    let old_kinds = every_version(&Discovery::new(old_client.clone()).run().await.unwrap());
    let new_kinds = every_version(&Discovery::new(new_client.clone()).run().await.unwrap());
    for served in [
        "policy/v1beta1/PodSecurityPolicy",
        "policy/v1/PodDisruptionBudget",
        "autoscaling/v2/HorizontalPodAutoscaler",
    ] {
        assert!(old_kinds.contains(served), "1.23 serves {served}: {old_kinds:?}");
    }
    assert!(
        !new_kinds.contains("policy/v1beta1/PodSecurityPolicy"),
        "1.33 serves no PSP"
    );
    assert!(
        !old_kinds.contains("networking.k8s.io/v1beta1/Ingress"),
        "1.23 no longer serves v1beta1 Ingress"
    );
    let classic = old_client
        .request_text(
            http::Request::get("/apis")
                .header(
                    "Accept",
                    "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList,application/json",
                )
                .body(Vec::new())
                .unwrap(),
        )
        .await
        .unwrap();
    assert!(classic.contains("\"kind\":\"APIGroupList\""), "{classic}");
    let groups = old_client.list_api_groups().await.unwrap();
    let policy = groups.groups.iter().find(|g| g.name == "policy").unwrap();
    let versions: Vec<&str> = policy.versions.iter().map(|v| v.version.as_str()).collect();
    assert_eq!(versions, ["v1", "v1beta1"]);
    assert_eq!(policy.preferred_version.as_ref().unwrap().version, "v1");

    // A PodSecurityPolicy is stored on 1.23 and refused by 1.33 as a kind it does not serve.
    let psp = ApiResource::from_gvk_with_plural(
        &GroupVersionKind::gvk("policy", "v1beta1", "PodSecurityPolicy"),
        "podsecuritypolicies",
    );
    let object: DynamicObject = serde_json::from_value(
        json!({"apiVersion": "policy/v1beta1", "kind": "PodSecurityPolicy",
        "metadata": {"name": "restricted"}, "spec": {"privileged": false, "seLinux": {"rule": "RunAsAny"}}}),
    )
    .unwrap();
    let apply = PatchParams::apply("emco");
    Api::<DynamicObject>::all_with(old_client.clone(), &psp)
        .patch("restricted", &apply, &Patch::Apply(&object))
        .await
        .unwrap();
    let refused = Api::<DynamicObject>::all_with(new_client, &psp)
        .patch("restricted", &apply, &Patch::Apply(&object))
        .await
        .unwrap_err();
    assert!(
        matches!(&refused, kube::Error::Api(status) if status.code == 404),
        "{refused}"
    );

    // Versions of one type share storage: a PodDisruptionBudget written as v1beta1 is read as v1, at v1.
    let at = |version: &str| {
        ApiResource::from_gvk_with_plural(
            &GroupVersionKind::gvk("policy", version, "PodDisruptionBudget"),
            "poddisruptionbudgets",
        )
    };
    let pdb: DynamicObject = serde_json::from_value(json!({"apiVersion": "policy/v1beta1", "kind": "PodDisruptionBudget",
        "metadata": {"name": "web"}, "spec": {"minAvailable": 1, "selector": {"matchLabels": {"app": "web"}}}})).unwrap();
    Api::<DynamicObject>::namespaced_with(old_client.clone(), "default", &at("v1beta1"))
        .patch("web", &apply, &Patch::Apply(&pdb))
        .await
        .unwrap();
    let read = Api::<DynamicObject>::namespaced_with(old_client, "default", &at("v1"))
        .get("web")
        .await
        .unwrap();
    assert_eq!(read.types.unwrap().api_version, "policy/v1");
    assert_eq!(read.data["spec"]["minAvailable"], 1);
}

#[tokio::test]
async fn nodes_report_the_capacity_a_cluster_is_given() {
    let sim = Simulator::start(vec![
        kubesim::ClusterConfig::new("edge01")
            .with_node_capacity("cpu", "8")
            .with_node_capacity("intel.com/qat", "4")
            .with_node_label("feature.node.kubernetes.io/cpu-cpuid.AVX512F", "true"),
    ])
    .await
    .unwrap();
    let nodes: Api<emco_k8s::k8s_openapi::api::core::v1::Node> =
        Api::all(sim.clusters()[0].client().unwrap());
    let node = nodes.list(&ListParams::default()).await.unwrap().items.remove(0);
    let status = node.status.unwrap();
    for resources in [status.capacity.unwrap(), status.allocatable.unwrap()] {
        let shown: Vec<(String, String)> = resources.into_iter().map(|(k, v)| (k, v.0)).collect();
        assert_eq!(
            shown,
            [
                ("cpu".to_string(), "8".to_string()),
                ("intel.com/qat".to_string(), "4".to_string()),
                ("memory".to_string(), "256Gi".to_string()),
                ("pods".to_string(), "1000".to_string()),
            ]
        );
    }
    let labels = node.metadata.labels.unwrap();
    assert_eq!(labels["feature.node.kubernetes.io/cpu-cpuid.AVX512F"], "true");
}
