//! Fixtures the status engine's test binaries share.

use emco_appcontext::{AppMeta, ContextMeta};
use emco_model::{ContextId, ContextStatus};

/// The meta of context `id` of DIG `dig` (project `p`, composite app `ca` v1, profile `cp`): one app on `clusters`,
/// in `status`, created at `created`.
pub(crate) fn dig_meta(
    id: ContextId,
    app: &str,
    clusters: impl IntoIterator<Item = String>,
    status: ContextStatus,
    created: &str,
) -> ContextMeta {
    ContextMeta {
        id,
        project: "p".into(),
        composite_app: "ca".into(),
        composite_app_version: "v1".into(),
        composite_profile: "cp".into(),
        deployment_intent_group: "dig".into(),
        release: "r".into(),
        namespace: "default".into(),
        logical_cloud: String::new(),
        owner: Default::default(),
        credentials: None,
        supersedes: None,
        lineage: None,
        apps: vec![AppMeta {
            name: app.into(),
            dependencies: vec![],
            clusters: clusters.into_iter().collect(),
        }],
        status,
        stop_requested: false,
        rollout: None,
        created: created.into(),
    }
}
