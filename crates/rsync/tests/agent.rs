//! A pull agent's applier given its cluster's client rather than a kubeconfig (software running in a simulated
//! cluster reaches its API in-process): orders are applied through that client, nothing reaches the cluster over
//! the network, a bundle that shows an object missing has it repaired only when the cluster confirms it is gone,
//! and an order applied as a logical cloud's user is sent as that user (`Impersonate-User`), which the
//! cluster's RBAC judges.

// Helpers of a test may unwrap: a panic there is a failed test.
#![allow(clippy::unwrap_used)]

use emco_appcontext::{AgentEnd, AgentOperation, AgentOrder, ResourceRecord};
use emco_model::{ContextId, RsyncStatus};
use emco_rsync::RsyncConfig;
use emco_rsync::agent::AgentApplier;
use kube::api::{Api, DynamicObject, PostParams};
use kube::core::{ApiResource, GroupVersionKind};
use serde_json::json;
use tokio_util::sync::CancellationToken;

fn order(seq: u64, apply_as: Option<&str>) -> AgentOrder {
    AgentOrder {
        seq,
        operation: AgentOperation::Apply,
        other: None,
        label: "5-web".into(),
        namespace: "default".into(),
        apply_as: apply_as.map(str::to_string),
        issued_at: "2026-12-02T00:00:00Z".into(),
        outcome: None,
    }
}

fn config_map(name: &str) -> ResourceRecord {
    ResourceRecord::pending_object(json!({"apiVersion": "v1", "kind": "ConfigMap",
        "metadata": {"name": name}, "data": {"a": "b"}}))
}

fn api(
    client: &kube::Client,
    group: &str,
    kind: &str,
    plural: &str,
    namespace: Option<&str>,
) -> Api<DynamicObject> {
    let (group, version) = group.split_once('/').unwrap_or(("", group));
    let resource = ApiResource::from_gvk_with_plural(&GroupVersionKind::gvk(group, version, kind), plural);
    match namespace {
        Some(namespace) => Api::namespaced_with(client.clone(), namespace, &resource),
        None => Api::all_with(client.clone(), &resource),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_applier_given_its_clusters_client_applies_through_it_and_as_the_orders_user() {
    let sim = kubesim::Simulator::start_named(1).await.unwrap();
    let cluster = &sim.clusters()[0];
    let client = cluster.in_cluster_client();
    let applier = AgentApplier::with_client(client.clone(), RsyncConfig::default())
        .await
        .unwrap();
    let context = ContextId::new(5).unwrap();

    let first = order(1, None);
    applier
        .keep(context, "web", &first, vec![config_map("web-config")])
        .await
        .unwrap();
    let run = applier
        .run(context, "web", &first, CancellationToken::new())
        .await
        .unwrap();
    assert_eq!(run.end, AgentEnd::Done, "{run:?}");
    assert_eq!(
        run.results[0].as_ref().map(|r| r.status),
        Some(RsyncStatus::Applied)
    );
    let config_maps = api(&client, "v1", "ConfigMap", "configmaps", Some("default"));
    let applied = config_maps.get("web-config").await.unwrap();
    assert_eq!(
        applied.metadata.labels.unwrap()[emco_k8s::DEPLOYMENT_ID_LABEL],
        "5-web"
    );
    // Everything reached the cluster in-process: no connection, no request over the network.
    assert_eq!(cluster.shared().connections(), 0);
    assert_eq!(cluster.writes(), 0);
    // The bundles' CRD, the config map and the app's ResourceBundleState, counted as in-cluster object writes.
    assert_eq!(cluster.shared().in_cluster_object_writes(), 3);
    assert!(
        cluster
            .shared()
            .requests()
            .iter()
            .all(|request| request.in_cluster)
    );

    // A bundle that shows the config map missing (written from a cache that has not seen it yet) repairs nothing
    // while the cluster has it; once it is gone, the order is the one to repair.
    let shows_none = r#"{"configMapStatuses": []}"#;
    assert!(applier.missing_objects("5-web", shows_none).await.is_empty());
    config_maps
        .delete("web-config", &Default::default())
        .await
        .unwrap();
    assert_eq!(
        applier.missing_objects("5-web", shows_none).await,
        vec![(context, "web".to_string())]
    );
    assert!(applier.repair(context, "web", CancellationToken::new()).await);
    assert!(config_maps.get_opt("web-config").await.unwrap().is_some());

    // As a logical cloud's user: refused by RBAC until a binding lets the user write config maps.
    let user = "system:serviceaccount:default:lc1-sa";
    let second = order(2, Some(user));
    applier
        .keep(context, "web", &second, vec![config_map("tenant-config")])
        .await
        .unwrap();
    let refused = applier
        .run(context, "web", &second, CancellationToken::new())
        .await
        .unwrap();
    assert_eq!(refused.end, AgentEnd::Failed, "{refused:?}");
    let error = refused.results[0].as_ref().and_then(|r| r.error.clone()).unwrap();
    assert!(
        error.contains(user),
        "the refusal names the user the order ran as: {error}"
    );
    assert!(config_maps.get_opt("tenant-config").await.unwrap().is_none());

    let role: DynamicObject = serde_json::from_value(json!({
        "apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole",
        "metadata": {"name": "config-writer"},
        "rules": [{"apiGroups": [""], "resources": ["configmaps"], "verbs": ["*"]}]
    }))
    .unwrap();
    api(
        &client,
        "rbac.authorization.k8s.io/v1",
        "ClusterRole",
        "clusterroles",
        None,
    )
    .create(&PostParams::default(), &role)
    .await
    .unwrap();
    let binding: DynamicObject = serde_json::from_value(json!({
        "apiVersion": "rbac.authorization.k8s.io/v1", "kind": "RoleBinding",
        "metadata": {"name": "lc1-config-writer", "namespace": "default"},
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "config-writer"},
        "subjects": [{"kind": "ServiceAccount", "name": "lc1-sa", "namespace": "default"}]
    }))
    .unwrap();
    api(
        &client,
        "rbac.authorization.k8s.io/v1",
        "RoleBinding",
        "rolebindings",
        Some("default"),
    )
    .create(&PostParams::default(), &binding)
    .await
    .unwrap();
    let third = order(3, Some(user));
    applier
        .keep(context, "web", &third, vec![config_map("tenant-config")])
        .await
        .unwrap();
    let run = applier
        .run(context, "web", &third, CancellationToken::new())
        .await
        .unwrap();
    assert_eq!(run.end, AgentEnd::Done, "{run:?}");
    assert!(config_maps.get_opt("tenant-config").await.unwrap().is_some());
}

#[test]
fn a_status_changed_in_its_heartbeat_alone_says_nothing_new() {
    let before = r#"{"ready":true,"podStatuses":[{"name":"a"}],"heartbeat":"10:00:00"}"#;
    let beat = r#"{"ready":true,"podStatuses":[{"name":"a"}],"heartbeat":"10:00:20"}"#;
    let changed = r#"{"ready":false,"podStatuses":[{"name":"a"}],"heartbeat":"10:00:20"}"#;
    assert!(!emco_rsync::agent::changed_beyond_heartbeat(before, beat));
    assert!(emco_rsync::agent::changed_beyond_heartbeat(beat, changed));
    assert!(emco_rsync::agent::changed_beyond_heartbeat(before, "not json"));
}
