//! rsync as one of several replicas on one store (in one process here; `emco`'s e2e tests run processes on
//! etcd): an operation another live replica owns is left alone, an orphan is resumed by exactly one replica, and
//! the claim is given up when the operation ends. The cluster has no kubeconfig, so the operation fails at once,
//! which is all these tests need.

// Helpers of a test may unwrap: a panic there is a failed test.
#![allow(clippy::unwrap_used)]

use std::time::Duration;

use emco_appcontext::replicas::{self, Claim};
use emco_appcontext::{AppContexts, AppMeta, Catalog, ClusterRecord, ContextMeta, ContextOwner, Replica};
use emco_model::{ContextId, ContextStatus};
use emco_rsync::{Rsync, RsyncConfig};
use emco_store::{Store, Txn};

const TTL: Duration = Duration::from_secs(5);

async fn store_instantiating(store: &Store, raw: u64) -> ContextId {
    let id = ContextId::new(raw).unwrap();
    let meta = ContextMeta::for_owner(
        id,
        ContextOwner::default(),
        "default",
        vec![AppMeta {
            name: "app".into(),
            dependencies: vec![],
            clusters: vec!["p+nokubeconfig".into()],
            excluded: Vec::new(),
        }],
    );
    let records = [ClusterRecord::pending("app", "p+nokubeconfig", vec![])];
    let (guard, ops) = AppContexts::create_txn_parts(&meta, &records);
    store.txn(Txn::new().when([guard]).and_then(ops)).await.unwrap();
    id
}

async fn replica(store: &Store, name: &str) -> (std::sync::Arc<Replica>, Rsync) {
    let replica = Replica::register(store.clone(), name.into(), String::new(), TTL)
        .await
        .unwrap();
    let rsync = Rsync::with_replica(
        Catalog::new(store.clone()),
        AppContexts::new(store.clone()),
        RsyncConfig::default(),
        replica.clone(),
    );
    (replica, rsync)
}

async fn wait_for_status(contexts: &AppContexts, id: ContextId, status: ContextStatus) {
    for _ in 0..400 {
        if contexts.meta(id).await.unwrap().status == status {
            return;
        }
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
    panic!("context {id} never reached {status}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_owned_operation_is_left_alone_and_an_orphan_is_resumed_by_one_replica() {
    let store = Store::memory();
    let contexts = AppContexts::new(store.clone());
    let id = store_instantiating(&store, 11).await;
    // A third replica owns the running operation.
    let owner = Replica::register(store.clone(), "owner".into(), String::new(), TTL)
        .await
        .unwrap();
    owner
        .claim(&replicas::context_owner_key(id), Claim::IfFree)
        .await
        .unwrap()
        .unwrap();
    let (_a, rsync_a) = replica(&store, "a").await;
    let (_b, rsync_b) = replica(&store, "b").await;
    assert_eq!(rsync_a.resume().await.unwrap(), 0);
    assert_eq!(rsync_b.resume().await.unwrap(), 0);
    assert_eq!(
        contexts.meta(id).await.unwrap().status,
        ContextStatus::Instantiating
    );

    // The owner dies: the replica rendezvous hashing prefers takes it once it has seen the orphan a moment (the
    // other one only after a longer grace); the operation is resumed exactly once.
    owner.leave().await.unwrap();
    let mut resumed = 0;
    for _ in 0..40 {
        resumed += rsync_a.adopt_orphans().await.unwrap() + rsync_b.adopt_orphans().await.unwrap();
        if resumed > 0 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert_eq!(resumed, 1);
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert_eq!(
        rsync_a.adopt_orphans().await.unwrap() + rsync_b.adopt_orphans().await.unwrap(),
        0,
        "nobody resumes it again"
    );
    wait_for_status(&contexts, id, ContextStatus::InstantiateFailed).await;
    // The finished operation's claim is given up.
    for _ in 0..400 {
        if replicas::context_owners(&store).await.unwrap().is_empty() {
            return;
        }
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
    panic!("the claim of the finished operation stays");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_api_call_takes_the_context_from_another_owner() {
    use emco_appcontext::Engine as _;
    let store = Store::memory();
    let contexts = AppContexts::new(store.clone());
    let id = store_instantiating(&store, 12).await;
    let (a, _rsync_a) = replica(&store, "a").await;
    a.claim(&replicas::context_owner_key(id), Claim::IfFree)
        .await
        .unwrap()
        .unwrap();
    let (_b, rsync_b) = replica(&store, "b").await;
    // A stop received by b: b claims the context and records the stopped operation.
    contexts
        .update_meta(id, |meta| meta.stop_requested = true)
        .await
        .unwrap();
    rsync_b.stop(id);
    wait_for_status(&contexts, id, ContextStatus::InstantiateFailed).await;
}
