//! A DIG's `/update` and `/rollback` against kubesim (issue #20): the vFW example changed while instantiated (an
//! override and a second cluster) shows `UpToDate=False`; the update writes only what changed (the patched
//! Deployment keeps its uid, the unchanged ConfigMap its resourceVersion) and brings everything to the new
//! cluster; a rollback to revision 1 cleans that cluster and restores the old values in place; unknown revisions
//! and bad bodies are refused; an emco killed in the middle of an update, or of a rollback, finishes it after its
//! restart.

use std::time::Duration;

use emco_k8s::k8s_openapi::api::apps::v1::Deployment;
use emco_k8s::k8s_openapi::api::core::v1::{ConfigMap, Service};
use kube::api::{Api, DynamicObject, ListParams};
use kube::core::{ApiResource, GroupVersionKind};
use kubesim::Faults;
use serde_json::{Value as Json, json};

use crate::support::*;

const SETTLE: Duration = Duration::from_secs(30);

/// Places every vFW app on exactly these clusters (by name).
async fn place_on(http: &Http, clusters: &[&str]) {
    let all_of: Vec<Json> = clusters
        .iter()
        .map(|cluster| json!({"clusterProvider": "vfw-cluster-provider", "cluster": cluster}))
        .collect();
    for app in APPS {
        let body = json!({"metadata": {"name": format!("{app}-pi")}, "spec": {"app": app, "intent": {"allOf": all_of}}});
        let reply = http
            .request(
                "PUT",
                &format!("{DIG}/generic-placement-intents/pi/app-intents/{app}-pi"),
                Some("application/json"),
                body.to_string().as_bytes(),
            )
            .await;
        assert!(
            reply.status == 200 || reply.status == 201,
            "{}",
            String::from_utf8_lossy(&reply.body)
        );
    }
}

/// Sets the DIG's override of the sink's `replicaCount`.
async fn set_sink_replicas(http: &Http, replicas: u32) {
    put_dig(http, replicas, None).await;
}

/// Puts the vFW DIG with the sink's `replicaCount` override and a `spec.rollout` (none: all at once).
pub(crate) async fn put_dig(http: &Http, replicas: u32, rollout: Option<Json>) {
    let mut body = json!({"metadata": {"name": "vfw_deployment_intent_group"},
        "spec": {"compositeProfile": "vfw_composite-profile", "version": "fw0",
                 "overrideValues": [{"app": "sink", "values": {"replicaCount": replicas.to_string()}}]}});
    if let Some(rollout) = rollout {
        body["spec"]["rollout"] = rollout;
    }
    http.request("PUT", DIG, Some("application/json"), body.to_string().as_bytes())
        .await
        .expect(200);
}

/// The vFW example on edge01 only, instantiated.
pub(crate) async fn instantiated_on_edge01(http: &Http, sim: &kubesim::Simulator) -> String {
    onboard_vfw(http, &kubeconfigs(sim)).await;
    place_on(http, &["edge01"]).await;
    http.post_empty(&format!("{DIG}/approve")).await.expect(202);
    http.post_empty(&format!("{DIG}/instantiate")).await.expect(202);
    let done = http
        .wait_for("?output=summary", SETTLE, |a| a["status"] == "Instantiated")
        .await;
    assert_eq!(counts(&done), json!({"Applied": 6}), "{done}");
    last_context(&done)
}

/// Waits until the update from context `old` is done: the DIG's last context instantiated, `old` handed over.
async fn wait_handed_over(http: &Http, old: &str) -> Json {
    http.wait_until(
        &format!("{DIG}/status?output=summary&instance={old}"),
        SETTLE,
        |a| a["status"] == "Updated",
    )
    .await;
    http.wait_for("?output=summary", SETTLE, |a| {
        a["status"] == "Instantiated" && last_context(a) != old
    })
    .await
}

pub(crate) async fn deployment(cluster: &kubesim::SimCluster, name: &str) -> Option<Deployment> {
    Api::<Deployment>::namespaced(cluster.client().unwrap(), "default")
        .get_opt(name)
        .await
        .unwrap()
}

async fn config_map(cluster: &kubesim::SimCluster, name: &str) -> Option<ConfigMap> {
    Api::<ConfigMap>::namespaced(cluster.client().unwrap(), "default")
        .get_opt(name)
        .await
        .unwrap()
}

/// `(deployments, services, config maps)` labelled by emco on the cluster.
async fn emco_objects(cluster: &kubesim::SimCluster) -> (usize, usize, usize) {
    let client = cluster.client().unwrap();
    let params = ListParams::default().labels("emco/deployment-id");
    let deployments = Api::<Deployment>::namespaced(client.clone(), "default")
        .list(&params)
        .await
        .unwrap()
        .items
        .len();
    let services = Api::<Service>::namespaced(client.clone(), "default")
        .list(&params)
        .await
        .unwrap()
        .items
        .len();
    let config_maps = Api::<ConfigMap>::namespaced(client, "default")
        .list(&params)
        .await
        .unwrap()
        .items
        .len();
    (deployments, services, config_maps)
}

/// The names of the ResourceBundleStates in the cluster's `default` namespace, sorted.
async fn bundles(cluster: &kubesim::SimCluster) -> Vec<String> {
    let resource = ApiResource::from_gvk_with_plural(
        &GroupVersionKind::gvk("k8splugin.io", "v1alpha1", "ResourceBundleState"),
        "resourcebundlestates",
    );
    let api: Api<DynamicObject> = Api::namespaced_with(cluster.client().unwrap(), "default", &resource);
    let mut names: Vec<String> = match api.list(&ListParams::default()).await {
        Ok(list) => list.items.into_iter().filter_map(|b| b.metadata.name).collect(),
        Err(_) => Vec::new(),
    };
    names.sort();
    names
}

/// The writes (not GET, not watches) to the vFW's objects (`fw0-*`, `sink-configmap`) a cluster served since
/// `since`, as `METHOD path`.
pub(crate) fn writes_since(cluster: &kubesim::SimCluster, since: std::time::Instant) -> Vec<String> {
    cluster
        .shared()
        .requests()
        .into_iter()
        .filter(|request| request.at >= since && request.method != "GET")
        .filter(|request| {
            let name = request.path.rsplit('/').next().unwrap_or_default();
            name.starts_with("fw0-") || name == "sink-configmap"
        })
        .map(|request| format!("{} {}", request.method, request.path))
        .collect()
}

pub(crate) fn replicas(deployment: &Deployment) -> Option<i32> {
    deployment.spec.replicas
}

pub(crate) fn uid(deployment: &Deployment) -> String {
    deployment.metadata.uid.clone().unwrap()
}

fn condition<'a>(dig: &'a Json, kind: &str) -> Option<&'a Json> {
    dig["state"]["conditions"]
        .as_array()
        .unwrap()
        .iter()
        .find(|condition| condition["type"] == kind)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_update_writes_only_what_changed_and_a_rollback_restores_revision_1() {
    let sim = vfw_clusters(2).await;
    let _monitors = start_monitors(&sim);
    let (edge01, edge02) = (&sim.clusters()[0], &sim.clusters()[1]);
    let emco = Emco::start().await;
    let http = &emco.http;
    let first = instantiated_on_edge01(http, &sim).await;
    let sink = deployment(edge01, "fw0-sink").await.unwrap();
    let firewall = deployment(edge01, "fw0-firewall").await.unwrap();
    let sink_config = config_map(edge01, "sink-configmap").await.unwrap();
    assert_eq!(replicas(&sink), Some(1));
    assert_eq!(emco_objects(edge02).await, (0, 0, 0));
    let dig = http.get(DIG).await.expect(200).json();
    assert!(condition(&dig, "UpToDate").is_none(), "{dig}");

    // Changed while instantiated: allowed, shown, not applied yet; deleting a part is still refused.
    set_sink_replicas(http, 3).await;
    place_on(http, &["edge01", "edge02"]).await;
    http.delete(&format!("{DIG}/generic-placement-intents/pi/app-intents/sink-pi"))
        .await
        .expect(409);
    let dig = http.get(DIG).await.expect(200).json();
    let up_to_date = condition(&dig, "UpToDate").unwrap();
    assert_eq!(
        (&up_to_date["status"], &up_to_date["reason"]),
        (&json!("False"), &json!("Modified")),
        "{dig}"
    );
    assert_eq!(
        up_to_date["message"],
        format!("modified since revision 1; POST {DIG}/update to apply"),
        "{dig}"
    );
    assert_eq!(replicas(&deployment(edge01, "fw0-sink").await.unwrap()), Some(1));
    // The status answer's state object says the same.
    let status = http
        .get(&format!("{DIG}/status?status=ready&readiness"))
        .await
        .expect(200)
        .json();
    let pending = status["readiness"]["conditions"]
        .as_array()
        .unwrap()
        .iter()
        .find(|condition| condition["type"] == "UpToDate")
        .unwrap();
    assert_eq!(pending["message"], up_to_date["message"], "{status}");

    // The update: revision 2.
    let before_update = std::time::Instant::now();
    let reply = http.post_empty(&format!("{DIG}/update")).await.expect(202);
    assert_eq!(reply.json(), json!(2));
    let updated = wait_handed_over(http, &first).await;
    assert_eq!(counts(&updated), json!({"Applied": 12}), "{updated}");
    let second = last_context(&updated);
    let actions: Vec<&str> = updated["state"]["Actions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a["State"].as_str().unwrap())
        .collect();
    assert_eq!(actions[actions.len() - 2..], ["Updated", "Instantiated"]);
    // edge01: the sink patched in place, the unchanged objects not written at all.
    let patched = deployment(edge01, "fw0-sink").await.unwrap();
    assert_eq!((uid(&patched), replicas(&patched)), (uid(&sink), Some(3)));
    assert_eq!(
        writes_since(edge01, before_update),
        ["PATCH /apis/apps/v1/namespaces/default/deployments/fw0-sink"],
        "the only object written on edge01"
    );
    assert_eq!(
        uid(&deployment(edge01, "fw0-firewall").await.unwrap()),
        uid(&firewall)
    );
    let config_after = config_map(edge01, "sink-configmap").await.unwrap();
    assert_eq!(
        config_after.metadata.resource_version,
        sink_config.metadata.resource_version
    );
    // edge02 has everything, labelled as the chain's first context labels its objects (one bundle per app).
    assert_eq!(emco_objects(edge02).await, (3, 2, 1));
    let on_edge02 = deployment(edge02, "fw0-sink").await.unwrap();
    assert_eq!(replicas(&on_edge02), Some(3));
    assert_eq!(
        on_edge02.metadata.labels.as_ref().unwrap()["emco/deployment-id"],
        format!("{first}-sink")
    );
    let expected_bundles: Vec<String> = ["firewall", "packetgen", "sink"]
        .iter()
        .map(|app| format!("{first}-{app}"))
        .collect();
    assert_eq!(bundles(edge02).await, expected_bundles);
    assert_eq!(bundles(edge01).await, expected_bundles);
    // The monitors' bundles report to the new context: every resource on both clusters is ready.
    let ready = http
        .wait_for("?status=ready&output=summary", SETTLE, |a| {
            a["readyStatus"] == "Ready"
        })
        .await;
    // EMCO's `states`: `Updated` carries revision 1 (what it ends), the new instantiation revision 2.
    let revisions: Vec<(&str, u64)> = ready["states"]["actions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| (a["state"].as_str().unwrap(), a["revision"].as_u64().unwrap()))
        .filter(|(state, _)| *state != "Created" && *state != "Approved")
        .collect();
    assert_eq!(
        revisions,
        [("Instantiated", 1), ("Updated", 1), ("Instantiated", 2)],
        "{ready}"
    );
    assert_eq!(ready["states"]["statusctxid"], second, "{ready}");
    // Applied, and no longer pending.
    let dig = http.get(DIG).await.expect(200).json();
    assert!(condition(&dig, "UpToDate").is_none(), "{dig}");
    let last_operation = condition(&dig, "last_operation").unwrap();
    assert_eq!(last_operation["name"], "Update", "{dig}");
    // The first instance still answers, from its own context.
    let old = http
        .get(&format!("{DIG}/status?output=summary&instance={first}"))
        .await
        .expect(200)
        .json();
    assert_eq!(counts(&old), json!({"Applied": 6}), "{old}");

    // Bad rollbacks.
    let unknown = http
        .post(
            &format!("{DIG}/rollback"),
            json!({"metadata": {"description": ""}, "spec": {"revision": "9"}}),
        )
        .await
        .expect(404)
        .json();
    assert!(
        unknown["message"].as_str().unwrap().contains("no revision 9"),
        "{unknown}"
    );
    let bad = http
        .post(
            &format!("{DIG}/rollback"),
            json!({"metadata": {"description": ""}, "spec": {"revision": 1}}),
        )
        .await
        .expect(400)
        .json();
    assert!(
        bad["message"].as_str().unwrap().contains("spec.revision"),
        "{bad}"
    );

    // Rollback to revision 1: revision 3, edge02 cleaned, edge01 back to the old values in place.
    let before_rollback = std::time::Instant::now();
    let reply = http
        .post(
            &format!("{DIG}/rollback"),
            json!({"metadata": {"description": ""}, "spec": {"revision": "1"}}),
        )
        .await
        .expect(202);
    assert_eq!(reply.json(), json!(3));
    let rolled_back = wait_handed_over(http, &second).await;
    assert_eq!(counts(&rolled_back), json!({"Applied": 6}), "{rolled_back}");
    assert_eq!(emco_objects(edge02).await, (0, 0, 0));
    assert!(bundles(edge02).await.is_empty());
    let restored = deployment(edge01, "fw0-sink").await.unwrap();
    assert_eq!((uid(&restored), replicas(&restored)), (uid(&sink), Some(1)));
    assert_eq!(
        writes_since(edge01, before_rollback),
        ["PATCH /apis/apps/v1/namespaces/default/deployments/fw0-sink"]
    );
    assert_eq!(
        uid(&deployment(edge01, "fw0-firewall").await.unwrap()),
        uid(&firewall)
    );
    assert_eq!(
        config_map(edge01, "sink-configmap")
            .await
            .unwrap()
            .metadata
            .resource_version,
        sink_config.metadata.resource_version
    );
    http.wait_for("?status=ready&output=summary", SETTLE, |a| {
        a["readyStatus"] == "Ready"
    })
    .await;
    // A rollback is an action after the modification: nothing is pending any more.
    let dig = http.get(DIG).await.expect(200).json();
    assert!(condition(&dig, "UpToDate").is_none(), "{dig}");

    // Terminate removes what the last context holds.
    http.post_empty(&format!("{DIG}/terminate")).await.expect(202);
    http.wait_for("?output=summary", SETTLE, |a| a["status"] == "Terminated")
        .await;
    assert_eq!(emco_objects(edge01).await, (0, 0, 0));
    assert_eq!(emco_objects(edge02).await, (0, 0, 0));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_update_of_a_dig_that_is_not_instantiated_is_refused() {
    let sim = vfw_clusters(1).await;
    let emco = Emco::start().await;
    onboard_vfw(&emco.http, &kubeconfigs(&sim)).await;
    let refused = emco
        .http
        .post_empty(&format!("{DIG}/update"))
        .await
        .expect(409)
        .json();
    assert!(
        refused["message"]
            .as_str()
            .unwrap()
            .contains("only an instantiated resource can be updated"),
        "{refused}"
    );
    emco.http
        .post(
            &format!("{DIG}/rollback"),
            json!({"metadata": {"description": ""}, "spec": {"revision": "1"}}),
        )
        .await
        .expect(409);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_update_and_a_rollback_interrupted_by_sigkill_finish_after_the_restart() {
    let sim = vfw_clusters(2).await;
    let (edge01, edge02) = (&sim.clusters()[0], &sim.clusters()[1]);
    let data = tempfile::tempdir().unwrap();
    let port = crate::rsync::free_port();
    let http = Http {
        address: ([127, 0, 0, 1], port).into(),
    };
    let mut emco = crate::rsync::start_emco_process(data.path(), port).await;
    let first = instantiated_on_edge01(&http, &sim).await;
    let sink = deployment(edge01, "fw0-sink").await.unwrap();

    // edge02 is down: the update applies on edge01 and keeps retrying edge02.
    edge02
        .set_faults(Faults {
            down: true,
            ..Faults::default()
        })
        .await
        .unwrap();
    set_sink_replicas(&http, 2).await;
    place_on(&http, &["edge01", "edge02"]).await;
    http.post_empty(&format!("{DIG}/update")).await.expect(202);
    let partial = http
        .wait_for("?output=summary", SETTLE, |a| {
            counts(a)["Retrying"].as_u64().unwrap_or(0) > 0
        })
        .await;
    assert_eq!(partial["status"], "Instantiating", "{partial}");
    emco.start_kill().unwrap(); // SIGKILL
    emco.wait().await.unwrap();

    edge02.set_faults(Faults::default()).await.unwrap();
    let mut emco = crate::rsync::start_emco_process(data.path(), port).await;
    let done = wait_handed_over(&http, &first).await;
    assert_eq!(counts(&done), json!({"Applied": 12}), "{done}");
    let patched = deployment(edge01, "fw0-sink").await.unwrap();
    assert_eq!((uid(&patched), replicas(&patched)), (uid(&sink), Some(2)));
    assert_eq!(emco_objects(edge02).await, (3, 2, 1));

    // A rollback to revision 1 killed while edge02 is down (it must be cleaned there) finishes after the restart.
    let second = last_context(&done);
    edge02
        .set_faults(Faults {
            down: true,
            ..Faults::default()
        })
        .await
        .unwrap();
    http.post(
        &format!("{DIG}/rollback"),
        json!({"metadata": {"description": ""}, "spec": {"revision": "1"}}),
    )
    .await
    .expect(202);
    http.wait_until(
        &format!("{DIG}/status?output=summary&instance={second}"),
        SETTLE,
        |a| a["status"] == "Updating" && counts(a)["Retrying"].as_u64().unwrap_or(0) > 0,
    )
    .await;
    emco.start_kill().unwrap(); // SIGKILL
    emco.wait().await.unwrap();
    edge02.set_faults(Faults::default()).await.unwrap();
    let mut emco = crate::rsync::start_emco_process(data.path(), port).await;
    let rolled_back = wait_handed_over(&http, &second).await;
    assert_eq!(counts(&rolled_back), json!({"Applied": 6}), "{rolled_back}");
    assert_eq!(emco_objects(edge02).await, (0, 0, 0));
    let restored = deployment(edge01, "fw0-sink").await.unwrap();
    assert_eq!((uid(&restored), replicas(&restored)), (uid(&sink), Some(1)));
    emco.start_kill().unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn emcoctl_updates_rolls_back_and_shows_the_history() {
    use emcoctl::client::EmcoClient;
    use emcoctl::commands;
    let sim = vfw_clusters(1).await;
    let emco = Emco::start().await;
    let http = &emco.http;
    let first = instantiated_on_edge01(http, &sim).await;
    let client = EmcoClient::new(&format!("http://{}", http.address)).unwrap();
    let names = "testvfw/compositevfw/v1/vfw_deployment_intent_group";

    set_sink_replicas(http, 2).await;
    let mut out = Vec::new();
    assert!(commands::update_dig(&client, names, &mut out).await.unwrap());
    let out = String::from_utf8(out).unwrap();
    assert!(
        out.contains(&format!("POST  --> URL: http://{}{DIG}/update", http.address))
            && out.contains("Response Code: 202\nResponse: 2"),
        "{out}"
    );
    let updated = wait_handed_over(http, &first).await;
    let second = last_context(&updated);

    let mut out = Vec::new();
    assert!(!commands::rollback_dig(&client, DIG, 7, &mut out).await.unwrap());
    let out = String::from_utf8(out).unwrap();
    assert!(
        out.contains("Response Code: 404") && out.contains("no revision 7"),
        "{out}"
    );
    let mut out = Vec::new();
    assert!(commands::rollback_dig(&client, DIG, 1, &mut out).await.unwrap());
    assert!(String::from_utf8(out).unwrap().contains("Response: 3"));
    let rolled_back = wait_handed_over(http, &second).await;
    let third = last_context(&rolled_back);

    let mut out = Vec::new();
    assert!(commands::history(&client, names, &mut out).await.unwrap());
    let table = String::from_utf8(out).unwrap();
    let rows: Vec<Vec<&str>> = table
        .lines()
        .filter(|line| line.starts_with('│'))
        .map(|line| {
            line.split(['│', '┆'])
                .map(str::trim)
                .filter(|cell| !cell.is_empty())
                .collect()
        })
        .collect();
    let summary: Vec<(&str, &str, &str, &str)> = rows
        .iter()
        .skip(1)
        .map(|row| (row[0], row[1], row[3], row[4]))
        .collect();
    assert_eq!(
        summary,
        [
            ("1", "Instantiate", first.as_str(), "Updated"),
            ("2", "Update", second.as_str(), "Updated"),
            ("3", "Rollback to revision 1", third.as_str(), "Instantiated"),
        ],
        "{table}"
    );
    let refused = commands::history(&client, "not/a/dig", &mut Vec::new()).await;
    assert!(refused.is_err());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_failed_update_names_its_clusters_and_a_rollback_repairs_it() {
    let sim = vfw_clusters(2).await;
    let (edge01, edge02) = (&sim.clusters()[0], &sim.clusters()[1]);
    let emco = Emco::start().await;
    let http = &emco.http;
    let first = instantiated_on_edge01(http, &sim).await;
    let sink = deployment(edge01, "fw0-sink").await.unwrap();
    edge02
        .set_faults(Faults {
            reject_kinds: vec!["Deployment".into()],
            ..Faults::default()
        })
        .await
        .unwrap();
    set_sink_replicas(http, 2).await;
    place_on(http, &["edge01", "edge02"]).await;
    http.post_empty(&format!("{DIG}/update")).await.expect(202);
    let failed = http
        .wait_for("?output=summary", SETTLE, |a| a["status"] == "InstantiateFailed")
        .await;
    assert_eq!(counts(&failed), json!({"Applied": 9, "Failed": 3}), "{failed}");
    http.wait_until(
        &format!("{DIG}/status?output=summary&instance={first}"),
        SETTLE,
        |a| a["status"] == "UpdateFailed",
    )
    .await;
    let dig = http.get(DIG).await.expect(200).json();
    let last_operation = condition(&dig, "last_operation").unwrap();
    assert_eq!(
        (&last_operation["name"], &last_operation["status"]),
        (&json!("Update"), &json!("failed")),
        "{dig}"
    );
    let message = last_operation["message"].as_str().unwrap();
    assert!(message.starts_with("update failed on edge02: "), "{message}");
    // edge01 took the change in place.
    assert_eq!(replicas(&deployment(edge01, "fw0-sink").await.unwrap()), Some(2));

    // A rollback from the failed update: edge02 cleaned, edge01 back to revision 1.
    edge02.set_faults(Faults::default()).await.unwrap();
    let reply = http
        .post(
            &format!("{DIG}/rollback"),
            json!({"metadata": {"description": ""}, "spec": {"revision": "1"}}),
        )
        .await
        .expect(202);
    assert_eq!(reply.json(), json!(3));
    let failed_context = last_context(&failed);
    let repaired = wait_handed_over(http, &failed_context).await;
    assert_eq!(counts(&repaired), json!({"Applied": 6}), "{repaired}");
    assert_eq!(emco_objects(edge02).await, (0, 0, 0));
    let restored = deployment(edge01, "fw0-sink").await.unwrap();
    assert_eq!((uid(&restored), replicas(&restored)), (uid(&sink), Some(1)));
}
