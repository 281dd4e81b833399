//! A pull cluster through rsync's public API: emco never dials it (it has no kubeconfig, only its agent token's
//! digest). A batch there writes its order into the (app, cluster) record and waits, saying so, until the agent's
//! outcome of that order is recorded and rsync told (`Engine::agent_reported`); the outcome becomes the
//! resources' statuses and the operation's end. A report of an older order is stale; a terminate orders a delete.

// Helpers of a test may unwrap: a panic there is a failed test.
#![allow(clippy::unwrap_used)]

use emco_appcontext::{
    AgentEnd, AgentOperation, AgentResult, AppContexts, Catalog, ClusterRecord, Engine, Kind, ReportTaken,
    ResourceRecord,
};
use emco_model::{ContextStatus, RsyncStatus};
use emco_rsync::{Rsync, RsyncConfig};
use emco_store::Store;
use serde_json::json;

mod common;
use common::{path, wait_for};

const CLUSTER: &str = "p+site";

/// A store with the provider `p` and its pull cluster `site`, as the API stores them: the cluster's blob is its
/// agent token's digest, which is no kubeconfig.
async fn pull_site() -> (Store, Catalog, AppContexts) {
    let store = Store::memory();
    let catalog = Catalog::new(store.clone());
    let contexts = AppContexts::new(store.clone());
    catalog
        .create(
            &path(Kind::ClusterProvider, &["p"]),
            &json!({"metadata": {"name": "p"}}),
            None,
            vec![],
        )
        .await
        .unwrap();
    catalog
        .create(
            &path(Kind::Cluster, &["p", "site"]),
            &json!({"metadata": {"name": "site"}, "spec": {"pull": {}}}),
            Some(br#"{"schema":1,"agentTokenSha256":"AAAA"}"#),
            vec![],
        )
        .await
        .unwrap();
    (store, catalog, contexts)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_pull_clusters_batch_orders_its_agent_and_records_the_outcome() {
    let (store, catalog, contexts) = pull_site().await;
    let rsync = Rsync::new(catalog.clone(), contexts.clone(), RsyncConfig::default());
    let resources = vec![
        ResourceRecord::pending_object(json!({"apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": "web-config"}, "data": {"a": "b"}})),
        ResourceRecord::pending_object(json!({"apiVersion": "v1", "kind": "Service",
            "metadata": {"name": "web"}, "spec": {"ports": [{"port": 80}]}})),
    ];
    let records = vec![ClusterRecord::pending("web", CLUSTER, resources)];
    let id = common::store_context(&store, 5, ContextStatus::Instantiating, records).await;

    rsync.instantiate(id);
    let record = wait_for("the order to the agent", async || {
        let record = contexts.cluster(id, "web", CLUSTER).await.ok()?;
        record.agent_order.is_some().then_some(record)
    })
    .await;
    let order = record.agent_order.unwrap();
    assert_eq!(
        (
            order.seq,
            order.operation,
            order.label.as_str(),
            order.namespace.as_str()
        ),
        (1, AgentOperation::Apply, "5-web", "default")
    );
    let waiting = record.waiting.unwrap();
    assert_eq!(
        waiting.what,
        "the agent of pull cluster p+site to apply the app (order 1)"
    );
    assert!(
        record
            .resources
            .iter()
            .all(|r| r.status == RsyncStatus::Pending && r.error.is_none())
    );

    // A report that does not fit the order is refused and writes nothing.
    let applied = |error: Option<&str>| {
        Some(AgentResult {
            status: RsyncStatus::Applied,
            error: error.map(str::to_string),
        })
    };
    let refused = contexts
        .record_agent_outcome(id, "web", CLUSTER, 1, AgentEnd::Done, &[applied(None)])
        .await
        .unwrap();
    assert!(
        matches!(refused, ReportTaken::Refused(ref why) if why.contains("2 resources")),
        "{refused:?}"
    );
    let deleted = Some(AgentResult {
        status: RsyncStatus::Deleted,
        error: None,
    });
    let refused = contexts
        .record_agent_outcome(
            id,
            "web",
            CLUSTER,
            1,
            AgentEnd::Done,
            &[applied(None), deleted.clone()],
        )
        .await
        .unwrap();
    assert!(
        matches!(refused, ReportTaken::Refused(ref why) if why.contains("results[1]")),
        "{refused:?}"
    );

    let failed = Some(AgentResult {
        status: RsyncStatus::Failed,
        error: Some("services \"web\" is forbidden: exceeded quota".into()),
    });
    let taken = contexts
        .record_agent_outcome(id, "web", CLUSTER, 1, AgentEnd::Done, &[applied(None), failed])
        .await
        .unwrap();
    assert_eq!(taken, ReportTaken::Recorded);
    rsync.agent_reported(id, "web", CLUSTER);
    let meta = wait_for("the operation over", async || {
        let meta = contexts.meta(id).await.ok()?;
        (meta.status != ContextStatus::Instantiating).then_some(meta)
    })
    .await;
    assert_eq!(meta.status, ContextStatus::Instantiated);
    let record = contexts.cluster(id, "web", CLUSTER).await.unwrap();
    assert_eq!(record.resources[0].status, RsyncStatus::Applied);
    assert_eq!(record.resources[1].status, RsyncStatus::Failed);
    assert!(
        record.resources[1]
            .error
            .as_deref()
            .unwrap()
            .contains("exceeded quota")
    );
    assert!(record.waiting.is_none());

    // A terminate (the lifecycle marks the context first) orders a delete; the apply's report is stale now.
    contexts
        .update_meta(id, |meta| meta.status = ContextStatus::Terminating)
        .await
        .unwrap();
    rsync.terminate(id);
    wait_for("the delete order", async || {
        let record = contexts.cluster(id, "web", CLUSTER).await.ok()?;
        let order = record.agent_order?;
        (order.seq == 2 && order.operation == AgentOperation::Delete).then_some(())
    })
    .await;
    let stale = contexts
        .record_agent_outcome(
            id,
            "web",
            CLUSTER,
            1,
            AgentEnd::Done,
            &[applied(None), applied(None)],
        )
        .await
        .unwrap();
    assert_eq!(stale, ReportTaken::Stale { current: Some(2) });
    contexts
        .record_agent_outcome(id, "web", CLUSTER, 2, AgentEnd::Done, &[deleted.clone(), deleted])
        .await
        .unwrap();
    rsync.agent_reported(id, "web", CLUSTER);
    let meta = wait_for("the terminate over", async || {
        let meta = contexts.meta(id).await.ok()?;
        (meta.status != ContextStatus::Terminating).then_some(meta)
    })
    .await;
    assert_eq!(meta.status, ContextStatus::Terminated);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stop_ends_the_wait_for_the_agent() {
    let (store, catalog, contexts) = pull_site().await;
    let rsync = Rsync::new(catalog, contexts.clone(), RsyncConfig::default());
    let records = vec![ClusterRecord::pending("web", CLUSTER, Vec::new())];
    let id = common::store_context(&store, 6, ContextStatus::Instantiating, records).await;
    rsync.instantiate(id);
    wait_for("the order to the agent", async || {
        contexts
            .cluster(id, "web", CLUSTER)
            .await
            .ok()?
            .agent_order
            .map(|_| ())
    })
    .await;
    contexts
        .update_meta(id, |meta| meta.stop_requested = true)
        .await
        .unwrap();
    rsync.stop(id);
    let meta = wait_for("the operation stopped", async || {
        let meta = contexts.meta(id).await.ok()?;
        (meta.status != ContextStatus::Instantiating).then_some(meta)
    })
    .await;
    assert_eq!(meta.status, ContextStatus::InstantiateFailed);
}
