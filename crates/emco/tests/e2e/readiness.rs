//! Readiness end to end (issue #16 §2, §3): a pod failing in a kubesim cluster makes the DIG's state object
//! not ready with a message naming the pod and the cluster, and the cluster's resources carry the condition; the
//! state object on the DIG's GET follows create → instantiate → ready → terminate.

use std::time::Duration;

use emco_k8s::k8s_openapi::api::apps::v1::Deployment;
use kube::api::{Api, Patch, PatchParams};
use serde_json::{Value as Json, json};

use crate::support::*;

const SETTLE: Duration = Duration::from_secs(30);

fn condition<'a>(state: &'a Json, condition_type: &str) -> &'a Json {
    state["conditions"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["type"] == condition_type)
        .unwrap_or_else(|| panic!("no {condition_type} in {state}"))
}

/// The resources of `app` on the first cluster listed, with their conditions.
fn resources<'a>(answer: &'a Json, app: &str) -> Vec<&'a Json> {
    answer["apps"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|a| a["name"] == app)
        .flat_map(|a| a["clusters"][0]["resources"].as_array().unwrap())
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_failing_pod_makes_the_dig_not_ready_and_says_where() {
    let sim = crate::support::vfw_clusters(1).await;
    let _monitors = start_monitors(&sim);
    let emco = Emco::start().await;
    onboard_vfw(&emco.http, &kubeconfigs(&sim)).await;

    // Approved, not instantiated: not ready, and the state says why.
    let state = emco.http.get(DIG).await.expect(200).json()["state"].clone();
    assert_eq!(state["ready"], false);
    assert_eq!(condition(&state, "last_operation")["name"], "Approve");

    emco.http
        .post_empty(&format!("{DIG}/instantiate"))
        .await
        .expect(202);
    let ready = emco
        .http
        .wait_for("?status=ready&readiness", SETTLE, |a| {
            a["readiness"]["ready"] == true
        })
        .await;
    assert_eq!(ready["readyStatus"], "Ready");
    assert!(
        resources(&ready, "sink")
            .iter()
            .all(|r| r.get("conditions").is_none()),
        "ready resources carry no conditions unless asked: {ready}"
    );
    let state = emco.http.get(DIG).await.expect(200).json()["state"].clone();
    assert_eq!(state["ready"], true, "{state}");
    assert_eq!(condition(&state, "last_operation")["status"], "succeeded");
    assert_eq!(condition(&state, "Ready")["status"], "True");

    // The sink's pods crash from now on.
    let cluster = &sim.clusters()[0];
    let cluster_name = cluster.name().to_string();
    Api::<Deployment>::namespaced(cluster.client().unwrap(), "default")
        .patch(
            "fw0-sink",
            &PatchParams::default(),
            &Patch::Merge(json!({"spec": {"template": {"metadata": {"annotations": {"kubesim.io/fail": "CrashLoopBackOff"}}}}})),
        )
        .await
        .unwrap();
    let failing = emco
        .http
        .wait_for("?status=ready&readiness&app=sink", SETTLE, |a| {
            a["readiness"]["message"]
                .as_str()
                .is_some_and(|m| m.contains("CrashLoopBackOff"))
        })
        .await;
    let readiness = &failing["readiness"];
    assert_eq!(readiness["ready"], false);
    let message = readiness["message"].as_str().unwrap();
    assert!(
        message.starts_with(&format!("sink on {cluster_name}: Pod fw0-sink-")),
        "names the app, the cluster and the pod: {message}"
    );
    assert_eq!(condition(readiness, "Ready")["reason"], "Failed");

    // The cluster's resources carry it: the crashing pod Failed, the Deployment whose rollout waits on it
    // in progress, not failed.
    let sink = resources(&failing, "sink");
    let crashing = sink
        .iter()
        .find(|r| r["GVK"]["Kind"] == "Pod" && r["conditions"][0]["reason"] == "Failed")
        .unwrap_or_else(|| panic!("no failed pod: {failing}"));
    assert_eq!(crashing["readyStatus"], "NotReady");
    assert_eq!(crashing["conditions"][0]["status"], "False");
    assert!(crashing["conditions"][0]["lastTransitionTime"].is_string());
    let deployment = sink.iter().find(|r| r["GVK"]["Kind"] == "Deployment").unwrap();
    if let Some(condition) = deployment["conditions"].get(0) {
        assert_ne!(
            condition["reason"], "Failed",
            "a rollout under way is not a failure: {deployment}"
        );
    }
    // With every condition shown, while its new pod crash-loops: the Deployment's condition names it and counts its
    // replicas (EMCO's own rule may still call it ready: its old pod serves), and its verdict — what the index
    // assesses the reported object by — is InProgress, never Failed.
    let all = emco
        .http
        .wait_for("?status=ready&conditions=all&app=sink", SETTLE, |a| {
            resources(a, "sink").iter().any(|r| {
                r["GVK"]["Kind"] == "Deployment"
                    && r["conditions"][0]["message"]
                        .as_str()
                        .is_some_and(|m| m.contains("replica"))
            })
        })
        .await;
    let sink = resources(&all, "sink");
    let deployment = sink.iter().find(|r| r["GVK"]["Kind"] == "Deployment").unwrap();
    let rollout = &deployment["conditions"][0];
    assert_eq!(rollout["type"], "Ready", "{deployment}");
    assert_ne!(rollout["reason"], "Failed", "{deployment}");
    assert!(
        rollout["message"]
            .as_str()
            .unwrap()
            .starts_with("Deployment fw0-sink: "),
        "{deployment}"
    );
    let live = Api::<Deployment>::namespaced(cluster.client().unwrap(), "default")
        .get("fw0-sink")
        .await
        .unwrap();
    let mut object = serde_json::to_value(&live).unwrap();
    object["kind"] = json!("Deployment");
    object["apiVersion"] = json!("apps/v1");
    let verdict = emco_k8s::readiness::assess(&object);
    assert_eq!(
        verdict.health,
        emco_k8s::readiness::Health::InProgress,
        "a rollout waiting on a crash-looping pod is in progress: {verdict:?}"
    );
    assert!(
        verdict.message.starts_with("Deployment fw0-sink: ") && verdict.message.contains("replica"),
        "{verdict:?}"
    );
    let state = emco.http.get(DIG).await.expect(200).json()["state"].clone();
    assert_eq!(state["ready"], false);
    assert!(
        state["message"].as_str().unwrap().contains("CrashLoopBackOff"),
        "{state}"
    );

    // Terminated: the last operation is Terminate and the DIG is not ready.
    emco.http
        .post_empty(&format!("{DIG}/terminate"))
        .await
        .expect(202);
    emco.http
        .wait_for("?output=summary", SETTLE, |a| a["status"] == "Terminated")
        .await;
    let state = emco.http.get(DIG).await.expect(200).json()["state"].clone();
    assert_eq!(state["ready"], false);
    let operation = condition(&state, "last_operation");
    assert_eq!(
        (&operation["name"], &operation["status"]),
        (&json!("Terminate"), &json!("succeeded"))
    );
    assert_eq!(condition(&state, "Deployed")["status"], "False");
}
