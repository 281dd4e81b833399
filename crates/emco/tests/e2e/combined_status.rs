//! Combined status end to end (issue #17, seed 003): every example of the seed as a status collector on 2 and 5 kubesim
//! clusters whose states differ (a Deployment scaled down on one cluster, a pod failed on another), the tables
//! following one cluster's change (also as a stream); collector validation; a collector in use cannot go; and the singleton status
//! return with one and two clusters.

use std::time::{Duration, Instant};

use emco_k8s::k8s_openapi::api::apps::v1::Deployment;
use emco_k8s::k8s_openapi::api::core::v1::Pod;
use kube::api::{Api, Patch, PatchParams};
use serde_json::{Value as Json, json};

use crate::support::*;

const SETTLE: Duration = Duration::from_secs(40);
const PROJECT: &str = "/v2/projects/testvfw";

/// A chart `web`: a Deployment `web` of 2 replicas and a bare Pod `probe`.
fn web_chart() -> Vec<u8> {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("web");
    std::fs::create_dir_all(root.join("templates")).unwrap();
    std::fs::write(
        root.join("Chart.yaml"),
        "apiVersion: v2\nname: web\nversion: 0.1.0\n",
    )
    .unwrap();
    std::fs::write(
        root.join("templates/deployment.yaml"),
        "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\n  labels:\n    tier: front\nspec:\n  replicas: 2\n  selector:\n    matchLabels:\n      app: web\n  template:\n    metadata:\n      labels:\n        app: web\n    spec:\n      containers:\n      - name: web\n        image: nginx:1.27\n",
    )
    .unwrap();
    std::fs::write(
        root.join("templates/pod.yaml"),
        "apiVersion: v1\nkind: Pod\nmetadata:\n  name: probe\nspec:\n  containers:\n  - name: probe\n    image: busybox:1.36\n",
    )
    .unwrap();
    emco_helm::archive::pack_dir(&root, "web/").unwrap()
}

/// Seed 003's five examples.
fn seed_collectors() -> Vec<Json> {
    vec![
        json!({"metadata": {"name": "count-wecs"}, "spec": {
            "combinedFields": [{"name": "count", "type": "COUNT"}], "limit": 10}}),
        json!({"metadata": {"name": "pod-phase"}, "spec": {
            "groupBy": [{"name": "phase", "def": "returned.status.phase"}],
            "combinedFields": [{"name": "count", "type": "COUNT"}]}}),
        json!({"metadata": {"name": "available-replicas"}, "spec": {
            "groupBy": [{"name": "numAvailable", "def": "returned.status.availableReplicas"}],
            "combinedFields": [{"name": "count", "type": "COUNT"}]}}),
        json!({"metadata": {"name": "not-available"}, "spec": {
            "filter": "obj.spec.replicas != returned.status.availableReplicas",
            "select": [{"name": "wec", "def": "inventory.name"}]}}),
        json!({"metadata": {"name": "full-status"}, "spec": {
            "select": [{"name": "wec", "def": "inventory.name"},
                       {"name": "status", "def": "returned.status"},
                       {"name": "retrievalTime", "def": "propagation.lastReturnedUpdateTimestamp"}]}}),
    ]
}

/// The rows of `collector` for the object `name` of `kind`, each as its columns' display values.
fn table(answer: &Json, name: &str, kind: &str, collector: &str) -> Option<Vec<Vec<String>>> {
    let object = answer
        .as_array()?
        .iter()
        .find(|o| o["resource"]["name"] == name && o["resource"]["GVK"]["Kind"] == kind)?;
    let result = object["results"]
        .as_array()?
        .iter()
        .find(|r| r["name"] == collector)?;
    Some(
        result["rows"]
            .as_array()?
            .iter()
            .map(|row| {
                row["columns"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|cell| match cell["type"].as_str().unwrap() {
                        "Number" => cell["float"].as_str().unwrap().to_string(),
                        "String" => cell["string"].as_str().unwrap().to_string(),
                        "Bool" => cell["bool"].to_string(),
                        "Null" => "null".to_string(),
                        "Object" => "object".to_string(),
                        other => other.to_string(),
                    })
                    .collect()
            })
            .collect(),
    )
}

fn rows(cells: &[&[&str]]) -> Vec<Vec<String>> {
    cells
        .iter()
        .map(|row| row.iter().map(|c| (*c).to_string()).collect())
        .collect()
}

/// Polls `GET …/combined-status` until `done`, returning the last answer (panics with it after `SETTLE`).
async fn wait_combined(http: &Http, query: &str, done: impl Fn(&Json) -> bool) -> Json {
    let start = Instant::now();
    loop {
        let answer = http
            .get(&format!("{DIG}/combined-status{query}"))
            .await
            .expect(200)
            .json();
        if done(&answer) {
            return answer;
        }
        assert!(
            start.elapsed() < SETTLE,
            "combined status did not settle: {answer:#}"
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn seed_examples_on_five_clusters_follow_each_clusters_change() {
    seed_examples(5).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn seed_examples_on_two_clusters_follow_each_clusters_change() {
    seed_examples(2).await;
}

/// Every example of seed 003 on `count` (≥ 2) clusters: the last one's Deployment is scaled down, the second one's
/// pod fails.
async fn seed_examples(count: usize) {
    let all = count.to_string();
    let but_one = (count - 1).to_string();
    let sim = vfw_clusters(count).await;
    let _monitors = start_monitors(&sim);
    let emco = Emco::start().await;
    let http = &emco.http;
    onboard_apps(http, &kubeconfigs(&sim), &[("web", web_chart())]).await;

    // Validation: the seed's rules and the CEL compile, each naming the field.
    let refusals = [
        (
            json!({"metadata": {"name": "bad"}, "spec": {"select": [{"name": "a", "def": "inventory.name"},
                {"name": "b", "def": "returned.status.phase =="}]}}),
            "spec.select[1].def",
        ),
        (
            json!({"metadata": {"name": "bad"}, "spec": {"filter": "cluster.name == 'a'",
                "select": [{"name": "a", "def": "inventory.name"}]}}),
            "unknown variable 'cluster' at 1:1",
        ),
        (
            json!({"metadata": {"name": "bad"}, "spec": {"combinedFields": [{"name": "n", "type": "COUNT", "subject": "obj"}]}}),
            "COUNT takes no subject",
        ),
        (
            json!({"metadata": {"name": "bad"}, "spec": {"combinedFields": [{"name": "n", "type": "MAX"}]}}),
            "spec.combinedFields[0].subject is required",
        ),
        (
            json!({"metadata": {"name": "bad"}, "spec": {"select": [{"name": "a", "def": "inventory.name"}],
                "groupBy": [{"name": "g", "def": "obj"}], "combinedFields": [{"name": "n", "type": "COUNT"}]}}),
            "plain selection excludes",
        ),
        (
            json!({"metadata": {"name": "bad"}, "spec": {"combinedFields": [{"name": "n", "type": "COUNT"}], "limit": 5000}}),
            "spec.limit",
        ),
    ];
    for (body, expected) in refusals {
        let reply = http
            .post(&format!("{PROJECT}/status-collectors"), body.clone())
            .await
            .expect(400);
        let message = reply.json()["message"].as_str().unwrap_or_default().to_string();
        assert!(message.contains(expected), "{body}: {message}");
    }
    for collector in seed_collectors() {
        http.post(&format!("{PROJECT}/status-collectors"), collector)
            .await
            .expect(201);
    }
    let listed = http
        .get(&format!("{PROJECT}/status-collectors"))
        .await
        .expect(200)
        .json();
    assert_eq!(listed.as_array().unwrap().len(), 5);
    assert_eq!(listed[0]["spec"]["limit"], 10);
    assert_eq!(listed[1]["spec"]["limit"], 20, "the default limit");

    // An intent naming a collector that does not exist is refused.
    http.post(
        &format!("{DIG}/status-collection-intents"),
        json!({"metadata": {"name": "x"}, "spec": {"resources": [{"kind": "Pod", "name": "probe"}],
            "statusCollectors": ["nope"]}}),
    )
    .await
    .expect(409);
    http.post(
        &format!("{DIG}/status-collection-intents"),
        json!({"metadata": {"name": "deployments"}, "spec": {"app": "web",
            "labelSelector": "tier=front",
            "statusCollectors": ["count-wecs", "available-replicas", "not-available", "full-status"]}}),
    )
    .await
    .expect(201);
    http.post(
        &format!("{DIG}/status-collection-intents"),
        json!({"metadata": {"name": "pods"}, "spec": {"resources": [{"kind": "Pod", "name": "probe"}],
            "statusCollectors": ["count-wecs", "pod-phase"]}}),
    )
    .await
    .expect(201);

    // Before instantiation there is no context: no objects.
    assert_eq!(
        http.get(&format!("{DIG}/combined-status"))
            .await
            .expect(200)
            .json(),
        json!([])
    );
    // The intents changed the approved DIG, which went back to Created (the DIG's modification rules).
    http.post_empty(&format!("{DIG}/approve")).await.expect(202);
    http.post_empty(&format!("{DIG}/instantiate")).await.expect(202);

    let settled = wait_combined(http, "", |a| {
        table(a, "web", "Deployment", "available-replicas") == Some(rows(&[&["2", &all]]))
            && table(a, "probe", "Pod", "pod-phase") == Some(rows(&[&["Running", &all]]))
    })
    .await;
    // Number of WECs: one column, one row.
    assert_eq!(
        table(&settled, "web", "Deployment", "count-wecs"),
        Some(rows(&[&[&all]]))
    );
    assert_eq!(
        table(&settled, "probe", "Pod", "count-wecs"),
        Some(rows(&[&[&all]]))
    );
    let count_wecs = settled[0]["results"][0].clone();
    assert_eq!(
        (
            &count_wecs["name"],
            &count_wecs["columnNames"],
            &count_wecs["rows"][0]["columns"][0]
        ),
        (
            &json!("count-wecs"),
            &json!(["count"]),
            &json!({"type": "Number", "float": all})
        )
    );
    assert_eq!(settled[0]["app"], "web");
    assert_eq!(
        settled[0]["resource"],
        json!({"GVK": {"Group": "", "Version": "v1", "Kind": "Pod"}, "name": "probe"})
    );
    // Every Deployment is as available as desired: no rows.
    assert_eq!(
        table(&settled, "web", "Deployment", "not-available"),
        Some(vec![])
    );
    // Full status: one row per cluster, sorted, with the status object and when it was retrieved.
    let full = table(&settled, "web", "Deployment", "full-status").unwrap();
    let clusters: Vec<String> = sim
        .clusters()
        .iter()
        .map(|c| format!("vfw-cluster-provider+{}", c.name()))
        .collect();
    assert_eq!(full.iter().map(|r| r[0].clone()).collect::<Vec<_>>(), clusters);
    assert!(full.iter().all(|r| r[1] == "object"), "{full:?}");
    let web = settled
        .as_array()
        .unwrap()
        .iter()
        .find(|o| o["resource"]["name"] == "web")
        .unwrap();
    let full_status = web["results"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["name"] == "full-status")
        .unwrap();
    let first = &full_status["rows"][0]["columns"];
    assert_eq!(first[1]["object"]["availableReplicas"], 2, "{first}");
    let retrieved = first[2]["string"].as_str().unwrap();
    assert!(
        retrieved.len() >= 20 && retrieved.as_bytes()[10] == b'T',
        "RFC 3339: {retrieved}"
    );

    // One cluster's Deployment is scaled down: only that object's tables change.
    let last = &sim.clusters()[count - 1];
    Api::<Deployment>::namespaced(last.client().unwrap(), "default")
        .patch(
            "web",
            &PatchParams::default(),
            &Patch::Merge(json!({"spec": {"replicas": 1}})),
        )
        .await
        .unwrap();
    let scaled = wait_combined(http, "", |a| {
        table(a, "web", "Deployment", "available-replicas") == Some(rows(&[&["1", "1"], &["2", &but_one]]))
    })
    .await;
    assert_eq!(
        table(&scaled, "web", "Deployment", "not-available"),
        Some(rows(&[&[&format!("vfw-cluster-provider+{}", last.name())]]))
    );
    assert_eq!(
        table(&scaled, "probe", "Pod", "pod-phase"),
        Some(rows(&[&["Running", &all]]))
    );

    // Combined status streams as every status answer does: first the current answer.
    let client = emcoctl::client::EmcoClient::new(&format!("http://{}", http.address)).unwrap();
    let stream_path = format!("{DIG}/combined-status?collector=pod-phase&watch=true");
    let reply = client.stream(&stream_path, None).await.unwrap();
    assert_eq!(reply.status, 200, "{stream_path}");
    let mut events = emcoctl::sse::EventReader::new(reply.body);
    let mut next_answer = async || {
        let event = tokio::time::timeout(SETTLE, events.next_event())
            .await
            .expect("an event in time")
            .expect("a readable stream")
            .expect("the stream goes on");
        assert_eq!(event.name, "status", "{event:?}");
        serde_json::from_str::<Json>(&event.data).unwrap()
    };
    let plain = http
        .get(&format!("{DIG}/combined-status?collector=pod-phase"))
        .await
        .expect(200)
        .json();
    assert_eq!(next_answer().await, plain);

    // One cluster's pod fails.
    let second = &sim.clusters()[1];
    Api::<Pod>::namespaced(second.client().unwrap(), "default")
        .patch_status(
            "probe",
            &PatchParams::default(),
            &Patch::Merge(json!({"status": {"phase": "Failed"}})),
        )
        .await
        .unwrap();
    let failed = wait_combined(http, "", |a| {
        table(a, "probe", "Pod", "pod-phase") == Some(rows(&[&["Failed", "1"], &["Running", &but_one]]))
    })
    .await;
    assert_eq!(
        table(&failed, "web", "Deployment", "available-replicas"),
        Some(rows(&[&["1", "1"], &["2", &but_one]]))
    );

    // The stream followed the change without being asked again.
    let histogram = rows(&[&["Failed", "1"], &["Running", &but_one]]);
    loop {
        let streamed = next_answer().await;
        if table(&streamed, "probe", "Pod", "pod-phase") == Some(histogram.clone()) {
            break;
        }
    }

    // emcoctl prints the tables (the seed's histogram of pod phase among them).
    let answer = emcoctl::combined::fetch(&client, DIG, "collector=pod-phase")
        .await
        .unwrap();
    let printed = emcoctl::combined::render(DIG, &answer);
    assert!(printed.starts_with("web · Pod probe · pod-phase\n"), "{printed}");
    let failed_line = printed.lines().find(|line| line.contains("Failed")).unwrap();
    assert!(failed_line.contains(" 1 "), "{printed}");

    // Filters.
    let only = http
        .get(&format!(
            "{DIG}/combined-status?resource=probe%2BPod&collector=pod-phase"
        ))
        .await
        .expect(200)
        .json();
    assert_eq!(only.as_array().unwrap().len(), 1, "{only}");
    assert_eq!(only[0]["results"].as_array().unwrap().len(), 1, "{only}");
    let none = http
        .get(&format!("{DIG}/combined-status?app=other"))
        .await
        .expect(200)
        .json();
    assert_eq!(none, json!([]));
    http.get(&format!("{DIG}/combined-status?resource=probe"))
        .await
        .expect(400);
    http.get(&format!("{DIG}/combined-status?output=all"))
        .await
        .expect(400);

    // A collector in use cannot be deleted; the answer names the intent.
    let refused = http
        .delete(&format!("{PROJECT}/status-collectors/pod-phase"))
        .await
        .expect(409);
    let message = refused.json()["message"].as_str().unwrap().to_string();
    assert!(message.contains("StatusCollectionIntent 'pods'"), "{message}");
    // The DIG is instantiated: its intents cannot change.
    http.delete(&format!("{DIG}/status-collection-intents/pods"))
        .await
        .expect(409);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn singleton_status_is_returned_only_when_asked_and_placed_on_one_cluster() {
    for clusters in [1, 2] {
        let sim = vfw_clusters(clusters).await;
        let _monitors = start_monitors(&sim);
        let emco = Emco::start().await;
        let http = &emco.http;
        onboard_apps(http, &kubeconfigs(&sim), &[("web", web_chart())]).await;
        http.post(
            &format!("{DIG}/status-collection-intents"),
            json!({"metadata": {"name": "singleton"}, "spec": {"resources": [{"kind": "Deployment", "name": "web"}],
                "wantSingletonReportedState": true}}),
        )
        .await
        .expect(201);
        // The Pod is not selected by the intent: its GET is the staged object alone.
        http.post_empty(&format!("{DIG}/approve")).await.expect(202);
        http.post_empty(&format!("{DIG}/instantiate")).await.expect(202);
        let object_url = format!("{DIG}/apps/web/resources/web+Deployment");
        let start = Instant::now();
        let object = loop {
            let object = http.get(&object_url).await.expect(200).json();
            let done = if clusters == 1 {
                object["status"]["availableReplicas"] == 2
            } else {
                object["metadata"]["labels"]["emco.io/executing-count"] == "2"
            };
            if done {
                break object;
            }
            assert!(start.elapsed() < SETTLE, "{clusters} clusters: {object:#}");
            tokio::time::sleep(Duration::from_millis(200)).await;
        };
        assert_eq!(
            object["metadata"]["labels"]["emco.io/executing-count"],
            clusters.to_string(),
            "{object}"
        );
        assert_eq!(
            object["metadata"]["labels"]["tier"], "front",
            "the staged labels stay"
        );
        if clusters == 2 {
            assert!(
                object.get("status").is_none(),
                "no status from one of two clusters: {object}"
            );
        }
        let pod = http
            .get(&format!("{DIG}/apps/web/resources/probe+Pod"))
            .await
            .expect(200)
            .json();
        assert!(
            pod["metadata"]["labels"].get("emco.io/executing-count").is_none(),
            "{pod}"
        );
        assert!(pod.get("status").is_none(), "{pod}");
        http.get(&format!("{DIG}/apps/web/resources/nope+Deployment"))
            .await
            .expect(404);
        http.get(&format!("{DIG}/apps/web/resources/web"))
            .await
            .expect(400);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn without_the_request_the_object_get_is_the_staged_object() {
    let sim = vfw_clusters(1).await;
    let _monitors = start_monitors(&sim);
    let emco = Emco::start().await;
    let http = &emco.http;
    onboard_apps(http, &kubeconfigs(&sim), &[("web", web_chart())]).await;
    http.get(&format!("{DIG}/apps/web/resources/web+Deployment"))
        .await
        .expect(404);
    http.post_empty(&format!("{DIG}/instantiate")).await.expect(202);
    http.wait_for("?status=ready&readiness", SETTLE, |a| {
        a["readiness"]["ready"] == true
    })
    .await;
    let staged = http
        .get(&format!("{DIG}/apps/web/resources/web+Deployment"))
        .await
        .expect(200)
        .json();
    assert_eq!(
        (&staged["kind"], &staged["spec"]["replicas"]),
        (&json!("Deployment"), &json!(2))
    );
    assert_eq!(
        staged["metadata"]["labels"],
        json!({"tier": "front"}),
        "no executing-count label"
    );
    assert!(staged.get("status").is_none(), "{staged}");
}
