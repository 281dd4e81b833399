//! The traffic-control examples with emcoctl against emco and kubesim clusters: `examples/dtc` on a cluster
//! labelled `networkpolicy-supported` (dtc's nps sub-controller adds the NetworkPolicy EMCO writes to the server
//! app) and EMCO's own `examples/dtc/istio_traffic` (its files unchanged, its `setup.sh` run) on two clusters with
//! Istio's CRDs (its adds the Istio objects that example's README lists, on the client's cluster and the
//! server's); the DIGs end Instantiated and Ready, and the status says dtc added the objects.

use std::path::{Path, PathBuf};

use emco_k8s::k8s_openapi::api::networking::v1::NetworkPolicy;
use emcoctl::client::EmcoClient;
use emcoctl::commands::Verb;
use emcoctl::documents::read_values;
use kube::api::{Api, DynamicObject, ListParams};
use kube::core::{ApiResource, GroupVersionKind};
use serde_json::json;

use crate::support::*;

const DIG: &str = "/v2/projects/proj1/composite-apps/http-dtc-app/v1/deployment-intent-groups/http-dtc-dig";

const ISTIO_DIG: &str = "/v2/projects/proj1/composite-apps/collection-composite-app/v1/deployment-intent-groups/collection-deployment-intent-group";

fn example(file: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../examples/dtc")
        .join(file)
}

/// A copy of EMCO's istio_traffic example where its `setup.sh` finds the charts (`../../helm_charts`), after
/// `setup.sh create` packed them into `output/` and wrote `values.yaml` for the clusters' `kubeconfigs`.
fn istio_example_set_up(root: &Path, kubeconfigs: &[PathBuf]) -> PathBuf {
    let examples = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples");
    let dir = root.join("examples/dtc/istio_traffic");
    std::fs::create_dir_all(&dir).unwrap();
    for entry in std::fs::read_dir(examples.join("dtc/istio_traffic")).unwrap() {
        let path = entry.unwrap().path();
        if path.is_file() {
            std::fs::copy(&path, dir.join(path.file_name().unwrap())).unwrap();
        }
    }
    std::os::unix::fs::symlink(
        examples.join("helm_charts").canonicalize().unwrap(),
        root.join("examples/helm_charts"),
    )
    .unwrap();
    let setup = std::process::Command::new("bash")
        .args(["setup.sh", "create"])
        .current_dir(&dir)
        .env("HOST_IP", "127.0.0.1")
        .env("KUBE_PATH1", &kubeconfigs[0])
        .env("KUBE_PATH2", &kubeconfigs[1])
        .env("IMAGE_REPOSITORY", "registry.example")
        .output()
        .unwrap();
    assert!(
        setup.status.success(),
        "setup.sh create: {}",
        String::from_utf8_lossy(&setup.stderr)
    );
    dir
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

    let policies: kube::Api<NetworkPolicy> = Api::namespaced(sim.clusters()[0].client().unwrap(), "default");
    let policy = policies.get("http-traffic-http-server-inbound").await.unwrap();
    let spec = serde_json::to_value(policy.spec.unwrap()).unwrap();
    assert_eq!(
        spec,
        json!({"podSelector": {"matchLabels": {"app": "http-server"}}, "policyTypes": ["Ingress"],
            "ingress": [{"from": [{"podSelector": {"matchLabels": {"app": "http-client"}}}, {"ipBlock": {"cidr": "0.0.0.0/0"}}],
                "ports": [{"protocol": "TCP"}, {"port": 3550}]}]})
    );
    assert_eq!(
        changed_by(&emco, DIG, "http-server", "http-traffic-http-server-inbound").await,
        json!(["dtc"])
    );
}

/// The `changedBy` of the resource `name` of `app` on its first cluster, as the status of the DIG at `dig` says.
async fn changed_by(emco: &Emco, dig: &str, app: &str, name: &str) -> serde_json::Value {
    let status = emco
        .http
        .get(&format!("{dig}/status?app={app}"))
        .await
        .expect(200)
        .json();
    let resources = status["apps"][0]["clusters"][0]["resources"].as_array().unwrap();
    let resource = resources.iter().find(|r| r["name"] == name).unwrap();
    resource["changedBy"].clone()
}

/// The Istio object `kind` (`group`, plural) named `name` in `namespace` of `cluster`, as JSON, if there is one.
async fn istio_object(
    cluster: &kubesim::SimCluster,
    (group, kind, plural): (&str, &str, &str),
    namespace: &str,
    name: &str,
) -> Option<serde_json::Value> {
    let object = get_object(cluster, (group, "v1beta1", kind), plural, Some(namespace), name).await?;
    Some(object.data)
}

const GATEWAY: (&str, &str, &str) = ("networking.istio.io", "Gateway", "gateways");
const SERVICE_ENTRY: (&str, &str, &str) = ("networking.istio.io", "ServiceEntry", "serviceentries");
const DESTINATION_RULE: (&str, &str, &str) = ("networking.istio.io", "DestinationRule", "destinationrules");
const AUTHORIZATION_POLICY: (&str, &str, &str) = (
    "security.istio.io",
    "AuthorizationPolicy",
    "authorizationpolicies",
);

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn emcos_istio_traffic_example_runs_unchanged_and_its_writes_what_its_readme_lists() {
    let sim = kubesim::Simulator::start_named(2).await.unwrap();
    let _monitors = start_monitors(&sim);
    for cluster in sim.clusters() {
        let istio = include_str!("../../../../deploy/istio-crds.yaml");
        assert_eq!(
            install_cluster_objects(cluster, istio).await,
            6,
            "istio-system and five CRDs"
        );
    }
    let emco = Emco::start().await;
    let dir = tempfile::tempdir().unwrap();
    let kubeconfigs = sim.write_kubeconfigs(dir.path()).unwrap();
    let example = istio_example_set_up(dir.path(), &kubeconfigs);
    let values = read_values(&example.join("values.yaml")).unwrap();
    let client = EmcoClient::new(&format!("http://{}", emco.http.address)).unwrap();
    // In the order of EMCO's apply.sh, waiting for the logical cloud as its get_logical_cloud_apply_status does.
    for file in [
        "controllers",
        "projects",
        "clusters",
        "logicalclouds",
        "instantiatelc",
    ] {
        emcoctl_file(
            &client,
            Verb::Apply,
            &example.join(format!("{file}.yaml")),
            &values,
        )
        .await;
    }
    crate::logical_clouds::wait_lc_at(
        &emco.http,
        "/v2/projects/proj1/logical-clouds/default",
        |answer| answer["deployedStatus"] == "Instantiated",
    )
    .await;
    for file in ["apps", "intents", "instantiate"] {
        emcoctl_file(
            &client,
            Verb::Apply,
            &example.join(format!("{file}.yaml")),
            &values,
        )
        .await;
    }
    emco.http.wait_dig_ready(ISTIO_DIG).await;

    // The client's cluster (cluster1: kubesim's edge01), as EMCO's istio_traffic README lists it: two ServiceEntries, two
    // DestinationRules, taking the server's hosts to the server cluster's ingress gateway.
    let (edge01, edge02) = (&sim.clusters()[0], &sim.clusters()[1]);
    let server_host = "http-service.default.provider1.cluster2";
    let entry = istio_object(edge01, SERVICE_ENTRY, "default", "http-service-se-client0")
        .await
        .expect("the client's ServiceEntry of the server's cluster host");
    assert_eq!(
        entry["spec"],
        json!({"hosts": [server_host], "addresses": ["240.0.0.2"], "location": "MESH_INTERNAL", "resolution": "DNS",
            "ports": [{"name": "tcp", "number": 30083, "protocol": "TCP"}],
            "endpoints": [{"address": "192.168.121.15", "ports": {"tcp": 32001}}]})
    );
    let named = istio_object(edge01, SERVICE_ENTRY, "default", "http-service-se-client1")
        .await
        .unwrap();
    assert_eq!(named["spec"]["hosts"], json!(["http-service"]));
    for (name, host) in [
        ("http-service-dr-client0", server_host),
        ("http-service-dr-client-svcname", "http-service"),
    ] {
        let rule = istio_object(edge01, DESTINATION_RULE, "default", name)
            .await
            .unwrap();
        assert_eq!(
            rule["spec"],
            json!({"host": host, "trafficPolicy": {"tls": {"mode": "ISTIO_MUTUAL"}}})
        );
    }
    assert!(
        istio_object(edge01, GATEWAY, "istio-system", "http-service-gateway")
            .await
            .is_none()
    );

    // The server's cluster (cluster2: kubesim's edge02): the passthrough Gateway, ServiceEntry and DestinationRule
    // in istio-system.
    let gateway = istio_object(edge02, GATEWAY, "istio-system", "http-service-gateway")
        .await
        .unwrap();
    assert_eq!(
        gateway["spec"],
        json!({"servers": [{"port": {"name": "tls", "number": 15443, "protocol": "TLS"}, "hosts": [server_host],
            "tls": {"mode": "AUTO_PASSTHROUGH"}, "name": "tls"}], "selector": {"istio": "ingressgateway"}})
    );
    let entry = istio_object(edge02, SERVICE_ENTRY, "istio-system", "http-service-se-server")
        .await
        .unwrap();
    assert_eq!(
        entry["spec"]["endpoints"],
        json!([{"address": "http-service.default"}])
    );
    let rule = istio_object(
        edge02,
        DESTINATION_RULE,
        "istio-system",
        "http-service-se-server-dr",
    )
    .await
    .unwrap();
    assert_eq!(rule["spec"]["host"], server_host);
    assert!(
        istio_object(edge02, AUTHORIZATION_POLICY, "default", "http-server")
            .await
            .is_none(),
        "the example's client has no access points"
    );
    let resource = ApiResource::from_gvk_with_plural(
        &GroupVersionKind::gvk(SERVICE_ENTRY.0, "v1beta1", SERVICE_ENTRY.1),
        SERVICE_ENTRY.2,
    );
    let entries: Api<DynamicObject> = Api::namespaced_with(edge02.client().unwrap(), "default", &resource);
    assert!(
        entries
            .list(&ListParams::default())
            .await
            .unwrap()
            .items
            .is_empty(),
        "the server's cluster gets no client ServiceEntries"
    );

    assert_eq!(
        changed_by(&emco, ISTIO_DIG, "http-client", "http-service-se-client0").await,
        json!(["dtc"])
    );
}
