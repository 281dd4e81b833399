//! What rsync's integration tests share: catalog paths, waiting for a condition, and a DIG's context of one app
//! stored as the lifecycle stores it.

// Helpers of a test may unwrap: a panic there is a failed test.
#![allow(clippy::unwrap_used, dead_code)]

use std::time::Duration;

use emco_appcontext::{AppContexts, AppMeta, ClusterRecord, ContextMeta, ContextOwner, Kind, ResourcePath};
use emco_model::{ContextId, ContextStatus};
use emco_store::{Store, Txn};

/// The catalog path of a resource.
pub(crate) fn path(kind: Kind, names: &[&str]) -> ResourcePath {
    ResourcePath::new(kind, names.iter().map(|name| (*name).to_string()).collect())
}

/// Waits up to 15 s until `check` finds something, and answers it; panics naming `what` when it never does.
pub(crate) async fn wait_for<T>(what: &str, mut check: impl AsyncFnMut() -> Option<T>) -> T {
    for _ in 0..300 {
        if let Some(found) = check().await {
            return found;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    panic!("not in time: {what}");
}

/// Stores context `raw` of a DIG with one app, `records`' app on `records`' clusters, in `status`.
pub(crate) async fn store_context(
    store: &Store,
    raw: u64,
    status: ContextStatus,
    records: Vec<ClusterRecord>,
) -> ContextId {
    let id = ContextId::new(raw).unwrap();
    let app = records
        .first()
        .map_or_else(|| "app".to_string(), |record| record.app.clone());
    let meta = ContextMeta {
        project: "p".into(),
        composite_app: "ca".into(),
        composite_app_version: "v1".into(),
        composite_profile: "cp".into(),
        deployment_intent_group: "dig".into(),
        release: "r".into(),
        apps: vec![AppMeta {
            name: app,
            dependencies: vec![],
            clusters: records.iter().map(|record| record.cluster.clone()).collect(),
            excluded: Vec::new(),
        }],
        status,
        created: "2026-01-01T00:00:00.000Z".into(),
        ..ContextMeta::for_owner(id, ContextOwner::DeploymentIntentGroup, "default", Vec::new())
    };
    let (guard, ops) = AppContexts::create_txn_parts(&meta, &records);
    assert!(
        store
            .txn(Txn::new().when([guard]).and_then(ops))
            .await
            .unwrap()
            .succeeded
    );
    id
}
