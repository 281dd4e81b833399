//! ResourceQuota admission through kube-rs: object counts and compute resources are enforced with Kubernetes'
//! 403 and shown in the quota's status; pods the simulated controllers create are admitted too, and a refusal
//! shows on the workload (ReplicaSet and Deployment `ReplicaFailure`, `FailedCreate` events) until quota frees.

use std::time::Duration;

use emco_k8s::k8s_openapi::api::apps::v1::{Deployment, ReplicaSet};
use emco_k8s::k8s_openapi::api::batch::v1::Job;
use emco_k8s::k8s_openapi::api::core::v1::{ConfigMap, Event, Namespace, Pod, ResourceQuota};
use kube::api::{Api, DeleteParams, ListParams, PostParams};
use kubesim::Simulator;
use serde_json::json;

fn status_message(err: kube::Error) -> (u16, String) {
    match err {
        kube::Error::Api(status) => (status.code, status.message.clone()),
        other => panic!("not an API error: {other:?}"),
    }
}

#[tokio::test]
async fn quotas_refuse_objects_past_their_counts_and_show_their_usage() {
    let sim = Simulator::start_named(1).await.unwrap();
    let client = sim.clusters()[0].client().unwrap();
    let post = PostParams::default();
    Api::<Namespace>::all(client.clone())
        .create(
            &post,
            &serde_json::from_value(json!({"metadata": {"name": "q"}})).unwrap(),
        )
        .await
        .unwrap();
    let quotas: Api<ResourceQuota> = Api::namespaced(client.clone(), "q");
    quotas
        .create(
            &post,
            &serde_json::from_value(json!({"metadata": {"name": "small"},
                "spec": {"hard": {"configmaps": "3", "count/deployments.apps": "1", "requests.cpu": "1"}}}))
            .unwrap(),
        )
        .await
        .unwrap();
    let config_maps: Api<ConfigMap> = Api::namespaced(client.clone(), "q");
    let config_map =
        |name: &str| -> ConfigMap { serde_json::from_value(json!({"metadata": {"name": name}})).unwrap() };
    config_maps.create(&post, &config_map("c0")).await.unwrap();
    config_maps.create(&post, &config_map("c1")).await.unwrap();
    assert_eq!(
        status_message(config_maps.create(&post, &config_map("c2")).await.unwrap_err()),
        (
            403,
            "configmaps \"c2\" is forbidden: exceeded quota: small, requested: configmaps=1, used: configmaps=3, limited: configmaps=3".into()
        )
    );
    let deployments: Api<Deployment> = Api::namespaced(client.clone(), "q");
    let deployment = |name: &str| -> Deployment {
        serde_json::from_value(json!({"metadata": {"name": name}, "spec": {"replicas": 0,
            "selector": {"matchLabels": {"app": name}},
            "template": {"metadata": {"labels": {"app": name}}, "spec": {"containers": [{"name": "main", "image": "registry.local/x:1"}]}}}}))
        .unwrap()
    };
    deployments.create(&post, &deployment("d1")).await.unwrap();
    assert_eq!(
        status_message(deployments.create(&post, &deployment("d2")).await.unwrap_err()).1,
        "deployments.apps \"d2\" is forbidden: exceeded quota: small, requested: count/deployments.apps=1, used: count/deployments.apps=1, limited: count/deployments.apps=1"
    );
    // Another namespace is not limited.
    Api::<ConfigMap>::namespaced(client.clone(), "default")
        .create(&post, &config_map("c2"))
        .await
        .unwrap();

    // The status shows the limits and what is used (no pods: no cpu).
    let mut status = None;
    for _ in 0..100 {
        status = quotas.get("small").await.unwrap().status;
        if status
            .as_ref()
            .and_then(|s| s.used.as_ref())
            .is_some_and(|used| used.len() == 3)
        {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let status = serde_json::to_value(status.unwrap()).unwrap();
    assert_eq!(
        status["used"],
        json!({"configmaps": "3", "count/deployments.apps": "1", "requests.cpu": "0"}),
        "{status}"
    );
    assert_eq!(status["hard"]["requests.cpu"], "1", "{status}");

    // Deleting makes room again.
    config_maps.delete("c0", &DeleteParams::default()).await.unwrap();
    config_maps.create(&post, &config_map("c2")).await.unwrap();
}

/// Polls `probe` until it yields a value (or gives up after about 20 s, naming `what`).
async fn until<T, F, Fut>(what: &str, mut probe: F) -> T
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = Option<T>>,
{
    for _ in 0..400 {
        if let Some(value) = probe().await {
            return value;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    panic!("gave up waiting for {what}");
}

async fn namespace_with_quota(client: &kube::Client, namespace: &str, quota: serde_json::Value) {
    Api::<Namespace>::all(client.clone())
        .create(
            &PostParams::default(),
            &serde_json::from_value(json!({"metadata": {"name": namespace}})).unwrap(),
        )
        .await
        .unwrap();
    Api::<ResourceQuota>::namespaced(client.clone(), namespace)
        .create(&PostParams::default(), &serde_json::from_value(quota).unwrap())
        .await
        .unwrap();
}

/// A pod with one container per `(name, requests, limits)`.
fn pod(name: &str, containers: &[(&str, serde_json::Value, serde_json::Value)]) -> Pod {
    let containers: Vec<serde_json::Value> = containers
        .iter()
        .map(|(container, requests, limits)| {
            json!({"name": container, "image": "registry.local/x:1", "resources": {"requests": requests, "limits": limits}})
        })
        .collect();
    serde_json::from_value(json!({"metadata": {"name": name}, "spec": {"containers": containers}})).unwrap()
}

/// Waits until the quota's `status.used` has `resource` at `amount`, and returns all of `status.used`.
async fn used_when(
    quotas: &Api<ResourceQuota>,
    name: &str,
    resource: &str,
    amount: &str,
) -> serde_json::Value {
    until(&format!("{resource}={amount} in {name}'s status.used"), || {
        let quotas = quotas.clone();
        async move {
            let quota = quotas.get(name).await.unwrap();
            let used = serde_json::to_value(quota.status?.used?).unwrap();
            (used[resource] == amount).then_some(used)
        }
    })
    .await
}

#[tokio::test]
async fn compute_quotas_refuse_pods_past_their_limits_and_account_their_usage() {
    let sim = Simulator::start_named(1).await.unwrap();
    let client = sim.clusters()[0].client().unwrap();
    namespace_with_quota(
        &client,
        "t1",
        json!({"metadata": {"name": "q"}, "spec": {"hard": {
            "requests.cpu": "1.2", "limits.cpu": "4", "requests.memory": "1Gi", "limits.memory": "2048Mi", "pods": "10"}}}),
    )
    .await;
    let quotas: Api<ResourceQuota> = Api::namespaced(client.clone(), "t1");
    let pods: Api<Pod> = Api::namespaced(client.clone(), "t1");
    let post = PostParams::default();
    let small = |name: &str| {
        pod(
            name,
            &[(
                "main",
                json!({"cpu": "500m", "memory": "256Mi"}),
                json!({"cpu": "1", "memory": "512Mi"}),
            )],
        )
    };
    pods.create(&post, &small("a")).await.unwrap();
    pods.create(&post, &small("b")).await.unwrap();
    assert_eq!(
        status_message(pods.create(&post, &small("p")).await.unwrap_err()),
        (
            403,
            "pods \"p\" is forbidden: exceeded quota: q, requested: requests.cpu=500m, used: requests.cpu=1, limited: requests.cpu=1200m".into()
        )
    );
    // Every exceeded resource is listed, in order.
    let big = pod(
        "big",
        &[(
            "main",
            json!({"cpu": "100m", "memory": "768Mi"}),
            json!({"cpu": "3", "memory": "1Gi"}),
        )],
    );
    assert_eq!(
        status_message(pods.create(&post, &big).await.unwrap_err()).1,
        "pods \"big\" is forbidden: exceeded quota: q, requested: limits.cpu=3,requests.memory=768Mi, used: limits.cpu=2,requests.memory=512Mi, limited: limits.cpu=4,requests.memory=1Gi"
    );
    // A container that does not state a resource the quota limits is refused as Kubernetes refuses it.
    let unlimited = pod(
        "c",
        &[
            (
                "c2",
                json!({"cpu": "100m", "memory": "64Mi"}),
                json!({"memory": "64Mi"}),
            ),
            ("c1", json!({"memory": "64Mi"}), json!({"memory": "64Mi"})),
        ],
    );
    assert_eq!(
        status_message(pods.create(&post, &unlimited).await.unwrap_err()).1,
        "pods \"c\" is forbidden: failed quota: q: must specify limits.cpu for: c1,c2; requests.cpu for: c1"
    );
    // Requests default to limits, so a pod stating only limits is complete.
    let limits_only = pod(
        "l",
        &[("main", json!({}), json!({"cpu": "100m", "memory": "128Mi"}))],
    );
    let created = pods.create(&post, &limits_only).await.unwrap();
    // Requests equal to limits for cpu and memory: Guaranteed.
    assert_eq!(
        created.status.as_ref().and_then(|s| s.qos_class.as_deref()),
        Some("Guaranteed")
    );
    let requests = serde_json::to_value(&created.spec.unwrap().containers[0].resources).unwrap();
    assert_eq!(
        requests["requests"],
        json!({"cpu": "100m", "memory": "128Mi"}),
        "{requests}"
    );

    // The status shows every limited resource in canonical form, with what is used.
    let used = used_when(&quotas, "q", "pods", "3").await;
    assert_eq!(
        used,
        json!({"requests.cpu": "1100m", "limits.cpu": "2100m", "requests.memory": "640Mi", "limits.memory": "1152Mi", "pods": "3"})
    );
    let hard = serde_json::to_value(quotas.get("q").await.unwrap().status.unwrap().hard.unwrap()).unwrap();
    assert_eq!(hard["requests.cpu"], "1200m");
    assert_eq!(hard["limits.memory"], "2Gi");

    // Deleting a pod releases what it used.
    pods.delete("a", &DeleteParams::default()).await.unwrap();
    used_when(&quotas, "q", "requests.cpu", "600m").await;
    pods.create(&post, &small("p")).await.unwrap();

    let run_once = |name: &str| {
        let cpu_and_memory = json!({"cpu": "200m", "memory": "64Mi"});
        let mut once = pod(name, &[("main", cpu_and_memory.clone(), cpu_and_memory)]);
        once.spec.as_mut().unwrap().restart_policy = Some("Never".into());
        once
    };
    used_when(&quotas, "q", "requests.cpu", "1100m").await;
    assert_eq!(
        status_message(pods.create(&post, &run_once("once")).await.unwrap_err()).1,
        "pods \"once\" is forbidden: exceeded quota: q, requested: requests.cpu=200m, used: requests.cpu=1100m, limited: requests.cpu=1200m"
    );
    pods.delete("l", &DeleteParams::default()).await.unwrap();
    used_when(&quotas, "q", "requests.cpu", "1").await;
    // A Job's pod that ran to completion no longer uses compute.
    let jobs: Api<Job> = Api::namespaced(client.clone(), "t1");
    // (Its pod takes 3 s to start, so the usage can be seen while it runs.)
    let job: Job = serde_json::from_value(json!({"metadata": {"name": "once"}, "spec": {"template": {
        "metadata": {"annotations": {kubesim::READY_AFTER_ANNOTATION: "3000"}}, "spec": {
        "restartPolicy": "Never", "containers": [{"name": "main", "image": "registry.local/job:1",
            "resources": {"requests": {"cpu": "200m", "memory": "64Mi"}, "limits": {"cpu": "200m", "memory": "64Mi"}}}]}}}}))
    .unwrap();
    jobs.create(&post, &job).await.unwrap();
    used_when(&quotas, "q", "requests.cpu", "1200m").await;
    until("the Job to complete", || {
        let jobs = jobs.clone();
        async move {
            let status = jobs.get("once").await.unwrap().status?;
            (status.succeeded == Some(1)).then_some(())
        }
    })
    .await;
    // Only with its 200m released does another fit.
    pods.create(&post, &run_once("after")).await.unwrap();

    // Bad quantities name the field.
    let bad = pod("bad", &[("main", json!({"cpu": "lots"}), json!({}))]);
    let (code, message) = status_message(pods.create(&post, &bad).await.unwrap_err());
    assert_eq!(code, 400);
    assert!(
        message.contains("spec.containers[0].resources.requests[cpu]") && message.contains("\"lots\""),
        "{message}"
    );
}

#[tokio::test]
async fn init_containers_count_as_kubernetes_counts_them() {
    let sim = Simulator::start_named(1).await.unwrap();
    let client = sim.clusters()[0].client().unwrap();
    namespace_with_quota(
        &client,
        "t2",
        json!({"metadata": {"name": "cpu"}, "spec": {"hard": {"requests.cpu": "1"}}}),
    )
    .await;
    let pods: Api<Pod> = Api::namespaced(client.clone(), "t2");
    let with_init = |name: &str, init_cpu: &str| -> Pod {
        serde_json::from_value(json!({"metadata": {"name": name}, "spec": {
            "initContainers": [{"name": "setup", "image": "registry.local/x:1", "resources": {"requests": {"cpu": init_cpu}}}],
            "containers": [
                {"name": "a", "image": "registry.local/x:1", "resources": {"requests": {"cpu": "200m"}}},
                {"name": "b", "image": "registry.local/x:1", "resources": {"requests": {"cpu": "300m"}}}]}}))
        .unwrap()
    };
    // The larger of the init container (1500m) and the containers' sum (500m).
    assert_eq!(
        status_message(
            pods.create(&PostParams::default(), &with_init("i1", "1500m"))
                .await
                .unwrap_err()
        )
        .1,
        "pods \"i1\" is forbidden: exceeded quota: cpu, requested: requests.cpu=1500m, used: requests.cpu=0, limited: requests.cpu=1"
    );
    // The containers' sum (500m) when the init container asks less (100m): two fit, a third does not.
    pods.create(&PostParams::default(), &with_init("i2", "100m"))
        .await
        .unwrap();
    pods.create(&PostParams::default(), &with_init("i3", "100m"))
        .await
        .unwrap();
    assert_eq!(
        status_message(
            pods.create(&PostParams::default(), &with_init("i4", "100m"))
                .await
                .unwrap_err()
        )
        .1,
        "pods \"i4\" is forbidden: exceeded quota: cpu, requested: requests.cpu=500m, used: requests.cpu=1, limited: requests.cpu=1"
    );
}

fn condition(status: &serde_json::Value, kind: &str) -> Option<serde_json::Value> {
    status["conditions"]
        .as_array()?
        .iter()
        .find(|c| c["type"] == kind)
        .cloned()
}

#[tokio::test]
async fn controller_pods_are_admitted_and_a_refusal_shows_on_the_workload_until_quota_frees() {
    let sim = Simulator::start_named(1).await.unwrap();
    let client = sim.clusters()[0].client().unwrap();
    namespace_with_quota(
        &client,
        "t3",
        json!({"metadata": {"name": "q"}, "spec": {"hard": {"requests.cpu": "1", "limits.cpu": "2"}}}),
    )
    .await;
    let deployments: Api<Deployment> = Api::namespaced(client.clone(), "t3");
    let deployment: Deployment = serde_json::from_value(json!({"metadata": {"name": "web"}, "spec": {"replicas": 3,
        "selector": {"matchLabels": {"app": "web"}},
        "template": {"metadata": {"labels": {"app": "web"}}, "spec": {"containers": [{"name": "main", "image": "registry.local/web:1",
            "resources": {"requests": {"cpu": "500m"}, "limits": {"cpu": "500m"}}}]}}}}))
    .unwrap();
    deployments
        .create(&PostParams::default(), &deployment)
        .await
        .unwrap();

    // Two pods fit; the third is refused, and the ReplicaSet and the Deployment say why.
    let replica_sets: Api<ReplicaSet> = Api::namespaced(client.clone(), "t3");
    let (rs_name, failure) = until("the ReplicaSet's ReplicaFailure", || {
        let replica_sets = replica_sets.clone();
        async move {
            let rs = replica_sets
                .list(&ListParams::default())
                .await
                .unwrap()
                .items
                .pop()?;
            let status = serde_json::to_value(rs.status?).unwrap();
            Some((rs.metadata.name?, condition(&status, "ReplicaFailure")?))
        }
    })
    .await;
    assert_eq!(failure["status"], "True");
    assert_eq!(failure["reason"], "FailedCreate");
    let message = failure["message"].as_str().unwrap();
    let prefix = format!("pods \"{rs_name}-");
    assert!(
        message.starts_with(&prefix)
            && message.ends_with("\" is forbidden: exceeded quota: q, requested: requests.cpu=500m, used: requests.cpu=1, limited: requests.cpu=1"),
        "{message}"
    );
    let shown = until("the Deployment's ReplicaFailure", || {
        let deployments = deployments.clone();
        async move {
            let status = serde_json::to_value(deployments.get("web").await.unwrap().status?).unwrap();
            condition(&status, "ReplicaFailure")
        }
    })
    .await;
    assert_eq!(shown["reason"], "FailedCreate");
    assert_eq!(shown["message"], failure["message"]);
    let events: Api<Event> = Api::namespaced(client.clone(), "t3");
    let event = until("a FailedCreate event", || {
        let events = events.clone();
        async move {
            events
                .list(&ListParams::default())
                .await
                .unwrap()
                .items
                .into_iter()
                .find(|e| e.reason.as_deref() == Some("FailedCreate"))
        }
    })
    .await;
    assert_eq!(event.type_.as_deref(), Some("Warning"));
    assert_eq!(event.involved_object.kind.as_deref(), Some("ReplicaSet"));
    assert!(
        event
            .message
            .as_deref()
            .is_some_and(|m| m.starts_with(&format!("Error creating: {prefix}"))),
        "{event:?}"
    );
    let pods: Api<Pod> = Api::namespaced(client.clone(), "t3");
    assert_eq!(pods.list(&ListParams::default()).await.unwrap().items.len(), 2);

    // Raising the quota lets the retry through, and the failure conditions go away.
    let quotas: Api<ResourceQuota> = Api::namespaced(client.clone(), "t3");
    quotas
        .patch(
            "q",
            &kube::api::PatchParams::default(),
            &kube::api::Patch::Merge(json!({"spec": {"hard": {"requests.cpu": "2"}}})),
        )
        .await
        .unwrap();
    let status = until("the Deployment to become available without failures", || {
        let deployments = deployments.clone();
        async move {
            let status = serde_json::to_value(deployments.get("web").await.unwrap().status?).unwrap();
            (status["availableReplicas"] == 3 && condition(&status, "ReplicaFailure").is_none())
                .then_some(status)
        }
    })
    .await;
    assert_eq!(condition(&status, "Available").unwrap()["status"], "True");
    let rs = replica_sets.get(&rs_name).await.unwrap();
    let rs_status = serde_json::to_value(rs.status.unwrap()).unwrap();
    assert!(condition(&rs_status, "ReplicaFailure").is_none(), "{rs_status}");
}

#[tokio::test]
async fn a_job_waits_for_quota_and_runs_its_pods_one_at_a_time() {
    let sim = Simulator::start_named(1).await.unwrap();
    let client = sim.clusters()[0].client().unwrap();
    namespace_with_quota(
        &client,
        "t4",
        json!({"metadata": {"name": "one-pod"}, "spec": {"hard": {"pods": "1"}}}),
    )
    .await;
    let jobs: Api<Job> = Api::namespaced(client.clone(), "t4");
    let job: Job = serde_json::from_value(json!({"metadata": {"name": "batch"}, "spec": {"completions": 3, "parallelism": 3,
        "template": {"spec": {"restartPolicy": "Never", "containers": [{"name": "main", "image": "registry.local/job:1"}]}}}}))
    .unwrap();
    jobs.create(&PostParams::default(), &job).await.unwrap();
    // Only one pod runs at a time, yet the Job completes as each finished pod frees the quota.
    let status = until("the Job to complete", || {
        let jobs = jobs.clone();
        async move {
            let status = serde_json::to_value(jobs.get("batch").await.unwrap().status?).unwrap();
            condition(&status, "Complete").map(|_| status)
        }
    })
    .await;
    assert_eq!(status["succeeded"], 3, "{status}");
    let events: Api<Event> = Api::namespaced(client.clone(), "t4");
    let refused = events
        .list(&ListParams::default())
        .await
        .unwrap()
        .items
        .into_iter()
        .find(|e| e.reason.as_deref() == Some("FailedCreate"))
        .expect("a FailedCreate event");
    assert_eq!(refused.involved_object.kind.as_deref(), Some("Job"));
    assert!(
        refused.message.as_deref().is_some_and(|m| m.contains(
            "is forbidden: exceeded quota: one-pod, requested: pods=1, used: pods=1, limited: pods=1"
        )),
        "{refused:?}"
    );
}

#[tokio::test]
async fn stateful_and_daemon_sets_record_refusals_and_claims_are_limited_by_storage() {
    use emco_k8s::k8s_openapi::api::apps::v1::{DaemonSet, StatefulSet};
    use emco_k8s::k8s_openapi::api::core::v1::PersistentVolumeClaim;
    let sim = Simulator::start_named(1).await.unwrap();
    let client = sim.clusters()[0].client().unwrap();
    namespace_with_quota(
        &client,
        "t5",
        json!({"metadata": {"name": "q"}, "spec": {"hard": {"pods": "1", "requests.storage": "1Gi",
            "fast.storageclass.storage.k8s.io/persistentvolumeclaims": "1"}}}),
    )
    .await;
    let post = PostParams::default();
    let template = |app: &str| json!({"metadata": {"labels": {"app": app}}, "spec": {"containers": [{"name": "main", "image": "registry.local/x:1"}]}});
    let stateful_sets: Api<StatefulSet> = Api::namespaced(client.clone(), "t5");
    stateful_sets
        .create(
            &post,
            &serde_json::from_value(
                json!({"metadata": {"name": "web"}, "spec": {"replicas": 2, "serviceName": "web",
                "selector": {"matchLabels": {"app": "web"}}, "template": template("web")}}),
            )
            .unwrap(),
        )
        .await
        .unwrap();
    let events: Api<Event> = Api::namespaced(client.clone(), "t5");
    let refusal_of = |kind: &'static str| {
        let events = events.clone();
        async move {
            events
                .list(&ListParams::default())
                .await
                .unwrap()
                .items
                .into_iter()
                .find(|e| {
                    e.reason.as_deref() == Some("FailedCreate")
                        && e.involved_object.kind.as_deref() == Some(kind)
                })
                .and_then(|e| e.message)
        }
    };
    let message = until("the StatefulSet's FailedCreate event", || {
        refusal_of("StatefulSet")
    })
    .await;
    assert_eq!(
        message,
        "create Pod web-1 in StatefulSet web failed error: pods \"web-1\" is forbidden: exceeded quota: q, requested: pods=1, used: pods=1, limited: pods=1"
    );
    let daemon_sets: Api<DaemonSet> = Api::namespaced(client.clone(), "t5");
    daemon_sets
        .create(
            &post,
            &serde_json::from_value(json!({"metadata": {"name": "agent"}, "spec": {
                "selector": {"matchLabels": {"app": "agent"}}, "template": template("agent")}}))
            .unwrap(),
        )
        .await
        .unwrap();
    let message = until("the DaemonSet's FailedCreate event", || refusal_of("DaemonSet")).await;
    assert!(
        message.starts_with("Error creating: pods \"agent-")
            && message.ends_with(
                "\" is forbidden: exceeded quota: q, requested: pods=1, used: pods=1, limited: pods=1"
            ),
        "{message}"
    );

    // Room for both: the StatefulSet's second pod and the DaemonSet's pod are created on retry.
    Api::<ResourceQuota>::namespaced(client.clone(), "t5")
        .patch(
            "q",
            &kube::api::PatchParams::default(),
            &kube::api::Patch::Merge(json!({"spec": {"hard": {"pods": "3"}}})),
        )
        .await
        .unwrap();
    until("the StatefulSet's two pods and the DaemonSet's pod", || {
        let stateful_sets = stateful_sets.clone();
        let daemon_sets = daemon_sets.clone();
        async move {
            let sts = stateful_sets.get("web").await.unwrap().status?;
            let ds = daemon_sets.get("agent").await.unwrap().status?;
            (sts.ready_replicas == Some(2) && ds.number_ready == 1).then_some(())
        }
    })
    .await;

    // Claims count their requested storage, and per storage class.
    let claims: Api<PersistentVolumeClaim> = Api::namespaced(client.clone(), "t5");
    let claim = |name: &str, class: &str| -> PersistentVolumeClaim {
        serde_json::from_value(
            json!({"metadata": {"name": name}, "spec": {"accessModes": ["ReadWriteOnce"],
            "storageClassName": class, "resources": {"requests": {"storage": "600Mi"}}}}),
        )
        .unwrap()
    };
    claims.create(&post, &claim("d1", "fast")).await.unwrap();
    assert_eq!(
        status_message(claims.create(&post, &claim("d2", "slow")).await.unwrap_err()).1,
        "persistentvolumeclaims \"d2\" is forbidden: exceeded quota: q, requested: requests.storage=600Mi, used: requests.storage=600Mi, limited: requests.storage=1Gi"
    );
    Api::<ResourceQuota>::namespaced(client.clone(), "t5")
        .patch(
            "q",
            &kube::api::PatchParams::default(),
            &kube::api::Patch::Merge(json!({"spec": {"hard": {"requests.storage": "10Gi"}}})),
        )
        .await
        .unwrap();
    assert_eq!(
        status_message(claims.create(&post, &claim("d3", "fast")).await.unwrap_err()).1,
        "persistentvolumeclaims \"d3\" is forbidden: exceeded quota: q, requested: fast.storageclass.storage.k8s.io/persistentvolumeclaims=1, used: fast.storageclass.storage.k8s.io/persistentvolumeclaims=1, limited: fast.storageclass.storage.k8s.io/persistentvolumeclaims=1"
    );
    claims.create(&post, &claim("d4", "slow")).await.unwrap();
}
