//! emcoctl's file commands against a running emco with kubesim clusters: the vFW example's emcoctl files (with
//! their values) apply, get, update and delete the whole example.

use std::path::Path;
use std::time::Duration;

use emcoctl::client::EmcoClient;
use emcoctl::commands::{self, Options, Verb};
use emcoctl::documents::{read_documents, read_values};
use serde_json::json;

use crate::support::*;

fn example(file: &str) -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../examples/vfw/emcoctl")
        .join(file)
}

async fn run(client: &EmcoClient, verb: Verb, file: &Path, values: &serde_json::Value) -> (bool, String) {
    let documents = read_documents(file, Some(values)).unwrap();
    let mut out = Vec::new();
    let ok = commands::run(client, verb, &documents, &Options::default(), &mut out)
        .await
        .unwrap();
    (ok, String::from_utf8(out).unwrap())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_vfw_emcoctl_files_apply_get_update_and_delete_the_example() {
    let sim = crate::support::vfw_clusters(2).await;
    let _monitors = start_monitors(&sim);
    let emco = Emco::start().await;
    let kubeconfigs = tempfile::tempdir().unwrap();
    sim.write_kubeconfigs(kubeconfigs.path()).unwrap();
    let mut values = read_values(&example("values.yaml")).unwrap();
    values["KubeconfigDir"] = json!(kubeconfigs.path().display().to_string());
    let client = EmcoClient::new(&format!("http://{}", emco.http.address)).unwrap();

    for file in ["prerequisites.yaml", "vfw.yaml", "instantiate.yaml"] {
        let (ok, out) = run(&client, Verb::Apply, &example(file), &values).await;
        assert!(ok, "{file}:\n{out}");
        assert!(out.contains("POST  --> URL: http://"), "{out}");
    }
    emco.http
        .wait_for("?status=ready&output=summary", Duration::from_secs(30), |a| {
            a["readyStatus"] == "Ready"
        })
        .await;
    let summary = emco
        .http
        .get(&format!("{DIG}/status?output=summary"))
        .await
        .expect(200)
        .json();
    assert_eq!(
        (summary["status"].as_str(), &summary["rsync-status"]),
        (Some("Instantiated"), &json!({"Applied": 12}))
    );

    // status: the table's rows, every resource and pod Present and Ready.
    let answers = emcoctl::status::fetch(&client, DIG, "").await.unwrap();
    let rows = emcoctl::status::rows(&answers);
    assert_eq!(rows.len(), 18);
    assert!(
        rows.iter().all(|row| row[5] == "Present" && row[6] == "Ready"),
        "{rows:?}"
    );
    assert!(
        emcoctl::status::reached(&answers, "Instantiated") && emcoctl::status::reached(&answers, "Ready")
    );
    let one_cluster = emcoctl::status::fetch(&client, DIG, "app=sink&cluster=vfw-cluster-provider%2Bedge02")
        .await
        .unwrap();
    assert_eq!(
        emcoctl::status::rows(&one_cluster).len(),
        4,
        "sink on edge02: Deployment, ConfigMap, Service, Pod"
    );

    // get: every resource of the file, in EMCO's output format.
    let (ok, out) = run(&client, Verb::Get, &example("vfw.yaml"), &values).await;
    assert!(ok, "{out}");
    assert_eq!(out.matches("Response Code: 200").count(), 14, "{out}");
    assert!(
        out.contains("GET  --> URL: http://") && out.contains("\"name\": \"firewall-profile\""),
        "{out}"
    );

    // update: a changed description is stored.
    let changed = tempfile::NamedTempFile::new().unwrap();
    std::fs::write(
        changed.path(),
        "resourceContext: {anchor: projects}\nmetadata: {name: testvfw, description: {{ .Note }}}\n",
    )
    .unwrap();
    let (ok, out) = run(
        &client,
        Verb::Update,
        changed.path(),
        &json!({"Note": "updated by emcoctl"}),
    )
    .await;
    assert!(ok, "{out}");
    let project = emco.http.get("/v2/projects/testvfw").await.expect(200).json();
    assert_eq!(project["metadata"]["description"], "updated by emcoctl");

    // delete: the instantiate file terminates; the rest goes in reverse order.
    let (ok, out) = run(&client, Verb::Delete, &example("instantiate.yaml"), &values).await;
    assert!(ok && out.contains("/terminate"), "{out}");
    emco.http
        .wait_for("?output=summary", Duration::from_secs(30), |a| {
            a["status"] == "Terminated"
        })
        .await;
    for file in ["vfw.yaml", "prerequisites.yaml"] {
        let (ok, out) = run(&client, Verb::Delete, &example(file), &values).await;
        assert!(ok, "{file}:\n{out}");
    }
    assert_eq!(emco.http.get("/v2/projects/testvfw").await.status, 404);
    assert_eq!(
        emco.http
            .get("/v2/cluster-providers/vfw-cluster-provider")
            .await
            .status,
        404
    );
}

/// The logical-cloud and network emcoctl files (EMCO's own shapes: `metadata :`, `loadbalancerIp`, an anchor with a
/// trailing space, dtc-controllers) apply unchanged; the vFW example deploys on the logical cloud; `emcoctl status`
/// shows all three kinds of resource; delete walks it all back.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_logical_cloud_and_network_emcoctl_files_apply_status_and_delete() {
    let sim = crate::support::vfw_clusters(2).await;
    crate::network_intents::install_network_crds(&sim.clusters()[0]).await;
    let _monitors = start_monitors(&sim);
    let emco = Emco::start().await;
    let kubeconfigs = tempfile::tempdir().unwrap();
    sim.write_kubeconfigs(kubeconfigs.path()).unwrap();
    let mut values = read_values(&example("values-logical-cloud.yaml")).unwrap();
    values["KubeconfigDir"] = json!(kubeconfigs.path().display().to_string());
    let client = EmcoClient::new(&format!("http://{}", emco.http.address)).unwrap();
    let lc = "/v2/projects/testvfw/logical-clouds/vfw-lc";
    let networks = "cluster-providers/vfw-cluster-provider/clusters/edge01";

    for file in [
        "prerequisites.yaml",
        "networks.yaml",
        "apply-networks.yaml",
        "logical-cloud.yaml",
        "instantiate-logical-cloud.yaml",
    ] {
        let (ok, out) = run(&client, Verb::Apply, &example(file), &values).await;
        assert!(ok, "{file}:\n{out}");
    }
    let registered = emco.http.get("/v2/dtc-controllers/nps").await.expect(200).json();
    assert_eq!(registered["spec"]["port"], 9038);
    crate::logical_clouds::wait_lc_at(&emco.http, lc, |a| a["deployedStatus"] == "Instantiated").await;
    let applied =
        crate::network_intents::wait_status(&emco.http, "", |a| a["status"] == "Instantiated").await;
    assert_eq!(applied["rsync-status"], json!({"Applied": 4}), "{applied}");

    for file in ["vfw.yaml", "instantiate.yaml"] {
        let (ok, out) = run(&client, Verb::Apply, &example(file), &values).await;
        assert!(ok, "{file}:\n{out}");
    }
    emco.http
        .wait_for("?status=ready&output=summary", Duration::from_secs(30), |a| {
            a["readyStatus"] == "Ready"
        })
        .await;
    // The example runs in the logical cloud's namespace.
    let deployments: kube::Api<emco_k8s::k8s_openapi::api::apps::v1::Deployment> =
        kube::Api::namespaced(sim.clusters()[1].client().unwrap(), "vfw");
    assert_eq!(
        deployments.list(&Default::default()).await.unwrap().items.len(),
        3
    );

    // emcoctl status reads all three kinds.
    let dig_rows = emcoctl::status::rows(&emcoctl::status::fetch(&client, DIG, "").await.unwrap());
    assert_eq!(dig_rows.len(), 18, "{dig_rows:?}");
    let lc_answers = emcoctl::status::fetch(&client, lc, "").await.unwrap();
    let lc_rows = emcoctl::status::rows(&lc_answers);
    // Namespace, CSR, quota, Role, RoleBinding on each of the two clusters.
    assert_eq!(lc_rows.len(), 10, "{lc_rows:?}");
    assert!(
        lc_rows
            .iter()
            .all(|row| row[0] == "logical-cloud" && row[4] == "Applied"),
        "{lc_rows:?}"
    );
    assert!(emcoctl::status::summary_line(&lc_answers).starts_with("vfw-lc: Instantiated"));
    let network_rows = emcoctl::status::rows(&emcoctl::status::fetch(&client, networks, "").await.unwrap());
    assert_eq!(network_rows.len(), 4, "{network_rows:?}");
    assert!(
        network_rows
            .iter()
            .all(|row| row[0] == "network-intents" && row[4] == "Applied")
    );

    // The site probe beside it (README "Combined status"): a bare Pod on every edge cluster of the logical cloud
    // and the seed's histogram of pod phase over it; its delete walks it back without touching the vFW.
    let probe_file = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/probe/probe.yaml");
    let (ok, out) = run(&client, Verb::Apply, &probe_file, &values).await;
    assert!(ok, "probe.yaml:\n{out}");
    let probe = "projects/testvfw/composite-apps/siteprobe/v1/deployment-intent-groups/probe";
    let histogram = "│ Running ┆ 2     │";
    let mut tables = String::new();
    for _ in 0..100 {
        let answer = emcoctl::combined::fetch(&client, probe, "").await.unwrap();
        tables = emcoctl::combined::render(probe, &answer);
        if tables.contains(histogram) {
            break;
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    assert!(
        tables.starts_with("probe · Pod site-probe · pod-phase\n") && tables.contains(histogram),
        "{tables}"
    );
    let pods: kube::Api<emco_k8s::k8s_openapi::api::core::v1::Pod> =
        kube::Api::namespaced(sim.clusters()[0].client().unwrap(), "vfw");
    assert!(pods.get_opt("site-probe").await.unwrap().is_some());
    let (ok, out) = run(&client, Verb::Delete, &probe_file, &values).await;
    assert!(ok && out.contains("/terminate"), "{out}");
    assert_eq!(emco.http.get(&format!("/v2/{probe}")).await.status, 404);
    // Gone, or going (a Pod's deletion waits for its grace period).
    let left = pods.get_opt("site-probe").await.unwrap();
    assert!(
        left.as_ref()
            .is_none_or(|pod| pod.metadata.deletion_timestamp.is_some()),
        "{left:?}"
    );

    // delete, last file first: the DIG terminates, then the logical cloud, then the networks.
    let (ok, out) = run(&client, Verb::Delete, &example("instantiate.yaml"), &values).await;
    assert!(ok && out.contains("/terminate"), "{out}");
    emco.http
        .wait_for("?output=summary", Duration::from_secs(30), |a| {
            a["status"] == "Terminated"
        })
        .await;
    let (ok, out) = run(&client, Verb::Delete, &example("vfw.yaml"), &values).await;
    assert!(ok, "{out}");
    let (ok, out) = run(
        &client,
        Verb::Delete,
        &example("instantiate-logical-cloud.yaml"),
        &values,
    )
    .await;
    assert!(ok && out.contains("/terminate"), "{out}");
    crate::logical_clouds::wait_lc_at(&emco.http, lc, |a| a["deployedStatus"] == "Terminated").await;
    let (ok, out) = run(&client, Verb::Delete, &example("logical-cloud.yaml"), &values).await;
    assert!(ok, "{out}");
    let (ok, out) = run(&client, Verb::Delete, &example("apply-networks.yaml"), &values).await;
    assert!(ok && out.contains("/terminate"), "{out}");
    crate::network_intents::wait_status(&emco.http, "", |a| a["status"] == "Terminated").await;
    for file in ["networks.yaml", "prerequisites.yaml"] {
        let (ok, out) = run(&client, Verb::Delete, &example(file), &values).await;
        assert!(ok, "{file}:\n{out}");
    }
    assert_eq!(emco.http.get("/v2/projects/testvfw").await.status, 404);
}
