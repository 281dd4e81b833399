//! Cluster network intents (ncm) end to end: networks and provider networks onboarded, applied to a kubesim
//! cluster that serves the ovn4nfv CRDs (`deploy/ovn4nfv-network-crds.yaml`), their status in seed 000's shape,
//! the guards while applied, terminate, a cluster without the CRDs, and stop while the cluster is down.

use std::time::Duration;

use kube::api::{Api, DynamicObject, ListParams};
use kube::core::{ApiResource, GroupVersionKind};
use kubesim::Faults;
use serde_json::{Value as Json, json};

use crate::support::*;

const SETTLE: Duration = Duration::from_secs(20);
const PROVIDER: &str = "/v2/cluster-providers/vfw-cluster-provider";
pub(crate) const EDGE01: &str = "/v2/cluster-providers/vfw-cluster-provider/clusters/edge01";

/// Installs the ovn4nfv Network and ProviderNetwork CRDs emco ships into `cluster`.
pub(crate) async fn install_network_crds(cluster: &kubesim::SimCluster) {
    let text = include_str!("../../../../deploy/ovn4nfv-network-crds.yaml");
    assert_eq!(
        install_cluster_objects(cluster, text).await,
        2,
        "the file holds the Network and ProviderNetwork CRDs"
    );
}

/// Onboards provider and cluster `edge01` (no DIG) and seed 000's three networks.
pub(crate) async fn onboard_networks(http: &Http, kubeconfig: &str) {
    http.post(
        "/v2/cluster-providers",
        json!({"metadata": {"name": "vfw-cluster-provider"}}),
    )
    .await
    .expect(201);
    http.post_form(
        &format!("{PROVIDER}/clusters"),
        json!({"metadata": {"name": "edge01"}}),
        kubeconfig.as_bytes(),
    )
    .await
    .expect(201);
    for (name, subnet, vlan) in [
        ("emco-private-net", "10.10.20.0/24", "100"),
        ("unprotected-private-net", "192.168.10.0/24", "101"),
    ] {
        http.post(
            &format!("{EDGE01}/provider-networks"),
            json!({"metadata": {"name": name}, "spec": {
                "cniType": "ovn4nfv",
                "ipv4Subnets": [{"subnet": subnet, "name": "subnet1", "gateway": subnet.replace(".0/24", ".1/24"), "excludeIps": ""}],
                "providerNetType": "VLAN",
                "vlan": {"vlanID": vlan, "providerInterfaceName": "eth1", "logicalInterfaceName": format!("eth1.{vlan}"), "vlanNodeSelector": "any", "nodeLabelList": []}
            }}),
        )
        .await
        .expect(201);
    }
    http.post(
        &format!("{EDGE01}/networks"),
        json!({"metadata": {"name": "protected-private-net"}, "spec": {
            "cniType": "ovn4nfv",
            "ipv4Subnets": [{"subnet": "192.168.20.0/24", "name": "subnet1", "gateway": "192.168.20.100/24", "excludeIps": "192.168.20.2 192.168.20.5..192.168.20.10"}]
        }}),
    )
    .await
    .expect(201);
}

async fn status(http: &Http, query: &str) -> Json {
    http.get(&format!("{EDGE01}/status{query}"))
        .await
        .expect(200)
        .json()
}

pub(crate) async fn wait_status(http: &Http, query: &str, done: impl Fn(&Json) -> bool) -> Json {
    http.wait_until(&format!("{EDGE01}/status{query}"), SETTLE, done)
        .await
}

async fn objects(cluster: &kubesim::SimCluster, kind: &str, plural: &str) -> Vec<String> {
    let api: Api<DynamicObject> = Api::all_with(
        cluster.client().unwrap(),
        &ApiResource::from_gvk_with_plural(
            &GroupVersionKind::gvk("k8s.plugin.opnfv.org", "v1alpha1", kind),
            plural,
        ),
    );
    api.list(&ListParams::default())
        .await
        .map(|list| list.items.into_iter().filter_map(|o| o.metadata.name).collect())
        .unwrap_or_default()
}

/// The state object of edge01's network intents, from the cluster's GET.
async fn cluster_state(http: &Http) -> Json {
    http.get(EDGE01).await.expect(200).json()["state"].clone()
}

/// The condition of a type in a state object.
fn condition<'a>(state: &'a Json, condition_type: &str) -> &'a Json {
    state["conditions"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["type"] == condition_type)
        .unwrap()
}

fn keys(value: &Json) -> Vec<&str> {
    value.as_object().unwrap().keys().map(String::as_str).collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn network_intents_apply_to_three_applied_and_terminate_to_deleted() {
    let sim = kubesim::Simulator::start_named(1).await.unwrap();
    let edge01 = &sim.clusters()[0];
    install_network_crds(edge01).await;
    let emco = Emco::start().await;
    onboard_networks(&emco.http, &edge01.kubeconfig()).await;

    // Before apply: the cluster's history starts at Created and there is no context.
    let before = status(&emco.http, "").await;
    assert_eq!(before["name"], "vfw-cluster-provider+edge01", "{before}");
    assert_eq!(before["state"]["Actions"][0]["State"], "Created", "{before}");
    // The state object (seed 002) on the cluster's GET: created, not deployed.
    let state = cluster_state(&emco.http).await;
    assert_eq!(state["ready"], false, "{state}");
    assert_eq!(condition(&state, "last_operation")["name"], "Create", "{state}");

    let reply = emco.http.post_empty(&format!("{EDGE01}/apply")).await.expect(202);
    assert_eq!(
        reply.header("location").as_deref(),
        Some(&*format!("{EDGE01}/status"))
    );
    let applied = wait_status(&emco.http, "", |a| {
        a["status"] == "Instantiated" && a["rsync-status"] == json!({"Applied": 3})
    })
    .await;
    // Seed 000's example: these keys, in this order, the same nesting.
    assert_eq!(
        keys(&applied),
        ["name", "state", "status", "rsync-status", "apps"],
        "{applied}"
    );
    let actions: Vec<&str> = applied["state"]["Actions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a["State"].as_str().unwrap())
        .collect();
    assert_eq!(actions, ["Created", "Applied"]);
    let app = &applied["apps"][0];
    assert_eq!(app["name"], "network-intents");
    let cluster = &app["clusters"][0];
    assert_eq!(
        keys(cluster),
        ["cluster-provider", "cluster", "resources"],
        "{applied}"
    );
    let resources: Vec<(String, String)> = cluster["resources"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            assert_eq!(keys(r), ["GVK", "name", "rsync-status"], "{r}");
            assert_eq!(r["GVK"]["Group"], "k8s.plugin.opnfv.org");
            assert_eq!(r["GVK"]["Version"], "v1alpha1");
            (
                r["GVK"]["Kind"].as_str().unwrap().to_string(),
                r["name"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    assert_eq!(
        resources,
        [
            ("ProviderNetwork".to_string(), "emco-private-net".to_string()),
            ("Network".to_string(), "protected-private-net".to_string()),
            (
                "ProviderNetwork".to_string(),
                "unprotected-private-net".to_string()
            ),
        ]
    );
    assert_eq!(
        objects(edge01, "ProviderNetwork", "providernetworks").await,
        ["emco-private-net", "unprotected-private-net"]
    );
    assert_eq!(
        objects(edge01, "Network", "networks").await,
        ["protected-private-net"]
    );

    // EMCO 22.x's shape: one `cluster` object.
    let deployed = status(&emco.http, "?status=deployed").await;
    assert_eq!(deployed["deployedCounts"], json!({"Applied": 3}), "{deployed}");
    assert_eq!(deployed["cluster"]["cluster"], "edge01", "{deployed}");
    // Applied everywhere: ready, in the GET's state and at the end of the 22.x answer.
    assert_eq!(deployed["readiness"]["ready"], true, "{deployed}");
    let state = cluster_state(&emco.http).await;
    assert_eq!(state["ready"], true, "{state}");
    let operation = condition(&state, "last_operation");
    assert_eq!(
        (&operation["name"], &operation["status"]),
        (&json!("Apply"), &json!("succeeded")),
        "{state}"
    );

    // Applying again is a no-op; networks cannot change and the cluster cannot go while applied.
    emco.http.post_empty(&format!("{EDGE01}/apply")).await.expect(202);
    let refused = emco
        .http
        .post(
            &format!("{EDGE01}/networks"),
            json!({"metadata": {"name": "late"}, "spec": {"cniType": "ovn4nfv", "ipv4Subnets": [{"subnet": "10.9.0.0/16", "name": "s"}]}}),
        )
        .await
        .expect(409)
        .json();
    assert!(
        refused["message"].as_str().unwrap().contains("Applied"),
        "{refused}"
    );
    emco.http
        .delete(&format!("{EDGE01}/networks/protected-private-net"))
        .await
        .expect(409);

    emco.http
        .post_empty(&format!("{EDGE01}/terminate"))
        .await
        .expect(202);
    let terminated = wait_status(&emco.http, "", |a| {
        a["status"] == "Terminated" && a["rsync-status"] == json!({"Deleted": 3})
    })
    .await;
    assert_eq!(terminated["state"]["Actions"][2]["State"], "Terminated");
    let state = cluster_state(&emco.http).await;
    assert_eq!(state["ready"], false, "{state}");
    assert_eq!(
        condition(&state, "last_operation")["name"],
        "Terminate",
        "{state}"
    );
    assert_eq!(condition(&state, "Deployed")["status"], "False", "{state}");
    assert!(objects(edge01, "Network", "networks").await.is_empty());
    assert!(
        objects(edge01, "ProviderNetwork", "providernetworks")
            .await
            .is_empty()
    );
    // Terminated: networks may change again, and terminating again is a no-op.
    emco.http
        .delete(&format!("{EDGE01}/networks/protected-private-net"))
        .await
        .expect(204);
    emco.http
        .post_empty(&format!("{EDGE01}/terminate"))
        .await
        .expect(202);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cluster_without_the_network_crds_shows_them_failed_with_its_message() {
    let sim = kubesim::Simulator::start_named(1).await.unwrap();
    let emco = Emco::start().await;
    onboard_networks(&emco.http, &sim.clusters()[0].kubeconfig()).await;
    emco.http.post_empty(&format!("{EDGE01}/apply")).await.expect(202);
    let failed = wait_status(&emco.http, "", |a| a["status"] == "InstantiateFailed").await;
    assert_eq!(failed["rsync-status"], json!({"Failed": 3}), "{failed}");
    let detail = status(&emco.http, "?output=detail&status=deployed").await;
    let message = detail.to_string();
    assert!(message.contains("ProviderNetwork"), "{detail}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn network_intents_stop_while_the_cluster_is_down() {
    let sim = kubesim::Simulator::start_named(1).await.unwrap();
    let edge01 = &sim.clusters()[0];
    install_network_crds(edge01).await;
    let emco = Emco::start().await;
    onboard_networks(&emco.http, &edge01.kubeconfig()).await;
    edge01
        .set_faults(Faults {
            down: true,
            ..Faults::default()
        })
        .await
        .unwrap();
    emco.http.post_empty(&format!("{EDGE01}/apply")).await.expect(202);
    wait_status(&emco.http, "", |a| a["rsync-status"] == json!({"Retrying": 3})).await;
    emco.http.post_empty(&format!("{EDGE01}/stop")).await.expect(202);
    let stopped = wait_status(&emco.http, "", |a| a["status"] == "InstantiateFailed").await;
    let last = stopped["state"]["Actions"]
        .as_array()
        .unwrap()
        .last()
        .unwrap()
        .clone();
    assert_eq!(last["State"], "InstantiateStopped", "{stopped}");
    // Stopping again is refused; terminate from InstantiateStopped goes on once the cluster is back.
    emco.http.post_empty(&format!("{EDGE01}/stop")).await.expect(409);
    edge01.set_faults(Faults::default()).await.unwrap();
    emco.http
        .post_empty(&format!("{EDGE01}/terminate"))
        .await
        .expect(202);
    wait_status(&emco.http, "", |a| a["status"] == "Terminated").await;
    // A terminated cluster without live contexts can be deleted once its networks are.
    for (kind, name) in [
        ("provider-networks", "emco-private-net"),
        ("provider-networks", "unprotected-private-net"),
        ("networks", "protected-private-net"),
    ] {
        emco.http
            .delete(&format!("{EDGE01}/{kind}/{name}"))
            .await
            .expect(204);
    }
    emco.http.delete(EDGE01).await.expect(204);
}
