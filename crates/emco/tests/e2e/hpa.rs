//! The hardware-aware placement example (`examples/hpa`) with emcoctl against emco and three kubesim clusters as
//! its README starts them: edge01 and edge02 with Intel QAT on their node, edge02 with 6 cores, edge03 without
//! QAT. The client's hpa-intent (two replicas of 4 cores on a QAT node) keeps it on edge01 only: the DIG ends
//! Instantiated and Ready, the client's Deployment on edge01 has the replicas, node selector, requests and limits
//! hpa's action controller writes, edge02 and edge03 hold no client, and the status names the requirement each
//! missed.

use std::path::{Path, PathBuf};

use emco_k8s::k8s_openapi::api::apps::v1::Deployment;
use emcoctl::client::EmcoClient;
use emcoctl::commands::Verb;
use emcoctl::documents::read_values;
use serde_json::{Value as Json, json};

use crate::support::*;

pub(crate) const DIG: &str = "/v2/projects/proj1/composite-apps/http-composite-app/v1/deployment-intent-groups/http-deployment-intent-group";
const QAT: &str = "feature.node.kubernetes.io/intel_qat";

fn example(file: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../examples/hpa")
        .join(file)
}

/// The example running: its clusters, emco, the clusters' kubeconfigs; the DIG is Instantiated and Ready.
pub(crate) struct HpaExample {
    pub(crate) sim: kubesim::Simulator,
    pub(crate) emco: Emco,
    pub(crate) kubeconfigs: Vec<PathBuf>,
    _monitors: Monitors,
    _dir: tempfile::TempDir,
}

/// Starts the example's clusters and emco and applies the example as its README does.
pub(crate) async fn run_hpa_example() -> HpaExample {
    let sim = kubesim::Simulator::start(vec![
        kubesim::ClusterConfig::new("edge01").with_node_label(QAT, "true"),
        kubesim::ClusterConfig::new("edge02")
            .with_node_label(QAT, "true")
            .with_node_capacity("cpu", "6"),
        kubesim::ClusterConfig::new("edge03"),
    ])
    .await
    .unwrap();
    let monitors = start_monitors(&sim);
    let emco = Emco::start().await;
    let dir = tempfile::tempdir().unwrap();
    let kubeconfigs = sim.write_kubeconfigs(dir.path()).unwrap();
    let mut values = read_values(&example("values.yaml")).unwrap();
    for (index, kubeconfig) in kubeconfigs.iter().enumerate() {
        values[format!("KubeConfig{}", index + 1)] = json!(kubeconfig.display().to_string());
    }
    let client = EmcoClient::new(&format!("http://{}", emco.http.address)).unwrap();
    for file in ["prerequisites.yaml", "hpa.yaml"] {
        emcoctl_file(&client, Verb::Apply, &example(file), &values).await;
    }
    emco.http.wait_dig_ready(DIG).await;
    HpaExample {
        sim,
        emco,
        kubeconfigs,
        _monitors: monitors,
        _dir: dir,
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn hpa_keeps_the_client_on_the_cluster_whose_nodes_meet_its_requirements() {
    let example = run_hpa_example().await;
    let (sim, emco, kubeconfigs) = (&example.sim, &example.emco, &example.kubeconfigs);
    let deployments = |cluster: &str| -> kube::Api<Deployment> {
        kube::Api::namespaced(sim.cluster(cluster).unwrap().client().unwrap(), "default")
    };
    let placed = deployments("edge01").get("r1-http-client").await.unwrap();
    let spec = placed.spec;
    assert_eq!(spec.replicas, Some(2));
    let pod = spec.template.spec.unwrap();
    assert_eq!(
        pod.node_selector.unwrap().get(QAT).map(String::as_str),
        Some("true")
    );
    let resources = serde_json::to_value(pod.containers[0].resources.clone().unwrap()).unwrap();
    assert_eq!(
        resources,
        json!({"requests": {"cpu": "4"}, "limits": {"cpu": "4"}})
    );
    assert!(deployments("edge01").get("r1-http-server").await.is_ok());
    for left_out in ["edge02", "edge03"] {
        assert!(
            deployments(left_out)
                .get_opt("r1-http-client")
                .await
                .unwrap()
                .is_none(),
            "{left_out}"
        );
    }

    let status = emco.http.get(&format!("{DIG}/status")).await.expect(200).json();
    let client_app = status["apps"]
        .as_array()
        .unwrap()
        .iter()
        .find(|app| app["name"] == "http-client")
        .unwrap();
    let clusters: Vec<&Json> = client_app["clusters"]
        .as_array()
        .unwrap()
        .iter()
        .map(|cluster| &cluster["cluster"])
        .collect();
    assert_eq!(clusters, [&json!("edge01")]);
    let excluded = client_app["excludedClusters"].as_array().unwrap();
    assert_eq!(excluded.len(), 2, "{excluded:?}");
    assert_eq!(excluded[0]["cluster"], "provider1+edge02");
    assert_eq!(excluded[0]["controller"], "hpa-placement-controller-1");
    assert_eq!(
        excluded[0]["reason"],
        "requirement 'cpu' of consumer 'http-client-consumer' (hpa intent 'hpa-placement-intent'): replica 2 of 2 needs 4 of cpu on one node, and the most any node has left is 2"
    );
    assert_eq!(excluded[1]["cluster"], "provider1+edge03");
    assert_eq!(
        excluded[1]["reason"],
        format!(
            "requirement 'qat' of consumer 'http-client-consumer' (hpa intent 'hpa-placement-intent'): no node is labelled {QAT}=true"
        )
    );

    // What kubectl sees on edge01: the client's pods carry the requests hpa gave them.
    if let Some(kubectl) = kubectl() {
        let listed = std::process::Command::new(kubectl)
            .arg("--kubeconfig")
            .arg(&kubeconfigs[0])
            .args([
                "get",
                "deployment",
                "r1-http-client",
                "-o",
                "jsonpath={.spec.template.spec.containers[0].resources.requests.cpu}",
            ])
            .output()
            .unwrap();
        assert_eq!(
            String::from_utf8_lossy(&listed.stdout),
            "4",
            "{}",
            String::from_utf8_lossy(&listed.stderr)
        );
    }
}
