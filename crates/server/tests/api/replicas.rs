//! Optimistic concurrency without a write lock: many concurrent conflicting requests on one server (memory,
//! redb), and two replicas — two `Server`s, each with its own etcd connection and status index — on one etcd
//! (skipped without an etcd binary unless `EMCO_REQUIRE_ETCD=1`): exactly one of a race wins, the losers get the
//! answer a sequential second call gets; a write on one replica is read, and its status answered, on the other.

use axum::http::StatusCode;
use emco_appcontext::AppContexts;
use emco_store::Store;
use emco_store::etcd_testing::EtcdServer;
use serde_json::json;

use crate::support::{Api, CA, DIG, PROJECT, Reply};

/// Runs `calls` requests at once (each on its own task), `call(i)` for i in 0..calls.
async fn race<F, Fut>(calls: usize, call: F) -> Vec<Reply>
where
    F: Fn(usize) -> Fut,
    Fut: std::future::Future<Output = Reply> + Send + 'static,
{
    let tasks: Vec<_> = (0..calls).map(|index| tokio::spawn(call(index))).collect();
    let mut replies = Vec::new();
    for task in tasks {
        replies.push(task.await.unwrap());
    }
    replies
}

fn statuses(replies: &[Reply]) -> Vec<u16> {
    let mut statuses: Vec<u16> = replies.iter().map(|reply| reply.status.as_u16()).collect();
    statuses.sort_unstable();
    statuses
}

/// Many concurrent instantiates of one approved DIG over `apis` (round robin): exactly one is accepted; every
/// other gets the 409 a sequential second instantiate gets.
async fn one_instantiate_wins(apis: &[Api]) {
    apis[0].onboard_vfw().await;
    apis[apis.len() - 1]
        .post_empty(&format!("{DIG}/approve"))
        .await
        .expect(StatusCode::ACCEPTED);
    let replies = race(8, |index| {
        let api = apis[index % apis.len()].clone();
        async move { api.post_empty(&format!("{DIG}/instantiate")).await }
    })
    .await;
    assert_eq!(statuses(&replies), [202, 409, 409, 409, 409, 409, 409, 409]);
    let sequential = apis[0]
        .post_empty(&format!("{DIG}/instantiate"))
        .await
        .expect(StatusCode::CONFLICT);
    for loser in replies
        .iter()
        .filter(|reply| reply.status == StatusCode::CONFLICT)
    {
        assert_eq!(
            (loser.code(), loser.message()),
            (sequential.code(), sequential.message())
        );
    }
    // One instantiation in the history, one context.
    let actions = apis[0].states().await;
    assert_eq!(
        actions.iter().filter(|state| *state == "Instantiated").count(),
        1,
        "{actions:?}"
    );
}

/// Concurrent creates of one name: exactly one 201, the others 409 AlreadyExists.
async fn one_create_wins(apis: &[Api], name: &str) {
    let replies = race(10, |index| {
        let api = apis[index % apis.len()].clone();
        let name = name.to_string();
        async move {
            api.post("/v2/projects", json!({"metadata": {"name": name}}))
                .await
        }
    })
    .await;
    let mut expected = vec![201];
    expected.extend([409; 9]);
    assert_eq!(statuses(&replies), expected);
    for loser in replies
        .iter()
        .filter(|reply| reply.status == StatusCode::CONFLICT)
    {
        assert_eq!(loser.code(), "AlreadyExists", "{}", loser.message());
    }
}

/// A child created while its parent is deleted: never both succeed (no orphan).
async fn no_orphan_from_create_versus_delete(apis: &[Api]) {
    for round in 0..5 {
        let project = format!("/v2/projects/race{round}");
        apis[0]
            .post(
                "/v2/projects",
                json!({"metadata": {"name": format!("race{round}")}}),
            )
            .await
            .expect(StatusCode::CREATED);
        let create = {
            let api = apis[round % apis.len()].clone();
            let uri = format!("{project}/composite-apps");
            tokio::spawn(async move {
                api.post(
                    &uri,
                    json!({"metadata": {"name": "ca"}, "spec": {"compositeAppVersion": "v1"}}),
                )
                .await
            })
        };
        let delete = {
            let api = apis[(round + 1) % apis.len()].clone();
            let uri = project.clone();
            tokio::spawn(async move { api.delete(&uri).await })
        };
        let (created, deleted) = (create.await.unwrap(), delete.await.unwrap());
        assert!(
            !(created.status == StatusCode::CREATED && deleted.status == StatusCode::NO_CONTENT),
            "both the child's create and the parent's delete succeeded"
        );
        if created.status == StatusCode::CREATED {
            assert_eq!(deleted.code(), "HasChildren", "{}", deleted.message());
        }
    }
}

/// Two dependencies that each alone are fine but together close a cycle, created at once: never both (the lists
/// each checked are in its read set). Needs the vFW onboarded.
async fn no_cycle_from_two_concurrent_dependencies(apis: &[Api]) {
    for round in 0..5 {
        let name = format!("d{round}");
        let create = |index: usize, app: &'static str, on: &'static str| {
            let api = apis[index % apis.len()].clone();
            let name = name.clone();
            tokio::spawn(async move {
                api.post(
                    &format!("{CA}/apps/{app}/dependency"),
                    json!({"metadata": {"name": name}, "spec": {"app": on, "opStatus": "Ready"}}),
                )
                .await
            })
        };
        let first = create(round, "packetgen", "firewall");
        let second = create(round + 1, "firewall", "packetgen");
        let (first, second) = (first.await.unwrap(), second.await.unwrap());
        let created: Vec<&Reply> = [&first, &second]
            .into_iter()
            .filter(|reply| reply.status == StatusCode::CREATED)
            .collect();
        assert_eq!(created.len(), 1, "exactly one of a cycle's two halves is stored");
        for reply in [&first, &second] {
            if reply.status != StatusCode::CREATED {
                assert_eq!(reply.code(), "DependencyCycle", "{}", reply.message());
            }
        }
        for app in ["packetgen", "firewall"] {
            let _ = apis[0]
                .delete(&format!("{CA}/apps/{app}/dependency/{name}"))
                .await;
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn concurrent_conflicting_requests_on_one_memory_server_have_one_winner() {
    let api = Api::new(Store::memory());
    one_create_wins(std::slice::from_ref(&api), "p1").await;
    no_orphan_from_create_versus_delete(std::slice::from_ref(&api)).await;
    one_instantiate_wins(std::slice::from_ref(&api)).await;
    no_cycle_from_two_concurrent_dependencies(std::slice::from_ref(&api)).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn concurrent_conflicting_requests_on_one_redb_server_have_one_winner() {
    let dir = tempfile::tempdir().unwrap();
    let api = Api::new(Store::open_redb(dir.path()).unwrap());
    one_create_wins(std::slice::from_ref(&api), "p1").await;
    one_instantiate_wins(std::slice::from_ref(&api)).await;
}

/// Two replicas on one etcd: each its own connection, status index and server.
async fn two_replicas() -> Option<(Vec<Api>, EtcdServer)> {
    let server = EtcdServer::start().await.unwrap()?;
    let mut apis = Vec::new();
    for _ in 0..2 {
        let store = Store::open_etcd(&[server.endpoint().to_string()], "/replicas", None)
            .await
            .unwrap();
        apis.push(Api::new(store));
    }
    Some((apis, server))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_replicas_on_one_etcd_read_each_others_writes_and_race_with_one_winner() {
    let Some((apis, _etcd)) = two_replicas().await else {
        return;
    };
    // A create on A is read on B.
    apis[0]
        .post("/v2/projects", json!({"metadata": {"name": "seen"}}))
        .await
        .expect(StatusCode::CREATED);
    apis[1].get("/v2/projects/seen").await.expect(StatusCode::OK);
    one_create_wins(&apis, "contested").await;
    no_orphan_from_create_versus_delete(&apis).await;
    one_instantiate_wins(&apis).await;
    no_cycle_from_two_concurrent_dependencies(&apis).await;

    // Right after a write on A, status answers (and the DIG's state) are the same on A and B.
    apis[0]
        .post_empty(&format!("{DIG}/terminate"))
        .await
        .expect(StatusCode::ACCEPTED);
    let status = format!("{DIG}/status");
    let on_a = apis[0].get(&status).await.expect(StatusCode::OK).json();
    let on_b = apis[1].get(&status).await.expect(StatusCode::OK).json();
    assert_eq!(on_a, on_b);
    let actions = on_a["state"]["Actions"].as_array().cloned().unwrap_or_default();
    assert_eq!(
        actions.last().map(|action| action["State"].clone()),
        Some(json!("Terminated")),
        "{on_a}"
    );
    let state_a = apis[0].get(DIG).await.json()["state"].clone();
    let state_b = apis[1].get(DIG).await.json()["state"].clone();
    assert_eq!(state_a, state_b);
    assert!(apis[1].get(PROJECT).await.status.is_success());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_dig_over_450_app_cluster_pairs_instantiates_on_an_etcd_with_default_limits() {
    let Some((apis, _etcd)) = two_replicas().await else {
        return;
    };
    let api = &apis[0];
    api.onboard_vfw().await;
    // 150 labeled clusters; all three apps go on every one of them (sink's `anyOf` of a label names them all):
    // 450 (app, cluster) pairs, far more than etcd's 128 operations per transaction.
    api.add_labelled_clusters("more", 148).await;
    api.put(
        &format!("{DIG}/generic-placement-intents/fw-placement-intent/app-intents/firewall-placement"),
        json!({"metadata": {"name": "firewall-placement"}, "spec": {"app": "firewall", "intent":
            {"allOf": [{"clusterProvider": "vfw-cluster-provider", "clusterLabel": "edge-cluster"}]}}}),
    )
    .await
    .expect(StatusCode::OK);
    api.approve_and_instantiate_vfw().await;
    let contexts = AppContexts::new(api.store.clone());
    let ids = contexts.ids().await.unwrap();
    assert_eq!(ids.len(), 1);
    assert_eq!(contexts.clusters(ids[0]).await.unwrap().len(), 450);
    // Both replicas answer the whole context, the same.
    let status = format!("{DIG}/status");
    let on_a = apis[0].get(&status).await.expect(StatusCode::OK).json();
    let on_b = apis[1].get(&status).await.expect(StatusCode::OK).json();
    assert_eq!(on_a, on_b);
    let pairs: usize = on_a["apps"]
        .as_array()
        .unwrap()
        .iter()
        .map(|app| app["clusters"].as_array().map_or(0, Vec::len))
        .sum();
    assert_eq!(pairs, 450);
}
