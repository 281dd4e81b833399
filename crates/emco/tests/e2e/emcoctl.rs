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
    let _monitors: Vec<_> = sim
        .clusters()
        .iter()
        .map(|cluster| {
            tokio::spawn(emco_monitor::run(
                cluster.client().unwrap(),
                emco_monitor::MonitorConfig::default(),
                std::future::pending(),
            ))
        })
        .collect();
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
