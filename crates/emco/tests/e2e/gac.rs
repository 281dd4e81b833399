//! EMCO's own generic-action-controller example (`examples/test-gac`, its files unchanged) with emcoctl against
//! emco and a kubesim cluster, as its README runs it: `test-gac.yaml` ends Instantiated and Ready with the
//! NetworkPolicies, ConfigMaps, Secrets and StatefulSet the README lists, customised as it says; the README's update
//! (`test-gac-update.yaml`, `update.yaml`) and rollback (`rollback.yaml`); then, after its `delete.sh`,
//! `test-strategic-merge.yaml` with its merged container and host aliases. Checked with
//! the Kubernetes API, and with the real `kubectl` where this machine has one.

use std::path::{Path, PathBuf};
use std::time::Duration;

use emco_k8s::k8s_openapi::api::apps::v1::{Deployment, StatefulSet};
use emco_k8s::k8s_openapi::api::core::v1::{ConfigMap, Secret};
use emco_k8s::k8s_openapi::api::networking::v1::NetworkPolicy;
use emcoctl::client::EmcoClient;
use emcoctl::commands::Verb;
use serde_json::json;

use crate::support::*;

const DIG: &str = "/v2/projects/proj1/composite-apps/gac-composite-app/v1/deployment-intent-groups/collection-deployment-intent-group";

fn example(file: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../examples/test-gac")
        .join(file)
}

/// The example's values (as `setup.sh` writes them, pointed at this repository) with this run's kubeconfig.
fn values(kubeconfig: &Path) -> serde_json::Value {
    let mut values = emcoctl::documents::read_values(&example("values.yaml")).unwrap();
    values["KubeConfig"] = json!(kubeconfig.display().to_string());
    values
}

async fn emcoctl(client: &EmcoClient, verb: Verb, file: &str, values: &serde_json::Value) {
    emcoctl_file(client, verb, &example(file), values).await;
}

/// `apply.sh <test>`: every prerequisite, the test's file, instantiate (waiting for the logical cloud as its
/// `get_logical_cloud_apply_status` does).
async fn apply_all(client: &EmcoClient, emco: &Emco, values: &serde_json::Value, test: &str) {
    for file in [
        "controllers.yaml",
        "projects.yaml",
        "clusters.yaml",
        "logicalclouds.yaml",
        "instantiatelc.yaml",
    ] {
        emcoctl(client, Verb::Apply, file, values).await;
    }
    crate::logical_clouds::wait_lc_at(&emco.http, "/v2/projects/proj1/logical-clouds/default", |a| {
        a["deployedStatus"] == "Instantiated"
    })
    .await;
    for file in ["apps.yaml", "intents.yaml", test, "instantiate.yaml"] {
        emcoctl(client, Verb::Apply, file, values).await;
    }
}

fn data_keys(data: Option<impl IntoIterator<Item = String>>) -> Vec<String> {
    let mut keys: Vec<String> = data.into_iter().flatten().collect();
    keys.sort();
    keys
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn emcos_test_gac_example_runs_unchanged() {
    let sim = kubesim::Simulator::start_named(1).await.unwrap();
    let _monitors = start_monitors(&sim);
    let emco = Emco::start().await;
    let kubeconfigs = tempfile::tempdir().unwrap();
    let kubeconfig = sim.write_kubeconfigs(kubeconfigs.path()).unwrap().remove(0);
    let values = values(&kubeconfig);
    let client = EmcoClient::new(&format!("http://{}", emco.http.address)).unwrap();

    apply_all(&client, &emco, &values, "test-gac.yaml").await;
    emco.http.wait_dig_ready(DIG).await;

    // The status (and so the page) says which controller added or changed each object; the chart's own objects
    // gac did not touch say nothing.
    let status = emco
        .http
        .get(&format!("{DIG}/status?status=ready"))
        .await
        .expect(200)
        .json();
    let resources: Vec<&serde_json::Value> = status["apps"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|app| app["clusters"].as_array().unwrap())
        .flat_map(|cluster| cluster["resources"].as_array().unwrap())
        .collect();
    let changed_by = |name: &str, kind: &str| {
        resources
            .iter()
            .find(|r| r["name"] == name && r["GVK"]["Kind"] == kind)
            .map(|r| r["changedBy"].clone())
    };
    assert_eq!(changed_by("netpol-db", "NetworkPolicy"), Some(json!(["gac"])));
    assert_eq!(changed_by("etcd", "StatefulSet"), Some(json!(["gac"])));
    assert!(
        resources.iter().any(|r| r.get("changedBy").is_none()),
        "{resources:?}"
    );

    let cluster = sim.clusters()[0].client().unwrap();
    let policies: kube::Api<NetworkPolicy> = kube::Api::namespaced(cluster.clone(), "default");
    let db = policies.get("netpol-db").await.unwrap();
    let selector = db
        .spec
        .and_then(|spec| spec.pod_selector)
        .and_then(|s| s.match_labels)
        .unwrap_or_default();
    assert_eq!(
        selector.get("role").map(String::as_str),
        Some("database"),
        "patched from db"
    );
    policies.get("netpol-web").await.unwrap();

    let config_maps: kube::Api<ConfigMap> = kube::Api::namespaced(cluster.clone(), "default");
    let game = config_maps.get("cm-game").await.unwrap();
    assert_eq!(
        data_keys(game.data.map(|data| data.into_keys())),
        [
            "game.properties",
            "info.json",
            "player_initial_lives",
            "ui_properties_file_name",
            "user-interface.properties"
        ]
    );
    let team = config_maps.get("cm-team").await.unwrap().data.unwrap_or_default();
    assert_eq!(team.len(), 4, "{team:?}");
    assert_eq!(team["team_size"], "10", "patched from 5");
    assert!(
        team["game.properties"].contains("enemy.types=aliens,monsters"),
        "{team:?}"
    );

    let secrets: kube::Api<Secret> = kube::Api::namespaced(cluster.clone(), "default");
    let auth = secrets.get("secret-auth").await.unwrap().data.unwrap_or_default();
    assert_eq!(
        data_keys(Some(auth.keys().cloned())),
        ["EXPIRATION", "PASSWORD", "USER_NAME", "extra"]
    );
    assert_eq!(auth["USER_NAME"].0, b"admin");
    let expiration = std::fs::read_to_string(example("data-userexpiration.yaml")).unwrap();
    assert_eq!(
        auth["EXPIRATION"].0,
        expiration.as_bytes(),
        "the file, as gac stores it"
    );
    let user = secrets.get("secret-user").await.unwrap().data.unwrap_or_default();
    assert_eq!(
        data_keys(Some(user.keys().cloned())),
        ["PASSWORD", "USER", "USER_NAME", "data-userexpiration.yaml"]
    );

    let stateful_sets: kube::Api<StatefulSet> = kube::Api::namespaced(cluster.clone(), "default");
    let etcd = stateful_sets.get("etcd").await.unwrap();
    assert_eq!(etcd.spec.replicas, Some(1), "patched from 3");

    if let Some(kubectl) = kubectl() {
        let listed = std::process::Command::new(kubectl)
            .arg("--kubeconfig")
            .arg(&kubeconfig)
            .args(["get", "netpol,cm,secret,statefulset", "-o", "name"])
            .output()
            .unwrap();
        let names = String::from_utf8_lossy(&listed.stdout);
        for name in [
            "networkpolicy.networking.k8s.io/netpol-db",
            "networkpolicy.networking.k8s.io/netpol-web",
            "configmap/cm-game",
            "configmap/cm-team",
            "secret/secret-auth",
            "secret/secret-user",
            "statefulset.apps/etcd",
            "statefulset.apps/m3db-operator",
        ] {
            assert!(names.lines().any(|line| line == name), "{name} missing:\n{names}");
        }
    }

    // `emcoctl template --dig`: what the cluster holds, each object headed by the controllers that changed it;
    // nothing differs from what is applied.
    let preview = emcoctl::preview::fetch(&client, DIG, Some("provider1+cluster1"), None, false)
        .await
        .unwrap();
    let text = emcoctl::preview::render(&preview);
    assert!(text.contains("# cluster provider1+cluster1 · app operator · changed by gac\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm-game\n"), "{text}");
    assert!(
        text.contains("# cluster provider1+cluster1 · app operator\napiVersion: v1\nkind: ServiceAccount\n"),
        "{text}"
    );
    let diff = emcoctl::preview::fetch(&client, DIG, None, Some("operator"), true)
        .await
        .unwrap();
    assert_eq!(emcoctl::preview::render_diff(&diff), (String::new(), false));

    // The README's update and rollback: the customization changed (emcoctl update), the DIG updated to revision 2
    // (etcd gets two replicas), then rolled back to revision 1 (one again).
    emcoctl(&client, Verb::Update, "test-gac-update.yaml", &values).await;
    let diff = emcoctl::preview::fetch(&client, DIG, None, None, true)
        .await
        .unwrap();
    assert_eq!(
        emcoctl::preview::render_diff(&diff),
        (
            "~ provider1+cluster1 operator StatefulSet/etcd (changed by gac)\n".to_string(),
            true
        )
    );
    for (file, replicas) in [("update.yaml", 2), ("rollback.yaml", 1)] {
        emcoctl(&client, Verb::Apply, file, &values).await;
        let deadline = tokio::time::Instant::now() + std::time::Duration::from_secs(30);
        loop {
            let etcd = stateful_sets.get("etcd").await.unwrap();
            if etcd.spec.replicas == Some(replicas) {
                break;
            }
            assert!(
                tokio::time::Instant::now() < deadline,
                "{file}: etcd has {:?} replicas",
                etcd.spec.replicas
            );
            tokio::time::sleep(std::time::Duration::from_millis(100)).await;
        }
        emco.http.wait_dig_ready(DIG).await;
    }

    // delete.sh test-gac.yaml (waiting for each termination), then apply.sh test-strategic-merge.yaml.
    emcoctl(&client, Verb::Apply, "terminate.yaml", &values).await;
    emco.http
        .wait_until(
            &format!("{DIG}/status?output=summary"),
            Duration::from_secs(60),
            |a| a["status"] == "Terminated",
        )
        .await;
    assert!(
        config_maps.get_opt("cm-game").await.unwrap().is_none(),
        "terminate deletes what gac added"
    );
    for file in ["test-gac.yaml", "intents.yaml", "apps.yaml"] {
        emcoctl(&client, Verb::Delete, file, &values).await;
    }
    emcoctl(&client, Verb::Apply, "terminatelc.yaml", &values).await;
    crate::logical_clouds::wait_lc_at(&emco.http, "/v2/projects/proj1/logical-clouds/default", |a| {
        a["deployedStatus"] == "Terminated"
    })
    .await;
    for file in [
        "logicalclouds.yaml",
        "clusters.yaml",
        "projects.yaml",
        "controllers.yaml",
    ] {
        emcoctl(&client, Verb::Delete, file, &values).await;
    }
    emco.http.get("/v2/controllers/gac").await.expect(404);
    apply_all(&client, &emco, &values, "test-strategic-merge.yaml").await;
    emco.http.wait_dig_ready(DIG).await;
    let deployments: kube::Api<Deployment> = kube::Api::namespaced(cluster.clone(), "default");
    let web = deployments.get("deploy-web").await.unwrap();
    let containers: Vec<String> = web
        .spec
        .template
        .spec
        .map(|pod| pod.containers.into_iter().map(|c| c.name).collect())
        .unwrap_or_default();
    assert_eq!(containers, ["nginx-ctr", "redis-ctr"], "redis merged in by name");
    let etcd = stateful_sets.get("etcd").await.unwrap().spec;
    assert_eq!(etcd.replicas, Some(3), "the chart's own");
    let aliases = etcd
        .template
        .spec
        .and_then(|pod| pod.host_aliases)
        .unwrap_or_default();
    assert_eq!(aliases.len(), 1);
    assert_eq!(aliases[0].ip, "1.2.3.4");
    assert_eq!(aliases[0].hostnames.as_deref(), Some(&["host1".to_string()][..]));
}
