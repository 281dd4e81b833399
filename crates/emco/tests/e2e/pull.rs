//! emco's side of a pull cluster beside a direct one: the vFW instantiated on both, emco dialling only the direct
//! cluster; the pull cluster's orders (one per app) served to whoever holds its agent token by the desired-state
//! long poll — with the records' resources, resumable from the answer's revision so a second poll answers nothing
//! changed — and refused to another cluster's token; the outcomes the agent reports recorded, after which the DIG
//! is Instantiated; a terminate orders deletes, recorded the same way, and the DIG ends Terminated. Here the test
//! plays the agent over HTTP, as the agent binary does; then the agent itself (`emco_monitor::agent`) serves a pull
//! cluster beside a direct one: nothing reaches the pull cluster before its agent does, then both are Ready, a
//! Deployment deleted behind emco's back comes back, an update changes the pull cluster's objects in place and the
//! old context hands over, and a terminate empties both.

use std::time::Duration;

use serde_json::{Value as Json, json};

use crate::support::*;

const PULL: &str = "/v2/cluster-providers/vfw-cluster-provider/clusters/edge02/agent";
const EDGE03: &str = "/v2/cluster-providers/vfw-cluster-provider/clusters/edge03/agent";

/// A GET or POST of the agent's endpoints with `token`.
async fn agent_call(http: &Http, token: &str, method: &str, path: &str, body: Option<Json>) -> Reply {
    let authorization = format!("Bearer {token}");
    let mut headers = vec![("Authorization", authorization.as_str())];
    if body.is_some() {
        headers.push(("Content-Type", "application/json"));
    }
    let body = body.map(|body| body.to_string().into_bytes()).unwrap_or_default();
    http.request_with(method, path, &headers, &body).await
}

/// POSTs `body` to the reports of the agent path `agent` with `token`.
async fn report(http: &Http, token: &str, agent: &str, body: Json) -> Reply {
    agent_call(http, token, "POST", &format!("{agent}/reports"), Some(body)).await
}

/// Whether emco took every outcome of a report's answer as `taken`.
fn all_taken(answer: &Json, taken: &str) -> bool {
    answer["outcomes"]
        .as_array()
        .unwrap()
        .iter()
        .all(|outcome| outcome["taken"] == taken)
}

/// Polls the desired state at `agent` (the cluster's agent path) from `since` until it answers `count` changed
/// orders of `operation` without an outcome.
async fn orders_of(http: &Http, token: &str, agent: &str, since: i64, operation: &str, count: usize) -> Json {
    let deadline = tokio::time::Instant::now() + Duration::from_secs(60);
    loop {
        let answer = agent_call(
            http,
            token,
            "GET",
            &format!("{agent}/desired-state?since={since}&wait=5"),
            None,
        )
        .await
        .expect(200)
        .json();
        let changed = answer["changed"].as_array().unwrap();
        let matching = changed
            .iter()
            .filter(|change| {
                change["order"]["operation"] == operation && change["order"]["outcome"].is_null()
            })
            .count();
        if matching == count {
            return answer;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "no {count} {operation} orders; last answer: {answer}"
        );
    }
}

/// The outcome of every changed order of `answer`: each resource `status`.
fn outcomes(answer: &Json, status: &str) -> Json {
    let outcomes: Vec<Json> = answer["changed"]
        .as_array()
        .unwrap()
        .iter()
        .map(|change| {
            let results: Vec<Json> = change["resources"]
                .as_array()
                .unwrap()
                .iter()
                .map(|_| json!({"status": status}))
                .collect();
            json!({"context": change["context"], "app": change["app"], "seq": change["order"]["seq"],
                "end": "done", "results": results})
        })
        .collect();
    json!({ "outcomes": outcomes })
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_pull_clusters_orders_reach_its_agent_and_its_outcomes_the_status() {
    let sim = vfw_clusters(1).await;
    let edge01 = &sim.clusters()[0];
    let _monitor = start_monitor(edge01);
    let emco = Emco::start().await;
    onboard_vfw(&emco.http, &[(edge01.name().to_string(), edge01.kubeconfig())]).await;
    let token = register_pull_cluster(&emco.http, "edge02").await;
    let other_token = register_pull_cluster(&emco.http, "edge03").await;

    // Nothing ordered yet: the first poll answers at once, with nothing.
    let first = agent_call(&emco.http, &token, "GET", &format!("{PULL}/desired-state"), None)
        .await
        .expect(200)
        .json();
    assert_eq!(first["orders"], json!([]));
    assert_eq!(first["cluster"], "vfw-cluster-provider+edge02");
    // Another cluster's token is refused here.
    let refused = agent_call(
        &emco.http,
        &other_token,
        "GET",
        &format!("{PULL}/desired-state"),
        None,
    )
    .await;
    assert_eq!(refused.status, 403, "{}", String::from_utf8_lossy(&refused.body));

    emco.http
        .post_empty(&format!("{DIG}/instantiate"))
        .await
        .expect(202);
    // edge02 and edge03 both carry the label: each gets its own orders, three apps each.
    let ordered = orders_of(&emco.http, &token, PULL, 0, "apply", 3).await;
    let apps: Vec<&str> = ordered["changed"]
        .as_array()
        .unwrap()
        .iter()
        .map(|change| change["app"].as_str().unwrap())
        .collect();
    assert_eq!(apps.len(), 3, "{apps:?}");
    for change in ordered["changed"].as_array().unwrap() {
        assert_eq!(change["order"]["namespace"], "default");
        assert!(
            change["order"]["label"]
                .as_str()
                .unwrap()
                .ends_with(change["app"].as_str().unwrap())
        );
        assert!(!change["resources"].as_array().unwrap().is_empty());
        assert!(change["resources"][0]["manifest"]["kind"].is_string(), "{change}");
    }
    // Waiting for the agent is what the status says about the pull cluster.
    let status = emco
        .http
        .get(&format!("{DIG}/status?output=detail"))
        .await
        .expect(200)
        .json();
    let text = status.to_string();
    assert!(
        text.contains("the agent of pull cluster vfw-cluster-provider+edge02 to apply the app"),
        "{text}"
    );

    let reported = report(&emco.http, &token, PULL, outcomes(&ordered, "Applied"))
        .await
        .expect(200)
        .json();
    assert!(all_taken(&reported, "recorded"), "{reported}");
    // The same report again is stale: each order is answered once.
    let again = report(&emco.http, &token, PULL, outcomes(&ordered, "Applied"))
        .await
        .expect(200)
        .json();
    assert!(all_taken(&again, "stale"), "{again}");
    // A report for edge02 with edge03's token is refused before anything is read.
    let foreign = report(&emco.http, &other_token, PULL, outcomes(&ordered, "Applied")).await;
    assert_eq!(foreign.status, 403);

    // edge03's agent reports too; then the DIG is Instantiated.
    let theirs = orders_of(&emco.http, &other_token, EDGE03, 0, "apply", 3).await;
    report(&emco.http, &other_token, EDGE03, outcomes(&theirs, "Applied"))
        .await
        .expect(200);
    emco.http
        .wait_for("?output=summary", Duration::from_secs(60), |answer| {
            answer["status"] == "Instantiated"
        })
        .await;
    let status = emco
        .http
        .get(&format!("{DIG}/status?output=detail"))
        .await
        .expect(200)
        .json();
    let mut pull_resources = 0;
    for app in status["apps"].as_array().unwrap() {
        for cluster in app["clusters"].as_array().unwrap() {
            if cluster["cluster"] == "edge02" {
                for resource in cluster["resources"].as_array().unwrap() {
                    assert_eq!(resource["rsync-status"], "Applied", "{resource}");
                    pull_resources += 1;
                }
            }
        }
    }
    assert!(pull_resources >= 3, "{status}");

    // Resuming from the answer's revision: nothing changed since but the outcomes, which are the agent's own.
    let since = ordered["revision"].as_i64().unwrap();
    let resumed = agent_call(
        &emco.http,
        &token,
        "GET",
        &format!("{PULL}/desired-state?since={since}&wait=0"),
        None,
    )
    .await
    .expect(200)
    .json();
    assert!(
        resumed["orders"]
            .as_array()
            .unwrap()
            .iter()
            .all(|order| order["done"] == true),
        "{resumed}"
    );
    // The outcomes the agent reported are not sent back to it in full.
    assert_eq!(resumed["changed"], json!([]), "{resumed}");
    let quiet_since = resumed["revision"].as_i64().unwrap();
    let quiet = agent_call(
        &emco.http,
        &token,
        "GET",
        &format!("{PULL}/desired-state?since={quiet_since}&wait=1"),
        None,
    )
    .await
    .expect(200)
    .json();
    assert_eq!(quiet["changed"], json!([]), "{quiet}");

    // A terminate orders deletes; their outcomes end it.
    emco.http
        .post_empty(&format!("{DIG}/terminate"))
        .await
        .expect(202);
    let deletes = orders_of(
        &emco.http,
        &token,
        PULL,
        quiet["revision"].as_i64().unwrap(),
        "delete",
        3,
    )
    .await;
    report(&emco.http, &token, PULL, outcomes(&deletes, "Deleted"))
        .await
        .expect(200);
    let theirs = orders_of(&emco.http, &other_token, EDGE03, 0, "delete", 3).await;
    report(&emco.http, &other_token, EDGE03, outcomes(&theirs, "Deleted"))
        .await
        .expect(200);
    emco.http
        .wait_for("?output=summary", Duration::from_secs(60), |answer| {
            answer["status"] == "Terminated"
        })
        .await;
    // emco never opened a connection to a pull cluster: it has no address for one.
}

/// The objects of `cluster` labelled by emco (Deployments, Services, ConfigMaps in `default`), by kind and name.
async fn labelled_names(cluster: &kubesim::SimCluster) -> Vec<String> {
    use emco_k8s::k8s_openapi::api::apps::v1::Deployment;
    use emco_k8s::k8s_openapi::api::core::v1::{ConfigMap, Service};
    use kube::api::{Api, ListParams};
    let client = cluster.client().unwrap();
    let params = ListParams::default().labels("emco/deployment-id");
    let mut names = Vec::new();
    for deployment in Api::<Deployment>::namespaced(client.clone(), "default")
        .list(&params)
        .await
        .unwrap()
    {
        names.push(format!(
            "Deployment/{}",
            deployment.metadata.name.unwrap_or_default()
        ));
    }
    for service in Api::<Service>::namespaced(client.clone(), "default")
        .list(&params)
        .await
        .unwrap()
    {
        names.push(format!("Service/{}", service.metadata.name.unwrap_or_default()));
    }
    for map in Api::<ConfigMap>::namespaced(client, "default")
        .list(&params)
        .await
        .unwrap()
    {
        names.push(format!("ConfigMap/{}", map.metadata.name.unwrap_or_default()));
    }
    names.sort();
    names
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_direct_and_a_pull_cluster_run_the_vfw_side_by_side() {
    let sim = vfw_clusters(2).await;
    let (edge01, edge02) = (&sim.clusters()[0], &sim.clusters()[1]);
    let _monitors = start_in_cluster_monitors(&sim);
    let emco = Emco::start().await;
    onboard_vfw(&emco.http, &[(edge01.name().to_string(), edge01.kubeconfig())]).await;
    let token = register_pull_cluster(&emco.http, "edge02").await;
    let outside = |cluster: &kubesim::SimCluster| {
        cluster
            .shared()
            .requests()
            .iter()
            .filter(|request| !request.in_cluster)
            .count()
    };
    let before = outside(edge02);

    // Without its agent, the pull cluster's apps wait for it, and emco does not dial the cluster.
    emco.http
        .post_empty(&format!("{DIG}/instantiate"))
        .await
        .expect(202);
    emco.http
        .wait_until(
            &format!("{DIG}/status?output=detail"),
            Duration::from_secs(60),
            |answer| {
                answer
                    .to_string()
                    .contains("the agent of pull cluster vfw-cluster-provider+edge02 to apply the app")
            },
        )
        .await;
    assert_eq!(outside(edge02), before, "emco made requests to the pull cluster");
    assert!(labelled_names(edge02).await.is_empty());

    // The agent comes: it applies the orders with rsync's batches and reports; its monitor's bundles reach emco.
    let mut config = emco_monitor::agent::AgentConfig::new(
        &format!("http://{}", emco.http.address),
        "vfw-cluster-provider+edge02",
        &token,
        edge02.kubeconfig().into_bytes(),
    );
    config.poll_wait = Duration::from_secs(5);
    config.report_every = Duration::from_millis(200);
    config.rsync = test_rsync_config();
    let agent = tokio::spawn(emco_monitor::agent::run_agent(config, std::future::pending()));
    let ready = emco
        .http
        .wait_for(
            "?status=ready&output=summary",
            Duration::from_secs(90),
            |answer| answer["deployedStatus"] == "Instantiated" && answer["readyStatus"] == "Ready",
        )
        .await;
    // The clusters say how emco reaches them, and when the pull cluster's agent was last in touch.
    let clusters = emco
        .http
        .get("/v2/cluster-providers/vfw-cluster-provider/clusters")
        .await
        .expect(200)
        .json();
    let connection = |name: &str| {
        clusters
            .as_array()
            .unwrap()
            .iter()
            .find(|cluster| cluster["metadata"]["name"] == name)
            .unwrap()["connection"]
            .clone()
    };
    assert_eq!(connection("edge01"), json!({"mode": "direct"}));
    assert_eq!(connection("edge02")["mode"], "pull");
    let contact: jiff::Timestamp = connection("edge02")["agentLastContact"]
        .as_str()
        .unwrap()
        .parse()
        .unwrap();
    assert!(jiff::Timestamp::now().duration_since(contact).as_secs() < 60);
    let on_pull = labelled_names(edge02).await;
    assert_eq!(on_pull, labelled_names(edge01).await, "{ready}");
    assert!(!on_pull.is_empty());
    let detail = emco
        .http
        .get(&format!("{DIG}/status?output=detail"))
        .await
        .expect(200)
        .json();
    for app in detail["apps"].as_array().unwrap() {
        for cluster in app["clusters"].as_array().unwrap() {
            for resource in cluster["resources"].as_array().unwrap() {
                assert_eq!(resource["rsync-status"], "Applied", "{resource}");
            }
        }
    }

    // A Deployment deleted behind emco's back: the bundle shows it missing, the agent applies it again (a new
    // object), and the status is Ready again.
    use emco_k8s::k8s_openapi::api::apps::v1::Deployment;
    let deployments: kube::Api<Deployment> = kube::Api::namespaced(edge02.client().unwrap(), "default");
    let victim = deployments
        .list(&kube::api::ListParams::default().labels("emco/deployment-id"))
        .await
        .unwrap()
        .items
        .remove(0);
    let (name, uid) = (
        victim.metadata.name.clone().unwrap(),
        victim.metadata.uid.clone().unwrap(),
    );
    deployments.delete(&name, &Default::default()).await.unwrap();
    let deadline = tokio::time::Instant::now() + Duration::from_secs(60);
    loop {
        if let Some(back) = deployments.get_opt(&name).await.unwrap()
            && back.metadata.uid.as_deref() != Some(uid.as_str())
        {
            break;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "Deployment/{name} was not applied again"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    emco.http
        .wait_for(
            "?status=ready&output=summary",
            Duration::from_secs(60),
            |answer| answer["readyStatus"] == "Ready",
        )
        .await;

    // An update (the sink's replicas) reaches the pull cluster in place: same object, new spec; the old context
    // hands over (the agent runs its handover order too) and ends Updated.
    let old = last_context(&emco.http.summary().await);
    let sink_before = crate::updates::deployment(edge02, "fw0-sink").await.unwrap();
    crate::updates::put_dig(&emco.http, 2, None).await;
    emco.http.post_empty(&format!("{DIG}/update")).await.expect(202);
    emco.http
        .wait_until(
            &format!("{DIG}/status?output=summary&instance={old}"),
            Duration::from_secs(60),
            |answer| answer["status"] == "Updated",
        )
        .await;
    emco.http
        .wait_for(
            "?status=ready&output=summary",
            Duration::from_secs(60),
            |answer| answer["deployedStatus"] == "Instantiated" && answer["readyStatus"] == "Ready",
        )
        .await;
    let sink_after = crate::updates::deployment(edge02, "fw0-sink").await.unwrap();
    assert_eq!(sink_after.metadata.uid, sink_before.metadata.uid);
    assert_eq!(sink_after.spec.replicas, Some(2));
    assert_eq!(labelled_names(edge02).await, labelled_names(edge01).await);

    // A terminate reaches both clusters; the agent deletes what it applied.
    emco.http
        .post_empty(&format!("{DIG}/terminate"))
        .await
        .expect(202);
    emco.http
        .wait_for("?output=summary", Duration::from_secs(90), |answer| {
            answer["status"] == "Terminated"
        })
        .await;
    assert!(labelled_names(edge02).await.is_empty());
    assert!(labelled_names(edge01).await.is_empty());
    agent.abort();
}

/// The agent of the pull cluster `cluster` of the vFW's provider, in this process, against emco at `http`.
pub(crate) fn start_agent(
    http: &Http,
    cluster: &kubesim::SimCluster,
    token: &str,
) -> tokio::task::JoinHandle<()> {
    let mut config = emco_monitor::agent::AgentConfig::new(
        &format!("http://{}", http.address),
        &format!("vfw-cluster-provider+{}", cluster.name()),
        token,
        cluster.kubeconfig().into_bytes(),
    );
    config.poll_wait = Duration::from_secs(5);
    config.report_every = Duration::from_millis(200);
    config.rsync = test_rsync_config();
    tokio::spawn(async move {
        emco_monitor::agent::run_agent(config, std::future::pending())
            .await
            .unwrap();
    })
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_pull_clusters_agent_catches_up_after_a_disconnect_and_an_emco_restart() {
    let sim = vfw_clusters(1).await;
    let edge01 = &sim.clusters()[0];
    let _monitors = start_in_cluster_monitors(&sim);
    let data = tempfile::tempdir().unwrap();
    let port = crate::rsync::free_port();
    let http = Http {
        address: ([127, 0, 0, 1], port).into(),
    };
    let mut emco = crate::rsync::start_emco_process(data.path(), port).await;
    onboard_vfw(&http, &[]).await;
    let token = register_pull_cluster(&http, "edge01").await;
    let agent = start_agent(&http, edge01, &token);
    http.post_empty(&format!("{DIG}/instantiate")).await.expect(202);
    http.wait_for(
        "?status=ready&output=summary",
        Duration::from_secs(90),
        |answer| answer["deployedStatus"] == "Instantiated" && answer["readyStatus"] == "Ready",
    )
    .await;
    let old = last_context(&http.summary().await);
    let sink = crate::updates::deployment(edge01, "fw0-sink").await.unwrap();
    assert_eq!(sink.spec.replicas, Some(1));

    // The agent goes away; an update waits for it, saying so, and the cluster stays as it was.
    agent.abort();
    crate::updates::put_dig(&http, 2, None).await;
    http.post_empty(&format!("{DIG}/update")).await.expect(202);
    http.wait_until(
        &format!("{DIG}/status?output=detail"),
        Duration::from_secs(60),
        |answer| {
            answer
                .to_string()
                .contains("the agent of pull cluster vfw-cluster-provider+edge01 to update the app")
        },
    )
    .await;
    let still = crate::updates::deployment(edge01, "fw0-sink").await.unwrap();
    assert_eq!(still.spec.replicas, Some(1));

    // emco is killed and restarted on its data; a new agent (nothing kept from the old one) catches up: the update
    // reaches the cluster in place and the old context hands over.
    emco.start_kill().unwrap();
    emco.wait().await.unwrap();
    let _emco = crate::rsync::start_emco_process(data.path(), port).await;
    let agent = start_agent(&http, edge01, &token);
    http.wait_until(
        &format!("{DIG}/status?output=summary&instance={old}"),
        Duration::from_secs(90),
        |answer| answer["status"] == "Updated",
    )
    .await;
    http.wait_for(
        "?status=ready&output=summary",
        Duration::from_secs(90),
        |answer| answer["deployedStatus"] == "Instantiated" && answer["readyStatus"] == "Ready",
    )
    .await;
    let updated = crate::updates::deployment(edge01, "fw0-sink").await.unwrap();
    assert_eq!(updated.metadata.uid, sink.metadata.uid);
    assert_eq!(updated.spec.replicas, Some(2));
    agent.abort();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_level1_logical_cloud_on_a_pull_cluster_is_applied_as_its_service_account() {
    use crate::logical_clouds::{LC, create_level1, wait_lc};
    let sim = vfw_clusters(1).await;
    let edge01 = &sim.clusters()[0];
    let _monitors = start_in_cluster_monitors(&sim);
    let emco = Emco::start().await;
    onboard_apps_on(&emco.http, &[], &[("sink", vfw_chart("sink"))], "lc1").await;
    let token = register_pull_cluster(&emco.http, "edge01").await;
    let agent = start_agent(&emco.http, edge01, &token);
    create_level1(&emco.http).await;
    emco.http
        .post_empty(&format!("{LC}/instantiate"))
        .await
        .expect(202);
    wait_lc(&emco.http, |answer| answer["deployedStatus"] == "Instantiated").await;

    // The cloud's objects: its namespace and the service account its apps are applied as, bound to the cloud's
    // role; no certificate request (nobody in a pull cluster signs one for emco).
    let client = edge01.client().unwrap();
    assert_level1_service_account_objects(&client, Duration::from_secs(60)).await;
    let api = |version: &str, kind: &str, plural: &str, namespace: Option<&str>| {
        dynamic_api(&client, version, kind, plural, namespace)
    };

    // The DIG on the cloud: its order names the service account; the agent applies the sink as it, in the cloud's
    // namespace, and it is Ready.
    emco.http
        .post_empty(&format!("{DIG}/instantiate"))
        .await
        .expect(202);
    emco.http
        .wait_for(
            "?status=ready&output=summary",
            Duration::from_secs(60),
            |answer| answer["deployedStatus"] == "Instantiated" && answer["readyStatus"] == "Ready",
        )
        .await;
    api("apps/v1", "Deployment", "deployments", Some("tenant1"))
        .get("fw0-sink")
        .await
        .unwrap();
    let orders = agent_call(
        &emco.http,
        &token,
        "GET",
        "/v2/cluster-providers/vfw-cluster-provider/clusters/edge01/agent/desired-state",
        None,
    )
    .await
    .expect(200)
    .json();
    let sink = orders["changed"]
        .as_array()
        .unwrap()
        .iter()
        .find(|change| change["app"] == "sink")
        .unwrap();
    assert_eq!(
        sink["order"]["applyAs"], "system:serviceaccount:tenant1:lc1-sa",
        "{sink}"
    );
    agent.abort();
}
