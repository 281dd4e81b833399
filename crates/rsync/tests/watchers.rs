//! The lifetime of rsync's ResourceBundleState watchers, through its public API: a cluster is watched exactly
//! while a live context (Instantiating, Instantiated, Terminating) uses it, whichever context that is. The clusters
//! here have no kubeconfig, so every operation on them fails at once, which is all these tests need.

// Helpers of a test may unwrap: a panic there is a failed test.
#![allow(clippy::unwrap_used)]

use std::time::Duration;

use emco_appcontext::{AppContexts, Catalog, ClusterRecord, Engine};
use emco_model::{ContextId, ContextStatus};
use emco_rsync::{Rsync, RsyncConfig};
use emco_store::Store;

mod common;

/// Stores a context of one app on `clusters`, in `status`.
async fn store_context(store: &Store, raw: u64, status: ContextStatus, clusters: &[&str]) -> ContextId {
    let records = clusters
        .iter()
        .map(|cluster| ClusterRecord::pending("app", cluster, vec![]))
        .collect();
    common::store_context(store, raw, status, records).await
}

async fn idle(rsync: &Rsync) {
    for _ in 0..400 {
        if !rsync.busy() {
            return;
        }
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
    panic!("rsync is still busy");
}

/// Terminates a context as the lifecycle does (status first, then the engine), and waits until it ended.
async fn terminate(rsync: &Rsync, contexts: &AppContexts, id: ContextId) {
    contexts
        .update_meta(id, |meta| meta.status = ContextStatus::Terminating)
        .await
        .unwrap();
    rsync.terminate(id);
    idle(rsync).await;
    assert!(contexts.meta(id).await.unwrap().status.is_terminate_finished());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cluster_is_watched_while_any_live_context_uses_it() {
    let store = Store::memory();
    let contexts = AppContexts::new(store.clone());
    let a = store_context(&store, 1, ContextStatus::Instantiated, &["p+shared", "p+only-a"]).await;
    let b = store_context(&store, 2, ContextStatus::Instantiated, &["p+shared"]).await;
    store_context(&store, 3, ContextStatus::Terminated, &["p+terminated"]).await;
    store_context(&store, 4, ContextStatus::InstantiateFailed, &["p+failed"]).await;
    // Resumed after the restart; it fails (no kubeconfig), so it ends up not live.
    store_context(&store, 5, ContextStatus::Instantiating, &["p+resumed"]).await;

    let rsync = Rsync::new(
        Catalog::new(store.clone()),
        contexts.clone(),
        RsyncConfig::default(),
    );
    assert_eq!(rsync.resume().await.unwrap(), 1);
    idle(&rsync).await;
    assert_eq!(
        contexts.meta(ContextId::new(5).unwrap()).await.unwrap().status,
        ContextStatus::InstantiateFailed
    );
    assert_eq!(rsync.watched_clusters(), ["p+only-a", "p+shared"]);

    // b still uses the shared cluster after a is gone.
    terminate(&rsync, &contexts, a).await;
    assert_eq!(rsync.watched_clusters(), ["p+shared"]);
    terminate(&rsync, &contexts, b).await;
    assert!(rsync.watched_clusters().is_empty());

    // An instantiation that failed does not hold its cluster either.
    let c = store_context(&store, 6, ContextStatus::Instantiating, &["p+shared"]).await;
    rsync.instantiate(c);
    idle(&rsync).await;
    assert_eq!(
        contexts.meta(c).await.unwrap().status,
        ContextStatus::InstantiateFailed
    );
    assert!(rsync.watched_clusters().is_empty());
}
