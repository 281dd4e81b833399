//! A DIG's `/migrate` against kubesim (issue #20 §3): the vFW example at v1 moves to a DIG of v2 that changes the
//! sink's replicas, drops the packet generator and adds an app — the objects both versions have are patched in
//! place (same uid), the dropped ones deleted, the new ones created; the source ends `Updated`, the target
//! `Instantiated`, both histories say so; refusals name the field or the target's state; the source DIG can be
//! deleted afterwards and the target still terminates everything; an emco killed in the middle of a migration
//! finishes it after its restart.

use std::time::Duration;

use emco_k8s::k8s_openapi::api::apps::v1::Deployment;
use emco_k8s::k8s_openapi::api::core::v1::ConfigMap;
use kube::api::Api;
use serde_json::json;

use crate::support::*;
use crate::updates::{deployment, replicas, uid};

const SETTLE: Duration = Duration::from_secs(60);
const V2: &str = "/v2/projects/testvfw/composite-apps/compositevfw/v2";

/// A chart `extra`: one ConfigMap `extra-settings`.
fn extra_chart() -> Vec<u8> {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("extra");
    std::fs::create_dir_all(root.join("templates")).unwrap();
    std::fs::write(
        root.join("Chart.yaml"),
        "apiVersion: v2\nname: extra\nversion: 0.1.0\n",
    )
    .unwrap();
    std::fs::write(
        root.join("templates/configmap.yaml"),
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: extra-settings\ndata:\n  mode: v2\n",
    )
    .unwrap();
    emco_helm::archive::pack_dir(&root, "extra/").unwrap()
}

/// v2 of the vFW composite app: firewall and sink, no packet generator, a new app `extra`; its DIG `dig2` sets the
/// sink's replicas to 2 and is left Created. Returns the DIG's URL.
async fn add_v2(http: &Http) -> String {
    let charts = [
        ("firewall", vfw_chart("firewall")),
        ("sink", vfw_chart("sink")),
        ("extra", extra_chart()),
    ];
    let dig2 = OnboardedDig {
        name: "dig2",
        version: "fw0",
        label: "edge",
        logical_cloud: "",
    };
    VFW_ONBOARDING.add_version(http, "v2", &charts, &[dig2]).await;
    let target = format!("{V2}/deployment-intent-groups/dig2");
    let body = json!({"metadata": {"name": "dig2"}, "spec": {"compositeProfile": "vfw_composite-profile",
        "version": "fw0", "overrideValues": [{"app": "sink", "values": {"replicaCount": "2"}}]}});
    http.request(
        "PUT",
        &target,
        Some("application/json"),
        body.to_string().as_bytes(),
    )
    .await
    .expect(200);
    target
}

fn migrate_body(version: serde_json::Value, dig: serde_json::Value) -> serde_json::Value {
    json!({"metadata": {"description": ""},
           "spec": {"targetCompositeAppVersion": version, "targetDeploymentIntentGroup": dig}})
}

async fn config_map(cluster: &kubesim::SimCluster, name: &str) -> Option<ConfigMap> {
    Api::<ConfigMap>::namespaced(cluster.client().unwrap(), "default")
        .get_opt(name)
        .await
        .unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_dig_migrates_to_v2_in_place_and_both_histories_say_so() {
    let sim = vfw_clusters(2).await;
    let _monitors = start_monitors(&sim);
    let emco = Emco::start().await;
    let http = &emco.http;
    onboard_vfw(http, &kubeconfigs(&sim)).await;
    http.post_empty(&format!("{DIG}/instantiate")).await.expect(202);
    let first = last_context(
        &http
            .wait_for("?output=summary", SETTLE, |a| a["status"] == "Instantiated")
            .await,
    );
    let edge01 = &sim.clusters()[0];
    let sink = deployment(edge01, "fw0-sink").await.unwrap();
    let firewall = deployment(edge01, "fw0-firewall").await.unwrap();
    assert!(deployment(edge01, "fw0-packetgen").await.is_some());

    let target = add_v2(http).await;

    // Refusals: a bad body, an unknown target, a target that is not Approved (the PUT made it Created again).
    let bad = http
        .post(&format!("{DIG}/migrate"), migrate_body(json!("v2"), json!(7)))
        .await
        .expect(400)
        .json();
    assert!(
        bad["message"]
            .as_str()
            .unwrap()
            .contains("spec.targetDeploymentIntentGroup"),
        "{bad}"
    );
    let unknown = http
        .post(
            &format!("{DIG}/migrate"),
            migrate_body(json!("v2"), json!("nodig")),
        )
        .await
        .expect(404)
        .json();
    assert!(
        unknown["message"].as_str().unwrap().contains("nodig"),
        "{unknown}"
    );
    let not_approved = http
        .post(
            &format!("{DIG}/migrate"),
            migrate_body(json!("v2"), json!("dig2")),
        )
        .await
        .expect(409)
        .json();
    let message = not_approved["message"].as_str().unwrap();
    assert!(
        message.contains("dig2") && message.contains("Created") && message.contains("must be Approved"),
        "{not_approved}"
    );
    http.post(
        &format!("{DIG}/migrate"),
        migrate_body(json!("v1"), json!("vfw_deployment_intent_group")),
    )
    .await
    .expect(400);
    http.post_empty(&format!("{target}/approve")).await.expect(202);

    // The migration, through emcoctl.
    let client = emcoctl::client::EmcoClient::new(&format!("http://{}", http.address)).unwrap();
    let mut out = Vec::new();
    let source_names = "testvfw/compositevfw/v1/vfw_deployment_intent_group";
    assert!(
        emcoctl::commands::migrate_dig(&client, source_names, "v2", "dig2", &mut out)
            .await
            .unwrap()
    );
    let out = String::from_utf8(out).unwrap();
    assert!(out.contains("Response Code: 202"), "{out}");
    let migrated = http
        .wait_until(&format!("{target}/status?output=summary"), SETTLE, |a| {
            a["status"] == "Instantiated"
        })
        .await;
    assert_eq!(counts(&migrated), json!({"Applied": 10}), "{migrated}");
    let source = http
        .wait_for("?output=summary", SETTLE, |a| a["status"] == "Updated")
        .await;
    assert_eq!(last_context(&source), first, "{source}");
    let source_actions = source["state"]["Actions"].as_array().unwrap();
    assert_eq!(
        (
            &source_actions.last().unwrap()["State"],
            &source_actions.last().unwrap()["Note"]
        ),
        (&json!("Updated"), &json!("migrated to v2/dig2")),
        "{source}"
    );

    for cluster in sim.clusters() {
        // Same objects, patched in place; the dropped app's gone, the new one's there, labelled as the chain.
        let sink_now = deployment(cluster, "fw0-sink").await.unwrap();
        assert_eq!(replicas(&sink_now), Some(2), "{}", cluster.name());
        assert!(
            deployment(cluster, "fw0-packetgen").await.is_none(),
            "{}",
            cluster.name()
        );
        let extra = config_map(cluster, "extra-settings").await.unwrap();
        assert_eq!(
            extra.metadata.labels.unwrap()["emco/deployment-id"],
            format!("{first}-extra")
        );
    }
    assert_eq!(uid(&deployment(edge01, "fw0-sink").await.unwrap()), uid(&sink));
    assert_eq!(
        uid(&deployment(edge01, "fw0-firewall").await.unwrap()),
        uid(&firewall)
    );
    http.wait_until(
        &format!("{target}/status?status=ready&output=summary"),
        SETTLE,
        |a| a["readyStatus"] == "Ready",
    )
    .await;

    // The histories: the target's revision 1 came from the migration, the source's ended with it.
    let mut out = Vec::new();
    assert!(
        emcoctl::commands::history(&client, "testvfw/compositevfw/v2/dig2", &mut out)
            .await
            .unwrap()
    );
    let table = String::from_utf8(out).unwrap();
    assert!(
        table.contains("Migrated from v1/vfw_deployment_intent_group"),
        "{table}"
    );
    let mut out = Vec::new();
    assert!(
        emcoctl::commands::history(&client, source_names, &mut out)
            .await
            .unwrap()
    );
    let table = String::from_utf8(out).unwrap();
    assert!(table.contains("Updated (migrated to v2/dig2)"), "{table}");

    // The source can go (its contexts with it); the target still terminates everything it holds.
    for app in APPS {
        http.delete(&format!(
            "{DIG}/generic-placement-intents/pi/app-intents/{app}-pi"
        ))
        .await
        .expect(204);
    }
    http.delete(&format!("{DIG}/generic-placement-intents/pi"))
        .await
        .expect(204);
    http.delete(&format!("{DIG}/intents/i")).await.expect(204);
    http.delete(DIG).await.expect(204);
    http.get(&format!("{DIG}/status?instance={first}"))
        .await
        .expect(404);
    http.post_empty(&format!("{target}/terminate")).await.expect(202);
    http.wait_until(&format!("{target}/status?output=summary"), SETTLE, |a| {
        a["status"] == "Terminated"
    })
    .await;
    for cluster in sim.clusters() {
        let left = Api::<Deployment>::namespaced(cluster.client().unwrap(), "default")
            .list(&Default::default())
            .await
            .unwrap()
            .items
            .len();
        assert_eq!(left, 0, "{}", cluster.name());
        assert!(config_map(cluster, "extra-settings").await.is_none());
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_migration_interrupted_by_sigkill_finishes_after_the_restart() {
    let sim = vfw_clusters(2).await;
    let edge02 = &sim.clusters()[1];
    let data = tempfile::tempdir().unwrap();
    let port = crate::rsync::free_port();
    let http = Http {
        address: ([127, 0, 0, 1], port).into(),
    };
    let mut emco = crate::rsync::start_emco_process(data.path(), port).await;
    onboard_vfw(&http, &kubeconfigs(&sim)).await;
    http.post_empty(&format!("{DIG}/instantiate")).await.expect(202);
    http.wait_for("?output=summary", SETTLE, |a| a["status"] == "Instantiated")
        .await;
    let target = add_v2(&http).await;
    http.post_empty(&format!("{target}/approve")).await.expect(202);
    // edge02 is down: the migration applies on edge01 and keeps retrying edge02.
    edge02
        .set_faults(kubesim::Faults {
            down: true,
            ..kubesim::Faults::default()
        })
        .await
        .unwrap();
    http.post(
        &format!("{DIG}/migrate"),
        migrate_body(json!("v2"), json!("dig2")),
    )
    .await
    .expect(202);
    http.wait_until(&format!("{target}/status?output=summary"), SETTLE, |a| {
        counts(a)["Retrying"].as_u64().unwrap_or(0) > 0
    })
    .await;
    emco.start_kill().unwrap(); // SIGKILL
    emco.wait().await.unwrap();
    edge02.set_faults(kubesim::Faults::default()).await.unwrap();

    let mut emco = crate::rsync::start_emco_process(data.path(), port).await;
    let migrated = http
        .wait_until(&format!("{target}/status?output=summary"), SETTLE, |a| {
            a["status"] == "Instantiated"
        })
        .await;
    assert_eq!(counts(&migrated), json!({"Applied": 10}), "{migrated}");
    http.wait_for("?output=summary", SETTLE, |a| a["status"] == "Updated")
        .await;
    for cluster in sim.clusters() {
        assert_eq!(replicas(&deployment(cluster, "fw0-sink").await.unwrap()), Some(2));
        assert!(
            deployment(cluster, "fw0-packetgen").await.is_none(),
            "{}",
            cluster.name()
        );
        assert!(config_map(cluster, "extra-settings").await.is_some());
    }
    emco.start_kill().unwrap();
}
