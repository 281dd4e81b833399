//! Clusters of different Kubernetes versions: a chart that reads `.Capabilities` is rendered for each cluster's
//! own version and API versions (as `helm install` renders it against that cluster), and an older chart that needs
//! API versions removed since (policy/v1beta1 PodSecurityPolicies) deploys to Ready on a cluster that still serves
//! them.

use std::time::Duration;

use kube::api::{Api, DynamicObject};
use kube::core::{ApiResource, GroupVersionKind};
use kubesim::{ClusterConfig, SimCluster, Simulator, cluster_name};

use crate::support::*;

const SETTLE: Duration = Duration::from_secs(60);

const TEMPLATE: &str = r#"{{- if .Capabilities.APIVersions.Has "policy/v1beta1/PodSecurityPolicy" }}
apiVersion: policy/v1beta1
kind: PodSecurityPolicy
metadata:
  name: versions-restricted
spec:
  privileged: false
  seLinux: {rule: RunAsAny}
  runAsUser: {rule: RunAsAny}
  supplementalGroups: {rule: RunAsAny}
  fsGroup: {rule: RunAsAny}
---
{{- end }}
apiVersion: {{ if semverCompare ">=1.25-0" .Capabilities.KubeVersion.Version }}policy/v1{{ else }}policy/v1beta1{{ end }}
kind: PodDisruptionBudget
metadata:
  name: versions-web
spec:
  minAvailable: 1
  selector:
    matchLabels: {app: versions-web}
---
apiVersion: v1
kind: ConfigMap
metadata:
  name: versions-seen
data:
  kubeVersion: {{ .Capabilities.KubeVersion.Version | quote }}
---
apiVersion: apps/v1
kind: Deployment
metadata:
  name: versions-web
spec:
  replicas: 1
  selector:
    matchLabels: {app: versions-web}
  template:
    metadata:
      labels: {app: versions-web}
    spec:
      containers:
      - name: web
        image: nginx
"#;

fn versions_chart() -> Vec<u8> {
    emco_helm::archive::write_tgz(&[
        (
            "versions/Chart.yaml",
            b"apiVersion: v2\nname: versions\nversion: 0.1.0\n".as_slice(),
        ),
        ("versions/templates/all.yaml", TEMPLATE.as_bytes()),
    ])
}

fn cluster_at(index: usize, version: &str) -> ClusterConfig {
    ClusterConfig::new(&cluster_name(index)).with_kubernetes_version(version.parse().unwrap())
}

async fn get(
    cluster: &SimCluster,
    gvk: (&str, &str, &str),
    plural: &str,
    name: &str,
) -> Option<DynamicObject> {
    let namespace = (gvk.2 != "PodSecurityPolicy").then_some("default");
    get_object(cluster, gvk, plural, namespace, name).await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_chart_reading_capabilities_gets_each_clusters_own_version() {
    let sim = Simulator::start(vec![cluster_at(1, "1.23"), cluster_at(2, "1.33")])
        .await
        .unwrap();
    let _monitors = start_monitors(&sim);
    let emco = Emco::start().await;
    onboard_apps(&emco.http, &kubeconfigs(&sim), &[("versions", versions_chart())]).await;
    emco.http
        .post_empty(&format!("{DIG}/instantiate"))
        .await
        .expect(202);
    let ready = emco
        .http
        .wait_for("?status=ready", SETTLE, |a| a["readyStatus"] == "Ready")
        .await;
    assert_eq!(ready["readyStatus"], "Ready", "{ready}");
    let (old, new) = (&sim.clusters()[0], &sim.clusters()[1]);
    let seen = |cluster| async move {
        get(cluster, ("", "v1", "ConfigMap"), "configmaps", "versions-seen")
            .await
            .expect("the ConfigMap is applied")
            .data["data"]["kubeVersion"]
            .clone()
    };
    assert_eq!(seen(old).await, "v1.23.0+kubesim");
    assert_eq!(seen(new).await, "v1.33.0+kubesim");
    // The 1.23 cluster got the PodSecurityPolicy and a policy/v1beta1 PodDisruptionBudget; 1.33 neither.
    assert!(
        get(
            old,
            ("policy", "v1beta1", "PodSecurityPolicy"),
            "podsecuritypolicies",
            "versions-restricted"
        )
        .await
        .is_some()
    );
    let detail = emco
        .http
        .get(&format!("{DIG}/status?output=all"))
        .await
        .expect(200)
        .json();
    let resources = |cluster: &str| -> Vec<String> {
        let clusters = detail["apps"][0]["clusters"].as_array().unwrap();
        let answer = clusters
            .iter()
            .find(|c| c["cluster"] == cluster)
            .unwrap_or_else(|| panic!("{cluster}: {detail}"));
        let mut names: Vec<String> = answer["resources"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| {
                format!(
                    "{}/{}",
                    r["GVK"]["Kind"].as_str().unwrap_or_default(),
                    r["name"].as_str().unwrap_or_default()
                )
            })
            .collect();
        names.sort();
        names
    };
    assert_eq!(
        resources(&cluster_name(1)),
        [
            "ConfigMap/versions-seen",
            "Deployment/versions-web",
            "PodDisruptionBudget/versions-web",
            "PodSecurityPolicy/versions-restricted"
        ],
        "{detail}"
    );
    assert_eq!(
        resources(&cluster_name(2)),
        [
            "ConfigMap/versions-seen",
            "Deployment/versions-web",
            "PodDisruptionBudget/versions-web"
        ],
        "{detail}"
    );
    let pdb_version = |cluster: &str| -> String {
        let clusters = detail["apps"][0]["clusters"].as_array().unwrap();
        let answer = clusters.iter().find(|c| c["cluster"] == cluster).unwrap();
        let pdb = answer["resources"]
            .as_array()
            .unwrap()
            .iter()
            .find(|r| r["GVK"]["Kind"] == "PodDisruptionBudget")
            .unwrap();
        pdb["GVK"]["Version"].as_str().unwrap_or_default().to_string()
    };
    assert_eq!(
        (pdb_version(&cluster_name(1)), pdb_version(&cluster_name(2))),
        ("v1beta1".into(), "v1".into())
    );
}

/// EMCO's own multi-cluster example chart, kube-prometheus-stack 23 (for Kubernetes up to 1.24: it creates
/// policy/v1beta1 PodSecurityPolicies), on a cluster playing Kubernetes 1.23.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_older_kube_prometheus_stack_deploys_to_ready_on_a_cluster_playing_1_23() {
    let chart = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../../shared/helm-corpus/emco-examples/kube-prometheus-stack");
    if !chart.is_dir() {
        eprintln!("skipped: the Helm chart corpus is not at {}", chart.display());
        return;
    }
    let sim = Simulator::start(vec![cluster_at(1, "1.23")]).await.unwrap();
    let _monitors = start_monitors(&sim);
    let emco = Emco::start().await;
    onboard_apps(
        &emco.http,
        &kubeconfigs(&sim),
        &[("monitoring", pack_dir(&chart))],
    )
    .await;
    emco.http
        .post_empty(&format!("{DIG}/instantiate"))
        .await
        .expect(202);
    let done = emco
        .http
        .wait_for("?status=deployed", SETTLE, |a| {
            a["deployedStatus"] != "Instantiating"
        })
        .await;
    assert_eq!(done["deployedStatus"], "Instantiated", "{done}");
    let ready = emco
        .http
        .wait_for("?status=ready", SETTLE, |a| a["readyStatus"] == "Ready")
        .await;
    assert_eq!(ready["readyStatus"], "Ready", "{ready}");
    let cluster = &sim.clusters()[0];
    let psps = Api::<DynamicObject>::all_with(
        cluster.client().unwrap(),
        &ApiResource::from_gvk_with_plural(
            &GroupVersionKind::gvk("policy", "v1beta1", "PodSecurityPolicy"),
            "podsecuritypolicies",
        ),
    )
    .list(&Default::default())
    .await
    .unwrap();
    assert!(
        psps.items.len() >= 5,
        "{:?}",
        psps.items
            .iter()
            .map(|p| p.metadata.name.clone())
            .collect::<Vec<_>>()
    );
}
