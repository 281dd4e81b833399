//! EMCO's single-cluster vFW example (`examples/single-cluster`, its files unchanged) with emcoctl against emco and
//! a kubesim cluster with ovn4nfv's CRDs, as its README runs it: the prerequisites (setup.sh's admin logical cloud),
//! the logical cloud instantiated, `test-vfw-deployment.yaml` (ovnaction registered, the cluster's three networks
//! applied, the vFW with its network-controller-intent, workload intents and interfaces) and
//! `test-vfw-instantiate.yaml`: the DIG ends Instantiated and Ready, and the packet generator, firewall and sink
//! Deployments carry the Multus network and the nfn-network interfaces ovnaction writes.

use std::path::{Path, PathBuf};

use emco_k8s::k8s_openapi::api::apps::v1::Deployment;
use emcoctl::client::EmcoClient;
use emcoctl::commands::Verb;
use emcoctl::documents::read_values;
use serde_json::{Value as Json, json};

use crate::support::*;

const DIG: &str =
    "/v2/projects/proj1/composite-apps/compositevfw/v1/deployment-intent-groups/vfw_deployment_intent_group";

fn example(file: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../examples/single-cluster")
        .join(file)
}

async fn emcoctl(client: &EmcoClient, file: &str, values: &Json) {
    emcoctl_file(client, Verb::Apply, &example(file), values).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn emcos_single_cluster_vfw_example_runs_unchanged() {
    let sim = kubesim::Simulator::start_named(1).await.unwrap();
    crate::network_intents::install_network_crds(&sim.clusters()[0]).await;
    let _monitors = start_monitors(&sim);
    let emco = Emco::start().await;
    let kubeconfigs = tempfile::tempdir().unwrap();
    let kubeconfig = sim.write_kubeconfigs(kubeconfigs.path()).unwrap().remove(0);
    let mut values = read_values(&example("values.yaml")).unwrap();
    values["KubeConfig"] = json!(kubeconfig.display().to_string());
    let client = EmcoClient::new(&format!("http://{}", emco.http.address)).unwrap();

    // setup.sh's prerequisites.yaml is these two templates, one after the other (an admin logical cloud).
    for file in [
        "templates/prerequisites-common.yaml",
        "templates/prerequisites-lc-admin.yaml",
        "instantiate-lc.yaml",
    ] {
        emcoctl(&client, file, &values).await;
    }
    crate::logical_clouds::wait_lc_at(&emco.http, "/v2/projects/proj1/logical-clouds/lc1", |a| {
        a["deployedStatus"] == "Instantiated"
    })
    .await;
    for file in ["test-vfw-deployment.yaml", "test-vfw-instantiate.yaml"] {
        emcoctl(&client, file, &values).await;
    }
    emco.http.wait_dig_ready(DIG).await;

    let deployments: kube::Api<Deployment> =
        kube::Api::namespaced(sim.clusters()[0].client().unwrap(), "default");
    let expected = [
        (
            "r1-packetgen",
            json!([
                ["eth1", "unprotected-private-net", "192.168.10.2"],
                ["eth2", "emco-private-net", "10.10.20.2"]
            ]),
        ),
        (
            "r1-firewall",
            json!([
                ["eth3", "emco-private-net", "10.10.20.3"],
                ["eth1", "unprotected-private-net", "192.168.10.3"],
                ["eth2", "protected-private-net", "192.168.20.2"]
            ]),
        ),
        (
            "r1-sink",
            json!([
                ["eth1", "protected-private-net", "192.168.20.3"],
                ["eth2", "emco-private-net", "10.10.20.4"]
            ]),
        ),
    ];
    for (name, interfaces) in expected {
        let deployment = deployments.get(name).await.unwrap();
        let annotations = deployment
            .spec
            .template
            .metadata
            .and_then(|metadata| metadata.annotations)
            .unwrap_or_default();
        assert_eq!(
            annotations.get("k8s.v1.cni.cncf.io/networks").map(String::as_str),
            Some(r#"[{"name":"ovn-networkobj","namespace":"default"}]"#),
            "{name}"
        );
        let nfn: Json = serde_json::from_str(&annotations["k8s.plugin.opnfv.org/nfn-network"]).unwrap();
        assert_eq!(nfn["type"], "ovn4nfv", "{name}");
        let found: Vec<Json> = nfn["interface"]
            .as_array()
            .unwrap()
            .iter()
            .map(|i| {
                assert_eq!(i["defaultGateway"], "false", "{name}: {i}");
                json!([i["interface"], i["name"], i["ipAddress"]])
            })
            .collect();
        assert_eq!(Json::Array(found), interfaces, "{name}");
    }
}
