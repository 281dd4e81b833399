//! Fixtures the status engine's test binaries share.

use emco_appcontext::{AppMeta, ContextMeta, ContextOwner};
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
        project: "p".into(),
        composite_app: "ca".into(),
        composite_app_version: "v1".into(),
        composite_profile: "cp".into(),
        deployment_intent_group: "dig".into(),
        release: "r".into(),
        apps: vec![AppMeta {
            name: app.into(),
            dependencies: vec![],
            clusters: clusters.into_iter().collect(),
            excluded: Vec::new(),
        }],
        status,
        created: created.into(),
        ..ContextMeta::for_owner(id, ContextOwner::DeploymentIntentGroup, "default", Vec::new())
    }
}
