//! A pull cluster through rsync's public API: emco never dials it (it has no kubeconfig, only its agent token's
//! digest); until its agent takes the batch, the app's resources are Retrying with the reason, waiting for the
//! pull cluster's agent to connect; a terminate's batch waits for it too, and a stop ends the wait.

// Helpers of a test may unwrap: a panic there is a failed test.
#![allow(clippy::unwrap_used)]

use std::time::Duration;

use emco_appcontext::{AppContexts, Catalog, ClusterRecord, Engine, Kind, ResourceRecord};
use emco_model::{Connectivity, ContextStatus, RsyncStatus};
use emco_rsync::{Rsync, RsyncConfig};
use emco_store::Store;
use serde_json::json;

mod common;
use common::{path, wait_for};

const CLUSTER: &str = "p+site";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_pull_clusters_batch_waits_for_its_agent_and_never_dials_the_cluster() {
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
    // As the API stores it: the blob is the agent token's digest, which is no kubeconfig.
    catalog
        .create(
            &path(Kind::Cluster, &["p", "site"]),
            &json!({"metadata": {"name": "site"}, "spec": {"pull": {}}}),
            Some(br#"{"schema":1,"agentTokenSha256":"AAAA"}"#),
            vec![],
        )
        .await
        .unwrap();
    let config = RsyncConfig {
        backoff_max: Duration::from_millis(300),
        ..RsyncConfig::default()
    };
    let rsync = Rsync::new(catalog.clone(), contexts.clone(), config);

    let resources = vec![ResourceRecord::pending_object(
        json!({"apiVersion": "v1", "kind": "ConfigMap",
        "metadata": {"name": "web-config"}, "data": {"a": "b"}}),
    )];
    let records = vec![ClusterRecord::pending("web", CLUSTER, resources)];
    let id = common::store_context(&store, 5, ContextStatus::Instantiating, records).await;

    rsync.instantiate(id);
    let record = wait_for("Retrying, waiting for the agent", async || {
        let record = contexts.cluster(id, "web", CLUSTER).await.ok()?;
        (record.connectivity == Connectivity::Retrying && record.waiting.is_some()).then_some(record)
    })
    .await;
    assert_eq!(
        record.connectivity_reason.as_deref(),
        Some("no agent of pull cluster p+site is connected")
    );
    let waiting = record.waiting.unwrap();
    assert!(
        waiting
            .what
            .starts_with("the pull cluster's agent to connect (no agent of pull cluster p+site is connected")
            && waiting.until.is_some(),
        "{waiting:?}"
    );
    assert!(record.resources.iter().all(|r| r.status == RsyncStatus::Retrying));
    // Nothing was taken for a kubeconfig: no resource failed on one.
    assert!(
        record.resources.iter().all(|r| r.error.is_none()),
        "{:?}",
        record.resources
    );

    // A terminate (the lifecycle marks the context first) cancels the instantiation; its delete batch waits for
    // the agent too, since its own first attempt; a stop ends the wait.
    contexts
        .update_meta(id, |meta| meta.status = ContextStatus::Terminating)
        .await
        .unwrap();
    rsync.terminate(id);
    wait_for("the context terminating, waiting for the agent", async || {
        let meta = contexts.meta(id).await.ok()?;
        let record = contexts.cluster(id, "web", CLUSTER).await.ok()?;
        (meta.status == ContextStatus::Terminating
            && record.connectivity == Connectivity::Retrying
            && record
                .waiting
                .filter(|now| now.since != waiting.since)?
                .what
                .starts_with("the pull cluster's agent to connect"))
        .then_some(())
    })
    .await;
    rsync.stop(id);
    wait_for("the wait over", async || {
        let record = contexts.cluster(id, "web", CLUSTER).await.ok()?;
        record.waiting.is_none().then_some(())
    })
    .await;
}
