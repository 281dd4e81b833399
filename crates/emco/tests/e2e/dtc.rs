//! The traffic-control example (`examples/dtc`) with emcoctl against emco and a kubesim cluster labelled
//! `networkpolicy-supported`: dtc's nps sub-controller adds the NetworkPolicy EMCO writes to the server app, the
//! DIG ends Instantiated and Ready, and the status says dtc added it.

use std::path::{Path, PathBuf};

use emco_k8s::k8s_openapi::api::networking::v1::NetworkPolicy;
use emcoctl::client::EmcoClient;
use emcoctl::commands::Verb;
use emcoctl::documents::read_values;
use serde_json::json;

use crate::support::*;

const DIG: &str = "/v2/projects/proj1/composite-apps/http-dtc-app/v1/deployment-intent-groups/http-dtc-dig";

fn example(file: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../examples/dtc")
        .join(file)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn dtc_writes_the_network_policy_of_the_traffic_group_intent() {
    let sim = kubesim::Simulator::start_named(1).await.unwrap();
    let _monitors = start_monitors(&sim);
    let emco = Emco::start().await;
    let dir = tempfile::tempdir().unwrap();
    let kubeconfig = sim.write_kubeconfigs(dir.path()).unwrap().remove(0);
    let mut values = read_values(&example("values.yaml")).unwrap();
    values["KubeConfig"] = json!(kubeconfig.display().to_string());
    let client = EmcoClient::new(&format!("http://{}", emco.http.address)).unwrap();
    for file in ["prerequisites.yaml", "dtc.yaml"] {
        emcoctl_file(&client, Verb::Apply, &example(file), &values).await;
    }
    emco.http.wait_dig_ready(DIG).await;

    let policies: kube::Api<NetworkPolicy> =
        kube::Api::namespaced(sim.clusters()[0].client().unwrap(), "default");
    let policy = policies.get("http-traffic-http-server-inbound").await.unwrap();
    let spec = serde_json::to_value(policy.spec.unwrap()).unwrap();
    assert_eq!(
        spec,
        json!({"podSelector": {"matchLabels": {"app": "http-server"}}, "policyTypes": ["Ingress"],
            "ingress": [{"from": [{"podSelector": {"matchLabels": {"app": "http-client"}}}, {"ipBlock": {"cidr": "0.0.0.0/0"}}],
                "ports": [{"protocol": "TCP"}, {"port": 3550}]}]})
    );
    let status = emco
        .http
        .get(&format!("{DIG}/status?app=http-server"))
        .await
        .expect(200)
        .json();
    let resources = status["apps"][0]["clusters"][0]["resources"].as_array().unwrap();
    let added = resources
        .iter()
        .find(|r| r["name"] == "http-traffic-http-server-inbound")
        .unwrap();
    assert_eq!(added["changedBy"], json!(["dtc"]));
}
